package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// TestIngest: an item, its queued extraction (with its outbox message)
// and its log row are written together; the same bytes again are
// DUPLICATE_DOCUMENT with the first item, nothing written; the log is
// append-only for the service and every list is the tenant's own.
func TestIngest(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	hash := strings.Repeat("ab", 32)
	item := func() payables.NewInboxItem {
		return payables.NewInboxItem{ID: uuid.NewString(), DocumentID: uuid.NewString(), FileHash: hash, MimeType: payables.MimePDF,
			OriginalName: "r.pdf", Source: payables.SourceUpload}
	}
	row := func(outcome string, doc *string) payablesv1.IngestionRow {
		r := payablesv1.IngestionRow{ID: uuid.NewString(), Outcome: outcome, Filename: "r.pdf", ClaimedMime: "application/pdf", SizeBytes: 3,
			FileHash: &hash, DocumentID: doc, CreatedAt: time.Now()}
		if outcome != payablesv1.OutcomeIngested {
			reason := "why"
			r.Reason = &reason
		}
		return r
	}
	first := item()
	got, _, err := s.Ingest(ctx, tenant, first, row(payablesv1.OutcomeIngested, &first.DocumentID))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != first.ID || got.Status != payablesv1.InboxPending || got.OCRExtraction != nil {
		t.Fatalf("item %+v", got)
	}
	second := item()
	_, ref, err := s.Ingest(ctx, tenant, second, row(payablesv1.OutcomeIngested, &second.DocumentID))
	if !errs.Is(err, errs.DuplicateDocument) || ref.ID != first.ID {
		t.Fatalf("same bytes again: %v, ref %+v", err, ref)
	}
	// Another tenant may hold the same bytes.
	if _, _, err := s.Ingest(ctx, other, item(), row(payablesv1.OutcomeIngested, &second.DocumentID)); err != nil {
		t.Fatal(err)
	}
	var items, queued, outbox, logged int
	if err := owner.QueryRow(ctx, `SELECT (SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1),
			(SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND state = 'queued' AND inbox_item_id = $2),
			(SELECT count(*) FROM payables.outbox), (SELECT count(*) FROM payables.ingestion_log WHERE tenant_id = $1)`,
		tenant, first.ID).Scan(&items, &queued, &outbox, &logged); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 1, 2, 1}, []int{items, queued, outbox, logged}); diff != "" {
		t.Fatalf("items, queued, outbox, log (-want +got):\n%s", diff)
	}
	ref, err = s.InboxByHash(ctx, tenant, hash)
	if err != nil || ref.ID != first.ID {
		t.Fatalf("InboxByHash = %+v, %v", ref, err)
	}
	dup := row(payablesv1.OutcomeSkippedDuplicate, nil)
	dup.OriginalInboxID = &first.ID
	if err := s.LogIngestion(ctx, tenant, dup); err != nil {
		t.Fatal(err)
	}
	rejected := row(payablesv1.OutcomeRejectedInvalid, nil)
	if err := s.LogIngestion(ctx, tenant, rejected); err != nil {
		t.Fatal(err)
	}
	ids := func(f payablesv1.IngestionFilter) []string {
		rs, err := s.IngestionLog(ctx, tenant, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Outcome)
		}
		return out
	}
	if diff := cmp.Diff([]string{"rejected_invalid", "skipped_duplicate", "ingested"}, ids(payablesv1.IngestionFilter{Limit: 10})); diff != "" {
		t.Fatalf("log, newest first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"skipped_duplicate"}, ids(payablesv1.IngestionFilter{Limit: 10, Outcomes: []string{"skipped_duplicate", "failed"}})); diff != "" {
		t.Fatalf("filtered log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"skipped_duplicate"}, ids(payablesv1.IngestionFilter{Limit: 1, Offset: 1})); diff != "" {
		t.Fatalf("paged log (-want +got):\n%s", diff)
	}

	// The service's role may add rows, never change or remove them.
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 2, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, sql := range []string{`UPDATE payables.ingestion_log SET reason = 'x'`, `DELETE FROM payables.ingestion_log`} {
		err := db.InTenant(ctx, pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, sql); return err })
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s: %v, want permission denied", sql, err)
		}
	}
	// A row against its outcome's rules is refused.
	bad := row(payablesv1.OutcomeIngested, nil)
	if err := s.LogIngestion(ctx, tenant, bad); err == nil {
		t.Error("an ingested row without a document was written")
	}
}
