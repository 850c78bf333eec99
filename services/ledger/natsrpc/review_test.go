package natsrpc_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

func TestReviewRoutes(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	doc := h.uploadPDF(t, "beleg.pdf", "application/pdf", 201)

	first := h.createItem(t, ledgerv1.ReviewItemInput{SourceType: "document", SourceID: "inbox-1", DocumentID: doc.ID, CreatedBy: "service:payables"}, 201)
	if !first.Created || !ledger.ValidID(first.ID) {
		t.Fatalf("created %+v", first)
	}
	if again := h.createItem(t, ledgerv1.ReviewItemInput{SourceType: "document", SourceID: "inbox-1", DocumentID: doc.ID}, 200); again.ID != first.ID || again.Created {
		t.Fatalf("retried create %+v, want %s", again, first.ID)
	}
	second := h.createItem(t, ledgerv1.ReviewItemInput{}, 201)
	third := h.createItem(t, ledgerv1.ReviewItemInput{Suggestion: json.RawMessage(`{"booking_date":"2025-03-16","description":"Porto","lines":[{"account_debit":"6815","account_credit":"1800","amount":5}]}`)}, 201)
	got := h.call(t, ledgerv1.SubjectReviewCreate, drRq{service: "bank", as: h.claims, body: ledgerv1.ReviewItemInput{SourceType: "fax", Suggestion: json.RawMessage(`{}`)}})
	if got.status != 400 || got.code != errs.InvalidInput {
		t.Fatalf("bad create: %d %s", got.status, got.code)
	}

	// get: the item with its document.
	var item drItemBody
	h.ok(t, ledgerv1.SubjectReviewGet, drRq{id: first.ID}, 200, &item)
	if item.Status != "pending" || item.Document == nil || item.Document.ID != doc.ID || item.Document.OriginalName != "beleg.pdf" || item.IntentID != nil {
		t.Fatalf("item %+v", item)
	}
	var sug map[string]any
	if err := json.Unmarshal(item.LouSuggestion, &sug); err != nil || sug["description"] != "Büromaterial" || sug["confidence"] != 0.8 {
		t.Fatalf("lou_suggestion %s", item.LouSuggestion)
	}
	_, otherClaims := drClaims()
	h.fails(t, ledgerv1.SubjectReviewGet, drRq{id: first.ID, as: otherClaims}, 404, errs.NotFound)
	h.fails(t, ledgerv1.SubjectReviewGet, drRq{id: "x"}, 404, errs.NotFound)

	// adjust, draft.
	var adj struct {
		LouSuggestion struct {
			Lines []struct {
				AccountDebit string `json:"account_debit"`
			} `json:"lines"`
		} `json:"lou_suggestion"`
		Applied []string `json:"applied"`
	}
	h.ok(t, ledgerv1.SubjectReviewAdjust, drRq{id: second.ID, body: map[string]string{"instruction": "account 6805 instead of 6815"}}, 200, &adj)
	if adj.LouSuggestion.Lines[0].AccountDebit != "6805" || len(adj.Applied) != 1 {
		t.Fatalf("adjust %+v", adj)
	}
	b := h.fails(t, ledgerv1.SubjectReviewAdjust, drRq{id: second.ID, body: map[string]string{"instruction": "mach mal"}}, 400, errs.InvalidInput)
	if len(b.Details) < 6 {
		t.Fatalf("unparseable instruction should list the supported forms: %+v", b)
	}
	h.fails(t, ledgerv1.SubjectReviewAdjust, drRq{id: second.ID, body: map[string]string{"text": "x"}}, 400, errs.InvalidInput)

	var draft struct {
		LouSuggestion map[string]any `json:"lou_suggestion"`
	}
	h.ok(t, ledgerv1.SubjectReviewDraft, drRq{id: third.ID, body: map[string]any{"lou_suggestion": json.RawMessage(`{"booking_date":"2025-03-17","description":" Porto ","lines":[{"account_debit":"6815","account_credit":"1800","amount":"5.5"}]}`)}}, 200, &draft)
	if draft.LouSuggestion["description"] != "Porto" || draft.LouSuggestion["booking_date"] != "2025-03-17" {
		t.Fatalf("draft %+v", draft)
	}
	h.fails(t, ledgerv1.SubjectReviewDraft, drRq{id: third.ID, body: map[string]any{}}, 400, errs.InvalidInput)
	h.fails(t, ledgerv1.SubjectReviewDraft, drRq{id: third.ID, body: map[string]any{"lou_suggestion": map[string]any{"booking_date": "2025-13-01", "description": "x", "lines": []any{}}}}, 400, errs.InvalidInput)

	// list, count, next.
	var list struct {
		Items []drItemBody `json:"items"`
	}
	h.ok(t, ledgerv1.SubjectReviewList, drRq{}, 200, &list)
	if diff := cmp.Diff([]string{first.ID, second.ID, third.ID}, drIDs(list.Items)); diff != "" {
		t.Fatalf("pending list (-want +got):\n%s", diff)
	}
	h.ok(t, ledgerv1.SubjectReviewList, drRq{query: url.Values{"status": {"all"}, "limit": {"1"}, "offset": {"1"}}}, 200, &list)
	if diff := cmp.Diff([]string{second.ID}, drIDs(list.Items)); diff != "" {
		t.Fatalf("paged list (-want +got):\n%s", diff)
	}
	for _, q := range []url.Values{{"status": {"open"}}, {"limit": {"0"}}, {"limit": {"201"}}, {"offset": {"-1"}}, {"limit": {"x"}}} {
		h.fails(t, ledgerv1.SubjectReviewList, drRq{query: q}, 400, errs.InvalidInput)
	}
	var next drItemBody
	h.ok(t, ledgerv1.SubjectReviewNext, drRq{query: url.Values{"after_id": {first.ID}}}, 200, &next)
	if next.ID != second.ID {
		t.Fatalf("next after first = %s, want %s", next.ID, second.ID)
	}
	h.fails(t, ledgerv1.SubjectReviewNext, drRq{query: url.Values{"after_id": {third.ID}}}, 404, errs.NotFound)
	h.fails(t, ledgerv1.SubjectReviewNext, drRq{query: url.Values{"after_id": {"1"}}}, 400, errs.InvalidInput)

	// confirm, override, and what follows.
	var res struct {
		Status     string `json:"status"`
		IntentID   string `json:"intent_id"`
		EventCount int    `json:"event_count"`
	}
	h.ok(t, ledgerv1.SubjectReviewConfirm, drRq{id: first.ID}, 201, &res)
	if res.Status != "confirmed" || res.EventCount != 2 || res.IntentID != uuid.NewSHA1(uuid.MustParse(first.ID), []byte("confirm")).String() {
		t.Fatalf("confirm %+v", res)
	}
	h.fails(t, ledgerv1.SubjectReviewConfirm, drRq{id: first.ID}, 409, errs.ReviewItemNotPending)
	h.fails(t, ledgerv1.SubjectReviewConfirm, drRq{id: second.ID, body: map[string]any{"skip": true}}, 400, errs.InvalidInput)
	h.ok(t, ledgerv1.SubjectReviewConfirm, drRq{id: second.ID, body: map[string]any{"skip_duplicate_check": true}}, 201, &res)

	h.fails(t, ledgerv1.SubjectReviewOverride, drRq{id: third.ID, body: map[string]any{}}, 400, errs.InvalidInput)
	override := map[string]any{"booking_draft": map[string]any{"booking_date": "2025-03-18", "description": "Porto korrigiert",
		"lines": []any{map[string]any{"account_debit": "6805", "account_credit": "1800", "amount": 6}}}}
	h.ok(t, ledgerv1.SubjectReviewOverride, drRq{id: third.ID, body: override}, 201, &res)
	if res.Status != "overridden" || res.EventCount != 1 {
		t.Fatalf("override %+v", res)
	}
	h.fails(t, ledgerv1.SubjectReviewOverride, drRq{id: third.ID, body: override}, 409, errs.ReviewItemNotPending)
	h.fails(t, ledgerv1.SubjectReviewAdjust, drRq{id: third.ID, body: map[string]string{"instruction": "Datum 2025-03-31"}}, 409, errs.ReviewItemNotPending)
	h.fails(t, ledgerv1.SubjectReviewDraft, drRq{id: third.ID, body: map[string]any{"lou_suggestion": json.RawMessage(drDraftJSON)}}, 409, errs.ReviewItemNotPending)

	var count struct {
		Count   int `json:"count"`
		Pending int `json:"pending"`
	}
	h.ok(t, ledgerv1.SubjectReviewCount, drRq{}, 200, &count)
	if count.Count != 0 || count.Pending != 0 {
		t.Fatalf("count %+v", count)
	}
	h.ok(t, ledgerv1.SubjectReviewCount, drRq{query: url.Values{"status": {"all"}}}, 200, &count)
	if count.Count != 3 {
		t.Fatalf("count all %+v", count)
	}
	h.fails(t, ledgerv1.SubjectReviewCount, drRq{query: url.Values{"status": {"x"}}}, 400, errs.InvalidInput)
	h.fails(t, ledgerv1.SubjectReviewNext, drRq{}, 404, errs.NotFound)

	// delete: a confirmed item is reversed; a pending one just leaves the queue.
	var del struct {
		OK               bool   `json:"ok"`
		Reversed         bool   `json:"reversed"`
		ReversalIntentID string `json:"reversal_intent_id"`
	}
	h.ok(t, ledgerv1.SubjectReviewDelete, drRq{id: first.ID}, 200, &del)
	if !del.OK || !del.Reversed || !ledger.ValidID(del.ReversalIntentID) {
		t.Fatalf("delete confirmed %+v", del)
	}
	h.fails(t, ledgerv1.SubjectReviewDelete, drRq{id: first.ID}, 404, errs.NotFound)
	fourth := h.createItem(t, ledgerv1.ReviewItemInput{}, 201)
	del.Reversed, del.ReversalIntentID = true, "x"
	got = h.ok(t, ledgerv1.SubjectReviewDelete, drRq{id: fourth.ID}, 200, &del)
	if string(got.body) != `{"ok":true,"reversed":false}` {
		t.Fatalf("delete pending %s", got.body)
	}
	h.fails(t, ledgerv1.SubjectReviewDelete, drRq{id: second.ID, as: otherClaims}, 404, errs.NotFound)

	// Every route needs a tenant.
	for _, subject := range []string{ledgerv1.SubjectReviewList, ledgerv1.SubjectReviewCount, ledgerv1.SubjectReviewNext, ledgerv1.SubjectReviewGet,
		ledgerv1.SubjectReviewDelete, ledgerv1.SubjectReviewAdjust, ledgerv1.SubjectReviewConfirm, ledgerv1.SubjectReviewDraft, ledgerv1.SubjectReviewOverride} {
		if got := h.call(t, subject, drRq{id: second.ID}); got.status != 401 || got.code != errs.Unauthenticated {
			t.Errorf("%s anonymous: %d %s", subject, got.status, got.code)
		}
	}
}

