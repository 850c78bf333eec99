package allinone_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// debtorNames is each debtor of a list as "customer number name".
func debtorNames(r resp) []string {
	out := []string{}
	for _, d := range r.list("debtors") {
		out = append(out, d["customer_number"].(string)+" "+d["name"].(string))
	}
	return out
}

// detailsOf is the code and "field: issue" of every detail of an error.
func detailsOf(r resp) []string {
	out := []string{r.code()}
	ds, _ := r.Body["details"].([]any)
	for _, d := range ds {
		m, _ := d.(map[string]any)
		f, _ := m["field"].(string)
		i, _ := m["issue"].(string)
		out = append(out, f+": "+i)
	}
	return out
}

func berlin() map[string]any {
	return map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin"}
}

// TestDebtorRoutes: the receivables service's debtors through the gateway
// and MCP: numbers assigned without gaps, every rule of a debtor's fields,
// the receivable account asked of the ledger, partial changes,
// idempotency, scopes and tenants apart.
func TestDebtorRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Debitoren GmbH")
	other, _ := p.newTenant("Fremde Debitoren GmbH")
	writer, reader, outsider := p.apiKey(admin, "debitoren:read", "debitoren:write"), p.apiKey(admin, "debitoren:read"), p.apiKey(admin, "journal:read")

	// The smallest debtor: a number assigned, the defaults filled in.
	first := p.must(201, "POST", "/v1/debtors", writer, map[string]any{"name": " Zeta AG ", "address": berlin()})
	id := first.str("id")
	want := map[string]any{"id": id, "customer_number": "K-10001", "name": "Zeta AG",
		"address": map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin", "country": "DE"},
		"vat_id":  nil, "email": nil, "leitweg_id": nil, "receivable_account": "1200", "is_active": true,
		"payment_terms": map[string]any{"days": float64(14), "cash_discount_rate": float64(0), "cash_discount_days": float64(0)},
		"created_at":    first.Body["created_at"], "updated_at": first.Body["created_at"]}
	if diff := cmp.Diff(want, first.Body); diff != "" {
		t.Fatalf("created (-want +got):\n%s", diff)
	}
	if got := p.must(200, "GET", "/v1/debtors/"+id, reader, nil); !cmp.Equal(first.Body, got.Body) {
		t.Fatalf("read back %s, created %s", got.Raw, first.Raw)
	}

	// Everything given: the VAT ID normalised, the account asked of the ledger.
	full := p.must(201, "POST", "/v1/debtors", writer, map[string]any{"customer_number": "STADT/HB.1", "name": "Stadt Bremen",
		"address": map[string]any{"street": "Am Markt 21", "zip": "28195", "city": "Bremen", "country": "DE"},
		"vat_id":  "de 123 456 789", "email": "rechnung@bremen.example", "leitweg_id": "04011000-1234512345-06", "receivable_account": "1210",
		"payment_terms": map[string]any{"days": 30, "cash_discount_rate": json.Number("2.5"), "cash_discount_days": 10}})
	if diff := cmp.Diff([]any{"STADT/HB.1", "DE123456789", "1210", "04011000-1234512345-06", map[string]any{"days": float64(30), "cash_discount_rate": 2.5, "cash_discount_days": float64(10)}},
		[]any{full.Body["customer_number"], full.Body["vat_id"], full.Body["receivable_account"], full.Body["leitweg_id"], full.Body["payment_terms"]}); diff != "" {
		t.Fatalf("full debtor (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(full.Raw), `"cash_discount_rate":2.50`) {
		t.Fatalf("rate not written with two decimals: %s", full.Raw)
	}
	// The counter goes on from the last assigned number; another tenant has its own.
	p.must(201, "POST", "/v1/debtors", writer, map[string]any{"name": "alpha GmbH", "address": berlin(), "vat_id": "ATU12345678"})
	if n := p.must(201, "POST", "/v1/debtors", other, map[string]any{"name": "Fremd", "address": berlin()}).str("customer_number"); n != "K-10001" {
		t.Fatalf("other tenant's first number %s", n)
	}

	// Every refusal, with its code and the field at fault.
	for _, tc := range []struct {
		name   string
		status int
		body   map[string]any
		want   []string
	}{
		{"VAT ID of the wrong format", 400, map[string]any{"name": "A", "address": berlin(), "vat_id": "ATU1234567"},
			[]string{"INVALID_INPUT", "vat_id: expected format ATU + 8 digits"}},
		{"VAT ID of a non-EU prefix", 400, map[string]any{"name": "A", "address": berlin(), "vat_id": "CHE123456789"},
			[]string{"INVALID_INPUT", "vat_id: an EU VAT ID beginning with the country prefix of an EU member state (EL for Greece) or XI, e.g. DE123456789"}},
		{"Leitweg-ID check digits", 400, map[string]any{"name": "A", "address": berlin(), "leitweg_id": "04011000-1234512345-07"},
			[]string{"INVALID_INPUT", "leitweg_id: check digits do not match (ISO 7064 MOD 97-10)"}},
		{"Skonto days not below the payment days", 400, map[string]any{"name": "A", "address": berlin(),
			"payment_terms": map[string]any{"days": 10, "cash_discount_rate": 2, "cash_discount_days": 10}},
			[]string{"INVALID_INPUT", "payment_terms.cash_discount_days: with a cash discount rate, fewer than the payment days (10)"}},
		{"rate with three decimals", 400, map[string]any{"name": "A", "address": berlin(), "payment_terms": map[string]any{"cash_discount_rate": json.Number("1.125")}},
			[]string{"INVALID_INPUT", "payment_terms.cash_discount_rate: a percentage from 0 to 100 with at most 2 decimals"}},
		{"unknown country", 400, map[string]any{"name": "A", "address": map[string]any{"street": "s", "zip": "1", "city": "c", "country": "XX"}},
			[]string{"INVALID_INPUT", "address.country: an ISO 3166-1 alpha-2 country code in upper case, e.g. DE"}},
		{"bad e-mail", 400, map[string]any{"name": "A", "address": berlin(), "email": "rechnung@"},
			[]string{"INVALID_INPUT", "email: an e-mail address such as buchhaltung@example.de"}},
		{"blank name", 400, map[string]any{"name": "  ", "address": berlin()}, []string{"INVALID_INPUT", "name: required"}},
		{"account not in the chart", 400, map[string]any{"name": "A", "address": berlin(), "receivable_account": "99999"},
			[]string{"ACCOUNT_NOT_FOUND", "receivable_account: not in the chart of accounts"}},
		{"account not an asset", 400, map[string]any{"name": "A", "address": berlin(), "receivable_account": "4400"},
			[]string{"INVALID_ACCOUNT_TYPE", "receivable_account: must be an asset account"}},
		{"number taken, in another case", 409, map[string]any{"name": "A", "address": berlin(), "customer_number": "k-10001"},
			[]string{"DUPLICATE_CUSTOMER_NUMBER", "customer_number: already used by another debtor"}},
	} {
		r := p.must(tc.status, "POST", "/v1/debtors", writer, tc.body)
		if diff := cmp.Diff(tc.want, detailsOf(r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// What the contract refuses before the service: no address, an unknown field.
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/debtors", writer, map[string]any{"name": "A"})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/debtors", writer, map[string]any{"name": "A", "address": berlin(), "iban": "DE89370400440532013000"})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/debtors", writer, map[string]any{"name": "A", "address": map[string]any{"street": "s", "zip": "1"}})
	// None of the refusals took a number.
	if n := p.must(201, "POST", "/v1/debtors", writer, map[string]any{"name": "Gamma", "address": berlin()}).str("customer_number"); n != "K-10003" {
		t.Fatalf("after the refusals the next number is %s, want K-10003", n)
	}

	// Listing: by name case-blind, search over name, number and VAT ID.
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"K-10002 alpha GmbH", "K-10003 Gamma", "STADT/HB.1 Stadt Bremen", "K-10001 Zeta AG"}},
		{"?search=BREMEN", []string{"STADT/HB.1 Stadt Bremen"}},
		{"?search=atu1234", []string{"K-10002 alpha GmbH"}},
		{"?search=k-1000&limit=2&offset=1", []string{"K-10003 Gamma", "K-10001 Zeta AG"}},
		{"?search=%25", []string{}},
	} {
		if diff := cmp.Diff(tc.want, debtorNames(p.must(200, "GET", "/v1/debtors"+tc.query, reader, nil))); diff != "" {
			t.Errorf("GET /v1/debtors%s (-want +got):\n%s", tc.query, diff)
		}
	}
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/debtors?limit=501", reader, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/debtors?is_active=yes", reader, nil)

	// Changing: partial, the rules on the result, NO_CHANGES, deactivation.
	changed := p.must(200, "PATCH", "/v1/debtors/"+id, writer, map[string]any{"email": "buchhaltung@zeta.example",
		"address": map[string]any{"city": "Potsdam", "zip": "14467"}, "payment_terms": map[string]any{"days": 21}})
	if diff := cmp.Diff([]any{"buchhaltung@zeta.example", map[string]any{"street": "Hauptstr. 1", "zip": "14467", "city": "Potsdam", "country": "DE"}, float64(21)},
		[]any{changed.Body["email"], changed.Body["address"], changed.Body["payment_terms"].(map[string]any)["days"]}); diff != "" {
		t.Fatalf("changed (-want +got):\n%s", diff)
	}
	if changed.str("updated_at") == changed.str("created_at") {
		t.Errorf("updated_at not moved: %s", changed.Raw)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   any
		want   []string
	}{
		{"nothing given", 400, map[string]any{}, []string{"NO_CHANGES"}},
		{"every value the current one", 400, map[string]any{"name": "Zeta AG", "address": map[string]any{"city": "Potsdam"}, "is_active": true}, []string{"NO_CHANGES"}},
		{"Skonto rule against the current terms", 400, map[string]any{"payment_terms": map[string]any{"cash_discount_rate": 3, "cash_discount_days": 21}},
			[]string{"INVALID_INPUT", "payment_terms.cash_discount_days: with a cash discount rate, fewer than the payment days (21)"}},
		{"VAT ID", 400, map[string]any{"vat_id": "NL123456789"}, []string{"INVALID_INPUT", "vat_id: expected format NL + 9 digits + B + 2 digits"}},
		{"account not in the chart", 400, map[string]any{"receivable_account": "99999"}, []string{"ACCOUNT_NOT_FOUND", "receivable_account: not in the chart of accounts"}},
		{"another's number", 409, map[string]any{"customer_number": "stadt/hb.1"}, []string{"DUPLICATE_CUSTOMER_NUMBER", "customer_number: already used by another debtor"}},
	} {
		r := p.must(tc.status, "PATCH", "/v1/debtors/"+id, writer, tc.body)
		if diff := cmp.Diff(tc.want, detailsOf(r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	p.expectError(400, "INVALID_INPUT", "PATCH", "/v1/debtors/"+id, writer, map[string]any{"tenant_id": tenant})
	p.expectError(400, "INVALID_INPUT", "PATCH", "/v1/debtors/"+id, writer, map[string]any{"address": map[string]any{"town": "Potsdam"}})
	off := p.must(200, "PATCH", "/v1/debtors/"+id, writer, map[string]any{"is_active": false, "email": "", "vat_id": "FR40303265045"})
	if off.Body["is_active"] != false || off.Body["email"] != nil || off.str("vat_id") != "FR40303265045" {
		t.Fatalf("deactivated: %s", off.Raw)
	}
	if diff := cmp.Diff([]string{"K-10001 Zeta AG"}, debtorNames(p.must(200, "GET", "/v1/debtors?is_active=false", reader, nil))); diff != "" {
		t.Errorf("inactive (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"K-10002 alpha GmbH", "K-10003 Gamma", "STADT/HB.1 Stadt Bremen"}, debtorNames(p.must(200, "GET", "/v1/debtors?is_active=true", reader, nil))); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	// No DELETE: a debtor is deactivated, never removed.
	p.expectError(405, "METHOD_NOT_ALLOWED", "DELETE", "/v1/debtors/"+id, writer, nil)

	// Unknown ids, malformed ids and the other tenant's ids are all 404.
	foreign := p.must(200, "GET", "/v1/debtors", other, nil).list("debtors")[0]["id"].(string)
	for _, path := range []string{"/v1/debtors/" + uuid.NewString(), "/v1/debtors/not-a-uuid", "/v1/debtors/" + foreign} {
		p.expectError(404, "NOT_FOUND", "GET", path, reader, nil)
		p.expectError(404, "NOT_FOUND", "PATCH", path, writer, map[string]any{"name": "Übernahme"})
	}
	if diff := cmp.Diff([]string{"K-10001 Fremd"}, debtorNames(p.must(200, "GET", "/v1/debtors", other, nil))); diff != "" {
		t.Fatalf("the other tenant's debtors changed (-want +got):\n%s", diff)
	}

	// Scopes.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/debtors", reader, map[string]any{"name": "A", "address": berlin()})
	p.expectError(403, "FORBIDDEN", "PATCH", "/v1/debtors/"+id, reader, map[string]any{"name": "A"})
	p.expectError(403, "FORBIDDEN", "GET", "/v1/debtors", outsider, nil)
	p.expectError(403, "FORBIDDEN", "GET", "/v1/debtors/"+id, outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/debtors", "", nil)
}

// TestDebtorIdempotency: a repeated POST or PATCH with the same
// Idempotency-Key replays the first answer (no second debtor, no number
// taken, no NO_CHANGES); the key with another body is refused.
func TestDebtorIdempotency(t *testing.T) {
	p, admin, _ := setup(t, nil, "Idempotente Debitoren GmbH")
	body := map[string]any{"name": "Einmal GmbH", "address": berlin()}
	a := p.must(201, "POST", "/v1/debtors", admin, body, "Idempotency-Key", "debtor-1")
	b := p.must(201, "POST", "/v1/debtors", admin, body, "Idempotency-Key", "debtor-1")
	if string(a.Raw) != string(b.Raw) {
		t.Fatalf("replay differs:\n%s\n%s", a.Raw, b.Raw)
	}
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/debtors", admin, map[string]any{"name": "Anders GmbH", "address": berlin()}, "Idempotency-Key", "debtor-1")
	if n := p.must(201, "POST", "/v1/debtors", admin, body).str("customer_number"); n != "K-10002" {
		t.Fatalf("next number %s, want K-10002", n)
	}
	change := map[string]any{"name": "Einmal AG"}
	c := p.must(200, "PATCH", "/v1/debtors/"+a.str("id"), admin, change, "Idempotency-Key", "change-1")
	d := p.must(200, "PATCH", "/v1/debtors/"+a.str("id"), admin, change, "Idempotency-Key", "change-1")
	if string(c.Raw) != string(d.Raw) {
		t.Fatalf("change replay differs:\n%s\n%s", c.Raw, d.Raw)
	}
	p.expectError(400, "NO_CHANGES", "PATCH", "/v1/debtors/"+a.str("id"), admin, change)
}

// TestDebtorMCP: the four tools are the routes: the same answers, the same
// refusals (as tool errors), the same scopes.
func TestDebtorMCP(t *testing.T) {
	p, admin, _ := setup(t, nil, "MCP Debitoren GmbH")
	writer, reader := p.apiKey(admin, "debitoren:read", "debitoren:write"), p.apiKey(admin, "debitoren:read")
	tool := func(key, name string, args map[string]any) (map[string]any, bool) {
		t.Helper()
		return toolResult(t, p.mcpCall(t, key, 1, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	created, isErr := tool(writer, "create_debtor", map[string]any{"name": "Agent GmbH", "address": berlin(), "vat_id": "IT12345678901",
		"leitweg_id": "991-33333TEST-33", "payment_terms": map[string]any{"days": 10, "cash_discount_rate": 1.5, "cash_discount_days": 3}, "idempotency_key": "mcp-1"})
	if isErr || created["customer_number"] != "K-10001" || created["leitweg_id"] != "991-33333TEST-33" {
		t.Fatalf("create_debtor: %v", created)
	}
	id := created["id"].(string)
	rest := p.must(200, "GET", "/v1/debtors/"+id, reader, nil)
	got, isErr := tool(reader, "get_debtor", map[string]any{"id": id})
	if isErr {
		t.Fatalf("get_debtor: %v", got)
	}
	if diff := cmp.Diff(rest.Body, got); diff != "" {
		t.Fatalf("MCP and REST differ (-rest +mcp):\n%s", diff)
	}
	updated, isErr := tool(writer, "update_debtor", map[string]any{"id": id, "is_active": false, "leitweg_id": ""})
	if isErr || updated["is_active"] != false || updated["leitweg_id"] != nil {
		t.Fatalf("update_debtor: %v", updated)
	}
	list, isErr := tool(reader, "list_debtors", map[string]any{"search": "agent", "is_active": false, "limit": 10})
	if diff := cmp.Diff(p.must(200, "GET", "/v1/debtors?search=agent&is_active=false&limit=10", reader, nil).Body, list); isErr || diff != "" {
		t.Fatalf("list_debtors (-rest +mcp):\n%s", diff)
	}
	if _, isErr := tool(writer, "create_debtor", map[string]any{"name": "Falsch", "address": berlin(), "vat_id": "DE12345678"}); !isErr {
		t.Fatal("a bad VAT ID was not a tool error")
	}
	if _, isErr := tool(reader, "create_debtor", map[string]any{"name": "Ohne Recht", "address": berlin()}); !isErr {
		t.Fatal("create_debtor without debitoren:write was not a tool error")
	}
	if n := len(p.must(200, "GET", "/v1/debtors", reader, nil).list("debtors")); n != 1 {
		t.Fatalf("%d debtors after the refused tool calls, want 1", n)
	}
}
