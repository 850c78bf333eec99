package allinone_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
)

type reviewItemBody struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	SourceType    string  `json:"source_type"`
	SourceID      string  `json:"source_id"`
	DocumentID    *string `json:"document_id"`
	LouSuggestion struct {
		BookingDate string           `json:"booking_date"`
		Description string           `json:"description"`
		Lines       []map[string]any `json:"lines"`
		Confidence  json.Number      `json:"confidence"`
		Reasons     []string         `json:"reasons"`
	} `json:"lou_suggestion"`
	IntentID   *string       `json:"intent_id"`
	ResolvedBy *string       `json:"resolved_by"`
	CreatedBy  string        `json:"created_by"`
	Document   *documentBody `json:"document"`
}

// reviewResult answers confirm and override: the posting and the item's
// new status.
type reviewResult struct {
	postedBody
	Status string `json:"status"`
}

// createReview queues a draft through the internal command.
func (p *platform) createReview(in ledgerv1.ReviewItemInput) ledgerv1.ReviewItemCreated {
	p.t.Helper()
	var out ledgerv1.ReviewItemCreated
	if err := p.rpc("bank", ledgerv1.SubjectReviewCreate, in, &out); err != nil {
		p.t.Fatalf("create review item: %v", err)
	}
	return out
}

func reviewIDs(items []reviewItemBody) []string {
	return sigsOf(items, func(it reviewItemBody) string { return it.ID })
}

