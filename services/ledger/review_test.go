package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
)

func (e *drEnv) reviewReq(key string) ledger.Request {
	return ledger.Request{Claims: e.Claims, IdempotencyKey: key, Channel: "review_queue"}
}

// newItem queues drDraft (or sug) for the env's tenant.
func (e *drEnv) newItem(t *testing.T, sug *ledger.Suggestion) ledger.ReviewItem {
	t.Helper()
	s := drDraft()
	if sug != nil {
		s = *sug
	}
	raw, _ := json.Marshal(s)
	it, created, err := e.Svc.CreateReviewItem(context.Background(), ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "manual", Suggestion: raw})
	if err != nil || !created {
		t.Fatalf("CreateReviewItem: %v created %v", err, created)
	}
	return it
}

func (e *drEnv) item(t *testing.T, id string) *ledger.ReviewItem {
	t.Helper()
	it, err := e.Svc.ReviewItem(context.Background(), e.Tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// drConfirmIntentID is the documented deterministic intent id of a confirm.
func drConfirmIntentID(itemID string) string {
	return uuid.NewSHA1(uuid.MustParse(itemID), []byte("confirm")).String()
}

func TestReviewCreate(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	ct, body := ledgertest.Form(t, ledgertest.File("beleg.pdf", "", drPDF))
	doc, _, err := e.Svc.UploadDocument(ctx, e.req(""), ct, body)
	if err != nil {
		t.Fatal(err)
	}
	sug := `{"booking_date":" 2025-03-15 ","description":" Büromaterial ","lines":[{"account_debit":"6815","account_credit":"1800","amount":"119.0","tax_code":"VSt19"}],"confidence":0.92,"reasons":["vendor", " "]}`
	in := ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "document", SourceID: "inbox-1", DocumentID: doc.ID, Suggestion: json.RawMessage(sug), CreatedBy: "service:payables"}
	it, created, err := e.Svc.CreateReviewItem(ctx, in)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	want := ledger.Suggestion{BookingDate: "2025-03-15", Description: "Büromaterial", Confidence: 0.92, Reasons: []string{"vendor"},
		Lines: []ledger.Line{ledgertest.Line("6815", "1800", "119.00", "VSt19")}}
	got := e.item(t, it.ID)
	if diff := cmp.Diff(want, got.LouSuggestion, drAmounts); diff != "" {
		t.Fatalf("normalised suggestion (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got.OriginalSuggestion, drAmounts); diff != "" {
		t.Fatalf("original suggestion (-want +got):\n%s", diff)
	}
	if got.Status != "pending" || got.SourceType != "document" || got.SourceID != "inbox-1" || got.CreatedBy != "service:payables" ||
		got.DocumentID == nil || *got.DocumentID != doc.ID || got.Document == nil || *got.Document != doc || got.IntentID != nil {
		t.Fatalf("item %+v", got)
	}

	// Retries answer with the same item: by source, and by a given id.
	again, created, err := e.Svc.CreateReviewItem(ctx, in)
	if err != nil || created || again.ID != it.ID {
		t.Fatalf("retry by source: %s %v %v, want %s", again.ID, created, err, it.ID)
	}
	id := uuid.NewString()
	in2 := ledgerv1.ReviewItemInput{TenantID: e.Tenant, ID: id, SourceType: "manual", Suggestion: json.RawMessage(`{}`)}
	for i, wantCreated := range []bool{true, false} {
		got, created, err := e.Svc.CreateReviewItem(ctx, in2)
		if err != nil || created != wantCreated || got.ID != id {
			t.Fatalf("create by id #%d: %s %v %v", i, got.ID, created, err)
		}
	}
	// An empty draft is allowed in the queue: completing it is the review.
	if g := e.item(t, id); g.LouSuggestion.Lines == nil || g.LouSuggestion.Reasons == nil {
		t.Fatalf("empty draft not normalised: %+v", g.LouSuggestion)
	}

	for _, tc := range []struct {
		name string
		in   ledgerv1.ReviewItemInput
		code string
	}{
		{"no tenant", ledgerv1.ReviewItemInput{SourceType: "manual", Suggestion: json.RawMessage(`{}`)}, errs.InvalidInput},
		{"bad id", ledgerv1.ReviewItemInput{TenantID: e.Tenant, ID: "x", SourceType: "manual", Suggestion: json.RawMessage(`{}`)}, errs.InvalidInput},
		{"bad source type", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "email", Suggestion: json.RawMessage(`{}`)}, errs.InvalidInput},
		{"document source without document", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "document", Suggestion: json.RawMessage(`{}`)}, errs.InvalidInput},
		{"no suggestion", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "manual"}, errs.InvalidInput},
		{"unknown suggestion field", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "manual", Suggestion: json.RawMessage(`{"konto":1}`)}, errs.InvalidInput},
		{"confidence above 1", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "manual", Suggestion: json.RawMessage(`{"confidence":1.5}`)}, errs.InvalidInput},
		{"bad amount", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "manual", Suggestion: json.RawMessage(`{"lines":[{"amount":"x"}]}`)}, errs.InvalidInput},
		{"unknown document", ledgerv1.ReviewItemInput{TenantID: e.Tenant, SourceType: "document", DocumentID: uuid.NewString(), Suggestion: json.RawMessage(`{}`)}, errs.NotFound},
	} {
		if _, _, err := e.Svc.CreateReviewItem(ctx, tc.in); !errs.Is(err, tc.code) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// Another tenant's document cannot be referenced.
	other, _ := ledgertest.NewTenant()
	_, _, err = e.Svc.CreateReviewItem(ctx, ledgerv1.ReviewItemInput{TenantID: other, SourceType: "document", DocumentID: doc.ID, Suggestion: json.RawMessage(`{}`)})
	ledgertest.WantCode(t, err, errs.NotFound)
}

