package allinone_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// TestBankAccounts: the bank service, the first built on the shared shape,
// answers its route through the gateway and as an MCP tool, for the
// caller's tenant only and behind its scope.
func TestBankAccounts(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Bank GmbH")
	other, _ := p.newTenant("Andere Bank GmbH")
	id := uuid.NewString()
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.accounts (id, tenant_id, name, iban, bic, account_number)
		VALUES ($1, $2, 'Girokonto', 'DE89370400440532013000', 'COBADEFFXXX', '1800')`, id, tenant); err != nil {
		t.Fatal(err)
	}
	reader, outsider := p.apiKey(admin, "bank:read"), p.apiKey(admin, "journal:read")

	rest := p.must(200, "GET", "/v1/bank-accounts", reader, nil)
	sc, isErr := toolResult(t, p.mcpCall(t, reader, 1, "tools/call", map[string]any{"name": "list_bank_accounts", "arguments": map[string]any{}}))
	if isErr {
		t.Fatalf("tool failed: %v", sc)
	}
	if diff := cmp.Diff(rest.Body, sc); diff != "" {
		t.Fatalf("MCP and REST differ (-rest +mcp):\n%s", diff)
	}
	accounts := rest.list("bank_accounts")
	if len(accounts) != 1 {
		t.Fatalf("accounts: %s", rest.Raw)
	}
	delete(accounts[0], "created_at")
	delete(accounts[0], "updated_at")
	want := map[string]any{"id": id, "name": "Girokonto", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX", "account_number": "1800", "currency": "EUR"}
	if diff := cmp.Diff(want, accounts[0]); diff != "" {
		t.Fatalf("account (-want +got):\n%s", diff)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/bank-accounts", outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/bank-accounts", "", nil)
	if r := p.must(200, "GET", "/v1/bank-accounts", other, nil); string(r.Raw) != `{"bank_accounts":[]}` {
		t.Fatalf("another tenant: %s", r.Raw)
	}

	// Both surfaces are audited alike (the audit log is written asynchronously).
	eventually(t, 10*time.Second, func() error {
		n := count(t, p.owner, `SELECT count(*) FROM identity.audit_log WHERE tenant_id = $1 AND route = 'GET /v1/bank-accounts' AND status = 200 AND surface IN ('api', 'mcp')`, tenant)
		if n != 2 {
			return fmt.Errorf("%d audit rows of the two successful calls", n)
		}
		return nil
	})
}

// TestBankAccountRoutes: creating, reading and renaming bank accounts
// through the gateway and MCP, with every rule of the specification: the
// IBAN and BIC checked and normalised, the linked account an asset account
// of the tenant's chart (asked of the ledger), one bank account per ledger
// account and per IBAN, idempotent creation, scopes and tenants apart.
func TestBankAccountRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Bankkonten GmbH")
	other, _ := p.newTenant("Fremde Bank GmbH")
	writer, reader, outsider := p.apiKey(admin, "bank:read", "bank:write"), p.apiKey(admin, "bank:read"), p.apiKey(admin, "journal:read")

	created := p.must(201, "POST", "/v1/bank-accounts", writer, map[string]any{
		"name": " Girokonto ", "iban": "de89 3704 0044 0532 0130 00", "bic": "cobadeffxxx", "account_number": "1800"})
	id := created.str("id")
	want := map[string]any{"id": id, "name": "Girokonto", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX", "account_number": "1800", "currency": "EUR",
		"created_at": created.Body["created_at"], "updated_at": created.Body["created_at"]}
	if diff := cmp.Diff(want, created.Body); diff != "" {
		t.Fatalf("created (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, p.must(200, "GET", "/v1/bank-accounts/"+id, reader, nil).Body); diff != "" {
		t.Fatalf("get (-want +got):\n%s", diff)
	}

	// Idempotent creation: the first answer again, another body refused.
	usd := map[string]any{"name": "USD-Konto", "iban": "CH9300762011623852957", "account_number": "1810", "currency": "USD"}
	first := p.must(201, "POST", "/v1/bank-accounts", writer, usd, "Idempotency-Key", "bank-1")
	again := p.must(201, "POST", "/v1/bank-accounts", writer, usd, "Idempotency-Key", "bank-1")
	if string(first.Raw) != string(again.Raw) || first.str("currency") != "USD" || first.Body["bic"] != nil {
		t.Fatalf("replay %s, first %s", again.Raw, first.Raw)
	}
	usd["name"] = "Dollar"
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/bank-accounts", writer, usd, "Idempotency-Key", "bank-1")

	// The rules, each with its code; nothing is created by a refusal.
	body := func(iban, number string, kv ...string) map[string]any {
		b := map[string]any{"name": "Konto", "iban": iban, "account_number": number}
		for i := 0; i+1 < len(kv); i += 2 {
			b[kv[i]] = kv[i+1]
		}
		return b
	}
	field := func(r resp) string {
		d, _ := r.Body["details"].([]any)
		if len(d) != 1 {
			t.Fatalf("details: %s", r.Raw)
		}
		return d[0].(map[string]any)["field"].(string)
	}
	for _, tc := range []struct {
		name   string
		status int
		code   string
		body   map[string]any
		field  string
	}{
		{"check digits", 400, "INVALID_INPUT", body("DE89370400440532013001", "1820"), "iban"},
		{"length of the country", 400, "INVALID_INPUT", body("DE8937040044053201300", "1820"), "iban"},
		{"unknown country", 400, "INVALID_INPUT", body("QQ89370400440532013000", "1820"), "iban"},
		{"iban with punctuation", 400, "INVALID_INPUT", body("DE89-3704-0044-0532-0130-00", "1820"), "iban"},
		{"bic of 9", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "bic", "ABNANL2AX"), "bic"},
		{"bic with a digit for the country", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "bic", "ABNAN12A"), "bic"},
		{"no such currency", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "currency", "XYZ"), "currency"},
		{"lower-case currency", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "currency", "eur"), "currency"},
		{"account number", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "18200000X"), "account_number"},
		{"blank name", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "name", "  "), "name"},
		{"unknown field", 400, "INVALID_INPUT", body("NL91ABNA0417164300", "1820", "type", "asset"), "type"},
		{"not in the chart", 400, "ACCOUNT_NOT_FOUND", body("NL91ABNA0417164300", "1899"), "account_number"},
		{"an expense account", 400, "INVALID_ACCOUNT_TYPE", body("NL91ABNA0417164300", "6815"), "account_number"},
		{"a liability account", 400, "INVALID_ACCOUNT_TYPE", body("NL91ABNA0417164300", "3300"), "account_number"},
		{"ledger account linked", 409, "ACCOUNT_ALREADY_LINKED", body("NL91ABNA0417164300", "1800"), "account_number"},
		{"same iban", 409, "DUPLICATE_IBAN", body("DE89370400440532013000", "1820"), "iban"},
		{"same iban printed", 409, "DUPLICATE_IBAN", body("DE89 3704 0044 0532 0130 00", "1820"), "iban"},
	} {
		r := p.expectError(tc.status, tc.code, "POST", "/v1/bank-accounts", writer, tc.body)
		if f := field(r); f != tc.field {
			t.Errorf("%s: details name %q, want %q: %s", tc.name, f, tc.field, r.Raw)
		}
	}
	p.wantCount(2, "SELECT count(*) FROM bank.accounts WHERE tenant_id = $1", tenant)

	// Two requests racing for one ledger account: the unique index lets one win.
	var wg sync.WaitGroup
	statuses := make([]string, 4)
	for i, iban := range []string{"NL91ABNA0417164300", "BE68539007547034", "GB29NWBK60161331926819", "AT611904300234573201"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := p.call("POST", "/v1/bank-accounts", writer, body(iban, "1820"))
			statuses[i] = fmt.Sprint(r.Status, r.code())
		}()
	}
	wg.Wait()
	if got := strings.Join(statuses, " "); strings.Count(got, "201") != 1 || strings.Count(got, "409ACCOUNT_ALREADY_LINKED") != 3 {
		t.Fatalf("racing creates: %s", got)
	}

	// Renaming: the name only.
	renamed := p.must(200, "PUT", "/v1/bank-accounts/"+id, writer, map[string]any{"name": "Hausbank"})
	if renamed.str("name") != "Hausbank" || renamed.str("iban") != "DE89370400440532013000" || renamed.str("created_at") != created.str("created_at") || renamed.str("updated_at") == "" {
		t.Fatalf("renamed: %s", renamed.Raw)
	}
	p.expectError(400, "INVALID_INPUT", "PUT", "/v1/bank-accounts/"+id, writer, map[string]any{"name": "x", "iban": "NL91ABNA0417164300"})
	p.expectError(400, "INVALID_INPUT", "PUT", "/v1/bank-accounts/"+id, writer, map[string]any{"name": ""})
	p.expectError(400, "INVALID_INPUT", "PUT", "/v1/bank-accounts/"+id, writer, map[string]any{})
	p.expectError(400, "INVALID_INPUT", "PUT", "/v1/bank-accounts/"+id, writer, map[string]any{"name": strings.Repeat("n", 256)})
	if got := p.must(200, "GET", "/v1/bank-accounts/"+id, reader, nil); got.str("name") != "Hausbank" {
		t.Fatalf("after refused renames: %s", got.Raw)
	}

	// Unknown, malformed and another tenant's ids are 404; scopes are checked.
	for _, path := range []string{"/v1/bank-accounts/" + uuid.NewString(), "/v1/bank-accounts/not-a-uuid"} {
		p.expectError(404, "NOT_FOUND", "GET", path, reader, nil)
		p.expectError(404, "NOT_FOUND", "PUT", path, writer, map[string]any{"name": "x"})
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-accounts/"+id, other, nil)
	p.expectError(404, "NOT_FOUND", "PUT", "/v1/bank-accounts/"+id, other, map[string]any{"name": "Fremd"})
	p.must(201, "POST", "/v1/bank-accounts", other, body("DE89370400440532013000", "1800")) // per tenant
	p.expectError(403, "FORBIDDEN", "POST", "/v1/bank-accounts", reader, body("NL91ABNA0417164300", "1830"))
	p.expectError(403, "FORBIDDEN", "PUT", "/v1/bank-accounts/"+id, reader, map[string]any{"name": "x"})
	p.expectError(403, "FORBIDDEN", "GET", "/v1/bank-accounts/"+id, outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/bank-accounts/"+id, "", nil)
	p.expectError(401, "UNAUTHENTICATED", "POST", "/v1/bank-accounts", "", body("NL91ABNA0417164300", "1830"))
	p.expectError(401, "UNAUTHENTICATED", "PUT", "/v1/bank-accounts/"+id, "", map[string]any{"name": "x"})

	// MCP: the same operations and refusals.
	call := func(key, name string, args map[string]any) (map[string]any, bool) {
		return toolResult(t, p.mcpCall(t, key, 1, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	sc, isErr := call(writer, "create_bank_account", map[string]any{"name": "Tagesgeld", "iban": "NL91 ABNA 0417 1643 00", "account_number": "1830", "idempotency_key": "mcp-bank"})
	if isErr || sc["iban"] != "NL91ABNA0417164300" || sc["account_number"] != "1830" {
		t.Fatalf("create_bank_account: %v", sc)
	}
	got, isErr := call(reader, "get_bank_account", map[string]any{"id": sc["id"]})
	if diff := cmp.Diff(sc, got); isErr || diff != "" {
		t.Fatalf("get_bank_account (-created +got):\n%s", diff)
	}
	if refused, isErr := call(writer, "create_bank_account", map[string]any{"name": "Noch eins", "iban": "BE68539007547034", "account_number": "1830"}); !isErr || refused["code"] != "ACCOUNT_ALREADY_LINKED" {
		t.Fatalf("create_bank_account on a linked account: %v", refused)
	}
	if refused, isErr := call(reader, "create_bank_account", map[string]any{"name": "Lesend", "iban": "BE68539007547034", "account_number": "1840"}); !isErr || refused["code"] != "FORBIDDEN" {
		t.Fatalf("create_bank_account without bank:write: %v", refused)
	}
	p.wantCount(4, "SELECT count(*) FROM bank.accounts WHERE tenant_id = $1", tenant)
}
