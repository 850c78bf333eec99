package allinone_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// TestLedgerBookingValidation: every invalid booking answers 400
// INVALID_INPUT naming the offending fields, and a batch of invalid
// requests on every ledger route changes nothing.
func TestLedgerBookingValidation(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Validation GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read", "journal:review", "config:write", "config:read")
	ok := p.book(w, bookingBody("2025-03-01", "Vorhanden", bline("6815", "1800", "10.00")))
	okDoc := p.upload(201, "/v1/documents", w, fileField("beleg.pdf", "application/pdf", tinyPDF)).str("id")
	var item ledgerv1.ReviewItemCreated
	if err := p.rpc("bank", ledgerv1.SubjectReviewCreate, ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "manual",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-20","description":"Porto","lines":[{"account_debit":"6815","account_credit":"1800","amount":5}]}`)}, &item); err != nil {
		t.Fatal(err)
	}
	before := ledgerSnapshot(t, p, tenant)

	bookings := []struct {
		name   string
		body   any
		fields []string
	}{
		{"three decimals", bookingBody("2025-03-02", "x", bline("6815", "1800", "12.345")), []string{"lines[0].amount"}},
		{"unknown credit account", bookingBody("2025-03-02", "x", bline("6815", "99999", "1.00")), []string{"lines[0].account_credit"}},
		{"unknown debit account", bookingBody("2025-03-02", "x", bline("12345678", "1800", "1.00")), []string{"lines[0].account_debit"}},
		{"debit equals credit", bookingBody("2025-03-02", "x", bline("1800", "1800", "1.00")), []string{"lines[0].account_credit"}},
		{"30 February", bookingBody("2025-02-30", "x", bline("6815", "1800", "1.00")), []string{"booking_date"}},
		{"date not ISO", bookingBody("02.03.2025", "x", bline("6815", "1800", "1.00")), []string{"booking_date"}},
		{"no description", bookingBody("2025-03-02", "  ", bline("6815", "1800", "1.00")), []string{"description"}},
		{"description too long", bookingBody("2025-03-02", strings.Repeat("ä", 501), bline("6815", "1800", "1.00")), []string{"description"}},
		{"no lines", bookingBody("2025-03-02", "x"), []string{"lines"}},
		{"zero amount", bookingBody("2025-03-02", "x", bline("6815", "1800", "0")), []string{"lines[0].amount"}},
		{"negative amount", bookingBody("2025-03-02", "x", bline("6815", "1800", "-5.00")), []string{"lines[0].amount"}},
		{"unknown tax code", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00", "tax_code", "VSt99")), []string{"lines[0].tax_code"}},
		{"missing accounts", bookingBody("2025-03-02", "x", map[string]any{"amount": 1}), []string{"lines[0].account_debit", "lines[0].account_credit"}},
		{"fx half given", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00", "fx_currency", "USD")), []string{"lines[0].fx_currency"}},
		{"fx bad currency", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00", "fx_currency", "usd", "fx_amount", 2)), []string{"lines[0].fx_currency"}},
		{"metadata not an object", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00", "custom_metadata", []int{1})), []string{"lines[0].custom_metadata"}},
		{"external reference too long", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00", "external_reference", strings.Repeat("r", 256))), []string{"lines[0].external_reference"}},
		{"second line bad, first good", bookingBody("2025-03-02", "x", bline("6815", "1800", "1.00"), bline("6815", "1800", "0.001")), []string{"lines[1].amount"}},
		{"several problems", bookingBody("2025-13-01", "", bline("6815", "6815", "1.001")), []string{"booking_date", "description"}}, // the document's rules first; the ledger's own (debit = credit, cents) once these hold
		{"unknown field", map[string]any{"booking_date": "2025-03-02", "description": "x", "lines": []any{}, "post_anyway": true}, []string{"lines", "post_anyway"}},
		// A type error inside a custom decoder (money) names its field too.
		{"amount wrong type", bookingBody("2025-03-02", "x", bline("6815", "1800", "1", "amount", true)), []string{"lines[0].amount"}},
	}
	for _, tt := range bookings {
		r := p.call("POST", "/v1/bookings", w, tt.body)
		if r.Status != 400 || r.code() != errs.InvalidInput || r.str("error") == "" || r.str("request_id") == "" {
			t.Errorf("%s: %d %s", tt.name, r.Status, r.Raw)
			continue
		}
		if got := detailFields(t, r); !sameFields(got, tt.fields) {
			t.Errorf("%s: detail fields %q, want %q: %s", tt.name, got, tt.fields, r.Raw)
		}
	}

	unknown := "00000000-0000-4000-8000-000000000000"
	others := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"booking malformed JSON", "POST", "/v1/bookings", `{"booking_date":`, 400, "INVALID_INPUT"},
		{"booking trailing data", "POST", "/v1/bookings", `{} {}`, 400, "INVALID_INPUT"},
		{"booking empty body", "POST", "/v1/bookings", `{}`, 400, "INVALID_INPUT"},
		{"reverse unknown", "POST", "/v1/journal/reverse", map[string]any{"intent_id": unknown}, 404, "NOT_FOUND"},
		{"reverse bad reason", "POST", "/v1/journal/reverse", map[string]any{"intent_id": ok.IntentID, "reason": strings.Repeat("x", 501)}, 400, "INVALID_INPUT"},
		{"reverse unknown field", "POST", "/v1/journal/reverse", map[string]any{"intent_id": ok.IntentID, "force": true}, 400, "INVALID_INPUT"},
		{"account bad number", "POST", "/v1/accounts", map[string]any{"number": "12a", "name": "x", "type": "expense"}, 400, "INVALID_INPUT"},
		{"account exists", "POST", "/v1/accounts", map[string]any{"number": "1800", "name": "Bank", "type": "asset"}, 409, "ACCOUNT_EXISTS"},
		{"account bad type", "POST", "/v1/accounts", map[string]any{"number": "6999", "name": "x", "type": "income"}, 400, "INVALID_INPUT"},
		{"tax code unknown", "PATCH", "/v1/tax-codes/NOPE", map[string]any{"label": "x"}, 404, "TAX_CODE_NOT_FOUND"},
		{"tax code no changes", "PATCH", "/v1/tax-codes/VSt19", map[string]any{}, 400, "NO_CHANGES"},
		{"tax code bad rate", "PATCH", "/v1/tax-codes/VSt19", map[string]any{"rate": 100}, 400, "INVALID_INPUT"},
		{"tax code unknown field", "PATCH", "/v1/tax-codes/VSt19", map[string]any{"kind": "output"}, 400, "INVALID_INPUT"},
		{"tax code rate on exempt", "PATCH", "/v1/tax-codes/" + exemptCode(t, p, w), map[string]any{"rate": 5}, 400, "INVALID_INPUT"},
		{"review unknown", "POST", "/v1/review-queue/" + unknown + "/confirm", nil, 404, "NOT_FOUND"},
		{"review override invalid", "POST", "/v1/review-queue/" + item.ID + "/override", map[string]any{"booking_draft": bookingBody("2025-03-02", "x", bline("6815", "1800", "-1"))}, 400, "INVALID_INPUT"},
		{"review override missing", "POST", "/v1/review-queue/" + item.ID + "/override", map[string]any{}, 400, "INVALID_INPUT"},
		{"review adjust gibberish", "POST", "/v1/review-queue/" + item.ID + "/adjust", map[string]any{"instruction": "mach mal"}, 400, "INVALID_INPUT"},
		{"review adjust unknown account", "POST", "/v1/review-queue/" + item.ID + "/adjust", map[string]any{"instruction": "Konto 99999 statt 6815"}, 400, "INVALID_INPUT"},
		{"review draft invalid", "PATCH", "/v1/review-queue/" + item.ID + "/draft", map[string]any{"lou_suggestion": bookingBody("2025-02-30", "x", bline("6815", "1800", "1"))}, 400, "INVALID_INPUT"},
		{"review list bad status", "GET", "/v1/review-queue?status=open", nil, 400, "INVALID_INPUT"},
		{"document file unknown", "GET", "/v1/documents/" + unknown + "/file", nil, 404, "NOT_FOUND"},
	}
	for _, tt := range others {
		r := p.call(tt.method, tt.path, w, tt.body)
		if r.Status != tt.status || r.code() != tt.code || r.str("error") == "" {
			t.Errorf("%s: %d %s, want %d %s", tt.name, r.Status, r.Raw, tt.status, tt.code)
		}
		if strings.Contains(strings.ToLower(string(r.Raw)), "sql") || strings.Contains(string(r.Raw), "pgx") {
			t.Errorf("%s: response leaks internals: %s", tt.name, r.Raw)
		}
	}
	bad := []struct {
		name  string
		parts []part
		code  string
	}{
		{"upload exe", []part{fileField("virus.exe", "application/octet-stream", []byte("MZ\x90\x00"))}, "INVALID_FILE_TYPE"},
		{"upload empty", []part{fileField("leer.pdf", "application/pdf", nil)}, "EMPTY_FILE"},
		{"upload mismatch", []part{fileField("bild.png", "image/png", tinyPDF)}, "MIME_MISMATCH"},
		{"booking with document, bad lines", []part{fileField("neu.pdf", "application/pdf", append(append([]byte{}, tinyPDF...), "% other"...)),
			textField("booking_date", "2025-03-03"), textField("description", "x"), textField("lines", `[{"account_debit":"6815","account_credit":"1800","amount":1.001}]`)}, "INVALID_INPUT"},
	}
	for _, tt := range bad {
		path := "/v1/documents"
		if len(tt.parts) > 1 {
			path = "/v1/bookings/with-document"
		}
		body, ct := multipartBody(t, tt.parts...)
		if r := p.call("POST", path, w, body, "Content-Type", ct); r.Status != 400 || r.code() != tt.code {
			t.Errorf("%s: %d %s, want 400 %s", tt.name, r.Status, r.Raw, tt.code)
		}
	}
	p.sameLedger("bad input", tenant, before)
	if okDoc == "" {
		t.Fatal("no document")
	}
}

// exemptCode names a tax-free code of the seeded chart.
func exemptCode(t *testing.T, p *platform, token string) string {
	t.Helper()
	var list struct {
		TaxCodes []struct {
			Code string `json:"code"`
			Kind string `json:"kind"`
		} `json:"tax_codes"`
	}
	decodeJSON(t, p.must(200, "GET", "/v1/tax-codes", token, nil).Raw, &list)
	for _, c := range list.TaxCodes {
		if c.Kind == "exempt" {
			return c.Code
		}
	}
	t.Fatal("no exempt tax code in the seeded chart")
	return ""
}

// TestLedgerConflicts: duplicates, period locks, reversal conflicts.
func TestLedgerConflicts(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Conflict GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")

	// Duplicates: same date, description, accounts and amounts.
	b := bookingBody("2025-02-10", "Telefonrechnung Februar", bline("6805", "1800", "49.90", "tax_code", "VSt19"))
	first := p.book(w, b)
	r := p.expectError(409, "DUPLICATE_BOOKING", "POST", "/v1/bookings", w, b)
	if !strings.Contains(r.str("error"), "skip_duplicate_check") {
		t.Fatalf("duplicate refusal does not say how to post anyway: %s", r.Raw)
	}
	// Case and surrounding space of the text do not matter; the amount does.
	p.expectError(409, "DUPLICATE_BOOKING", "POST", "/v1/bookings", w, bookingBody("2025-02-10", "  telefonrechnung FEBRUAR ", bline("6805", "1800", "49.90", "tax_code", "VSt19")))
	p.book(w, bookingBody("2025-02-10", "Telefonrechnung Februar", bline("6805", "1800", "49.91", "tax_code", "VSt19")))
	b["skip_duplicate_check"] = true
	second := p.book(w, b)
	if second.IntentID == first.IntentID {
		t.Fatal("skip_duplicate_check returned the first intent")
	}

	// Period locks, set by the periods service's command.
	march := bookingBody("2025-03-31", "Miete März", bline("6310", "1800", "800.00"))
	p.setLock(tenant, "2025-03", "soft-locked")
	r = p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, march)
	if !strings.Contains(r.str("error"), "2025-03") || !strings.Contains(r.str("error"), "soft-locked") {
		t.Fatalf("lock refusal: %s", r.Raw)
	}
	p.book(w, bookingBody("2025-04-01", "Miete April", bline("6310", "1800", "800.00"))) // the next month is open
	jan := bookingBody("2025-01-31", "Miete Januar", bline("6310", "1800", "800.00"))
	p.setLock(tenant, "2025-01", "hard-locked")
	r = p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, jan)
	if !strings.Contains(r.str("error"), "hard-locked") {
		t.Fatalf("hard lock refusal: %s", r.Raw)
	}
	// Festschreibung is final whoever sends the command: the ledger itself
	// refuses to open or soft-lock a hard-locked month.
	for _, st := range []string{"open", "soft-locked"} {
		if err := p.rpc("periods", ledgerv1.SubjectSetPeriodLock, ledgerv1.SetPeriodLock{TenantID: tenant, Period: "2025-01", Status: st, LockedBy: "e2e"}, nil); !errs.Is(err, errs.PeriodAlreadyLocked) {
			t.Fatalf("set_lock %s on a hard-locked month: %v, want PERIOD_ALREADY_LOCKED", st, err)
		}
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, jan)
	p.wantCount(1, "SELECT count(*) FROM ledger.period_locks WHERE tenant_id = $1 AND period = '2025-01' AND status = 'hard-locked'", tenant)
	p.setLock(tenant, "2025-01", "hard-locked") // repeating the lock itself is fine
	p.setLock(tenant, "2025-03", "open")
	march1 := p.book(w, march)
	// A reversal is a posting too: dated in a locked month it is refused,
	// dated in an open month it goes through.
	p.setLock(tenant, "2025-03", "soft-locked")
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": march1.IntentID})
	p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": march1.IntentID, "booking_date": "2025-04-30"})
	p.wantCount(1, "SELECT count(*) FROM ledger.period_locks WHERE tenant_id = $1 AND period = '2025-03' AND status = 'soft-locked' AND locked_by = 'e2e'", tenant)
	// The command refuses what it does not understand.
	for _, cmd := range []ledgerv1.SetPeriodLock{{TenantID: tenant, Period: "2025-3", Status: "open"}, {TenantID: tenant, Period: "2025-03", Status: "closed"}, {TenantID: "x", Period: "2025-03", Status: "open"}} {
		if err := p.rpc("periods", ledgerv1.SubjectSetPeriodLock, cmd, nil); !errs.Is(err, errs.InvalidInput) {
			t.Errorf("lock command %+v: %v", cmd, err)
		}
	}

	// The year's adjustment period takes postings only once it exists.
	closing := bookingBody("2025-12-31", "Abschlussbuchung", bline("6310", "1800", "5.00"))
	closing["period"] = "2025-13"
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bookings", w, closing)
	closing["period"] = "2024-13"
	p.expectInvalid([]string{"period"}, "POST", "/v1/bookings", w, closing)
	closing["period"] = "2025-12"
	p.expectInvalid([]string{"period"}, "POST", "/v1/bookings", w, closing)
	p.setLock(tenant, "2025-13", "open")
	closing["period"] = "2025-13"
	adj := p.book(w, closing)
	p.wantCount(1, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND id = $2 AND period = '2025-13'", tenant, adj.IntentID)
	if d := p.must(200, "GET", "/v1/journal/"+adj.IntentID, w, nil); d.str("period") != "2025-13" {
		t.Fatalf("adjustment intent: %s", d.Raw)
	}
	// December itself can be locked while the adjustment period is open.
	p.setLock(tenant, "2025-12", "hard-locked")
	delete(closing, "period")
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, closing)
	closing["period"] = "2025-13"
	closing["skip_duplicate_check"] = true
	p.book(w, closing)
	p.setLock(tenant, "2025-13", "hard-locked")
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, closing)

	// Reversal conflicts.
	r = p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": first.IntentID})
	revID := r.str("reversal_intent_id")
	p.expectError(409, "ALREADY_REVERSED", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": first.IntentID})
	p.expectError(409, "CANNOT_REVERSE_REVERSAL", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": revID})

	p.verifyOK(w, -1)
}

// TestLedgerScopesAndIsolation: each ledger route checks its scope; chart
// reads need none; another tenant's ids are 404 everywhere.
func TestLedgerScopesAndIsolation(t *testing.T) {
	p, aAdmin, aTenant := setup(t, nil, "A GmbH")
	bAdmin, _ := p.newTenant("B GmbH")
	read, write := p.apiKey(aAdmin, "journal:read"), p.apiKey(aAdmin, "journal:write")
	review, cfgRead := p.apiKey(aAdmin, "journal:review"), p.apiKey(aAdmin, "config:read")
	other := p.apiKey(aAdmin, "bank:read") // no ledger or config scope at all

	posted := p.book(aAdmin, bookingBody("2025-01-15", "A bucht", bline("6815", "1800", "11.90", "tax_code", "VSt19")))
	doc := p.upload(201, "/v1/documents", aAdmin, fileField("a.pdf", "application/pdf", tinyPDF)).str("id")
	var item ledgerv1.ReviewItemCreated
	if err := p.rpc("bank", ledgerv1.SubjectReviewCreate, ledgerv1.ReviewItemInput{TenantID: aTenant, SourceType: "document", SourceID: "mail-1", DocumentID: doc,
		Suggestion: json.RawMessage(`{"booking_date":"2025-01-20","description":"Porto","lines":[{"account_debit":"6815","account_credit":"1800","amount":5}]}`)}, &item); err != nil {
		t.Fatal(err)
	}
	multi, ct := multipartBody(t, fileField("b.png", "image/png", tinyPNG), textField("booking_date", "2025-01-16"), textField("description", "x"),
		textField("lines", `[{"account_debit":"6815","account_credit":"1800","amount":1}]`))

	type rt struct {
		method, path string
		body         any
		scope        string
		ct           string
	}
	routes := []rt{
		{"POST", "/v1/bookings", bookingBody("2025-01-15", "x", bline("6815", "1800", "1")), "journal:write", ""},
		{"POST", "/v1/bookings/with-document", multi, "journal:write", ct},
		{"POST", "/v1/documents", multi, "journal:write", ct},
		{"GET", "/v1/documents/" + doc + "/file", nil, "journal:read", ""},
		{"GET", "/v1/journal", nil, "journal:read", ""},
		{"GET", "/v1/journal/verify", nil, "journal:read", ""},
		{"GET", "/v1/journal/" + posted.IntentID, nil, "journal:read", ""},
		{"POST", "/v1/journal/reverse", map[string]any{"intent_id": posted.IntentID}, "journal:write", ""},
		{"GET", "/v1/review-queue", nil, "journal:review", ""},
		{"GET", "/v1/review-queue/count", nil, "journal:review", ""},
		{"GET", "/v1/review-queue/next", nil, "journal:review", ""},
		{"GET", "/v1/review-queue/" + item.ID, nil, "journal:review", ""},
		{"DELETE", "/v1/review-queue/" + item.ID, nil, "journal:review", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/adjust", map[string]any{"instruction": "Datum 2025-01-21"}, "journal:review", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/confirm", map[string]any{}, "journal:review", ""},
		{"PATCH", "/v1/review-queue/" + item.ID + "/draft", map[string]any{"lou_suggestion": bookingBody("2025-01-20", "x", bline("6815", "1800", "1"))}, "journal:review", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/override", map[string]any{"booking_draft": bookingBody("2025-01-20", "x", bline("6815", "1800", "1"))}, "journal:review", ""},
		{"POST", "/v1/accounts", map[string]any{"number": "6999", "name": "x", "type": "expense"}, "config:write", ""},
		{"GET", "/v1/accounts/1800/entries", nil, "journal:read", ""},
		{"GET", "/v1/tax-codes", nil, "config:read", ""},
		{"PATCH", "/v1/tax-codes/VSt19", map[string]any{"label": "x"}, "config:write", ""},
	}
	keys := map[string]string{"journal:read": read, "journal:write": write, "journal:review": review, "config:read": cfgRead, "bank:read": other}
	before := ledgerSnapshot(t, p, aTenant)
	for _, r := range routes {
		for scope, key := range keys {
			if scope == r.scope {
				continue
			}
			var hdr []string
			if r.ct != "" {
				hdr = []string{"Content-Type", r.ct}
			}
			got := p.call(r.method, r.path, key, r.body, hdr...)
			if got.Status != 403 || got.code() != "FORBIDDEN" || !strings.Contains(got.str("error"), r.scope) {
				t.Errorf("%s %s with %s: %d %s, want 403 naming %s", r.method, r.path, scope, got.Status, got.Raw, r.scope)
			}
		}
	}
	p.sameLedger("refused calls", aTenant, before)
	// A journal:read key cannot post.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/bookings", read, bookingBody("2025-01-15", "x", bline("6815", "1800", "1")))
	// Reading the chart needs no scope.
	for _, key := range []string{read, write, review, cfgRead, other} {
		p.must(200, "GET", "/v1/accounts?limit=1", key, nil)
		p.must(200, "GET", "/v1/accounts/search?q=Bank", key, nil)
	}
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/accounts", "", nil)
	p.expectError(401, "UNAUTHENTICATED", "POST", "/v1/bookings", "", bookingBody("2025-01-15", "x", bline("6815", "1800", "1")))

	// Tenant B sees nothing of A and reaches none of A's ids.
	p.expectError(404, "NOT_FOUND", "GET", "/v1/journal/"+posted.IntentID, bAdmin, nil)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/journal/reverse", bAdmin, map[string]any{"intent_id": posted.IntentID})
	p.expectError(404, "NOT_FOUND", "GET", "/v1/documents/"+doc+"/file", bAdmin, nil)
	for _, r := range []rt{
		{"GET", "/v1/review-queue/" + item.ID, nil, "", ""},
		{"DELETE", "/v1/review-queue/" + item.ID, nil, "", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/adjust", map[string]any{"instruction": "Datum 2025-01-21"}, "", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/confirm", nil, "", ""},
		{"PATCH", "/v1/review-queue/" + item.ID + "/draft", map[string]any{"lou_suggestion": bookingBody("2025-01-20", "x", bline("6815", "1800", "1"))}, "", ""},
		{"POST", "/v1/review-queue/" + item.ID + "/override", map[string]any{"booking_draft": bookingBody("2025-01-20", "x", bline("6815", "1800", "1"))}, "", ""},
	} {
		p.expectError(404, "NOT_FOUND", r.method, r.path, bAdmin, r.body)
	}
	if pg := p.journal(bAdmin, ""); len(pg.Entries) != 0 {
		t.Fatalf("B sees journal entries: %+v", pg.Entries)
	}
	p.verifyOK(bAdmin, 0)
	r := p.must(200, "GET", "/v1/review-queue/count", bAdmin, nil)
	if r.Body["count"] != float64(0) {
		t.Fatalf("B's review count: %s", r.Raw)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/review-queue/next", bAdmin, nil)
	// A review item can only reference the tenant's own documents.
	if err := p.rpc("bank", ledgerv1.SubjectReviewCreate, ledgerv1.ReviewItemInput{TenantID: aTenant, SourceType: "document", DocumentID: "00000000-0000-4000-8000-000000000001",
		Suggestion: json.RawMessage(`{}`)}, nil); !errs.Is(err, errs.NotFound) {
		t.Fatalf("review item with an unknown document: %v", err)
	}
	// Everything of A is still there for A.
	if d := p.intent(read, posted.IntentID); d.ReversedBy != nil || len(d.Entries) != 2 {
		t.Fatalf("A's intent changed: %+v", d)
	}
	p.must(200, "GET", "/v1/review-queue/"+item.ID, review, nil)
}