func TestReviewListCountNext(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		s := drDraft()
		s.Description = "Beleg " + string(rune('A'+i))
		ids = append(ids, e.newItem(t, &s).ID)
	}
	if _, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), ids[1], false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.DeleteReview(ctx, e.reviewReq(""), ids[3]); err != nil {
		t.Fatal(err)
	}
	list := func(status string, limit, offset int) []string {
		t.Helper()
		items, err := e.Svc.ReviewItems(ctx, e.Tenant, ledger.ReviewFilter{Status: status, Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	for _, tc := range []struct {
		status        string
		limit, offset int
		want          []string
	}{
		{"pending", 50, 0, []string{ids[0], ids[2], ids[4]}},
		{"confirmed", 50, 0, []string{ids[1]}},
		{"overridden", 50, 0, []string{}},
		{"all", 50, 0, []string{ids[0], ids[1], ids[2], ids[4]}},
		{"all", 2, 1, []string{ids[1], ids[2]}},
	} {
		if diff := cmp.Diff(tc.want, list(tc.status, tc.limit, tc.offset)); diff != "" {
			t.Errorf("list %s %d/%d (-want +got):\n%s", tc.status, tc.limit, tc.offset, diff)
		}
	}
	for status, want := range map[string]int{"pending": 3, "confirmed": 1, "overridden": 0, "all": 4} {
		n, pending, err := e.Svc.ReviewCount(ctx, e.Tenant, status)
		if err != nil || n != want || pending != 3 {
			t.Errorf("count %s = %d, %d pending, %v; want %d, 3", status, n, pending, err, want)
		}
	}
	_, err := e.Svc.ReviewItems(ctx, e.Tenant, ledger.ReviewFilter{Status: "open", Limit: 10})
	ledgertest.WantCode(t, err, errs.InvalidInput)
	_, err = e.Svc.ReviewItems(ctx, e.Tenant, ledger.ReviewFilter{Status: "all", Limit: 201})
	ledgertest.WantCode(t, err, errs.InvalidInput)
	_, _, err = e.Svc.ReviewCount(ctx, e.Tenant, "done")
	ledgertest.WantCode(t, err, errs.InvalidInput)

	// next walks the pending items in creation order, past resolved and deleted ones.
	for _, step := range []struct{ after, want string }{
		{"", ids[0]}, {ids[0], ids[2]}, {ids[1], ids[2]}, {ids[2], ids[4]}, {ids[3], ids[4]},
	} {
		it, err := e.Svc.NextReviewItem(ctx, e.Tenant, step.after)
		if err != nil || it.ID != step.want {
			t.Errorf("next after %q = %v %v, want %s", step.after, it, err, step.want)
		}
	}
	_, err = e.Svc.NextReviewItem(ctx, e.Tenant, ids[4])
	ledgertest.WantCode(t, err, errs.NotFound)
	_, err = e.Svc.NextReviewItem(ctx, e.Tenant, uuid.NewString())
	ledgertest.WantCode(t, err, errs.NotFound)
	_, err = e.Svc.NextReviewItem(ctx, e.Tenant, "x")
	ledgertest.WantCode(t, err, errs.InvalidInput)

	// Another tenant sees none of it.
	other, _ := ledgertest.NewTenant()
	if items, err := e.Svc.ReviewItems(ctx, other, ledger.ReviewFilter{Status: "all", Limit: 50}); err != nil || len(items) != 0 {
		t.Fatalf("other tenant lists %d items, %v", len(items), err)
	}
	_, err = e.Svc.NextReviewItem(ctx, other, "")
	ledgertest.WantCode(t, err, errs.NotFound)
	_, err = e.Svc.ReviewItem(ctx, other, ids[0])
	ledgertest.WantCode(t, err, errs.NotFound)
}

// TestReviewConfirm: confirm posts the draft once under the item's
// deterministic intent id through the review_queue channel.
func TestReviewConfirm(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	it := e.newItem(t, nil)
	res, err := e.Svc.ConfirmReview(ctx, e.reviewReq("k1"), it.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.ReviewResult{Status: "confirmed", IntentID: drConfirmIntentID(it.ID), EventCount: 2}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Fatalf("confirm (-want +got):\n%s", diff)
	}
	d, err := e.Svc.Intent(ctx, e.Tenant, res.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != "review_queue" || d.Entries[0].ProvenanceSummary.Channel != "review_queue" || d.Description != "Büromaterial" {
		t.Fatalf("intent %+v", d)
	}
	got := e.item(t, it.ID)
	if got.Status != "confirmed" || got.IntentID == nil || *got.IntentID != res.IntentID || got.ResolvedBy == nil || got.ResolvedAt == nil {
		t.Fatalf("item after confirm %+v", got)
	}
	// The same request with the same key gets the first answer; anything
	// else is refused as not pending, and nothing more is posted.
	if again, err := e.Svc.ConfirmReview(ctx, e.reviewReq("k1"), it.ID, false); err != nil || again != res {
		t.Fatalf("replay = %+v %v, want %+v", again, err, res)
	}
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq(""), it.ID, false)
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq("k2"), it.ID, false)
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq("k1"), it.ID, drDraft().Booking(false))
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	_, err = e.Svc.AdjustReview(ctx, e.reviewReq(""), it.ID, "Datum 2025-03-31")
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	_, err = e.Svc.UpdateReviewDraft(ctx, e.reviewReq(""), it.ID, drDraft())
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != 1 {
		t.Fatalf("%d intents, want 1", n)
	}
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq(""), uuid.NewString(), false)
	ledgertest.WantCode(t, err, errs.NotFound)
}

