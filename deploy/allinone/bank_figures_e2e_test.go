package allinone_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// figureLine is a reconciliation answer in one comparable line: counts and
// sums by state, the balances and the difference.
func figureLine(r bankv1.Reconciliation) string {
	f := func(x bankv1.Figure) string { return fmt.Sprintf("%d/%s", x.Count, x.Sum.StringFixed(2)) }
	t := r.Transactions
	return fmt.Sprintf("total %s open %s reconciled %s evidenced %s bank %s (%s) ledger %s difference %s reconciled %v",
		f(t.Total), f(t.Open), f(t.Reconciled), f(t.Evidenced), r.BankBalance.StringFixed(2), r.BalanceSource,
		r.LedgerBalance.StringFixed(2), r.Difference.StringFixed(2), r.Reconciled)
}

// TestBankFigures: the reconciliation figures of a bank account through
// the gateway and MCP: JSON-imported transactions counted and summed by
// state over a range, the bank balance against the ledger balance of the
// linked account (asked of the ledger) and their difference; a statement's
// closing balance anchors the bank balance, and a statement whose balances
// do not add up is named with both figures. Every error code of the route.
func TestBankFigures(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Abstimmung GmbH")
	other, _ := p.newTenant("Fremde Abstimmung GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read", "bank:read", "bank:write")
	reader, outsider := p.apiKey(admin, "bank:read"), p.apiKey(admin, "journal:read")
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")

	tx := func(date, amount, ref string) map[string]any {
		return map[string]any{"tx_date": date, "amount": json.Number(amount), "reference": ref, "bank_reference": "REF-" + ref}
	}
	imp := p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": giro, "transactions": []any{
		tx("2025-02-27", "20.00", "Februar"),
		tx("2025-03-03", "1000.00", "RE-1"), tx("2025-03-10", "-250.50", "Miete"), tx("2025-03-15", "119.00", "RE-2"),
		tx("2025-03-31", "-9.90", "Gebuehr"), tx("2025-04-02", "500.00", "RE-3"),
	}})
	if imp.Body["imported"] != float64(6) {
		t.Fatalf("import: %s", imp.Raw)
	}
	// The ledger knows two of them.
	p.book(w, bookingBody("2025-03-03", "Zahlungseingang RE-1", bline("1800", "4400", "1000.00")))
	p.book(w, bookingBody("2025-03-10", "Miete März", bline("6310", "1800", "250.50")))
	p.book(w, bookingBody("2025-04-02", "Zahlungseingang RE-3", bline("1800", "4400", "500.00")))
	// Reconciliation and evidence are other routes; their result is a state.
	for ref, status := range map[string]string{"RE-1": "reconciled", "Gebuehr": "evidenced"} {
		if _, err := p.owner.Exec(context.Background(), `UPDATE bank.transactions SET status = $3 WHERE tenant_id = $1 AND reference = $2`, tenant, ref, status); err != nil {
			t.Fatal(err)
		}
	}

	get := func(query string) bankv1.Reconciliation {
		t.Helper()
		var r bankv1.Reconciliation
		decodeJSON(t, p.must(200, "GET", "/v1/bank-accounts/"+giro+"/reconciliation"+query, reader, nil).Raw, &r)
		return r
	}
	march := get("?from=2025-03-01&to=2025-03-31")
	if got, want := figureLine(march),
		"total 4/858.60 open 2/-131.50 reconciled 1/1000.00 evidenced 1/-9.90 bank 878.60 (transactions) ledger 749.50 difference 129.10 reconciled false"; got != want {
		t.Fatalf("march:\n got %s\nwant %s", got, want)
	}
	var open []string
	for _, o := range march.OpenTransactions {
		open = append(open, o.TxDate+" "+o.Amount.StringFixed(2))
	}
	if diff := cmp.Diff([]string{"2025-03-15 119.00", "2025-03-10 -250.50"}, open); diff != "" || march.LastStatement != nil || len(march.Mismatches) != 0 ||
		*march.From != "2025-03-01" || march.To != "2025-03-31" || march.AccountNumber != "1800" || march.BankAccountID != giro || march.Currency != "EUR" {
		t.Fatalf("march %+v (-want +got open):\n%s", march, diff)
	}
	if r := get("?from=2025-03-01&to=2025-03-31&limit=1"); len(r.OpenTransactions) != 1 || r.OpenTransactions[0].TxDate != "2025-03-15" {
		t.Fatalf("limit 1: %+v", r.OpenTransactions)
	}
	// Without from, the range starts at the first transaction; without to
	// it ends today.
	if got, want := figureLine(get("")), "total 6/1378.60 open 4/388.50 reconciled 1/1000.00 evidenced 1/-9.90 bank 1378.60 (transactions) ledger 1249.50 difference 129.10 reconciled false"; got != want {
		t.Fatalf("everything:\n got %s\nwant %s", got, want)
	}

	// MCP answers what REST answers.
	rest := p.must(200, "GET", "/v1/bank-accounts/"+giro+"/reconciliation?from=2025-03-01&to=2025-03-31", reader, nil)
	sc, isErr := toolResult(t, p.mcpCall(t, reader, 1, "tools/call", map[string]any{"name": "bank_reconciliation_status",
		"arguments": map[string]any{"id": giro, "from": "2025-03-01", "to": "2025-03-31"}}))
	if isErr {
		t.Fatalf("tool failed: %v", sc)
	}
	if diff := cmp.Diff(rest.Body, sc); diff != "" {
		t.Fatalf("MCP and REST differ (-rest +mcp):\n%s", diff)
	}

	// A statement closing on 2025-03-31 at 5000.00 anchors the bank
	// balance; its opening 4150.00 plus its entries (858.60) is 5008.60,
	// so its balance check failed by -8.60.
	importID, stmtID := uuid.NewString(), uuid.NewString()
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.imports (id, tenant_id, bank_account_id, source, state) VALUES ($1, $2, $3, 'camt', 'done')`,
		importID, tenant, giro); err != nil {
		t.Fatal(err)
	}
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.statements (id, tenant_id, bank_account_id, import_id, kind, statement_ref,
		opening_date, opening_balance, closing_date, closing_balance, entries, sum, balance_mismatch, expected_closing)
		VALUES ($1, $2, $3, $4, 'camt.053', 'STMT-2025-03', '2025-03-01', 4150.00, '2025-03-31', 5000.00, 4, 858.60, true, 5008.60)`,
		stmtID, tenant, giro, importID); err != nil {
		t.Fatal(err)
	}
	march = get("?from=2025-03-01&to=2025-03-31")
	if got, want := figureLine(march), "total 4/858.60 open 2/-131.50 reconciled 1/1000.00 evidenced 1/-9.90 bank 5000.00 (statement) ledger 749.50 difference 4250.50 reconciled false"; got != want {
		t.Fatalf("with the statement:\n got %s\nwant %s", got, want)
	}
	ls := march.LastStatement
	if ls == nil || ls.StatementID != stmtID || ls.Kind != "camt.053" || *ls.StatementRef != "STMT-2025-03" || ls.ClosingDate != "2025-03-31" || ls.ClosingBalance.StringFixed(2) != "5000.00" {
		t.Fatalf("last statement %+v", ls)
	}
	if len(march.Mismatches) != 1 {
		t.Fatalf("mismatches %+v", march.Mismatches)
	}
	if m := march.Mismatches[0]; m.StatementID != stmtID || m.ClosingBalance.StringFixed(2) != "5000.00" || m.ExpectedClosing.StringFixed(2) != "5008.60" || m.Difference.StringFixed(2) != "-8.60" || *m.ClosingDate != "2025-03-31" {
		t.Fatalf("mismatch %+v", m)
	}
	// Walking back from the anchor: the balance at the end of 2025-03-12
	// is 5000.00 less what was booked on the 15th and the 31st.
	if r := get("?from=2025-03-01&to=2025-03-12"); r.BankBalance.StringFixed(2) != "4890.90" || r.LastStatement != nil || len(r.Mismatches) != 0 || r.LedgerBalance.StringFixed(2) != "749.50" {
		t.Fatalf("12 March: %s %+v", figureLine(r), r)
	}
	// Forward from it: April's payment.
	if r := get("?from=2025-04-01&to=2025-04-30"); figureLine(r) != "total 1/500.00 open 1/500.00 reconciled 0/0.00 evidenced 0/0.00 bank 5500.00 (statement) ledger 1249.50 difference 4250.50 reconciled false" ||
		r.LastStatement != nil || len(r.Mismatches) != 0 {
		t.Fatalf("April: %s", figureLine(r))
	}

	// A bank account that agrees with its ledger account is reconciled.
	kasse := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Tagesgeld", "iban": "DE44500105175407324931", "account_number": "1810"}).str("id")
	p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": kasse, "transactions": []any{tx("2025-05-05", "300.00", "Umbuchung")}})
	p.book(w, bookingBody("2025-05-05", "Umbuchung Tagesgeld", bline("1810", "1800", "300.00")))
	if _, err := p.owner.Exec(context.Background(), `UPDATE bank.transactions SET status = 'reconciled' WHERE tenant_id = $1 AND bank_account_id = $2`, tenant, kasse); err != nil {
		t.Fatal(err)
	}
	var ok bankv1.Reconciliation
	decodeJSON(t, p.must(200, "GET", "/v1/bank-accounts/"+kasse+"/reconciliation?to=2025-05-31", reader, nil).Raw, &ok)
	if got, want := figureLine(ok), "total 1/300.00 open 0/0.00 reconciled 1/300.00 evidenced 0/0.00 bank 300.00 (transactions) ledger 300.00 difference 0.00 reconciled true"; got != want {
		t.Fatalf("agreeing account:\n got %s\nwant %s", got, want)
	}

	// Errors.
	path := "/v1/bank-accounts/" + giro + "/reconciliation"
	for _, q := range []string{"?from=2025-04-01&to=2025-03-31", "?from=2025-02-30", "?to=31.03.2025", "?limit=0", "?limit=501", "?limit=x"} {
		p.expectError(400, "INVALID_INPUT", "GET", path+q, reader, nil)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-accounts/"+uuid.NewString()+"/reconciliation", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-accounts/not-a-uuid/reconciliation", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", path, other, nil)
	p.expectError(403, "FORBIDDEN", "GET", path, outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", path, "", nil)
}

// TestBankFiguresHistory: the daily balances of every bank account for the
// last days, by the one rule: from the transactions when no statement
// carries a balance, anchored on the latest statement's closing balance
// otherwise; days without movement carry the balance before.
func TestBankFiguresHistory(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Verlauf GmbH")
	other, _ := p.newTenant("Fremder Verlauf GmbH")
	w := p.apiKey(admin, "bank:read", "bank:write")
	reader, outsider := p.apiKey(admin, "bank:read"), p.apiKey(admin, "journal:read")
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "A Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	tages := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "B Tagesgeld", "iban": "DE44500105175407324931", "account_number": "1810"}).str("id")

	today := time.Now().UTC()
	day := func(offset int) string { return today.AddDate(0, 0, offset).Format(time.DateOnly) }
	p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": giro, "transactions": []any{
		map[string]any{"tx_date": day(-400), "amount": json.Number("1000.00"), "reference": "alt"},
		map[string]any{"tx_date": day(-10), "amount": json.Number("100.00"), "reference": "a"},
		map[string]any{"tx_date": day(-3), "amount": json.Number("-30.00"), "reference": "b"},
		map[string]any{"tx_date": day(-3), "amount": json.Number("-0.10"), "reference": "c"},
	}})
	p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": tages, "transactions": []any{
		map[string]any{"tx_date": day(-5), "amount": json.Number("50.00"), "reference": "d"},
		map[string]any{"tx_date": day(-1), "amount": json.Number("25.00"), "reference": "e"},
	}})
	// Tagesgeld's statement closed 5 days ago at 2000.00.
	importID := uuid.NewString()
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.imports (id, tenant_id, bank_account_id, source, state) VALUES ($1, $2, $3, 'mt940', 'done')`,
		importID, tenant, tages); err != nil {
		t.Fatal(err)
	}
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.statements (id, tenant_id, bank_account_id, import_id, kind, closing_date, closing_balance, entries, sum)
		VALUES ($1, $2, $3, $4, 'mt940', $5, 2000.00, 1, 50.00)`, uuid.NewString(), tenant, tages, importID, day(-5)); err != nil {
		t.Fatal(err)
	}

	var h bankv1.BalanceHistory
	decodeJSON(t, p.must(200, "GET", "/v1/bank-accounts/balance-history?days=14", reader, nil).Raw, &h)
	if h.Days != 14 || h.From != day(-13) || h.To != day(0) || len(h.Accounts) != 2 {
		t.Fatalf("history %+v", h)
	}
	line := func(a bankv1.AccountBalanceHistory) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s:", a.Name, a.BalanceSource)
		for i, d := range a.Balances {
			if d.Date != day(i-13) {
				t.Fatalf("%s: point %d is %s", a.Name, i, d.Date)
			}
			fmt.Fprintf(&b, " %s", d.Balance.StringFixed(2))
		}
		return b.String()
	}
	want := []string{
		"A Girokonto transactions: 1000.00 1000.00 1000.00 1100.00 1100.00 1100.00 1100.00 1100.00 1100.00 1100.00 1069.90 1069.90 1069.90 1069.90",
		"B Tagesgeld statement: 1950.00 1950.00 1950.00 1950.00 1950.00 1950.00 1950.00 1950.00 2000.00 2000.00 2000.00 2000.00 2025.00 2025.00",
	}
	for i, a := range h.Accounts {
		if got := line(a); got != want[i] {
			t.Fatalf("account %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	if h.Accounts[0].BankAccountID != giro || h.Accounts[1].BankAccountID != tages || h.Accounts[0].Currency != "EUR" {
		t.Fatalf("accounts %+v", h.Accounts)
	}

	decodeJSON(t, p.must(200, "GET", "/v1/bank-accounts/balance-history", reader, nil).Raw, &h)
	if h.Days != 90 || len(h.Accounts[0].Balances) != 90 || h.From != day(-89) {
		t.Fatalf("default: %d days from %s, %d points", h.Days, h.From, len(h.Accounts[0].Balances))
	}
	decodeJSON(t, p.must(200, "GET", "/v1/bank-accounts/balance-history?days=365", reader, nil).Raw, &h)
	if len(h.Accounts[0].Balances) != 365 || h.Accounts[0].Balances[0].Balance.StringFixed(2) != "1000.00" {
		t.Fatalf("365 days: %d points, first %+v", len(h.Accounts[0].Balances), h.Accounts[0].Balances[0])
	}
	if r := p.must(200, "GET", "/v1/bank-accounts/balance-history?days=1", other, nil); r.Body["bank_accounts"] == nil || len(r.list("bank_accounts")) != 0 {
		t.Fatalf("another tenant: %s", r.Raw)
	}
	for _, q := range []string{"?days=0", "?days=366", "?days=x", "?days=1.5"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-accounts/balance-history"+q, reader, nil)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/bank-accounts/balance-history", outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/bank-accounts/balance-history", "", nil)
}

// TestBankFiguresClosingTask: the periods service's closing task "bank
// reconciliation" asks the bank (bank.v1.period-status, callable by the
// periods service only): open while a bank transaction of the month is
// open, done once every one is reconciled or evidenced, with the counts.
func TestBankFiguresClosingTask(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Abschluss Bank GmbH")
	w := p.apiKey(admin, "bank:read", "bank:write", "perioden:read")
	bankTask := func(period string) periodsv1.Task {
		t.Helper()
		l := p.tasks(w, "period="+period)
		if len(l.Tasks) < 2 || l.Tasks[1].ID != "bank_reconciled" || l.Tasks[1].Detail == nil {
			t.Fatalf("checklist %+v", l)
		}
		return l.Tasks[1]
	}
	if got := bankTask("2025-03"); got.Status != "skipped" || *got.Detail != "the tenant has no bank accounts" {
		t.Fatalf("without bank accounts: %s %s", got.Status, *got.Detail)
	}
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": giro, "transactions": []any{
		map[string]any{"tx_date": "2025-02-28", "amount": json.Number("5.00"), "reference": "Februar"},
		map[string]any{"tx_date": "2025-03-01", "amount": json.Number("100.00"), "reference": "a"},
		map[string]any{"tx_date": "2025-03-15", "amount": json.Number("-20.00"), "reference": "b"},
		map[string]any{"tx_date": "2025-03-31", "amount": json.Number("-1.00"), "reference": "c"},
	}})
	if got := bankTask("2025-03"); got.Status != "open" ||
		*got.Detail != "3 of 3 bank transaction(s) of the period open (0 reconciled, 0 evidenced): GET /v1/bank-transactions?status=open&from=2025-03-01&to=2025-03-31" {
		t.Fatalf("open: %s %s", got.Status, *got.Detail)
	}
	for ref, status := range map[string]string{"a": "reconciled", "b": "reconciled", "c": "evidenced"} {
		if _, err := p.owner.Exec(context.Background(), `UPDATE bank.transactions SET status = $3 WHERE tenant_id = $1 AND reference = $2`, tenant, ref, status); err != nil {
			t.Fatal(err)
		}
	}
	if got := bankTask("2025-03"); got.Status != "done" || *got.Detail != "all 3 bank transaction(s) of the period reconciled or evidenced (2 reconciled, 1 evidenced)" {
		t.Fatalf("done: %s %s", got.Status, *got.Detail)
	}
	// February's transaction is still open; April has none.
	if got := bankTask("2025-02"); got.Status != "open" || !strings.HasPrefix(*got.Detail, "1 of 1 bank transaction(s)") {
		t.Fatalf("February: %s %s", got.Status, *got.Detail)
	}
	if got := bankTask("2025-04"); got.Status != "done" || *got.Detail != "no bank transactions booked in the period" {
		t.Fatalf("April: %s %s", got.Status, *got.Detail)
	}
}
