package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/ledger"
)

const reviewColumns = `id::text, status, source_type, source_id, document_id::text, suggestion, original_suggestion, booked_draft,
	intent_id::text, event_count, resolved_by, resolved_at, created_by, created_at, updated_at,
	version, COALESCE(posting, ''), COALESCE(posting_intent_id::text, ''), COALESCE(posting_token::text, ''), COALESCE(resolved_idem, ''), reversal_intent_id::text, deleted_at`

func scanReview(row pgx.CollectableRow) (ledger.ReviewItem, error) {
	var it ledger.ReviewItem
	var sug, orig, booked []byte
	err := row.Scan(&it.ID, &it.Status, &it.SourceType, &it.SourceID, &it.DocumentID, &sug, &orig, &booked,
		&it.IntentID, &it.EventCount, &it.ResolvedBy, &it.ResolvedAt, &it.CreatedBy, &it.CreatedAt, &it.UpdatedAt,
		&it.Version, &it.Posting, &it.PostingIntentID, &it.PostingToken, &it.ResolvedIdem, &it.ReversalIntentID, &it.DeletedAt)
	if err != nil {
		return it, err
	}
	if err := json.Unmarshal(sug, &it.LouSuggestion); err != nil {
		return it, fmt.Errorf("review item %s: suggestion: %w", it.ID, err)
	}
	if err := json.Unmarshal(orig, &it.OriginalSuggestion); err != nil {
		return it, fmt.Errorf("review item %s: original suggestion: %w", it.ID, err)
	}
	if booked != nil && it.Status == ledger.ReviewOverridden {
		var b ledger.Suggestion
		if err := json.Unmarshal(booked, &b); err != nil {
			return it, fmt.Errorf("review item %s: booked draft: %w", it.ID, err)
		}
		it.BookedDraft = &b
	}
	return it, nil
}

// queryReview runs a query returning at most one review row; nil when none.
func queryReview(ctx context.Context, tx pgx.Tx, sql string, args ...any) (*ledger.ReviewItem, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	it, err := pgx.CollectOneRow(rows, scanReview)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// reviewHistoryEntry is SQL appending one change to an item's history; the
// parameter holds the change as JSON.
func reviewHistoryEntry(param int) string {
	return fmt.Sprintf(`history || jsonb_build_array(jsonb_build_object('at', now()) || $%d::jsonb)`, param)
}

func reviewChangeJSON(c ledger.ReviewChange) []byte {
	b, _ := json.Marshal(c)
	return b
}

var reviewConstraints = map[string]*errs.Error{
	"review_items_tenant_id_document_id_fkey": errs.NotFoundf("the document of the review item was not found"),
}

// CreateReviewItem inserts an item unless its id or its live source is
// taken; then the existing item is loaded into it.
func (s *Store) CreateReviewItem(ctx context.Context, tenant string, it *ledger.ReviewItem) (bool, error) {
	sug, err := json.Marshal(it.LouSuggestion)
	if err != nil {
		return false, errs.Wrap("ledger.CreateReviewItem", err)
	}
	created := false
	err = db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		got, err := queryReview(ctx, tx, `INSERT INTO ledger.review_items (tenant_id, id, source_type, source_id, document_id, suggestion, original_suggestion, created_by, history)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $7, jsonb_build_array(jsonb_build_object('at', now(), 'action', 'create', 'by', $7::text)))
			ON CONFLICT DO NOTHING
			RETURNING `+reviewColumns, tenant, it.ID, it.SourceType, it.SourceID, it.DocumentID, sug, it.CreatedBy)
		if err != nil {
			return err
		}
		if got == nil {
			got, err = queryReview(ctx, tx, "SELECT "+reviewColumns+` FROM ledger.review_items WHERE tenant_id = $1
				AND (id = $2 OR (source_type = $3 AND source_id = $4 AND source_id <> '' AND deleted_at IS NULL))
				ORDER BY id = $2 DESC LIMIT 1`, tenant, it.ID, it.SourceType, it.SourceID)
			if err != nil {
				return err
			}
			if got == nil {
				return fmt.Errorf("review item %s: insert conflicted but no item was found", it.ID)
			}
		} else {
			created = true
		}
		*it = *got
		return nil
	})
	if err != nil {
		return false, errs.Wrap("ledger.CreateReviewItem", db.MapConstraint(err, reviewConstraints))
	}
	return created, nil
}

