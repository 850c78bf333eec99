package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables"
)

// WebhookSecretHash implements payables.IntakeStore.
func (s *Store) WebhookSecretHash(ctx context.Context, tenantID string) ([]byte, error) {
	var h []byte
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT secret_sha256 FROM payables.webhook_secrets WHERE tenant_id = $1`, tenantID).Scan(&h)
	})
	if err = db.NotFound(err, "no webhook secret"); err != nil {
		return nil, errs.Wrap("postgres.WebhookSecretHash", err)
	}
	return h, nil
}

// SetWebhookSecret implements payables.IntakeStore.
func (s *Store) SetWebhookSecret(ctx context.Context, tenantID string, hash []byte) (time.Time, error) {
	var at time.Time
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO payables.webhook_secrets (tenant_id, secret_sha256) VALUES ($1, $2)
			ON CONFLICT (tenant_id) DO UPDATE SET secret_sha256 = excluded.secret_sha256, created_at = now()
			RETURNING created_at`, tenantID, hash).Scan(&at)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres.SetWebhookSecret: %w", err)
	}
	return at, nil
}

// InboxByHash implements payables.IntakeStore.
func (s *Store) InboxByHash(ctx context.Context, tenantID, fileHash string) (payables.InboxRef, error) {
	var ref payables.InboxRef
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, review_case_id FROM payables.inbox_items WHERE tenant_id = $1 AND file_hash = $2`,
			tenantID, fileHash).Scan(&ref.ID, &ref.ReviewCaseID)
	})
	if err = db.NotFound(err, "no inbox item of these bytes"); err != nil {
		return ref, errs.Wrap("postgres.InboxByHash", err)
	}
	return ref, nil
}

// Ingest implements payables.IntakeStore.
func (s *Store) Ingest(ctx context.Context, tenantID string, it payables.NewInboxItem, row payablesv1.IngestionRow) (payablesv1.InboxItem, payables.InboxRef, error) {
	var out payablesv1.InboxItem
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `INSERT INTO payables.inbox_items AS i (id, tenant_id, document_id, file_hash, mime_type, original_name,
				source, source_email, source_subject)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+inboxColumns,
			it.ID, tenantID, it.DocumentID, it.FileHash, it.MimeType, it.OriginalName, it.Source, it.SourceEmail, it.SourceSubject)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanInbox); err != nil {
			return err
		}
		if _, err := enqueueExtraction(ctx, tx, tenantID, it.DocumentID, &it.ID); err != nil {
			return err
		}
		return logIngestion(ctx, tx, tenantID, row)
	})
	if name, _ := db.Constraint(err); name == "inbox_items_hash" {
		ref, err := s.InboxByHash(ctx, tenantID, it.FileHash)
		if err != nil {
			return out, ref, err
		}
		return out, ref, errs.E(errs.DuplicateDocument, "the same file is already in the inbox")
	}
	if err != nil {
		return out, payables.InboxRef{}, fmt.Errorf("postgres.Ingest: %w", err)
	}
	return out, payables.InboxRef{}, nil
}

// LogIngestion implements payables.IntakeStore.
func (s *Store) LogIngestion(ctx context.Context, tenantID string, row payablesv1.IngestionRow) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		return logIngestion(ctx, tx, tenantID, row)
	})
	if err != nil {
		return fmt.Errorf("postgres.LogIngestion: %w", err)
	}
	return nil
}

func logIngestion(ctx context.Context, tx pgx.Tx, tenantID string, r payablesv1.IngestionRow) error {
	_, err := tx.Exec(ctx, `INSERT INTO payables.ingestion_log (id, tenant_id, outcome, reason, sender_email, subject, filename,
			claimed_mime, size_bytes, file_hash, document_id, original_inbox_id, original_review_case_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		r.ID, tenantID, r.Outcome, r.Reason, r.SenderEmail, r.Subject, r.Filename, r.ClaimedMime, r.SizeBytes,
		r.FileHash, r.DocumentID, r.OriginalInboxID, r.OriginalReviewCaseID, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("log ingestion: %w", err)
	}
	return nil
}

// inboxColumns read an inbox item i with the result of its latest done
// extraction (null until one is done).
const inboxColumns = `i.id, i.document_id, i.status, i.source_email, i.source_subject, i.original_name, i.review_case_id, i.created_at,
	(SELECT to_jsonb(x) FROM (SELECT e.ocr_result, e.vendor_match, e.compliance_check FROM payables.extractions e
		WHERE e.tenant_id = i.tenant_id AND e.inbox_item_id = i.id AND e.state = 'done'
		ORDER BY e.finished_at DESC NULLS LAST, e.created_at DESC LIMIT 1) x)`

func scanInbox(row pgx.CollectableRow) (payablesv1.InboxItem, error) {
	var it payablesv1.InboxItem
	var ext []byte
	if err := row.Scan(&it.ID, &it.DocumentID, &it.Status, &it.SourceEmail, &it.SourceSubject, &it.OriginalName,
		&it.ReviewCaseID, &it.CreatedAt, &ext); err != nil {
		return it, err
	}
	if ext == nil {
		return it, nil
	}
	var x struct {
		OCR        *payablesv1.OCRResult       `json:"ocr_result"`
		Match      *payablesv1.VendorMatch     `json:"vendor_match"`
		Compliance *payablesv1.ComplianceCheck `json:"compliance_check"`
	}
	if err := json.Unmarshal(ext, &x); err != nil {
		return it, fmt.Errorf("extraction of inbox item %s: %w", it.ID, err)
	}
	if x.OCR != nil {
		it.OCRExtraction = &payablesv1.OCRExtraction{VendorName: x.OCR.VendorName, TotalGross: x.OCR.TotalGross}
	}
	it.VendorMatch, it.ComplianceCheck = x.Match, x.Compliance
	return it, nil
}

// Inbox implements payables.IntakeStore.
func (s *Store) Inbox(ctx context.Context, tenantID string, f payablesv1.InboxFilter) ([]payablesv1.InboxItem, error) {
	var out []payablesv1.InboxItem
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+inboxColumns+` FROM payables.inbox_items i
			WHERE i.tenant_id = $1 AND i.status = $2 ORDER BY i.created_at DESC, i.id DESC LIMIT $3 OFFSET $4`,
			tenantID, f.Status, f.Limit, f.Offset)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanInbox)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.Inbox: %w", err)
	}
	return out, nil
}

// IngestionLog implements payables.IntakeStore.
func (s *Store) IngestionLog(ctx context.Context, tenantID string, f payablesv1.IngestionFilter) ([]payablesv1.IngestionRow, error) {
	where, args := "tenant_id = $1", []any{tenantID}
	if len(f.Outcomes) > 0 {
		args = append(args, f.Outcomes)
		where += " AND outcome = ANY($" + strconv.Itoa(len(args)) + ")"
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT id, outcome, reason, sender_email, subject, filename, claimed_mime, size_bytes, file_hash, document_id,
			original_inbox_id, original_review_case_id, created_at
		FROM payables.ingestion_log WHERE ` + where + ` ORDER BY seq DESC LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args))
	var out []payablesv1.IngestionRow
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (payablesv1.IngestionRow, error) {
			var r payablesv1.IngestionRow
			err := row.Scan(&r.ID, &r.Outcome, &r.Reason, &r.SenderEmail, &r.Subject, &r.Filename, &r.ClaimedMime, &r.SizeBytes,
				&r.FileHash, &r.DocumentID, &r.OriginalInboxID, &r.OriginalReviewCaseID, &r.CreatedAt)
			return r, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.IngestionLog: %w", err)
	}
	return out, nil
}
