package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/payables"
)

// enqueueExtraction writes a queued extraction of a document (for an
// inbox item, or none for POST /v1/ocr/extract) and its work-queue
// message in tx, so that a crash between them strands nothing: the job
// is queued exactly when its row exists.
func enqueueExtraction(ctx context.Context, tx pgx.Tx, tenantID, documentID string, inboxItemID *string) (string, error) {
	id := uuid.NewString()
	if _, err := tx.Exec(ctx, `INSERT INTO payables.extractions (id, tenant_id, document_id, inbox_item_id) VALUES ($1, $2, $3, $4)`,
		id, tenantID, documentID, inboxItemID); err != nil {
		return "", fmt.Errorf("enqueue extraction: %w", err)
	}
	if _, err := outbox.Put(ctx, tx, Schema.Schema, payablesv1.SubjectExtractCommand,
		payablesv1.ExtractCommand{TenantID: tenantID, ExtractionID: id}); err != nil {
		return "", fmt.Errorf("enqueue extraction: %w", err)
	}
	return id, nil
}

// EnqueueExtraction implements payables.ExtractionStore.
func (s *Store) EnqueueExtraction(ctx context.Context, tenantID, documentID string, inboxItemID *string) (string, error) {
	var id string
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		id, err = enqueueExtraction(ctx, tx, tenantID, documentID, inboxItemID)
		return err
	})
	if err != nil {
		return "", errs.Wrap("postgres.EnqueueExtraction", err)
	}
	return id, nil
}

const extractionColumns = `id, tenant_id, document_id, inbox_item_id, state, attempts, ocr_result, compliance_check, vendor_match,
	coalesce(error_code, ''), coalesce(error, '')`

func scanExtraction(row pgx.CollectableRow) (payables.Extraction, error) {
	var e payables.Extraction
	var r, c, m []byte
	if err := row.Scan(&e.ID, &e.TenantID, &e.DocumentID, &e.InboxItemID, &e.State, &e.Attempts, &r, &c, &m, &e.ErrorCode, &e.Error); err != nil {
		return e, err
	}
	for _, f := range []struct {
		raw []byte
		to  any
	}{{r, &e.Result}, {c, &e.Compliance}, {m, &e.VendorMatch}} {
		if f.raw == nil {
			continue
		}
		if err := json.Unmarshal(f.raw, f.to); err != nil {
			return e, fmt.Errorf("decode extraction %s: %w", e.ID, err)
		}
	}
	return e, nil
}

func extraction(ctx context.Context, tx pgx.Tx, tenantID, id, lock string) (payables.Extraction, error) {
	rows, err := tx.Query(ctx, `SELECT `+extractionColumns+` FROM payables.extractions WHERE tenant_id = $1 AND id = $2`+lock, tenantID, id)
	if err != nil {
		return payables.Extraction{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanExtraction)
}

// Extraction implements payables.ExtractionStore.
func (s *Store) Extraction(ctx context.Context, tenantID, id string) (payables.Extraction, error) {
	var out payables.Extraction
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		out, err = extraction(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "extraction %s not found", id); err != nil {
		return payables.Extraction{}, errs.Wrap("postgres.Extraction", err)
	}
	return out, nil
}

// StartExtraction implements payables.ExtractionStore. A running
// extraction is started again: its worker died or gave it back.
func (s *Store) StartExtraction(ctx context.Context, tenantID, id string) (payables.Extraction, bool, error) {
	var out payables.Extraction
	var ok bool
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := extraction(ctx, tx, tenantID, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		if cur.State == payables.ExtractionDone || cur.State == payables.ExtractionFailed {
			out = cur
			return nil
		}
		rows, err := tx.Query(ctx, `UPDATE payables.extractions SET state = 'running', attempts = attempts + 1
			WHERE tenant_id = $1 AND id = $2 RETURNING `+extractionColumns, tenantID, id)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanExtraction); err != nil {
			return err
		}
		ok = true
		return setInboxStatus(ctx, tx, out, payablesv1.InboxPending, payablesv1.InboxProcessing)
	})
	if err = db.NotFound(err, "extraction %s not found", id); err != nil {
		return payables.Extraction{}, false, errs.Wrap("postgres.StartExtraction", err)
	}
	return out, ok, nil
}

// setInboxStatus moves the inbox item of e from one status to another; an
// item in another status (confirmed or rejected meanwhile) keeps it.
func setInboxStatus(ctx context.Context, tx pgx.Tx, e payables.Extraction, from, to string) error {
	if e.InboxItemID == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE payables.inbox_items SET status = $4 WHERE tenant_id = $1 AND id = $2 AND status = $3`,
		e.TenantID, *e.InboxItemID, from, to)
	return err
}

// MatchVendors implements payables.ExtractionStore.
func (s *Store) MatchVendors(ctx context.Context, tenantID string) ([]payables.Vendor, error) {
	var out []payables.Vendor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+vendorColumns+` FROM payables.vendors v WHERE v.tenant_id = $1 AND v.is_active
			ORDER BY lower(v.name), v.name, v.id`, tenantID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanVendor)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.MatchVendors: %w", err)
	}
	return out, nil
}

// FinishExtraction implements payables.ExtractionStore. Only a running
// extraction is finished: a second worker that ran the same job after
// its first one was thought dead finds it done and changes nothing.
func (s *Store) FinishExtraction(ctx context.Context, tenantID, id string, r payablesv1.OCRResult, c payablesv1.ComplianceCheck, m payablesv1.VendorMatch) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE payables.extractions SET state = 'done', ocr_result = $3, compliance_check = $4,
				vendor_match = $5, finished_at = now()
			WHERE tenant_id = $1 AND id = $2 AND state = 'running' RETURNING `+extractionColumns, tenantID, id, r, c, m)
		if err != nil {
			return err
		}
		e, err := pgx.CollectExactlyOneRow(rows, scanExtraction)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := setInboxStatus(ctx, tx, e, payablesv1.InboxProcessing, payablesv1.InboxPending); err != nil {
			return err
		}
		return afterExtraction(ctx, tx, e)
	})
	return errs.Wrap("postgres.FinishExtraction", err)
}

// afterExtraction opens the review case of a done extraction in the
// transaction that stores it, so that an extraction is done exactly when
// its case exists and a crash between the two loses nothing. A document
// extracted again through POST /v1/ocr/extract while a case of it is in
// the queue (or approved) gets no second case.
func afterExtraction(ctx context.Context, tx pgx.Tx, e payables.Extraction) error {
	if e.InboxItemID == nil {
		var known bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM payables.review_cases
			WHERE tenant_id = $1 AND document_id = $2 AND queue_state <> 'rejected')`, e.TenantID, e.DocumentID).Scan(&known); err != nil || known {
			return err
		}
	}
	_, err := OpenReviewCase(ctx, tx, e.TenantID, e.ID)
	return err
}

// FailExtraction implements payables.ExtractionStore.
func (s *Store) FailExtraction(ctx context.Context, tenantID, id, code, reason string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE payables.extractions SET state = 'failed', error_code = $3, error = $4, finished_at = now()
			WHERE tenant_id = $1 AND id = $2 AND state IN ('queued', 'running') RETURNING `+extractionColumns, tenantID, id, code, reason)
		if err != nil {
			return err
		}
		e, err := pgx.CollectExactlyOneRow(rows, scanExtraction)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		return setInboxStatus(ctx, tx, e, payablesv1.InboxProcessing, payablesv1.InboxPending)
	})
	return errs.Wrap("postgres.FailExtraction", err)
}