// TestLedgerReviewQueue walks all nine review-queue routes.
func TestLedgerReviewQueue(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Review GmbH")
	rv, ro := p.apiKey(admin, "journal:review"), p.apiKey(admin, "journal:read")
	doc := p.upload(201, "/v1/documents", admin, fileField("eingang.pdf", "application/pdf", tinyPDF)).str("id")

	first := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "document", SourceID: "inbox-1", DocumentID: doc, CreatedBy: "service:payables",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-15","description":"Büromaterial","lines":[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}],"confidence":0.8,"reasons":["vendor match"]}`)})
	if !first.Created {
		t.Fatalf("create %+v", first)
	}
	// A retried command finds the live item of the same source.
	if again := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "document", SourceID: "inbox-1", DocumentID: doc, Suggestion: json.RawMessage(`{}`)}); again.ID != first.ID || again.Created {
		t.Fatalf("retried create %+v", again)
	}
	second := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "bank_transaction", SourceID: "tx-7",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-16","description":"Telefon","lines":[{"account_debit":"6815","account_credit":"1800","amount":"59.50","tax_code":"VSt19"}]}`)})
	third := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "manual",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-17","description":"Porto","lines":[]}`)})
	fourth := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "manual",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-18","description":"Kaffee","lines":[{"account_debit":"6815","account_credit":"1800","amount":12}]}`)})

	// list, count, next, get.
	var list struct {
		Items  []reviewItemBody `json:"items"`
		Limit  int              `json:"limit"`
		Offset int              `json:"offset"`
	}
	r := p.must(200, "GET", "/v1/review-queue", rv, nil)
	wantKeys(t, "review list", r.Raw, "items", "limit", "offset")
	decodeJSON(t, r.Raw, &list)
	if !slices.Equal(reviewIDs(list.Items), []string{first.ID, second.ID, third.ID, fourth.ID}) || list.Limit != 50 || list.Offset != 0 {
		t.Fatalf("pending list: %s", r.Raw)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/review-queue?status=all&limit=2&offset=1", rv, nil).Raw, &list)
	if !slices.Equal(reviewIDs(list.Items), []string{second.ID, third.ID}) {
		t.Fatalf("paged list %v", reviewIDs(list.Items))
	}
	p.expectInvalid([]string{"status"}, "GET", "/v1/review-queue?status=open", rv, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/review-queue?limit=201", rv, nil)
	r = p.must(200, "GET", "/v1/review-queue/count", rv, nil)
	wantKeys(t, "review count", r.Raw, "count", "pending")
	if r.Body["count"] != float64(4) || r.Body["pending"] != float64(4) {
		t.Fatalf("count: %s", r.Raw)
	}
	var item reviewItemBody
	decodeJSON(t, p.must(200, "GET", "/v1/review-queue/next", rv, nil).Raw, &item)
	if item.ID != first.ID {
		t.Fatalf("next = %s, want %s", item.ID, first.ID)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/review-queue/next?after_id="+first.ID, rv, nil).Raw, &item)
	if item.ID != second.ID {
		t.Fatalf("next after first = %s, want %s", item.ID, second.ID)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/next?after_id="+fourth.ID, rv, nil)
	p.expectInvalid([]string{"after_id"}, "GET", "/v1/review-queue/next?after_id=1", rv, nil)

	decodeJSON(t, p.must(200, "GET", "/v1/review-queue/"+first.ID, rv, nil).Raw, &item)
	if item.Status != "pending" || item.SourceType != "document" || item.SourceID != "inbox-1" || item.DocumentID == nil || *item.DocumentID != doc ||
		item.Document == nil || item.Document.ID != doc || item.Document.OriginalName != "eingang.pdf" || item.Document.MimeType != "application/pdf" ||
		item.IntentID != nil || item.CreatedBy != "service:payables" || item.LouSuggestion.Description != "Büromaterial" ||
		item.LouSuggestion.Confidence != "0.8" || !slices.Equal(item.LouSuggestion.Reasons, []string{"vendor match"}) {
		t.Fatalf("item %+v", item)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/00000000-0000-4000-8000-000000000000", rv, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/x", rv, nil)

	// adjust and draft.
	var adj struct {
		LouSuggestion struct {
			BookingDate string `json:"booking_date"`
			Lines       []struct {
				AccountDebit string      `json:"account_debit"`
				TaxCode      string      `json:"tax_code"`
				Amount       json.Number `json:"amount"`
			} `json:"lines"`
		} `json:"lou_suggestion"`
		Applied []string `json:"applied"`
	}
	r = p.must(200, "POST", "/v1/review-queue/"+second.ID+"/adjust", rv, map[string]any{"instruction": "Konto 6805 statt 6815 und 7 % statt 19 %; Datum 31.03.2025"})
	decodeJSON(t, r.Raw, &adj)
	if l := adj.LouSuggestion.Lines; len(l) != 1 || l[0].AccountDebit != "6805" || l[0].TaxCode != "VSt7" || adj.LouSuggestion.BookingDate != "2025-03-31" || len(adj.Applied) != 3 {
		t.Fatalf("adjust: %s", r.Raw)
	}
	r = p.expectError(400, "INVALID_INPUT", "POST", "/v1/review-queue/"+second.ID+"/adjust", rv, map[string]any{"instruction": "mach mal"})
	if len(detailFields(t, r)) < 6 {
		t.Fatalf("an unparseable instruction lists the supported forms: %s", r.Raw)
	}
	var draft struct {
		LouSuggestion struct {
			BookingDate string `json:"booking_date"`
			Description string `json:"description"`
			Lines       []struct {
				Amount json.Number `json:"amount"`
			} `json:"lines"`
		} `json:"lou_suggestion"`
	}
	r = p.must(200, "PATCH", "/v1/review-queue/"+third.ID+"/draft", rv, map[string]any{"lou_suggestion": map[string]any{
		"booking_date": "2025-03-17", "description": "  Porto März ", "lines": []any{bline("6815", "1800", "5.5")}}})
	wantKeys(t, "draft", r.Raw, "lou_suggestion")
	decodeJSON(t, r.Raw, &draft)
	if draft.LouSuggestion.Description != "Porto März" || len(draft.LouSuggestion.Lines) != 1 || draft.LouSuggestion.Lines[0].Amount != "5.50" {
		t.Fatalf("draft: %s", r.Raw)
	}
	p.expectInvalid([]string{"lou_suggestion"}, "PATCH", "/v1/review-queue/"+third.ID+"/draft", rv, map[string]any{})

	// confirm posts the draft through the review queue.
	r = p.must(201, "POST", "/v1/review-queue/"+first.ID+"/confirm", rv, nil)
	wantKeys(t, "confirm", r.Raw, "status", "intent_id", "event_count")
	var conf reviewResult
	decodeJSON(t, r.Raw, &conf)
	if conf.Status != "confirmed" || conf.EventCount != 2 {
		t.Fatalf("confirm %+v", conf)
	}
	d := p.intent(ro, conf.IntentID)
	if d.Source != "review_queue" || d.DocumentID == nil || *d.DocumentID != doc || d.Entries[0].Provenance["channel"] != "review_queue" ||
		d.Entries[0].Provenance["channel_label"] != "Review queue" || !slices.Equal(entrySigs(d.Entries), []string{"6815>1800 100.00 VSt19", "1406>1800 19.00 VSt19"}) {
		t.Fatalf("confirmed intent %+v", d)
	}
	p.expectError(409, "REVIEW_ITEM_NOT_PENDING", "POST", "/v1/review-queue/"+first.ID+"/confirm", rv, nil)
	p.expectError(409, "REVIEW_ITEM_NOT_PENDING", "POST", "/v1/review-queue/"+first.ID+"/adjust", rv, map[string]any{"instruction": "Datum 2025-03-31"})
	decodeJSON(t, p.must(200, "GET", "/v1/review-queue/"+first.ID, rv, nil).Raw, &item)
	if item.Status != "confirmed" || item.IntentID == nil || *item.IntentID != conf.IntentID || item.ResolvedBy == nil {
		t.Fatalf("confirmed item %+v", item)
	}

	// The adjusted draft confirms as adjusted: 59.50 at 7 % on 6805.
	decodeJSON(t, p.must(201, "POST", "/v1/review-queue/"+second.ID+"/confirm", rv, map[string]any{"skip_duplicate_check": false}).Raw, &conf)
	if got := entrySigs(p.intent(ro, conf.IntentID).Entries); !slices.Equal(got, []string{"6805>1800 55.61 VSt7", "1401>1800 3.89 VSt7"}) {
		t.Fatalf("adjusted confirm: %v", got)
	}
	p.expectInvalid([]string{"skip"}, "POST", "/v1/review-queue/"+fourth.ID+"/confirm", rv, map[string]any{"skip": true})

	// override posts another booking instead.
	override := map[string]any{"booking_draft": bookingBody("2025-03-19", "Porto korrigiert", bline("6805", "1800", "6"))}
	r = p.must(201, "POST", "/v1/review-queue/"+third.ID+"/override", rv, override)
	var ov reviewResult
	decodeJSON(t, r.Raw, &ov)
	if ov.Status != "overridden" || ov.EventCount != 1 {
		t.Fatalf("override %+v", ov)
	}
	if d := p.intent(ro, ov.IntentID); d.Description != "Porto korrigiert" || d.BookingDate != "2025-03-19" {
		t.Fatalf("overridden intent %+v", d)
	}
	p.expectError(409, "REVIEW_ITEM_NOT_PENDING", "POST", "/v1/review-queue/"+third.ID+"/override", rv, override)
	p.expectError(409, "REVIEW_ITEM_NOT_PENDING", "PATCH", "/v1/review-queue/"+third.ID+"/draft", rv, map[string]any{"lou_suggestion": bookingBody("2025-03-17", "x", bline("6815", "1800", "1"))})
	p.expectError(409, "REVIEW_ITEM_NOT_PENDING", "POST", "/v1/review-queue/"+third.ID+"/confirm", rv, nil)

	r = p.must(200, "GET", "/v1/review-queue/count?status=all", rv, nil)
	if r.Body["count"] != float64(4) || r.Body["pending"] != float64(1) {
		t.Fatalf("count all: %s", r.Raw)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/review-queue?status=confirmed", rv, nil).Raw, &list)
	if !slices.Equal(reviewIDs(list.Items), []string{first.ID, second.ID}) {
		t.Fatalf("confirmed list %v", reviewIDs(list.Items))
	}

	// delete: a confirmed item's booking is reversed; a pending one just
	// leaves the queue.
	r = p.must(200, "DELETE", "/v1/review-queue/"+first.ID, rv, nil)
	var del struct {
		OK               bool   `json:"ok"`
		Reversed         bool   `json:"reversed"`
		ReversalIntentID string `json:"reversal_intent_id"`
	}
	decodeJSON(t, r.Raw, &del)
	if !del.OK || !del.Reversed || del.ReversalIntentID == "" {
		t.Fatalf("delete confirmed: %s", r.Raw)
	}
	if d := p.intent(ro, del.ReversalIntentID); d.Reverses == nil || *d.Reverses != *item.IntentID {
		t.Fatalf("deletion reversal %+v", d)
	}
	p.expectError(404, "NOT_FOUND", "DELETE", "/v1/review-queue/"+first.ID, rv, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/"+first.ID, rv, nil)
	r = p.must(200, "DELETE", "/v1/review-queue/"+fourth.ID, rv, nil)
	wantKeys(t, "delete pending", r.Raw, "ok", "reversed")
	if r.Body["ok"] != true || r.Body["reversed"] != false {
		t.Fatalf("delete pending: %s", r.Raw)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/next", rv, nil)
	p.wantCount(2, "SELECT count(*) FROM ledger.review_items WHERE tenant_id = $1 AND deleted_at IS NOT NULL", tenant)
	p.verifyOK(ro, 2+2+1+2)
}

// TestLedgerReviewDoubleConfirm: concurrent confirms of one item post once.
func TestLedgerReviewDoubleConfirm(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Doppelklick GmbH")
	it := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "manual",
		Suggestion: json.RawMessage(`{"booking_date":"2025-04-01","description":"Miete","lines":[{"account_debit":"6310","account_credit":"1800","amount":900}]}`)})
	rs := parallel(t, 10, func(int) (resp, error) { return p.send("POST", "/v1/review-queue/"+it.ID+"/confirm", admin, nil) })
	ok, _ := outcomes(t, "concurrent confirm", rs, 201, "REVIEW_ITEM_NOT_PENDING")
	if c := count(t, p.owner, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1", tenant); ok != 1 || c != 1 {
		t.Fatalf("%d confirms succeeded, %d intents; want 1 and 1", ok, c)
	}
}