// TestReviewDoubleConfirm: concurrent confirms of one item post one
// intent; exactly one of them succeeds.
func TestReviewDoubleConfirm(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		draft := drDraft()
		draft.Description = fmt.Sprintf("Büromaterial %d", round)
		it := e.newItem(t, &draft)
		const n = 8
		var wg sync.WaitGroup
		results := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				skip := i%2 == 0 // with and without the duplicate check
				if i%3 == 0 {
					_, results[i] = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, draft.Booking(true))
					return
				}
				_, results[i] = e.Svc.ConfirmReview(ctx, e.reviewReq(""), it.ID, skip)
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, err := range results {
			switch {
			case err == nil:
				ok++
			case !errs.Is(err, errs.ReviewItemNotPending):
				t.Fatalf("round %d: unexpected error %v", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d confirms succeeded, want 1 (%v)", round, ok, results)
		}
		got := e.item(t, it.ID)
		if n := e.Count(t, "SELECT count(*) FROM ledger.intents WHERE id = $1", *got.IntentID); n != 1 {
			t.Fatalf("round %d: intent %s stored %d times", round, *got.IntentID, n)
		}
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != 3 {
		t.Fatalf("%d intents after 3 rounds, want 3", n)
	}
}

// TestReviewInterruptedConfirm: a confirm that posted but died before
// marking the item is finished by the next attempt, never posted twice,
// and blocks an override meanwhile.
func TestReviewInterruptedConfirm(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	it := e.newItem(t, nil)
	intentID := drConfirmIntentID(it.ID)
	// The first attempt: claim and post, then "crash".
	if c, err := e.Store.ClaimReviewItem(ctx, e.Tenant, it.ID, ledger.ReviewClaim{Op: "confirm", IntentID: intentID}); err != nil || c == nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	chart := newDRChart()
	date, events, err := ledger.Expand(drDraft().Booking(false), chart)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Store.Post(ctx, &ledger.Intent{ID: intentID, TenantID: e.Tenant, BookingDate: date, Description: "Büromaterial", Source: "review_queue", Events: events}); err != nil {
		t.Fatal(err)
	}
	// Edits are refused while the posting is unresolved.
	_, err = e.Svc.UpdateReviewDraft(ctx, e.reviewReq(""), it.ID, drDraft())
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	// The retry finishes it with the intent already posted.
	res, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), it.ID, false)
	if err != nil || res.IntentID != intentID || res.EventCount != 2 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != 1 {
		t.Fatalf("%d intents, want 1", n)
	}

	// Same crash, but the next request is an override: the confirm stands.
	it = e.newItem(t, &ledger.Suggestion{BookingDate: "2025-03-16", Description: "Porto", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "5", "")}})
	intentID = drConfirmIntentID(it.ID)
	if c, err := e.Store.ClaimReviewItem(ctx, e.Tenant, it.ID, ledger.ReviewClaim{Op: "confirm", IntentID: intentID}); err != nil || c == nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	date, events, _ = ledger.Expand(ledger.Booking{BookingDate: "2025-03-16", Description: "Porto", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "5", "")}}, chart)
	if _, _, err := e.Store.Post(ctx, &ledger.Intent{ID: intentID, TenantID: e.Tenant, BookingDate: date, Description: "Porto", Source: "review_queue", Events: events}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, drDraft().Booking(true))
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	if got := e.item(t, it.ID); got.Status != "confirmed" || *got.IntentID != intentID {
		t.Fatalf("item %+v, want confirmed by the interrupted posting", got)
	}

	// A claim that never posted blocks for a while, then is taken over.
	it = e.newItem(t, nil)
	if c, err := e.Store.ClaimReviewItem(ctx, e.Tenant, it.ID, ledger.ReviewClaim{Op: "confirm", IntentID: drConfirmIntentID(it.ID)}); err != nil || c == nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	over := drDraft()
	over.Description = "Override"
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, over.Booking(false))
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	_, err = e.Svc.DeleteReview(ctx, e.reviewReq(""), it.ID)
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
	if _, err := e.Owner.Exec(ctx, "UPDATE ledger.review_items SET posting_at = now() - interval '3 minutes' WHERE id = $1", it.ID); err != nil {
		t.Fatal(err)
	}
	res, err = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, over.Booking(false))
	if err != nil || res.Status != "overridden" {
		t.Fatalf("override after a stale claim: %+v %v", res, err)
	}
	got := e.item(t, it.ID)
	if got.BookedDraft == nil || got.BookedDraft.Description != "Override" {
		t.Fatalf("booked draft %+v", got.BookedDraft)
	}
}

