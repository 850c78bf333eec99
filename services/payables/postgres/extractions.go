package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/outbox"
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
