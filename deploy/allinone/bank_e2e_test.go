package allinone_test

import (
	"context"
	"encoding/json"
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

	// Two requests racing for one ledger account: the unique index lets one
	// win. Which IBAN won is open, so none of them is used again below.
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
	sc, isErr := call(writer, "create_bank_account", map[string]any{"name": "Tagesgeld", "iban": "DE44 5001 0517 5407 3249 31", "account_number": "1830", "idempotency_key": "mcp-bank"})
	if isErr || sc["iban"] != "DE44500105175407324931" || sc["account_number"] != "1830" {
		t.Fatalf("create_bank_account: %v", sc)
	}
	got, isErr := call(reader, "get_bank_account", map[string]any{"id": sc["id"]})
	if diff := cmp.Diff(sc, got); isErr || diff != "" {
		t.Fatalf("get_bank_account (-created +got):\n%s", diff)
	}
	if refused, isErr := call(writer, "create_bank_account", map[string]any{"name": "Noch eins", "iban": "FR1420041010050500013M02606", "account_number": "1830"}); !isErr || refused["code"] != "ACCOUNT_ALREADY_LINKED" {
		t.Fatalf("create_bank_account on a linked account: %v", refused)
	}
	if refused, isErr := call(reader, "create_bank_account", map[string]any{"name": "Lesend", "iban": "FR1420041010050500013M02606", "account_number": "1840"}); !isErr || refused["code"] != "FORBIDDEN" {
		t.Fatalf("create_bank_account without bank:write: %v", refused)
	}
	p.wantCount(4, "SELECT count(*) FROM bank.accounts WHERE tenant_id = $1", tenant)
}