// TestReviewRefusedPostingChangesNothing: an invalid draft or a refused
// posting leaves the item pending, editable and unposted.
func TestReviewRefusedPostingChangesNothing(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	incomplete := ledger.Suggestion{BookingDate: "2025-03-15", Description: "?", Lines: []ledger.Line{ledgertest.Line("", "1800", "10", "")}}
	it := e.newItem(t, &incomplete)
	before := e.item(t, it.ID)
	_, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), it.ID, false)
	ledgertest.WantCode(t, err, errs.InvalidInput)
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, incomplete.Booking(false))
	ledgertest.WantCode(t, err, errs.InvalidInput)
	after := e.item(t, it.ID)
	if diff := cmp.Diff(before, after, drAmounts); diff != "" {
		t.Fatalf("refused confirm changed the item (-before +after):\n%s", diff)
	}
	// Duplicate of an existing booking: refused, released, then allowed when skipped.
	e.newItem(t, nil)
	first := e.newItem(t, nil)
	if _, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), first.ID, false); err != nil {
		t.Fatal(err)
	}
	dup := e.newItem(t, nil)
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq(""), dup.ID, false)
	ledgertest.WantCode(t, err, errs.DuplicateBooking)
	if got := e.item(t, dup.ID); got.Status != "pending" || got.Posting != "" {
		t.Fatalf("item after refused posting %+v", got)
	}
	if _, err := e.Svc.AdjustReview(ctx, e.reviewReq(""), dup.ID, "Text Büromaterial 2"); err != nil {
		t.Fatalf("adjust after refused posting: %v", err)
	}
	if _, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), dup.ID, true); err != nil {
		t.Fatal(err)
	}
	// Locked period: refused, stays pending.
	locked := e.newItem(t, &ledger.Suggestion{BookingDate: "2025-01-10", Description: "Januar", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "10", "")}})
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-01", "soft-locked", "test"); err != nil {
		t.Fatal(err)
	}
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq(""), locked.ID, false)
	ledgertest.WantCode(t, err, errs.PeriodLocked)
	if got := e.item(t, locked.ID); got.Status != "pending" || got.Posting != "" {
		t.Fatalf("item after locked period %+v", got)
	}
}

