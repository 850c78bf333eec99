package allinone_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
)

// accountHit is an account as the search lists it.
type accountHit struct {
	Number string `json:"number"`
	Name   string `json:"name"`
	Type   string `json:"type"`
}

type accountBody struct {
	accountHit
	Category    string `json:"category"`
	ReportGroup string `json:"report_group"`
	IsActive    bool   `json:"is_active"`
	IsSystem    bool   `json:"is_system"`
	CreatedAt   string `json:"created_at"`
}

type accountPage struct {
	Accounts []accountBody `json:"accounts"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

func numbers(as []accountBody) []string {
	return sigsOf(as, func(a accountBody) string { return a.Number })
}

// TestLedgerChart: the chart of accounts and the tax codes through the
// gateway.
func TestLedgerChart(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Konten GmbH")
	anyKey := p.apiKey(admin, "bank:read") // chart reads need no scope
	cfgW, cfgR := p.apiKey(admin, "config:write"), p.apiKey(admin, "config:read")
	w := p.apiKey(admin, "journal:write", "journal:read")

	var page accountPage
	r := p.must(200, "GET", "/v1/accounts", anyKey, nil)
	wantKeys(t, "accounts", r.Raw, "accounts", "total", "limit", "offset")
	decodeJSON(t, r.Raw, &page)
	if page.Limit != 500 || page.Offset != 0 || len(page.Accounts) != 500 || page.Total <= 500 {
		t.Fatalf("default page: limit %d offset %d, %d of %d", page.Limit, page.Offset, len(page.Accounts), page.Total)
	}
	total := page.Total
	if !slices.IsSorted(numbers(page.Accounts)) {
		t.Fatal("accounts are not ordered by number")
	}
	decodeJSON(t, p.must(200, "GET", "/v1/accounts?q=1800", anyKey, nil).Raw, &page)
	if len(page.Accounts) != 1 || page.Accounts[0].Number != "1800" || page.Accounts[0].Name != "Bank" || page.Accounts[0].Type != "asset" ||
		!page.Accounts[0].IsActive || !page.Accounts[0].IsSystem || page.Accounts[0].CreatedAt == "" {
		t.Fatalf("q=1800: %+v", page)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/accounts?type=revenue&limit=2&offset=1", anyKey, nil).Raw, &page)
	if len(page.Accounts) != 2 || page.Limit != 2 || page.Offset != 1 || page.Total < 3 {
		t.Fatalf("type=revenue page: %+v", page)
	}
	for _, a := range page.Accounts {
		if a.Type != "revenue" {
			t.Fatalf("type filter returned %+v", a)
		}
	}
	cat := page.Accounts[0].Category
	decodeJSON(t, p.must(200, "GET", "/v1/accounts?category="+url.QueryEscape(cat), anyKey, nil).Raw, &page)
	for _, a := range page.Accounts {
		if a.Category != cat {
			t.Fatalf("category filter %q returned %+v", cat, a)
		}
	}
	p.expectInvalid([]string{"limit"}, "GET", "/v1/accounts?limit=501", anyKey, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/accounts?limit=0", anyKey, nil)
	p.expectInvalid([]string{"offset"}, "GET", "/v1/accounts?offset=-1", anyKey, nil)
	p.expectInvalid([]string{"type"}, "GET", "/v1/accounts?type=income", anyKey, nil)

	// Search: number prefix or part of the name.
	var hits struct {
		Accounts []accountHit `json:"accounts"`
	}
	r = p.must(200, "GET", "/v1/accounts/search?q=180&limit=3", anyKey, nil)
	decodeJSON(t, r.Raw, &hits)
	if len(hits.Accounts) == 0 || len(hits.Accounts) > 3 || hits.Accounts[0].Number != "1800" {
		t.Fatalf("search q=180: %s", r.Raw)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/accounts/search?q=bank&type=asset", anyKey, nil).Raw, &hits)
	if len(hits.Accounts) == 0 {
		t.Fatal("search q=bank found nothing")
	}
	for _, h := range hits.Accounts {
		if h.Type != "asset" {
			t.Fatalf("search type filter returned %+v", h)
		}
	}
	p.expectInvalid([]string{"q"}, "GET", "/v1/accounts/search", anyKey, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/accounts/search?q=a&limit=101", anyKey, nil)

	// Create: 201, then ACCOUNT_EXISTS; the new account posts at once.
	r = p.must(201, "POST", "/v1/accounts", cfgW, map[string]any{"number": "6816", "name": "Software-Abos", "type": "expense",
		"category": "Sonstige betriebliche Aufwendungen", "report_group": "other_opex"})
	var created accountBody
	decodeJSON(t, r.Raw, &created)
	if created.Number != "6816" || created.Name != "Software-Abos" || created.Type != "expense" || created.ReportGroup != "other_opex" ||
		!created.IsActive || created.IsSystem {
		t.Fatalf("created %+v", created)
	}
	p.expectError(409, "ACCOUNT_EXISTS", "POST", "/v1/accounts", cfgW, map[string]any{"number": "6816", "name": "nochmal", "type": "expense"})
	p.expectError(409, "ACCOUNT_EXISTS", "POST", "/v1/accounts", admin, map[string]any{"number": "1800", "name": "Bank", "type": "asset"})
	p.expectInvalid([]string{"number", "name", "type"}, "POST", "/v1/accounts", cfgW, map[string]any{"number": "123456789", "name": "", "type": "x"})
	decodeJSON(t, p.must(200, "GET", "/v1/accounts?limit=1", anyKey, nil).Raw, &page)
	if page.Total != total+1 {
		t.Fatalf("total after create %d, want %d", page.Total, total+1)
	}
	posted := p.book(w, bookingBody("2025-06-01", "Cloud-Abo", bline("6816", "1800", "29.99")))
	r = p.must(200, "GET", "/v1/accounts/6816/entries", w, nil)
	var entries struct {
		Entries []struct {
			IntentID      string `json:"intent_id"`
			Side          string `json:"side"`
			ContraAccount string `json:"contra_account"`
		} `json:"entries"`
		EntryCount int         `json:"entry_count"`
		Balance    json.Number `json:"balance"`
		StartDate  *string     `json:"start_date"`
		EndDate    *string     `json:"end_date"`
	}
	decodeJSON(t, r.Raw, &entries)
	if entries.EntryCount != 1 || len(entries.Entries) != 1 || entries.Entries[0].IntentID != posted.IntentID || entries.Entries[0].Side != "debit" ||
		entries.Entries[0].ContraAccount != "1800" || entries.Balance != "29.99" || entries.StartDate != nil || entries.EndDate != nil {
		t.Fatalf("entries of the new account: %s", r.Raw)
	}
	p.expectInvalid([]string{"startDate"}, "GET", "/v1/accounts/6816/entries?startDate=2025-13-01", w, nil)

	// Tax codes.
	r = p.must(200, "GET", "/v1/tax-codes", cfgR, nil)
	wantKeys(t, "tax codes", r.Raw, "tax_codes")
	var codes struct {
		TaxCodes []map[string]any `json:"tax_codes"`
	}
	decodeJSON(t, r.Raw, &codes)
	var vst19 map[string]any
	for _, c := range codes.TaxCodes {
		if c["code"] == "VSt19" {
			vst19 = c
		}
	}
	if vst19 == nil || fmt.Sprint(vst19["rate"]) != "19.00" || vst19["vat_account"] != "1406" || vst19["kind"] != "input" || vst19["is_system"] != true || vst19["is_active"] != true ||
		vst19["self_assess_account"] != nil || text(vst19, "created_at") == "" || text(vst19, "label") == "" {
		t.Fatalf("VSt19: %+v", vst19)
	}
	for _, f := range []string{"code", "label", "description", "rate", "vat_account", "self_assess_account", "is_system", "is_active", "created_at"} {
		if _, ok := codes.TaxCodes[0][f]; !ok {
			t.Fatalf("tax code lacks %s: %v", f, codes.TaxCodes[0])
		}
	}
	n := len(codes.TaxCodes)

	r = p.must(200, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"label": "Vorsteuer 19 % (Inland)", "description": "Regelsteuersatz"})
	wantKeys(t, "tax code patch", r.Raw, "code", "label", "is_active")
	if r.str("code") != "VSt19" || r.str("label") != "Vorsteuer 19 % (Inland)" || r.Body["is_active"] != true {
		t.Fatalf("patch: %s", r.Raw)
	}
	p.expectError(400, "NO_CHANGES", "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"label": "Vorsteuer 19 % (Inland)"})
	p.expectError(400, "NO_CHANGES", "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{})
	p.expectError(404, "TAX_CODE_NOT_FOUND", "PATCH", "/v1/tax-codes/VSt99", cfgW, map[string]any{"label": "x"})
	p.expectError(404, "TAX_CODE_NOT_FOUND", "PATCH", "/v1/tax-codes/"+url.PathEscape("VSt 19"), cfgW, map[string]any{"label": "x"})
	p.expectInvalid([]string{"rate"}, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"rate": -1})
	p.expectInvalid([]string{"vat_account"}, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"vat_account": "abc"})

	// Deactivated, it disappears from the list and no longer posts.
	r = p.must(200, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"is_active": false})
	if r.Body["is_active"] != false {
		t.Fatalf("deactivate: %s", r.Raw)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/tax-codes", cfgR, nil).Raw, &codes)
	if len(codes.TaxCodes) != n-1 {
		t.Fatalf("%d active codes after deactivating one of %d", len(codes.TaxCodes), n)
	}
	decodeJSON(t, p.must(200, "GET", "/v1/tax-codes?include_inactive=true", cfgR, nil).Raw, &codes)
	if len(codes.TaxCodes) != n {
		t.Fatalf("%d codes with include_inactive, want %d", len(codes.TaxCodes), n)
	}
	p.expectInvalid([]string{"include_inactive"}, "GET", "/v1/tax-codes?include_inactive=yes", cfgR, nil)
	p.expectInvalid([]string{"lines[0].tax_code"}, "POST", "/v1/bookings", w, bookingBody("2025-06-02", "Papier", bline("6815", "1800", "11.90", "tax_code", "VSt19")))
	p.must(200, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"is_active": true})

	// A changed rate splits later postings at that rate.
	p.must(200, "PATCH", "/v1/tax-codes/VSt19", cfgW, map[string]any{"rate": 16})
	d := p.intent(w, p.book(w, bookingBody("2025-06-03", "Papier", bline("6815", "1800", "116.00", "tax_code", "VSt19"))).IntentID)
	if got := entrySigs(d.Entries); !slices.Equal(got, []string{"6815>1800 100.00 VSt19", "1406>1800 16.00 VSt19"}) {
		t.Fatalf("after the rate change: %v", got)
	}
	p.wantCount(1, "SELECT count(*) FROM ledger.tax_codes WHERE tenant_id = $1 AND code = 'VSt19' AND rate = 16 AND description = 'Regelsteuersatz'", tenant)
}