// reviewStatusCond is the WHERE condition of a status filter.
func reviewStatusCond(status string) (string, []any) {
	if status == ledger.ReviewAll {
		return "TRUE", nil
	}
	return "status = $2", []any{status}
}

// ReviewItems lists live items in creation order.
func (s *Store) ReviewItems(ctx context.Context, tenant string, f ledger.ReviewFilter) ([]ledger.ReviewItem, error) {
	cond, args := reviewStatusCond(f.Status)
	args = append([]any{tenant}, args...)
	n := len(args)
	args = append(args, f.Limit, f.Offset)
	return list(ctx, s, tenant, "ledger.ReviewItems", scanReview, "SELECT "+reviewColumns+` FROM ledger.review_items
		WHERE tenant_id = $1 AND deleted_at IS NULL AND `+cond+fmt.Sprintf(" ORDER BY seq LIMIT $%d OFFSET $%d", n+1, n+2), args...)
}

// CountReviewItems counts live items of a status, and the pending ones.
func (s *Store) CountReviewItems(ctx context.Context, tenant, status string) (count, pending int, err error) {
	cond, args := reviewStatusCond(status)
	err = db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE `+cond+`), count(*) FILTER (WHERE status = 'pending')
			FROM ledger.review_items WHERE tenant_id = $1 AND deleted_at IS NULL`, append([]any{tenant}, args...)...).Scan(&count, &pending)
	})
	if err != nil {
		return 0, 0, errs.Wrap("ledger.CountReviewItems", err)
	}
	return count, pending, nil
}

// NextReviewItem returns the first live pending item after afterID.
func (s *Store) NextReviewItem(ctx context.Context, tenant, afterID string) (*ledger.ReviewItem, error) {
	var it *ledger.ReviewItem
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		after := int64(0)
		if afterID != "" {
			err := tx.QueryRow(ctx, "SELECT seq FROM ledger.review_items WHERE tenant_id = $1 AND id = $2", tenant, afterID).Scan(&after)
			if err != nil {
				return db.NotFound(err, "review item %s not found", afterID)
			}
		}
		var err error
		it, err = queryReview(ctx, tx, "SELECT "+reviewColumns+` FROM ledger.review_items
			WHERE tenant_id = $1 AND status = 'pending' AND deleted_at IS NULL AND seq > $2 ORDER BY seq LIMIT 1`, tenant, after)
		if err == nil && it == nil {
			return errs.NotFoundf("no pending review item follows")
		}
		return err
	})
	if err != nil {
		return nil, errs.Wrap("ledger.NextReviewItem", err)
	}
	return it, nil
}

// ReviewItem returns one live item.
func (s *Store) ReviewItem(ctx context.Context, tenant, id string) (*ledger.ReviewItem, error) {
	var it *ledger.ReviewItem
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		var err error
		it, err = queryReview(ctx, tx, "SELECT "+reviewColumns+" FROM ledger.review_items WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL", tenant, id)
		if err == nil && it == nil {
			return errs.NotFoundf("review item %s not found", id)
		}
		return err
	})
	if err != nil {
		return nil, errs.Wrap("ledger.ReviewItem", err)
	}
	return it, nil
}

// errNotChanged rolls back a transaction that found nothing to change.
var errNotChanged = errors.New("ledger: nothing changed")

// UpdateReviewDraft replaces the draft of a pending, unclaimed item still
// at version; an idempotent request (pkg/idem) saves the ledger.DraftUpdate
// as its answer in the same transaction.
func (s *Store) UpdateReviewDraft(ctx context.Context, tenant, id string, version int, sug ledger.Suggestion, c ledger.ReviewChange) (*ledger.ReviewItem, error) {
	b, err := json.Marshal(sug)
	if err != nil {
		return nil, errs.Wrap("ledger.UpdateReviewDraft", err)
	}
	var it *ledger.ReviewItem
	err = db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, schema); err != nil {
			return err
		}
		var err error
		it, err = queryReview(ctx, tx, `UPDATE ledger.review_items SET suggestion = $4, version = version + 1, updated_at = now(),
				history = `+reviewHistoryEntry(5)+`
			WHERE tenant_id = $1 AND id = $2 AND version = $3 AND status = 'pending' AND posting IS NULL AND deleted_at IS NULL
			RETURNING `+reviewColumns, tenant, id, version, b, reviewChangeJSON(c))
		switch {
		case err != nil:
			return err
		case it == nil:
			return errNotChanged // the claim goes with the rollback
		}
		return idem.Save(ctx, tx, schema, ledger.DraftUpdate{Item: it, Change: c})
	})
	if errors.Is(err, errNotChanged) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("ledger.UpdateReviewDraft", err)
	}
	return it, nil
}

// ClaimReviewItem claims a pending item for posting under c.IntentID.
func (s *Store) ClaimReviewItem(ctx context.Context, tenant, id string, c ledger.ReviewClaim) (*ledger.ReviewItem, error) {
	var draft []byte
	if c.Draft != nil {
		var err error
		if draft, err = json.Marshal(c.Draft); err != nil {
			return nil, errs.Wrap("ledger.ClaimReviewItem", err)
		}
	}
	var it *ledger.ReviewItem
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		it, err = queryReview(ctx, tx, `UPDATE ledger.review_items SET posting = $3, posting_intent_id = $4, posting_at = now(), booked_draft = $5, posting_token = NULLIF($6, '')::uuid
			WHERE tenant_id = $1 AND id = $2 AND status = 'pending' AND deleted_at IS NULL AND (posting IS NULL OR posting_intent_id = $4)
			RETURNING `+reviewColumns, tenant, id, c.Op, c.IntentID, draft, c.Token)
		return err
	})
	if err != nil {
		return nil, errs.Wrap("ledger.ClaimReviewItem", err)
	}
	return it, nil
}

// ReleaseReviewClaim drops a claim at least olderThan old.
func (s *Store) ReleaseReviewClaim(ctx context.Context, tenant, id, intentID string, olderThan time.Duration) (bool, error) {
	var ok bool
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE ledger.review_items SET posting = NULL, posting_intent_id = NULL, posting_at = NULL, booked_draft = NULL, posting_token = NULL
			WHERE tenant_id = $1 AND id = $2 AND status = 'pending' AND posting_intent_id = $3
				AND posting_at <= now() - make_interval(secs => $4)`, tenant, id, intentID, olderThan.Seconds())
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, errs.Wrap("ledger.ReleaseReviewClaim", err)
	}
	return ok, nil
}