// TestReviewRefusalLeavesItemAsItWas: a confirm or override the journal
// refuses releases its claim; the item reads exactly as before, hidden
// claim columns included.
func TestReviewRefusalLeavesItemAsItWas(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	it := e.newItem(t, &ledger.Suggestion{BookingDate: "2025-02-10", Description: "Februar", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "10", "")}})
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-02", "soft-locked", "test"); err != nil {
		t.Fatal(err)
	}
	before := e.item(t, it.ID)
	_, err := e.Svc.ConfirmReview(ctx, e.reviewReq("c1"), it.ID, false)
	ledgertest.WantCode(t, err, errs.PeriodLocked)
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq("o1"), it.ID, ledger.Booking{BookingDate: "2025-02-11", Description: "Februar",
		Lines: []ledger.Line{ledgertest.Line("6805", "1800", "10", "")}})
	ledgertest.WantCode(t, err, errs.PeriodLocked)
	_, err = e.Svc.OverrideReview(ctx, e.reviewReq(""), it.ID, ledger.Booking{BookingDate: "2025-03-11", Description: "März",
		Lines: []ledger.Line{ledgertest.Line("6805", "6805", "10", "")}})
	ledgertest.WantCode(t, err, errs.InvalidInput)
	if diff := cmp.Diff(before, e.item(t, it.ID), drAmounts); diff != "" {
		t.Fatalf("item after refused postings (-before +after):\n%s", diff)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1", e.Tenant); n != 0 {
		t.Fatalf("%d intents posted, want 0", n)
	}
	res, err := e.Svc.OverrideReview(ctx, e.reviewReq("o2"), it.ID, ledger.Booking{BookingDate: "2025-03-11", Description: "März",
		Lines: []ledger.Line{ledgertest.Line("6805", "1800", "10", "")}})
	if err != nil || res.Status != "overridden" {
		t.Fatalf("override into an open period: %+v %v", res, err)
	}
}

