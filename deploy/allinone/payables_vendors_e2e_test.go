package allinone_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// vendorNames is each vendor of a list by name.
func vendorNames(r resp) []string {
	out := []string{}
	for _, v := range r.list("vendors") {
		out = append(out, v["name"].(string))
	}
	return out
}

// TestVendorRoutes: the payables service's vendors through the gateway:
// every rule of a vendor's fields, duplicates by name, tax number and VAT
// ID, the default account asked of the ledger, partial changes, open
// amounts from incoming invoices, scopes and tenants apart.
func TestVendorRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Kreditoren GmbH")
	other, otherTenant := p.newTenant("Fremde Kreditoren GmbH")
	writer, reader, outsider := p.apiKey(admin, "kreditoren:read", "kreditoren:write"), p.apiKey(admin, "kreditoren:read"), p.apiKey(admin, "debitoren:read")

	// The smallest vendor: a name.
	first := p.must(201, "POST", "/v1/vendors", writer, map[string]any{"name": " Müller GmbH "})
	id := first.str("id")
	want := map[string]any{"id": id, "name": "Müller GmbH", "tax_id": nil, "vat_id": nil, "iban": nil, "bic": nil, "address": nil,
		"default_account": nil, "notes": nil, "is_active": true, "open_amount": float64(0),
		"created_at": first.Body["created_at"], "updated_at": first.Body["created_at"]}
	if diff := cmp.Diff(want, first.Body); diff != "" {
		t.Fatalf("created (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(first.Raw), `"open_amount":0.00`) {
		t.Fatalf("open amount not written with two decimals: %s", first.Raw)
	}
	if got := p.must(200, "GET", "/v1/vendors/"+id, reader, nil); !cmp.Equal(first.Body, got.Body) {
		t.Fatalf("read back %s, created %s", got.Raw, first.Raw)
	}

	// Everything given: normalised VAT ID, IBAN and BIC; the account asked of the ledger.
	full := p.must(201, "POST", "/v1/vendors", writer, map[string]any{"name": "Bürobedarf Nord GmbH", "tax_id": "143/123/45678",
		"vat_id": "de 987 654 321", "iban": "de89 3704 0044 0532 0130 00", "bic": "cobadeffxxx",
		"address":         map[string]any{"street": "Hafenstr. 5", "zip": "20457", "city": "Hamburg", "country": "DE"},
		"default_account": "6815", "notes": "Skonto 2 % in 10 Tagen"})
	if diff := cmp.Diff([]any{"143/123/45678", "DE987654321", "DE89370400440532013000", "COBADEFFXXX", "6815", "Skonto 2 % in 10 Tagen",
		map[string]any{"street": "Hafenstr. 5", "zip": "20457", "city": "Hamburg", "country": "DE"}},
		[]any{full.Body["tax_id"], full.Body["vat_id"], full.Body["iban"], full.Body["bic"], full.Body["default_account"], full.Body["notes"], full.Body["address"]}); diff != "" {
		t.Fatalf("full vendor (-want +got):\n%s", diff)
	}
	at := p.must(201, "POST", "/v1/vendors", writer, map[string]any{"name": "alpen Holz KG", "vat_id": "ATU12345678", "address": map[string]any{"city": "Wien", "country": "AT"}})
	if diff := cmp.Diff(map[string]any{"street": "", "zip": "", "city": "Wien", "country": "AT"}, at.Body["address"]); diff != "" {
		t.Fatalf("part of an address (-want +got):\n%s", diff)
	}
	// Another tenant may have the same name, tax number and VAT ID.
	p.must(201, "POST", "/v1/vendors", other, map[string]any{"name": "MUELLER GMBH", "tax_id": "14312345678", "vat_id": "DE987654321"})

	// Every refusal, with its code and the field at fault.
	for _, tc := range []struct {
		name   string
		status int
		body   map[string]any
		want   []string
	}{
		{"blank name", 400, map[string]any{"name": "  "}, []string{"INVALID_INPUT", "name: required"}},
		{"name too long", 400, map[string]any{"name": strings.Repeat("a", 256)}, []string{"INVALID_INPUT", "name: at most 255 characters"}},
		{"tax number with letters", 400, map[string]any{"name": "A", "tax_id": "143/123/4567X"},
			[]string{"INVALID_INPUT", "tax_id: a tax number (Steuernummer) of digits and slashes, e.g. 143/123/45678 or 2181508150005"}},
		{"tax number too long", 400, map[string]any{"name": "A", "tax_id": "123456789012345678901"}, []string{"INVALID_INPUT", "tax_id: at most 20 characters"}},
		{"VAT ID of the wrong format", 400, map[string]any{"name": "A", "vat_id": "ATU1234567"}, []string{"INVALID_INPUT", "vat_id: expected format ATU + 8 digits"}},
		{"VAT ID of a non-EU prefix", 400, map[string]any{"name": "A", "vat_id": "CHE123456789"},
			[]string{"INVALID_INPUT", "vat_id: an EU VAT ID beginning with the country prefix of an EU member state (EL for Greece) or XI, e.g. DE123456789"}},
		{"VAT ID too long", 400, map[string]any{"name": "A", "vat_id": "DE123456789012345678901"}, []string{"INVALID_INPUT", "vat_id: at most 20 characters"}},
		{"IBAN check digits", 400, map[string]any{"name": "A", "iban": "DE89370400440532013001"}, []string{"INVALID_INPUT", "iban: check digits do not match (ISO 13616 mod 97)"}},
		{"IBAN length of its country", 400, map[string]any{"name": "A", "iban": "DE8937040044053201300"}, []string{"INVALID_INPUT", "iban: an IBAN of DE has 22 characters"}},
		{"IBAN too long", 400, map[string]any{"name": "A", "iban": "DE893704004405320130000000000000000"}, []string{"INVALID_INPUT", "iban: at most 34 characters"}},
		{"BIC", 400, map[string]any{"name": "A", "bic": "COBADEF"},
			[]string{"INVALID_INPUT", "bic: 8 or 11 characters: 4 letters (bank), 2 letters (country), 2 letters or digits (location), optionally 3 letters or digits (branch)"}},
		{"unknown country", 400, map[string]any{"name": "A", "address": map[string]any{"country": "XX"}},
			[]string{"INVALID_INPUT", "address.country: an ISO 3166-1 alpha-2 country code in upper case, e.g. DE"}},
		{"notes too long", 400, map[string]any{"name": "A", "notes": strings.Repeat("n", 2001)}, []string{"INVALID_INPUT", "notes: at most 2000 characters"}},
		{"account not in the chart", 400, map[string]any{"name": "A", "default_account": "99999"},
			[]string{"ACCOUNT_NOT_FOUND", "default_account: not in the chart of accounts"}},
		{"name in capitals, umlaut spelled out", 409, map[string]any{"name": "MUELLER GMBH"}, []string{"DUPLICATE_NAME", "name: already used by another vendor"}},
		{"name without legal form", 409, map[string]any{"name": "Müller"}, []string{"DUPLICATE_NAME", "name: already used by another vendor"}},
		{"name with another legal form", 409, map[string]any{"name": "müller gmbh & co. kg"}, []string{"DUPLICATE_NAME", "name: already used by another vendor"}},
		{"tax number without slashes", 409, map[string]any{"name": "B", "tax_id": "14312345678"}, []string{"DUPLICATE_TAX_ID", "tax_id: already used by another vendor"}},
		{"VAT ID", 409, map[string]any{"name": "C", "vat_id": "DE987654321"}, []string{"DUPLICATE_VAT_ID", "vat_id: already used by another vendor"}},
	} {
		r := p.must(tc.status, "POST", "/v1/vendors", writer, tc.body)
		if diff := cmp.Diff(tc.want, detailsOf(r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// What the contract refuses before the service: no name, an unknown field.
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/vendors", writer, map[string]any{"vat_id": "DE123456789"})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/vendors", writer, map[string]any{"name": "A", "email": "a@b.de"})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/vendors", writer, map[string]any{"name": "A", "address": map[string]any{"town": "Köln"}})

	// Listing: by name case-blind, search over name and VAT ID.
	all := []string{"alpen Holz KG", "Bürobedarf Nord GmbH", "Müller GmbH"}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", all},
		{"?search=BÜRO", []string{"Bürobedarf Nord GmbH"}},
		{"?search=atu1234", []string{"alpen Holz KG"}},
		{"?search=de%20987", []string{"Bürobedarf Nord GmbH"}},
		{"?search=gmbh&limit=1&offset=1", []string{"Müller GmbH"}},
		{"?is_active=true", all},
		{"?is_active=false", []string{}},
		{"?search=%25", []string{}},
	} {
		if diff := cmp.Diff(tc.want, vendorNames(p.must(200, "GET", "/v1/vendors"+tc.query, reader, nil))); diff != "" {
			t.Errorf("GET /v1/vendors%s (-want +got):\n%s", tc.query, diff)
		}
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x", "offset=-1", "is_active=yes", "search=" + strings.Repeat("x", 101)} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/vendors?"+q, reader, nil)
	}
	// The default limit is 50.
	for i := range 50 {
		p.must(201, "POST", "/v1/vendors", writer, map[string]any{"name": "Zulieferer " + strings.Repeat("z", i+1)})
	}
	if n := len(p.must(200, "GET", "/v1/vendors", reader, nil).list("vendors")); n != 50 {
		t.Errorf("%d vendors by default, want 50", n)
	}
	if n := len(p.must(200, "GET", "/v1/vendors?limit=500", reader, nil).list("vendors")); n != 53 {
		t.Errorf("%d vendors with limit 500, want 53", n)
	}

	// Open amounts: what is still open of the vendor's posted invoices,
	// written here as the invoice flows of later issues will write them.
	ctx := context.Background()
	fullID := full.str("id")
	for _, inv := range []struct{ tenant, vendor, state, gross, paid string }{
		{tenant, fullID, "posted", "119.00", "0"},
		{tenant, fullID, "posted", "238.00", "100.00"},
		{tenant, fullID, "posted", "50.00", "50.00"},
		{tenant, fullID, "draft", "1190.00", "0"},
		{tenant, fullID, "void", "595.00", "0"},
		{tenant, id, "posted", "0.10", "0"},
	} {
		var intent *string
		if inv.state == "posted" {
			s := uuid.NewString()
			intent = &s
		}
		if _, err := p.owner.Exec(ctx, `INSERT INTO payables.incoming_invoices (id, tenant_id, vendor_id, invoice_number, invoice_date, due_date,
				total_net, total_tax, total_gross, paid_amount, booking_intent_id, state)
			VALUES ($1, $2, $3, $4, '2025-03-01', '2025-03-31', $5, 0, $5, $6, $7, $8)`,
			uuid.NewString(), inv.tenant, inv.vendor, "ER-"+uuid.NewString()[:8], inv.gross, inv.paid, intent, inv.state); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.must(200, "GET", "/v1/vendors/"+fullID, reader, nil); !strings.Contains(string(got.Raw), `"open_amount":257.00`) {
		t.Errorf("open amount of one vendor: %s", got.Raw)
	}
	open := map[string]any{}
	for _, v := range p.must(200, "GET", "/v1/vendors?limit=500", reader, nil).list("vendors") {
		if v["open_amount"] != 0.0 || v["name"] == "alpen Holz KG" {
			open[v["name"].(string)] = v["open_amount"]
		}
	}
	if diff := cmp.Diff(map[string]any{"Bürobedarf Nord GmbH": 257.0, "Müller GmbH": 0.1, "alpen Holz KG": 0.0}, open); diff != "" {
		t.Errorf("listed open amounts (-want +got):\n%s", diff)
	}

	// Changing: partial, NO_CHANGES, duplicates, deactivation.
	changed := p.must(200, "PATCH", "/v1/vendors/"+id, writer, map[string]any{"iban": "AT61 1904 3002 3457 3201",
		"address": map[string]any{"city": "Köln"}, "notes": "neu"})
	if diff := cmp.Diff([]any{"AT611904300234573201", map[string]any{"street": "", "zip": "", "city": "Köln", "country": ""}, "neu", 0.1},
		[]any{changed.Body["iban"], changed.Body["address"], changed.Body["notes"], changed.Body["open_amount"]}); diff != "" {
		t.Fatalf("changed (-want +got):\n%s", diff)
	}
	if changed.str("updated_at") == changed.str("created_at") {
		t.Errorf("updated_at not moved: %s", changed.Raw)
	}
	// Another spelling of its own name is no duplicate.
	if r := p.must(200, "PATCH", "/v1/vendors/"+id, writer, map[string]any{"name": "MÜLLER GmbH"}); r.str("name") != "MÜLLER GmbH" {
		t.Fatalf("respelled: %s", r.Raw)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   any
		want   []string
	}{
		{"nothing given", 400, map[string]any{}, []string{"NO_CHANGES"}},
		{"every value the current one", 400, map[string]any{"name": "MÜLLER GmbH", "iban": "AT611904300234573201", "is_active": true, "tax_id": ""}, []string{"NO_CHANGES"}},
		{"IBAN", 400, map[string]any{"iban": "AT611904300234573202"}, []string{"INVALID_INPUT", "iban: check digits do not match (ISO 13616 mod 97)"}},
		{"blank name", 400, map[string]any{"name": " "}, []string{"INVALID_INPUT", "name: required"}},
		{"account not in the chart", 400, map[string]any{"default_account": "99999"}, []string{"ACCOUNT_NOT_FOUND", "default_account: not in the chart of accounts"}},
		{"another's name", 409, map[string]any{"name": "Bürobedarf Nord"}, []string{"DUPLICATE_NAME", "name: already used by another vendor"}},
		{"another's tax number", 409, map[string]any{"tax_id": "143/123/45678"}, []string{"DUPLICATE_TAX_ID", "tax_id: already used by another vendor"}},
		{"another's VAT ID", 409, map[string]any{"vat_id": "atu 12345678"}, []string{"DUPLICATE_VAT_ID", "vat_id: already used by another vendor"}},
	} {
		r := p.must(tc.status, "PATCH", "/v1/vendors/"+id, writer, tc.body)
		if diff := cmp.Diff(tc.want, detailsOf(r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	p.expectError(400, "INVALID_INPUT", "PATCH", "/v1/vendors/"+id, writer, map[string]any{"tenant_id": tenant})
	off := p.must(200, "PATCH", "/v1/vendors/"+id, writer, map[string]any{"is_active": false, "iban": "", "default_account": "5400"})
	if off.Body["is_active"] != false || off.Body["iban"] != nil || off.str("default_account") != "5400" {
		t.Fatalf("deactivated: %s", off.Raw)
	}
	if diff := cmp.Diff([]string{"MÜLLER GmbH"}, vendorNames(p.must(200, "GET", "/v1/vendors?is_active=false", reader, nil))); diff != "" {
		t.Errorf("inactive (-want +got):\n%s", diff)
	}
	// No DELETE: a vendor is deactivated, never removed.
	p.expectError(405, "METHOD_NOT_ALLOWED", "DELETE", "/v1/vendors/"+id, writer, nil)

	// Unknown ids, malformed ids and the other tenant's ids are all 404.
	foreign := p.must(200, "GET", "/v1/vendors", other, nil).list("vendors")[0]["id"].(string)
	for _, path := range []string{"/v1/vendors/" + uuid.NewString(), "/v1/vendors/not-a-uuid", "/v1/vendors/" + foreign} {
		p.expectError(404, "NOT_FOUND", "GET", path, reader, nil)
		p.expectError(404, "NOT_FOUND", "PATCH", path, writer, map[string]any{"name": "Übernahme"})
	}
	if diff := cmp.Diff([]string{"MUELLER GMBH"}, vendorNames(p.must(200, "GET", "/v1/vendors", other, nil))); diff != "" {
		t.Fatalf("the other tenant's vendors changed (-want +got):\n%s", diff)
	}
	// The other tenant's invoices count for its vendors only.
	var n int
	if err := p.owner.QueryRow(ctx, `SELECT count(*) FROM payables.incoming_invoices WHERE tenant_id = $1`, otherTenant).Scan(&n); err != nil || n != 0 {
		t.Fatalf("other tenant's invoices: %d %v", n, err)
	}

	// Scopes.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/vendors", reader, map[string]any{"name": "A"})
	p.expectError(403, "FORBIDDEN", "PATCH", "/v1/vendors/"+id, reader, map[string]any{"name": "A"})
	p.expectError(403, "FORBIDDEN", "GET", "/v1/vendors", outsider, nil)
	p.expectError(403, "FORBIDDEN", "GET", "/v1/vendors/"+id, outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/vendors", "", nil)
}

// TestVendorConcurrentDuplicates: "Müller GmbH" and "MUELLER GMBH" posted
// at once: one is created, the other is 409 DUPLICATE_NAME.
func TestVendorConcurrentDuplicates(t *testing.T) {
	p, admin, _ := setup(t, nil, "Gleichzeitige Kreditoren GmbH")
	for round := range 5 {
		suffix := strings.Repeat("x", round+1)
		names := []string{"Müller " + suffix + " GmbH", "MUELLER " + suffix + " GMBH"}
		statuses := make([]int, len(names))
		errc := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() {
				r, err := p.send("POST", "/v1/vendors", admin, map[string]any{"name": name})
				statuses[i], errc[i] = r.Status, err
			})
		}
		wg.Wait()
		for _, err := range errc {
			if err != nil {
				t.Fatal(err)
			}
		}
		if statuses[0]+statuses[1] != 201+409 {
			t.Fatalf("round %d: statuses %v, want one 201 and one 409", round, statuses)
		}
	}
	if n := len(p.must(200, "GET", "/v1/vendors", admin, nil).list("vendors")); n != 5 {
		t.Fatalf("%d vendors, want 5", n)
	}
}

// TestVendorIdempotency: a repeated POST or PATCH with the same
// Idempotency-Key replays the first answer (no DUPLICATE_NAME, no
// NO_CHANGES); the key with another body is refused.
func TestVendorIdempotency(t *testing.T) {
	p, admin, _ := setup(t, nil, "Idempotente Kreditoren GmbH")
	body := map[string]any{"name": "Einmal GmbH"}
	a := p.must(201, "POST", "/v1/vendors", admin, body, "Idempotency-Key", "vendor-1")
	b := p.must(201, "POST", "/v1/vendors", admin, body, "Idempotency-Key", "vendor-1")
	if string(a.Raw) != string(b.Raw) {
		t.Fatalf("replay differs:\n%s\n%s", a.Raw, b.Raw)
	}
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/vendors", admin, map[string]any{"name": "Anders GmbH"}, "Idempotency-Key", "vendor-1")
	p.expectError(409, "DUPLICATE_NAME", "POST", "/v1/vendors", admin, body)
	change := map[string]any{"notes": "einmal"}
	c := p.must(200, "PATCH", "/v1/vendors/"+a.str("id"), admin, change, "Idempotency-Key", "change-1")
	d := p.must(200, "PATCH", "/v1/vendors/"+a.str("id"), admin, change, "Idempotency-Key", "change-1")
	if string(c.Raw) != string(d.Raw) {
		t.Fatalf("change replay differs:\n%s\n%s", c.Raw, d.Raw)
	}
	p.expectError(400, "NO_CHANGES", "PATCH", "/v1/vendors/"+a.str("id"), admin, change)
}

// TestVendorMCP: the four tools are the routes: the same answers, the same
// refusals (as tool errors), the same scopes.
func TestVendorMCP(t *testing.T) {
	p, admin, _ := setup(t, nil, "MCP Kreditoren GmbH")
	writer, reader := p.apiKey(admin, "kreditoren:read", "kreditoren:write"), p.apiKey(admin, "kreditoren:read")
	tool := func(key, name string, args map[string]any) (map[string]any, bool) {
		t.Helper()
		return toolResult(t, p.mcpCall(t, key, 1, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	created, isErr := tool(writer, "create_vendor", map[string]any{"name": "Agent GmbH", "vat_id": "IT12345678901", "iban": "DE89 3704 0044 0532 0130 00",
		"address": map[string]any{"city": "Mailand", "country": "IT"}, "default_account": "5400", "idempotency_key": "mcp-1"})
	if isErr || created["iban"] != "DE89370400440532013000" || created["default_account"] != "5400" {
		t.Fatalf("create_vendor: %v", created)
	}
	id := created["id"].(string)
	rest := p.must(200, "GET", "/v1/vendors/"+id, reader, nil)
	got, isErr := tool(reader, "get_vendor", map[string]any{"id": id})
	if isErr {
		t.Fatalf("get_vendor: %v", got)
	}
	if diff := cmp.Diff(rest.Body, got); diff != "" {
		t.Fatalf("MCP and REST differ (-rest +mcp):\n%s", diff)
	}
	updated, isErr := tool(writer, "update_vendor", map[string]any{"id": id, "is_active": false, "vat_id": ""})
	if isErr || updated["is_active"] != false || updated["vat_id"] != nil {
		t.Fatalf("update_vendor: %v", updated)
	}
	list, isErr := tool(reader, "list_vendors", map[string]any{"search": "agent", "is_active": false, "limit": 10})
	if diff := cmp.Diff(p.must(200, "GET", "/v1/vendors?search=agent&is_active=false&limit=10", reader, nil).Body, list); isErr || diff != "" {
		t.Fatalf("list_vendors (-rest +mcp):\n%s", diff)
	}
	if _, isErr := tool(writer, "create_vendor", map[string]any{"name": "Falsch", "iban": "DE89370400440532013001"}); !isErr {
		t.Fatal("a bad IBAN was not a tool error")
	}
	if _, isErr := tool(writer, "create_vendor", map[string]any{"name": "AGENT gmbh"}); !isErr {
		t.Fatal("a duplicate name was not a tool error")
	}
	if _, isErr := tool(reader, "create_vendor", map[string]any{"name": "Ohne Recht"}); !isErr {
		t.Fatal("create_vendor without kreditoren:write was not a tool error")
	}
	if n := len(p.must(200, "GET", "/v1/vendors", reader, nil).list("vendors")); n != 1 {
		t.Fatalf("%d vendors after the refused tool calls, want 1", n)
	}
}