// TestAdjustIdempotent: a retried adjust with the same Idempotency-Key is
// applied once and replays the first answer.
func TestAdjustIdempotent(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	id := h.createItem(t, ledgerv1.ReviewItemInput{}, 201).ID
	body := map[string]any{"instruction": "aufteilen 60/40 auf 6805 und 6815"}
	first := h.ok(t, ledgerv1.SubjectReviewAdjust, drRq{id: id, body: body, idemKey: "adjust-1"}, 200, nil)
	again := h.ok(t, ledgerv1.SubjectReviewAdjust, drRq{id: id, body: body, idemKey: "adjust-1"}, 200, nil)
	if string(first.body) != string(again.body) {
		t.Fatalf("replay differs:\nfirst %s\nagain %s", first.body, again.body)
	}
	var item drItemBody
	h.ok(t, ledgerv1.SubjectReviewGet, drRq{id: id}, 200, &item)
	if n := strings.Count(string(item.LouSuggestion), "account_debit"); n != 2 {
		t.Fatalf("the split was applied more than once: %s", item.LouSuggestion)
	}
	h.fails(t, ledgerv1.SubjectReviewAdjust, drRq{id: id, body: map[string]any{"instruction": "Datum 2025-03-31"}, idemKey: "adjust-1"}, 422, errs.IdempotencyKeyReused)
}