// TestBankTransactions: the JSON import and reading transactions back
// through the gateway and MCP: duplicates skipped on re-import, identical
// rows within one import all kept, bad rows reported by index and field
// while the good ones import, the 1000-row limit, the list's filters, and
// another tenant's accounts and transactions out of reach.
func TestBankTransactions(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Bankumsätze GmbH")
	other, _ := p.newTenant("Fremde Umsätze GmbH")
	writer, reader := p.apiKey(admin, "bank:read", "bank:write"), p.apiKey(admin, "bank:read")
	giro := p.must(201, "POST", "/v1/bank-accounts", writer, map[string]any{"name": "Giro", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	spar := p.must(201, "POST", "/v1/bank-accounts", writer, map[string]any{"name": "Tagesgeld", "iban": "NL91ABNA0417164300", "account_number": "1810"}).str("id")
	foreign := p.must(201, "POST", "/v1/bank-accounts", other, map[string]any{"name": "Fremd", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")

	type row = map[string]any
	body := func(account string, rows ...row) map[string]any {
		return map[string]any{"bank_account_id": account, "transactions": rows}
	}
	rent := row{"tx_date": "2025-03-03", "amount": json.Number("-1190.00"), "counterparty_name": "Vermieter GmbH", "counterparty_iban": "DE44 5001 0517 5407 3249 31",
		"reference": "Miete März", "bank_reference": "2025030300001", "tx_type": "SEPA-UEBERWEISUNG", "value_date": "2025-03-04"}
	fee := row{"tx_date": "2025-03-31", "amount": json.Number("-4.90"), "reference": "Kontoführung"}
	sale := row{"tx_date": "2025-03-10", "amount": json.Number("595.00"), "counterparty_name": "Kunde AG", "reference": "RE-2025-0042"}
	result := func(r resp) string {
		return fmt.Sprint(r.Body["total_rows"], " ", r.Body["imported"], " ", r.Body["skipped_duplicates"], " ", len(r.Body["errors"].([]any)))
	}

	// Two identical fees in one import both import; the same import again
	// imports nothing.
	first := p.must(201, "POST", "/v1/bank-transactions", writer, body(giro, rent, fee, fee, sale))
	if got := result(first); got != "4 4 0 0" || !uuidLike.MatchString(first.str("batch_id")) {
		t.Fatalf("first import: %s", first.Raw)
	}
	if got := result(p.must(201, "POST", "/v1/bank-transactions", writer, body(giro, rent, fee, fee, sale))); got != "4 0 4 0" {
		t.Fatalf("again: %s", got)
	}
	// The same rows into another account are that account's.
	if got := result(p.must(201, "POST", "/v1/bank-transactions", writer, body(spar, fee))); got != "1 1 0 0" {
		t.Fatalf("other account: %s", got)
	}

	// A bad row is reported with its index and field; the good rows import.
	mixed := p.must(201, "POST", "/v1/bank-transactions", writer, body(giro,
		row{"tx_date": "2025-04-01", "amount": json.Number("12.00")},
		row{"tx_date": "2025-04-01", "amount": 0},
		row{"tx_date": "2025-04-02", "amount": json.Number("1.005")},
		row{"tx_date": "2025-04-03", "amount": 5, "counterparty_iban": "DE89370400440532013001"},
		row{"tx_date": "2025-04-03", "amount": 5, "currency": "USD"},
		fee,
	))
	if got := result(mixed); got != "6 1 1 4" {
		t.Fatalf("mixed: %s", mixed.Raw)
	}
	var fields []string
	for _, e := range mixed.Body["errors"].([]any) {
		m := e.(map[string]any)
		fields = append(fields, fmt.Sprint(m["index"], ":", m["field"]))
		if m["issue"] == "" {
			t.Errorf("no issue: %v", m)
		}
	}
	if got := strings.Join(fields, " "); got != "1:amount 2:amount 3:counterparty_iban 4:currency" {
		t.Fatalf("row errors: %s", got)
	}
	p.wantCount(6, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant)

	// Requests refused as a whole import nothing.
	many := make([]row, 1001)
	for i := range many {
		many[i] = row{"tx_date": "2025-05-01", "amount": i + 1}
	}
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/bank-transactions", writer, body(giro, many...))
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/bank-transactions", writer, body(giro))
	r := p.expectError(400, "INVALID_INPUT", "POST", "/v1/bank-transactions", writer, body(giro, fee, row{"tx_date": "2025-02-30", "amount": 1}))
	if !strings.Contains(string(r.Raw), "transactions[1].tx_date") {
		t.Fatalf("invalid date: %s", r.Raw)
	}
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/bank-transactions", writer, body(giro, row{"tx_date": "2025-05-01", "amount": "12.00"}))
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bank-transactions", writer, body(foreign, fee))
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bank-transactions", writer, body(uuid.NewString(), fee))
	p.expectError(403, "FORBIDDEN", "POST", "/v1/bank-transactions", reader, body(giro, fee))
	p.expectError(401, "UNAUTHENTICATED", "POST", "/v1/bank-transactions", "", body(giro, fee))
	p.wantCount(6, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant)
	p.wantCount(0, "SELECT count(*) FROM bank.transactions WHERE bank_account_id = $1", foreign)

	// Idempotent: the same key answers the first result again.
	once := body(giro, row{"tx_date": "2025-06-01", "amount": 7})
	a := p.must(201, "POST", "/v1/bank-transactions", writer, once, "Idempotency-Key", "tx-1")
	b := p.must(201, "POST", "/v1/bank-transactions", writer, once, "Idempotency-Key", "tx-1")
	if string(a.Raw) != string(b.Raw) || result(a) != "1 1 0 0" {
		t.Fatalf("replay %s, first %s", b.Raw, a.Raw)
	}

	// Reading back, with the filters.
	list := func(query string) string {
		var out []string
		for _, tx := range p.must(200, "GET", "/v1/bank-transactions"+query, reader, nil).list("transactions") {
			out = append(out, fmt.Sprint(tx["tx_date"], " ", tx["amount"]))
		}
		return strings.Join(out, ", ")
	}
	for _, tc := range []struct{ query, want string }{
		{"", "2025-06-01 7, 2025-04-01 12, 2025-03-31 -4.9, 2025-03-31 -4.9, 2025-03-31 -4.9, 2025-03-10 595, 2025-03-03 -1190"},
		{"?bank_account_id=" + spar, "2025-03-31 -4.9"},
		{"?bank_account_id=" + giro + "&from=2025-03-05&to=2025-03-31", "2025-03-31 -4.9, 2025-03-31 -4.9, 2025-03-10 595"},
		{"?search=vermieter", "2025-03-03 -1190"},
		{"?search=DE44%205001", "2025-03-03 -1190"},
		{"?status=open&limit=2&offset=1", "2025-04-01 12, 2025-03-31 -4.9"},
		{"?status=reconciled", ""},
	} {
		if got := list(tc.query); got != tc.want {
			t.Errorf("GET %s: %s, want %s", tc.query, got, tc.want)
		}
	}
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions?status=done", reader, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions?from=2025-04-01&to=2025-03-01", reader, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions?limit=501", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions?bank_account_id="+foreign, reader, nil)
	if r := p.must(200, "GET", "/v1/bank-transactions", other, nil); string(r.Raw) != `{"transactions":[]}` {
		t.Fatalf("another tenant: %s", r.Raw)
	}

	// One transaction, in full.
	listed := p.must(200, "GET", "/v1/bank-transactions?search=Vermieter", reader, nil).list("transactions")[0]
	id := listed["id"].(string)
	got := p.must(200, "GET", "/v1/bank-transactions/"+id, reader, nil)
	want := map[string]any{"id": id, "bank_account_id": giro, "tx_date": "2025-03-03", "value_date": "2025-03-04", "amount": -1190.0, "currency": "EUR",
		"counterparty_name": "Vermieter GmbH", "counterparty_iban": "DE44500105175407324931", "counterparty_bic": nil, "reference": "Miete März",
		"bank_reference": "2025030300001", "end_to_end_id": nil, "mandate_id": nil, "creditor_id": nil, "batch_ref": nil, "tx_type": "SEPA-UEBERWEISUNG",
		"gvc": nil, "charges": 0.0, "reversal": false, "status": "open", "batch_id": first.str("batch_id"), "statement_id": nil, "created_at": listed["created_at"]}
	if diff := cmp.Diff(want, got.Body); diff != "" || !strings.Contains(string(got.Raw), `"amount":-1190.00`) {
		t.Fatalf("transaction (-want +got):\n%s\n%s", diff, got.Raw)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/"+id, other, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/"+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/not-a-uuid", reader, nil)

	// MCP: the same import (all duplicates now) and the list.
	call := func(key, name string, args map[string]any) (map[string]any, bool) {
		return toolResult(t, p.mcpCall(t, key, 1, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	sc, isErr := call(writer, "import_bank_transactions", map[string]any{"bank_account_id": giro, "transactions": []any{rent, sale,
		row{"tx_date": "2025-07-01", "amount": json.Number("-19.99"), "reference": "MCP"}}})
	if isErr || sc["imported"] != 1.0 || sc["skipped_duplicates"] != 2.0 {
		t.Fatalf("import_bank_transactions: %v", sc)
	}
	sc, isErr = call(reader, "list_bank_transactions", map[string]any{"search": "MCP"})
	if txs, _ := sc["transactions"].([]any); isErr || len(txs) != 1 {
		t.Fatalf("list_bank_transactions: %v", sc)
	}
	if refused, isErr := call(reader, "import_bank_transactions", map[string]any{"bank_account_id": giro, "transactions": []any{fee}}); !isErr || refused["code"] != "FORBIDDEN" {
		t.Fatalf("import without bank:write: %v", refused)
	}
}