func TestReviewOverride(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	it := e.newItem(t, nil)
	b := ledger.Booking{BookingDate: "2025-03-20", Description: "Telefon", Lines: []ledger.Line{ledgertest.Line("6805", "1800", "50", "VSt19")}}
	res, err := e.Svc.OverrideReview(ctx, e.reviewReq("o1"), it.ID, b)
	if err != nil || res.Status != "overridden" || res.EventCount != 2 {
		t.Fatalf("override: %+v %v", res, err)
	}
	got := e.item(t, it.ID)
	want := ledger.Suggestion{BookingDate: "2025-03-20", Description: "Telefon", Lines: []ledger.Line{ledgertest.Line("6805", "1800", "50", "VSt19")}, Reasons: []string{}}
	if got.Status != "overridden" || *got.IntentID != res.IntentID || got.BookedDraft == nil {
		t.Fatalf("item %+v", got)
	}
	if diff := cmp.Diff(want, *got.BookedDraft, drAmounts); diff != "" {
		t.Fatalf("booked draft (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(drDraft(), got.LouSuggestion, drAmounts); diff != "" {
		t.Fatalf("the suggestion itself must stay (-want +got):\n%s", diff)
	}
	d, err := e.Svc.Intent(ctx, e.Tenant, res.IntentID)
	if err != nil || d.Description != "Telefon" || d.Entries[0].AccountDebit != "6805" {
		t.Fatalf("intent %+v %v", d, err)
	}
	if again, err := e.Svc.OverrideReview(ctx, e.reviewReq("o1"), it.ID, b); err != nil || again != res {
		t.Fatalf("override replay %+v %v", again, err)
	}
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq("o1"), it.ID, false)
	ledgertest.WantCode(t, err, errs.ReviewItemNotPending)
}

func TestReviewDraftAndAdjust(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	it := e.newItem(t, nil)
	res, err := e.Svc.AdjustReview(ctx, e.reviewReq(""), it.ID, "Konto 6805 statt 6815 und Datum 31.03.2025")
	if err != nil {
		t.Fatal(err)
	}
	want := drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountDebit, s.BookingDate = "6805", "2025-03-31" })
	if diff := cmp.Diff(want, res.LouSuggestion, drAmounts); diff != "" {
		t.Fatalf("adjusted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"account 6815 replaced by 6805 on 1 line", "booking date set to 2025-03-31"}, res.Applied); diff != "" {
		t.Fatalf("applied (-want +got):\n%s", diff)
	}
	got := e.item(t, it.ID)
	if diff := cmp.Diff(want, got.LouSuggestion, drAmounts); diff != "" {
		t.Fatalf("saved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(drDraft(), got.OriginalSuggestion, drAmounts); diff != "" {
		t.Fatalf("original kept (-want +got):\n%s", diff)
	}
	_, err = e.Svc.AdjustReview(ctx, e.reviewReq(""), it.ID, "mach es richtig")
	ledgertest.WantCode(t, err, errs.InvalidInput)
	_, err = e.Svc.AdjustReview(ctx, e.reviewReq(""), uuid.NewString(), "Datum 2025-03-31")
	ledgertest.WantCode(t, err, errs.NotFound)

	// PATCH draft: validated strictly, stored normalised.
	draft := ledger.Suggestion{BookingDate: "2025-04-01", Description: "  Toner  ", Lines: []ledger.Line{ledgertest.Line(" 6815", "1800 ", "59.5", "VSt19")}, Confidence: 1}
	saved, err := e.Svc.UpdateReviewDraft(ctx, e.reviewReq(""), it.ID, draft)
	if err != nil {
		t.Fatal(err)
	}
	wantDraft := ledger.Suggestion{BookingDate: "2025-04-01", Description: "Toner", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "59.50", "VSt19")}, Confidence: 1, Reasons: []string{}}
	if diff := cmp.Diff(wantDraft, saved, drAmounts); diff != "" {
		t.Fatalf("normalised draft (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(saved)
	if want := `{"booking_date":"2025-04-01","description":"Toner","lines":[{"account_debit":"6815","account_credit":"1800","amount":59.50,"tax_code":"VSt19"}],"confidence":1,"reasons":[]}`; string(b) != want {
		t.Fatalf("draft JSON\n%s\nwant\n%s", b, want)
	}
	for _, bad := range []ledger.Suggestion{
		{BookingDate: "2025-04-31", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "")}},
		{BookingDate: "2025-04-01", Description: "", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "")}},
		{BookingDate: "2025-04-01", Description: "x"},
		{BookingDate: "2025-04-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "9999", "1", "")}},
		{BookingDate: "2025-04-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1.001", "")}},
		{BookingDate: "2025-04-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "")}, Confidence: -0.1},
	} {
		_, err := e.Svc.UpdateReviewDraft(ctx, e.reviewReq(""), it.ID, bad)
		ledgertest.WantCode(t, err, errs.InvalidInput)
	}
	if diff := cmp.Diff(wantDraft, e.item(t, it.ID).LouSuggestion, drAmounts); diff != "" {
		t.Fatalf("refused drafts changed the item (-want +got):\n%s", diff)
	}
	// Confirm posts the edited draft.
	res2, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), it.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := e.Svc.Intent(ctx, e.Tenant, res2.IntentID)
	if d.Description != "Toner" || d.BookingDate != "2025-04-01" || d.Summary.TotalAmount.StringFixed(2) != "59.50" {
		t.Fatalf("posted %+v", d)
	}
}

