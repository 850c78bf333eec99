package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

func (s *drStore) newItem(t *testing.T, tenant, sourceID string) ledger.ReviewItem {
	t.Helper()
	it := ledger.ReviewItem{ID: uuid.NewString(), SourceType: "bank_transaction", SourceID: sourceID, CreatedBy: "service:bank",
		LouSuggestion: ledger.Suggestion{BookingDate: "2025-03-01", Description: "Miete", Confidence: 0.5, Reasons: []string{},
			Lines: []ledger.Line{{AccountDebit: "6310", AccountCredit: "1800", Amount: money.MustParse("1500.00")}}}}
	created, err := s.CreateReviewItem(context.Background(), tenant, &it)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	return it
}

// TestReviewStoreTransitions: every conditional change applies only in
// the state it is meant for.
func TestReviewStoreTransitions(t *testing.T) {
	t.Parallel()
	s := newDRStore(t)
	ctx := context.Background()
	it := s.newItem(t, s.a, "tx-1")
	if it.Status != "pending" || it.Version != 1 || it.OriginalSuggestion.Description != "Miete" || it.CreatedAt.IsZero() {
		t.Fatalf("created %+v", it)
	}
	// One live item per source: a second create returns the first.
	dup := ledger.ReviewItem{ID: uuid.NewString(), SourceType: "bank_transaction", SourceID: "tx-1", LouSuggestion: ledger.Suggestion{}}
	if created, err := s.CreateReviewItem(ctx, s.a, &dup); err != nil || created || dup.ID != it.ID {
		t.Fatalf("duplicate source: %v %v %s", created, err, dup.ID)
	}
	// Another tenant may use the same source id.
	s.newItem(t, s.b, "tx-1")

	intent, other := uuid.NewString(), uuid.NewString()
	claim := func(id string) *ledger.ReviewItem {
		t.Helper()
		c, err := s.ClaimReviewItem(ctx, s.a, it.ID, ledger.ReviewClaim{Op: "confirm", IntentID: id})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := claim(intent); c == nil || c.Posting != "confirm" || c.PostingIntentID != intent {
		t.Fatalf("claim: %+v", c)
	}
	if c := claim(intent); c == nil {
		t.Fatal("re-claim under the same intent refused")
	}
	if c := claim(other); c != nil {
		t.Fatal("claim under another intent allowed")
	}
	if u, err := s.UpdateReviewDraft(ctx, s.a, it.ID, it.Version, it.LouSuggestion, ledger.ReviewChange{Action: "draft"}); err != nil || u != nil {
		t.Fatalf("draft update of a claimed item: %+v %v", u, err)
	}
	if ok, err := s.ReleaseReviewClaim(ctx, s.a, it.ID, intent, time.Hour); err != nil || ok {
		t.Fatalf("release of a fresh claim with an hour's age: %v %v", ok, err)
	}
	if ok, err := s.ReleaseReviewClaim(ctx, s.a, it.ID, other, 0); err != nil || ok {
		t.Fatalf("release under another intent: %v %v", ok, err)
	}
	if ok, err := s.ReleaseReviewClaim(ctx, s.a, it.ID, intent, 0); err != nil || !ok {
		t.Fatalf("release: %v %v", ok, err)
	}
	sug := it.LouSuggestion
	sug.Description = "Miete März"
	if u, err := s.UpdateReviewDraft(ctx, s.a, it.ID, it.Version+1, sug, ledger.ReviewChange{Action: "draft"}); err != nil || u != nil {
		t.Fatalf("draft update at a stale version: %+v %v", u, err)
	}
	u, err := s.UpdateReviewDraft(ctx, s.a, it.ID, it.Version, sug, ledger.ReviewChange{Action: "adjust", By: "key:1", Applied: []string{"x"}})
	if err != nil || u == nil || u.Version != 2 || u.LouSuggestion.Description != "Miete März" || u.OriginalSuggestion.Description != "Miete" {
		t.Fatalf("draft update: %+v %v", u, err)
	}
	if ok, err := s.ResolveReviewItem(ctx, s.a, it.ID, ledger.ReviewResolution{Status: "confirmed", IntentID: intent, EventCount: 1}); err != nil || ok {
		t.Fatalf("resolve without a claim: %v %v", ok, err)
	}
	if ok, err := s.DeleteReviewItem(ctx, s.a, it.ID, intent, "", "key:1"); err != nil || ok {
		t.Fatalf("delete of a pending item as resolved: %v %v", ok, err)
	}
	claim(intent)
	if ok, err := s.DeleteReviewItem(ctx, s.a, it.ID, "", "", "key:1"); err != nil || ok {
		t.Fatalf("delete of a claimed item: %v %v", ok, err)
	}
	res := ledger.ReviewResolution{Status: "confirmed", IntentID: intent, EventCount: 1, By: "key:1", Idem: "h"}
	if ok, err := s.ResolveReviewItem(ctx, s.a, it.ID, res); err != nil || !ok {
		t.Fatalf("resolve: %v %v", ok, err)
	}
	if ok, err := s.ResolveReviewItem(ctx, s.a, it.ID, res); err != nil || ok {
		t.Fatalf("second resolve: %v %v", ok, err)
	}
	got, err := s.ReviewItem(ctx, s.a, it.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "confirmed" || *got.IntentID != intent || *got.EventCount != 1 || got.Posting != "" || got.ResolvedIdem != "h" || *got.ResolvedBy != "key:1" {
		t.Fatalf("resolved %+v", got)
	}
	if c := claim(intent); c != nil {
		t.Fatal("claim of a resolved item allowed")
	}
	if ok, err := s.DeleteReviewItem(ctx, s.a, it.ID, "", "", "key:1"); err != nil || ok {
		t.Fatalf("delete of a resolved item as pending: %v %v", ok, err)
	}
	rev := uuid.NewString()
	if ok, err := s.DeleteReviewItem(ctx, s.a, it.ID, intent, rev, "key:1"); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, err := s.DeleteReviewItem(ctx, s.a, it.ID, intent, rev, "key:1"); err != nil || ok {
		t.Fatalf("second delete: %v %v", ok, err)
	}
	if _, err := s.ReviewItem(ctx, s.a, it.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("deleted item readable: %v", err)
	}
	// The source is free again once its item is deleted.
	again := s.newItem(t, s.a, "tx-1")
	if again.ID == it.ID {
		t.Fatal("deleted item reused")
	}

	var actions []string
	if err := s.owner.QueryRow(ctx, "SELECT array(SELECT e->>'action' FROM jsonb_array_elements(history) e) FROM ledger.review_items WHERE id = $1", it.ID).Scan(&actions); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create", "adjust", "confirmed", "delete"}, actions); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}

// TestReviewStoreIsolation: tenants see only their own items, also to the
// row-level security fence behind the queries.
func TestReviewStoreIsolation(t *testing.T) {
	t.Parallel()
	s := newDRStore(t)
	ctx := context.Background()
	mine := s.newItem(t, s.a, "")
	s.newItem(t, s.b, "")
	if _, err := s.ReviewItem(ctx, s.b, mine.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("b reads a's item: %v", err)
	}
	if _, err := s.NextReviewItem(ctx, s.b, mine.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("b pages after a's item: %v", err)
	}
	if c, err := s.ClaimReviewItem(ctx, s.b, mine.ID, ledger.ReviewClaim{Op: "confirm", IntentID: uuid.NewString()}); err != nil || c != nil {
		t.Fatalf("b claims a's item: %+v %v", c, err)
	}
	items, err := s.ReviewItems(ctx, s.a, ledger.ReviewFilter{Status: "all", Limit: 10})
	if err != nil || len(items) != 1 || items[0].ID != mine.ID {
		t.Fatalf("a lists %+v %v", items, err)
	}
	rows, done, err := s.asRole(ctx, "ledger_svc", s.b, "SELECT id::text FROM ledger.review_items")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	done()
	if err != nil || len(seen) != 1 || seen[0] == mine.ID {
		t.Fatalf("ledger_svc as b sees %v %v", seen, err)
	}
	// A document of another tenant cannot be referenced.
	content := []byte("%PDF-1.4 a")
	d, _, err := s.PutDocument(ctx, s.a, drNewDoc(content, "a.pdf", ledger.MimePDF), content, "")
	if err != nil {
		t.Fatal(err)
	}
	it := ledger.ReviewItem{ID: uuid.NewString(), SourceType: "document", DocumentID: &d.ID}
	if _, err := s.CreateReviewItem(ctx, s.b, &it); !errs.Is(err, errs.NotFound) {
		t.Fatalf("b references a's document: %v", err)
	}
}
