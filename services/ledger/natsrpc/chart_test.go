package natsrpc_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
)

func TestChartAccountRoutes(t *testing.T) {
	t.Parallel()
	c := newChartRPC(t)
	list, search, create := ledgerv1.SubjectAccountsList, ledgerv1.SubjectAccountsSearch, ledgerv1.SubjectAccountsCreate
	c.run(t, []chartCall{
		{name: "list without claims", subject: list, anon: true, status: 401, code: errs.Unauthenticated},
		{name: "list defaults", subject: list, status: 200, want: map[string]any{"total": 1225.0, "limit": 500.0, "offset": 0.0}},
		{name: "list q", subject: list, query: "q=nebenkasse&limit=1", status: 200, want: map[string]any{"total": 2.0, "limit": 1.0}},
		{name: "list category and type", subject: list, query: "category=GuV+6.a+L%C3%B6hne+und+Geh%C3%A4lter&type=expense&limit=1&offset=1", status: 200,
			want: map[string]any{"total": 34.0, "offset": 1.0}},
		{name: "list limit 0", subject: list, query: "limit=0", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
		{name: "list limit 501", subject: list, query: "limit=501", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
		{name: "list limit text", subject: list, query: "limit=ten", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
		{name: "list offset -1", subject: list, query: "offset=-1", status: 400, code: errs.InvalidInput, fields: []string{"offset"}},
		{name: "list bad type", subject: list, query: "type=income", status: 400, code: errs.InvalidInput, fields: []string{"type"}},

		{name: "create", subject: create, body: `{"number":"6816","name":"Software-Abos","type":"expense","category":"GuV 8. Sonstige betriebliche Aufwendungen","report_group":"other_opex"}`,
			key: "c1", status: 201, want: map[string]any{"number": "6816", "name": "Software-Abos", "type": "expense",
				"category": "GuV 8. Sonstige betriebliche Aufwendungen", "report_group": "other_opex", "is_active": true, "is_system": false}},
		{name: "create replayed", subject: create, body: `{"number":"6816","name":"Software-Abos","type":"expense","category":"GuV 8. Sonstige betriebliche Aufwendungen","report_group":"other_opex"}`,
			key: "c1", status: 201, want: map[string]any{"number": "6816", "name": "Software-Abos", "is_system": false}},
		{name: "create key reused", subject: create, body: `{"number":"6817","name":"x","type":"expense"}`, key: "c1", status: 422, code: errs.IdempotencyKeyReused},
		{name: "create duplicate", subject: create, body: `{"number":"6816","name":"again","type":"expense"}`, status: 409, code: errs.AccountExists},
		{name: "create seeded duplicate", subject: create, body: `{"number":"1600","name":"Kasse","type":"asset"}`, status: 409, code: errs.AccountExists},
		{name: "create without type", subject: create, body: `{"number":"6818","name":"x"}`, status: 400, code: errs.InvalidInput, fields: []string{"type"}},
		{name: "create invalid fields", subject: create, body: `{"number":"123456789","name":"","type":"x","report_group":""}`,
			status: 400, code: errs.InvalidInput, fields: []string{"number", "name", "type"}},
		{name: "create unknown field", subject: create, body: `{"number":"6818","name":"x","type":"expense","is_system":true}`, status: 400, code: errs.InvalidInput, fields: []string{"is_system"}},
		{name: "create malformed", subject: create, body: `{"number":`, status: 400, code: errs.InvalidInput, fields: []string{""}},
		{name: "create number as number", subject: create, body: `{"number":6818,"name":"x","type":"expense"}`, status: 400, code: errs.InvalidInput, fields: []string{"number"}},
		{name: "list sees it", subject: list, query: "q=6816", status: 200, want: map[string]any{"total": 1.0}},

		{name: "search", subject: search, query: "q=16&limit=2", status: 200},
		{name: "search type", subject: search, query: "q=Software&type=expense", status: 200},
		{name: "search without q", subject: search, status: 400, code: errs.InvalidInput, fields: []string{"q"}},
		{name: "search bad type", subject: search, query: "q=a&type=x", status: 400, code: errs.InvalidInput, fields: []string{"type"}},
		{name: "search limit 101", subject: search, query: "q=a&limit=101", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
	})
	_, body := c.do(t, chartCall{name: "search body", subject: search, query: "q=16&limit=2"})
	if diff := cmp.Diff([]any{"1600", "1610"}, chartHitNumbers(body, "accounts")); diff != "" {
		t.Errorf("search hits (-want +got):\n%s", diff)
	}
	// A name starting with q ranks before one containing it.
	want := map[string]any{"accounts": []any{map[string]any{"number": "6816", "name": "Software-Abos", "type": "expense"},
		map[string]any{"number": "6495", "name": "Wartungskosten für Hard- und Software", "type": "expense"}}}
	_, body = c.do(t, chartCall{name: "search type body", subject: search, query: "q=software&type=expense"})
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("search body (-want +got):\n%s", diff)
	}
	_, body = c.do(t, chartCall{name: "list body", subject: list, query: "limit=2&offset=1"})
	if diff := cmp.Diff([]any{"0060", "0070"}, chartHitNumbers(body, "accounts")); diff != "" {
		t.Errorf("list page (-want +got):\n%s", diff)
	}
}

func TestChartEntriesRoute(t *testing.T) {
	t.Parallel()
	c := newChartRPC(t)
	for _, b := range []ledger.Booking{
		{BookingDate: "2024-01-10", Description: "Kunde zahlt", Lines: []ledger.Line{{AccountDebit: "1800", AccountCredit: "1200", Amount: money.MustParse("119.00")}}},
		{BookingDate: "2024-02-05", Description: "Bankgebühr", Lines: []ledger.Line{{AccountDebit: "6855", AccountCredit: "1800", Amount: money.MustParse("10.50")}}},
	} {
		c.h.OK(ledgerv1.SubjectBookingsCreate, testkit.Rq{As: c.claims, Body: b}, 201, nil)
	}
	entries := ledgerv1.SubjectAccountsEntries
	c.run(t, []chartCall{
		{name: "entries", subject: entries, param: "1800", status: 200, want: map[string]any{
			"entry_count": 2.0, "debit_total": 119.0, "credit_total": 10.5, "balance": 108.5, "limit": 200.0, "offset": 0.0, "start_date": nil, "end_date": nil}},
		{name: "entries range", subject: entries, param: "1800", query: "startDate=2024-02-01&endDate=2024-02-29&limit=1000", status: 200, want: map[string]any{
			"entry_count": 1.0, "debit_total": 0.0, "credit_total": 10.5, "balance": -10.5, "start_date": "2024-02-01", "end_date": "2024-02-29", "limit": 1000.0}},
		{name: "entries unknown account", subject: entries, param: "9999", status: 404, code: errs.NotFound},
		{name: "entries not a number", subject: entries, param: "abc", status: 404, code: errs.NotFound},
		{name: "entries bad date", subject: entries, param: "1800", query: "startDate=2024-13-01", status: 400, code: errs.InvalidInput, fields: []string{"startDate"}},
		{name: "entries reversed range", subject: entries, param: "1800", query: "startDate=2024-02-01&endDate=2024-01-01", status: 400, code: errs.InvalidInput, fields: []string{"endDate"}},
		{name: "entries limit 1001", subject: entries, param: "1800", query: "limit=1001", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
		{name: "entries limit 0", subject: entries, param: "1800", query: "limit=0", status: 400, code: errs.InvalidInput, fields: []string{"limit"}},
	})
	reply, body := c.do(t, chartCall{name: "entries body", subject: entries, param: "1800"})
	// Amounts are JSON numbers with two decimals, never strings.
	if b := string(reply.Body); !strings.Contains(b, `"balance":108.50`) || !strings.Contains(b, `"debit_total":119.00`) || !strings.Contains(b, `"credit_total":10.50`) {
		t.Errorf("amounts not exact numbers: %s", reply.Body)
	}
	type entry struct {
		Date, Side, Contra, Desc string
		Amount                   float64
	}
	var got []entry
	for _, x := range body["entries"].([]any) {
		m := x.(map[string]any)
		got = append(got, entry{m["booking_date"].(string), m["side"].(string), m["contra_account"].(string), m["description"].(string), m["amount"].(float64)})
	}
	wantEntries := []entry{{"2024-01-10", "debit", "1200", "Kunde zahlt", 119}, {"2024-02-05", "credit", "6855", "Bankgebühr", 10.5}}
	if diff := cmp.Diff(wantEntries, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if acc := body["account"].(map[string]any); acc["number"] != "1800" || acc["name"] != "Bank" || acc["report_group"] != "bank" {
		t.Errorf("account %v", acc)
	}
}

func TestChartTaxCodeRoutes(t *testing.T) {
	t.Parallel()
	c := newChartRPC(t)
	list, update := ledgerv1.SubjectTaxCodesList, ledgerv1.SubjectTaxCodesUpdate
	c.run(t, []chartCall{
		{name: "list without claims", subject: list, anon: true, status: 401, code: errs.Unauthenticated},
		{name: "list", subject: list, status: 200},
		{name: "list bad flag", subject: list, query: "include_inactive=yes", status: 400, code: errs.InvalidInput, fields: []string{"include_inactive"}},
		{name: "list flag 1", subject: list, query: "include_inactive=1", status: 400, code: errs.InvalidInput, fields: []string{"include_inactive"}},

		{name: "update label", subject: update, param: "VSt19", body: `{"label":"Vorsteuer 19 % Inland","description":null}`, status: 200,
			want: map[string]any{"code": "VSt19", "label": "Vorsteuer 19 % Inland", "is_active": true}},
		{name: "deactivate", subject: update, param: "VSt7", body: `{"is_active":false}`, key: "p1", status: 200,
			want: map[string]any{"code": "VSt7", "label": "Vorsteuer 7 %", "is_active": false}},
		{name: "deactivate replayed", subject: update, param: "VSt7", body: `{"is_active":false}`, key: "p1", status: 200,
			want: map[string]any{"code": "VSt7", "is_active": false}},
		{name: "deactivate again", subject: update, param: "VSt7", body: `{"is_active":false}`, status: 400, code: errs.NoChanges},
		{name: "empty body", subject: update, param: "USt19", status: 400, code: errs.NoChanges},
		{name: "same values", subject: update, param: "RC19", body: `{"rate":19,"vat_account":"1407","self_assess_account":"3837"}`, status: 400, code: errs.NoChanges},
		{name: "unknown code", subject: update, param: "USt16", body: `{"label":"x"}`, status: 404, code: errs.TaxCodeNotFound},
		{name: "unknown account", subject: update, param: "USt19", body: `{"vat_account":"3999"}`, status: 400, code: errs.AccountNotFound, fields: []string{"vat_account"}},
		{name: "bad rate", subject: update, param: "USt19", body: `{"rate":120}`, status: 400, code: errs.InvalidInput, fields: []string{"rate"}},
		{name: "unknown field", subject: update, param: "USt19", body: `{"datev_bu_key":"3"}`, status: 400, code: errs.InvalidInput, fields: []string{"datev_bu_key"}},
		{name: "remove self-assessment", subject: update, param: "IGE7", body: `{"self_assess_account":null}`, status: 200,
			want: map[string]any{"code": "IGE7", "is_active": true}},
	})
	codes := func(query string) []any {
		_, body := c.do(t, chartCall{name: "list " + query, subject: list, query: query})
		var out []any
		for _, x := range body["tax_codes"].([]any) {
			out = append(out, x.(map[string]any)["code"])
		}
		return out
	}
	active := []any{"AUS0", "IGE19", "IGE7", "IGL0", "RC19", "RC7", "STF0", "USt19", "USt7", "VSt19"}
	if diff := cmp.Diff(active, codes("")); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(active, codes("include_inactive=false")); diff != "" {
		t.Errorf("include_inactive=false (-want +got):\n%s", diff)
	}
	all := []any{"AUS0", "IGE19", "IGE7", "IGL0", "RC19", "RC7", "STF0", "USt19", "USt7", "VSt19", "VSt7"}
	if diff := cmp.Diff(all, codes("include_inactive=true")); diff != "" {
		t.Errorf("include_inactive=true (-want +got):\n%s", diff)
	}
	_, body := c.do(t, chartCall{name: "list full", subject: list, query: "include_inactive=true"})
	var got map[string]any
	for _, x := range body["tax_codes"].([]any) {
		if m := x.(map[string]any); m["code"] == "VSt19" {
			got = m
		}
	}
	delete(got, "created_at")
	want := map[string]any{"code": "VSt19", "label": "Vorsteuer 19 % Inland", "description": nil, "kind": "input", "rate": 19.0,
		"vat_account": "1406", "self_assess_account": nil, "datev_bu_key": "9", "is_system": true, "is_active": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VSt19 (-want +got):\n%s", diff)
	}
}

// TestAccountGetForTheBank: the bank reads one account of its tenant's
// chart under its own principal; nobody else may, and an account created
// a moment ago is found.
func TestAccountGetForTheBank(t *testing.T) {
	t.Parallel()
	c := newChartRPC(t)
	get := ledgerv1.SubjectAccountGet
	as := &auth.Claims{TenantID: c.claims.TenantID}
	var a ledgerv1.Account
	c.h.OK(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{Number: "1800"}}, 200, &a)
	if a.Number != "1800" || a.Type != ledgerv1.AccountAsset || a.Name != "Bank" {
		t.Fatalf("1800: %+v", a)
	}
	c.h.OK(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{Number: "6815"}}, 200, &a)
	if a.Type != ledgerv1.AccountExpense {
		t.Fatalf("6815: %+v", a)
	}
	c.h.Fails(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{Number: "1899"}}, 404, errs.NotFound)
	c.h.Fails(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{Number: "18a"}}, 400, errs.InvalidInput)
	c.h.Fails(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{TenantID: uuid.NewString(), Number: "1800"}}, 400, errs.InvalidInput)
	// The gateway's callers and other services are refused.
	c.h.Fails(get, testkit.Rq{As: c.claims, Body: ledgerv1.AccountGet{Number: "1800"}}, 403, errs.Forbidden)
	c.h.Fails(get, testkit.Rq{Service: "periods", As: as, Body: ledgerv1.AccountGet{Number: "1800"}}, 403, errs.Forbidden)

	// Cached chart, new account: found all the same.
	c.h.OK(ledgerv1.SubjectAccountsCreate, testkit.Rq{As: c.claims, Body: `{"number":"1899","name":"Bank 9","type":"asset"}`}, 201, nil)
	c.h.OK(get, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountGet{Number: "1899"}}, 200, &a)
	if a.Name != "Bank 9" || a.Type != ledgerv1.AccountAsset {
		t.Fatalf("1899: %+v", a)
	}
}