func TestReviewDelete(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	pending := e.newItem(t, nil)
	res, err := e.Svc.DeleteReview(ctx, e.reviewReq(""), pending.ID)
	if err != nil || res != (ledger.DeleteResult{OK: true}) {
		t.Fatalf("delete pending: %+v %v", res, err)
	}
	_, err = e.Svc.ReviewItem(ctx, e.Tenant, pending.ID)
	ledgertest.WantCode(t, err, errs.NotFound)
	_, err = e.Svc.DeleteReview(ctx, e.reviewReq(""), pending.ID)
	ledgertest.WantCode(t, err, errs.NotFound)
	_, err = e.Svc.ConfirmReview(ctx, e.reviewReq(""), pending.ID, false)
	ledgertest.WantCode(t, err, errs.NotFound)
	// The row and its history are kept.
	if n := e.Count(t, "SELECT count(*) FROM ledger.review_items WHERE id = $1 AND deleted_at IS NOT NULL AND jsonb_array_length(history) = 2", pending.ID); n != 1 {
		t.Fatal("soft-deleted row with history not found")
	}

	confirmed := e.newItem(t, nil)
	c, err := e.Svc.ConfirmReview(ctx, e.reviewReq(""), confirmed.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.Svc.DeleteReview(ctx, e.reviewReq(""), confirmed.ID)
	if err != nil || !res.OK || !res.Reversed || res.ReversalIntentID == "" {
		t.Fatalf("delete confirmed: %+v %v", res, err)
	}
	d, err := e.Svc.Intent(ctx, e.Tenant, c.IntentID)
	if err != nil || d.ReversedBy == nil || *d.ReversedBy != res.ReversalIntentID {
		t.Fatalf("original %+v %v, want reversed by %s", d, err, res.ReversalIntentID)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.review_items WHERE id = $1 AND reversal_intent_id = $2", confirmed.ID, res.ReversalIntentID); n != 1 {
		t.Fatal("reversal not recorded on the item")
	}

	// Interrupted deletion: reversed already, item still live. The retry
	// finds the reversal instead of reversing twice.
	overridden := e.newItem(t, nil)
	o, err := e.Svc.OverrideReview(ctx, e.reviewReq(""), overridden.ID, drDraft().Booking(true))
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := e.Svc.Reverse(ctx, e.req(""), ledger.ReverseRequest{IntentID: o.IntentID})
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.Svc.DeleteReview(ctx, e.reviewReq(""), overridden.ID)
	if err != nil || res.ReversalIntentID != rev.ReversalIntentID {
		t.Fatalf("delete after reversal: %+v %v, want reversal %s", res, err, rev.ReversalIntentID)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents WHERE reverses IS NOT NULL"); n != 2 {
		t.Fatalf("%d reversals, want 2", n)
	}
	other, otherClaims := ledgertest.NewTenant()
	_ = other
	_, err = e.Svc.DeleteReview(ctx, ledger.Request{Claims: otherClaims}, e.newItem(t, nil).ID)
	ledgertest.WantCode(t, err, errs.NotFound)
}

// TestReviewItemsKeepHistory: rows are never deleted, by anyone.
func TestReviewItemsKeepHistory(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	e.newItem(t, nil)
	ledgertest.Refused(t, e.Owner, "DELETE FROM ledger.review_items", "TRUNCATE ledger.review_items")
}