// ResolveReviewItem marks a pending item claimed under r.IntentID posted.
func (s *Store) ResolveReviewItem(ctx context.Context, tenant, id string, r ledger.ReviewResolution) (bool, error) {
	var ok bool
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE ledger.review_items SET status = $4, intent_id = $3, event_count = $5, resolved_by = $6,
				resolved_at = now(), resolved_idem = NULLIF($7, ''), posting = NULL, posting_intent_id = NULL, posting_at = NULL,
				version = version + 1, updated_at = now(), history = `+reviewHistoryEntry(8)+`
			WHERE tenant_id = $1 AND id = $2 AND status = 'pending' AND posting_intent_id = $3`,
			tenant, id, r.IntentID, r.Status, r.EventCount, r.By, r.Idem,
			reviewChangeJSON(ledger.ReviewChange{Action: r.Status, By: r.By, Applied: []string{"intent " + r.IntentID}}))
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, errs.Wrap("ledger.ResolveReviewItem", err)
	}
	return ok, nil
}

// DeleteReviewItem soft-deletes a live item.
func (s *Store) DeleteReviewItem(ctx context.Context, tenant, id, intentID, reversalID, by string) (bool, error) {
	var ok bool
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var applied []string
		if reversalID != "" {
			applied = []string{"reversal " + reversalID}
		}
		tag, err := tx.Exec(ctx, `UPDATE ledger.review_items SET deleted_at = now(), deleted_by = $5, reversal_intent_id = NULLIF($4, '')::uuid,
				version = version + 1, updated_at = now(), history = `+reviewHistoryEntry(6)+`
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL AND (
				($3 = '' AND status = 'pending' AND posting IS NULL) OR
				($3 <> '' AND status <> 'pending' AND intent_id::text = $3))`,
			tenant, id, intentID, reversalID, by, reviewChangeJSON(ledger.ReviewChange{Action: "delete", By: by, Applied: applied}))
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, errs.Wrap("ledger.DeleteReviewItem", err)
	}
	return ok, nil
}
