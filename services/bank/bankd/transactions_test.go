package bankd_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/camt"
	"github.com/ledgerplatform/ledger/services/bank/mt940"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// newAccount creates a bank account of the tenant through the service.
func newAccount(t *testing.T, h *testkit.RPC, as *auth.Claims, iban, number string) string {
	t.Helper()
	var a bankv1.Account
	h.OK(bankv1.SubjectAccountsCreate, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Konto " + number, IBAN: iban, AccountNumber: number}}, 201, &a)
	return a.ID
}

type item = map[string]any

func importBody(account string, items ...item) map[string]any {
	return map[string]any{"bank_account_id": account, "transactions": items}
}

// TestTransactionsImport: good rows import, bad rows are reported by
// index and field, duplicates of stored rows are skipped (the same batch
// again imports nothing) while identical rows within one batch all import.
func TestTransactionsImport(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	as := claims(tenant)
	acc := newAccount(t, h, as, "DE89370400440532013000", "1800")
	imp := bankv1.SubjectTransactionsImport

	rent := item{"tx_date": "2025-03-03", "amount": json.Number("-1200.00"), "counterparty_name": "Vermieter GmbH", "counterparty_iban": "de44 5001 0517 5407 3249 31",
		"reference": "Miete März", "bank_reference": "2025030300001", "tx_type": "SEPA-UEBERWEISUNG", "value_date": "2025-03-04"}
	coffee := item{"tx_date": "2025-03-05", "amount": json.Number("-3.5"), "reference": "Kaffee"}
	income := item{"tx_date": "2025-03-06", "amount": 119, "currency": "EUR", "counterparty_name": "Kunde AG", "reference": "RE-2025-001"}
	batch := importBody(acc, rent, coffee, coffee, income)

	var first bankv1.ImportResult
	h.OK(imp, testkit.Rq{As: as, Body: batch}, 201, &first)
	if diff := cmp.Diff(bankv1.ImportResult{BatchID: first.BatchID, TotalRows: 4, Imported: 4, Errors: []bankv1.RowError{}}, first); diff != "" || !bank.ValidID(first.BatchID) {
		t.Fatalf("first import (-want +got):\n%s", diff)
	}
	// The same batch again: every row is a duplicate.
	var again bankv1.ImportResult
	h.OK(imp, testkit.Rq{As: as, Body: batch}, 201, &again)
	if again.BatchID == first.BatchID || again.Imported != 0 || again.SkippedDuplicates != 4 || again.TotalRows != 4 {
		t.Fatalf("again: %+v", again)
	}
	// An overlapping batch: the known rows skip, a third coffee imports.
	var overlap bankv1.ImportResult
	h.OK(imp, testkit.Rq{As: as, Body: importBody(acc, coffee, coffee, coffee, rent)}, 201, &overlap)
	if overlap.Imported != 1 || overlap.SkippedDuplicates != 3 {
		t.Fatalf("overlap: %+v", overlap)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant); n != 5 {
		t.Fatalf("%d transactions, want 5", n)
	}

	// The stored row, as the API shows it.
	var list bankv1.TransactionList
	h.OK(bankv1.SubjectTransactionsList, testkit.Rq{As: as, Query: url.Values{"search": {"Vermieter"}}}, 200, &list)
	if len(list.Transactions) != 1 {
		t.Fatalf("search: %+v", list)
	}
	got := list.Transactions[0]
	s := func(v string) *string { return &v }
	want := bankv1.Transaction{ID: got.ID, BankAccountID: acc, TxDate: "2025-03-03", ValueDate: s("2025-03-04"), Amount: got.Amount, Currency: "EUR",
		CounterpartyName: s("Vermieter GmbH"), CounterpartyIBAN: s("DE44500105175407324931"), Reference: s("Miete März"), BankReference: s("2025030300001"),
		TxType: s("SEPA-UEBERWEISUNG"), Charges: got.Charges, Status: "open", BatchID: first.BatchID, CreatedAt: got.CreatedAt}
	if diff := cmp.Diff(want, got); diff != "" || got.Amount.String() != "-1200" || !got.Charges.IsZero() {
		t.Fatalf("transaction (-want +got):\n%s", diff)
	}
	var one bankv1.Transaction
	h.OK(bankv1.SubjectTransactionsGet, testkit.Rq{As: as, Params: map[string]string{"id": got.ID}}, 200, &one)
	if diff := cmp.Diff(got, one, cmp.Comparer(func(a, b bankv1.Transaction) bool {
		return a.ID == b.ID && a.CreatedAt.Equal(b.CreatedAt) && a.Amount.Equal(b.Amount.Decimal)
	})); diff != "" {
		t.Fatalf("get (-listed +got):\n%s", diff)
	}
	h.Fails(bankv1.SubjectTransactionsGet, testkit.Rq{As: claims(uuid.NewString()), Params: map[string]string{"id": got.ID}}, 404, errs.NotFound)
	h.Fails(bankv1.SubjectTransactionsGet, testkit.Rq{As: as, Params: map[string]string{"id": "nope"}}, 404, errs.NotFound)
	h.Fails(bankv1.SubjectTransactionsGet, testkit.Rq{As: as, Params: map[string]string{"id": uuid.NewString()}}, 404, errs.NotFound)
}

// TestTransactionsImportRowErrors: each broken rule of a row is reported
// with the row's index and the field; the good rows import.
func TestTransactionsImportRowErrors(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	as := claims(tenant)
	acc := newAccount(t, h, as, "DE89370400440532013000", "1800")
	good := item{"tx_date": "2025-03-03", "amount": json.Number("10.00")}
	with := func(kv ...any) item {
		it := item{"tx_date": "2025-03-03", "amount": json.Number("10.00")}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(it, kv[i].(string))
				continue
			}
			it[kv[i].(string)] = kv[i+1]
		}
		return it
	}
	bad := []struct {
		row   item
		field string
	}{
		{with("amount", 0), "amount"},
		{with("amount", json.Number("1.001")), "amount"},
		{with("amount", nil), "amount"},
		{with("amount", json.Number("1000000000000000")), "amount"},
		{with("tx_date", "2025-02-30"), "tx_date"},
		{with("tx_date", nil), "tx_date"},
		{with("value_date", "03.03.2025"), "value_date"},
		{with("currency", "USD"), "currency"},
		{with("currency", "XYZ"), "currency"},
		{with("counterparty_iban", "DE89370400440532013001"), "counterparty_iban"},
		{with("counterparty_name", strings.Repeat("n", 256)), "counterparty_name"},
		{with("bank_reference", strings.Repeat("r", 141)), "bank_reference"},
	}
	items := []item{good}
	var want []bankv1.RowError
	for i, b := range bad {
		items = append(items, b.row, with("reference", fmt.Sprint("gut ", i)))
		want = append(want, bankv1.RowError{Index: 2*i + 1, Field: b.field})
	}
	var r bankv1.ImportResult
	h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: as, Body: importBody(acc, items...)}, 201, &r)
	var gotErrs []bankv1.RowError
	for _, e := range r.Errors {
		if e.Issue == "" {
			t.Errorf("no issue: %+v", e)
		}
		gotErrs = append(gotErrs, bankv1.RowError{Index: e.Index, Field: e.Field})
	}
	if diff := cmp.Diff(want, gotErrs); diff != "" {
		t.Fatalf("row errors (-want +got):\n%s\n%+v", diff, r.Errors)
	}
	if r.TotalRows != len(items) || r.Imported != len(bad)+1 || r.SkippedDuplicates != 0 {
		t.Fatalf("counts: %+v", r)
	}
	// A row breaking two rules names both fields.
	h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: as, Body: importBody(acc, item{"tx_date": "x", "amount": 0})}, 201, &r)
	if len(r.Errors) != 2 || r.Imported != 0 || r.TotalRows != 1 || r.Errors[0].Field != "tx_date" || r.Errors[1].Field != "amount" {
		t.Fatalf("two faults: %+v", r)
	}
	var stored []byte
	if err := h.Pool.QueryRow(context.Background(), "SELECT errors FROM bank.imports WHERE id = $1", r.BatchID).Scan(&stored); err != nil || !strings.Contains(string(stored), `"field": "amount"`) {
		t.Fatalf("stored errors %s, %v", stored, err)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant); n != len(bad)+1 {
		t.Fatalf("%d transactions", n)
	}
}

// TestTransactionsImportRefused: requests that import nothing at all.
func TestTransactionsImportRefused(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	as := claims(tenant)
	acc := newAccount(t, h, as, "DE89370400440532013000", "1800")
	otherAcc := newAccount(t, h, claims(uuid.NewString()), "DE89370400440532013000", "1800")
	imp := bankv1.SubjectTransactionsImport
	row := item{"tx_date": "2025-03-03", "amount": 1}
	many := make([]item, bankv1.MaxImportItems+1)
	for i := range many {
		many[i] = item{"tx_date": "2025-03-03", "amount": i + 1}
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"1001 rows", importBody(acc, many...), 400, errs.InvalidInput, "transactions"},
		{"no rows", importBody(acc), 400, errs.InvalidInput, "transactions"},
		{"no account", map[string]any{"transactions": []item{row}}, 400, errs.InvalidInput, "bank_account_id"},
		{"account not a uuid", importBody("x", row), 400, errs.InvalidInput, "bank_account_id"},
		{"unknown field", importBody(acc, item{"tx_date": "2025-03-03", "amount": 1, "iban": "x"}), 400, errs.InvalidInput, "transactions[0].iban"},
		{"unknown account", importBody(uuid.NewString(), row), 404, errs.NotFound, ""},
		{"another tenant's account", importBody(otherAcc, row), 404, errs.NotFound, ""},
	} {
		r := h.Fails(imp, testkit.Rq{As: as, Body: tc.body}, tc.status, tc.code)
		if tc.field != "" {
			wantFields(t, r, tc.field)
		}
	}
	h.Fails(imp, testkit.Rq{Body: importBody(acc, row)}, 401, errs.Unauthenticated)
	// Exactly 1000 rows is within the limit.
	var r bankv1.ImportResult
	h.OK(imp, testkit.Rq{As: as, Body: importBody(acc, many[:bankv1.MaxImportItems]...)}, 201, &r)
	if r.Imported != bankv1.MaxImportItems {
		t.Fatalf("1000 rows: %+v", r)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.imports"); n != 1 {
		t.Fatalf("%d imports, want the one of 1000 rows", n)
	}

	// Idempotency: the first answer again, byte for byte; the key with
	// another body is refused.
	body := importBody(acc, item{"tx_date": "2025-04-01", "amount": 5})
	a := h.OK(imp, testkit.Rq{As: as, Body: body, IdempotencyKey: "imp-1"}, 201, nil)
	b := h.OK(imp, testkit.Rq{As: as, Body: body, IdempotencyKey: "imp-1"}, 201, nil)
	if string(a.Body) != string(b.Body) || !strings.Contains(string(a.Body), `"imported":1`) {
		t.Fatalf("replay %s, first %s", b.Body, a.Body)
	}
	h.Fails(imp, testkit.Rq{As: as, Body: importBody(acc, item{"tx_date": "2025-04-02", "amount": 5}), IdempotencyKey: "imp-1"}, 422, errs.IdempotencyKeyReused)
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.imports"); n != 2 {
		t.Fatalf("%d imports after the replay, want 2", n)
	}
}

// TestTransactionsList: the filters, their checks, paging and tenants.
func TestTransactionsList(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	as := claims(tenant)
	giro := newAccount(t, h, as, "DE89370400440532013000", "1800")
	spar := newAccount(t, h, as, "NL91ABNA0417164300", "1810")
	h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: as, Body: importBody(giro,
		item{"tx_date": "2025-01-10", "amount": 100, "counterparty_name": "Kunde AG", "reference": "RE 100%"},
		item{"tx_date": "2025-02-10", "amount": -20, "counterparty_iban": "DE44500105175407324931", "reference": "Strom"},
		item{"tx_date": "2025-03-10", "amount": -30, "bank_reference": "BREF-7"},
	)}, 201, nil)
	h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: as, Body: importBody(spar, item{"tx_date": "2025-02-15", "amount": 1000})}, 201, nil)
	if _, err := h.Pool.Exec(context.Background(), "UPDATE bank.transactions SET status = 'reconciled' WHERE reference = 'Strom'"); err != nil {
		t.Fatal(err)
	}
	dates := func(q url.Values) string {
		var l bankv1.TransactionList
		h.OK(bankv1.SubjectTransactionsList, testkit.Rq{As: as, Query: q}, 200, &l)
		var out []string
		for _, tx := range l.Transactions {
			out = append(out, tx.TxDate)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		q    url.Values
		want string
	}{
		{nil, "2025-03-10 2025-02-15 2025-02-10 2025-01-10"},
		{url.Values{"bank_account_id": {giro}}, "2025-03-10 2025-02-10 2025-01-10"},
		{url.Values{"bank_account_id": {spar}}, "2025-02-15"},
		{url.Values{"from": {"2025-02-10"}, "to": {"2025-02-28"}}, "2025-02-15 2025-02-10"},
		{url.Values{"from": {"2025-03-01"}}, "2025-03-10"},
		{url.Values{"to": {"2025-01-31"}}, "2025-01-10"},
		{url.Values{"status": {"reconciled"}}, "2025-02-10"},
		{url.Values{"status": {"open"}, "bank_account_id": {giro}}, "2025-03-10 2025-01-10"},
		{url.Values{"status": {"evidenced"}}, ""},
		{url.Values{"search": {"kunde"}}, "2025-01-10"},
		{url.Values{"search": {"100%"}}, "2025-01-10"},
		{url.Values{"search": {"%"}}, "2025-01-10"},
		{url.Values{"search": {"DE44 5001"}}, "2025-02-10"},
		{url.Values{"search": {"bref-7"}}, "2025-03-10"},
		{url.Values{"limit": {"2"}}, "2025-03-10 2025-02-15"},
		{url.Values{"limit": {"2"}, "offset": {"2"}}, "2025-02-10 2025-01-10"},
		{url.Values{"offset": {"9"}}, ""},
	} {
		if got := dates(tc.q); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.q, got, tc.want)
		}
	}
	for _, tc := range []struct {
		q     url.Values
		field string
	}{
		{url.Values{"bank_account_id": {"x"}}, "bank_account_id"},
		{url.Values{"from": {"2025-02-30"}}, "from"},
		{url.Values{"to": {"10.03.2025"}}, "to"},
		{url.Values{"from": {"2025-03-01"}, "to": {"2025-02-01"}}, "to"},
		{url.Values{"status": {"done"}}, "status"},
		{url.Values{"search": {strings.Repeat("s", 201)}}, "search"},
		{url.Values{"limit": {"0"}}, "limit"},
		{url.Values{"limit": {"501"}}, "limit"},
		{url.Values{"offset": {"-1"}}, "offset"},
	} {
		r := h.Fails(bankv1.SubjectTransactionsList, testkit.Rq{As: as, Query: tc.q}, 400, errs.InvalidInput)
		wantFields(t, r, tc.field)
	}
	other := claims(uuid.NewString())
	h.Fails(bankv1.SubjectTransactionsList, testkit.Rq{As: other, Query: url.Values{"bank_account_id": {giro}}}, 404, errs.NotFound)
	h.Fails(bankv1.SubjectTransactionsList, testkit.Rq{As: as, Query: url.Values{"bank_account_id": {uuid.NewString()}}}, 404, errs.NotFound)
	if r := h.OK(bankv1.SubjectTransactionsList, testkit.Rq{As: other}, 200, nil); string(r.Body) != `{"transactions":[]}` {
		t.Fatalf("another tenant: %s", r.Body)
	}
}

// TestImportStatements: the store API the file imports use. Statements
// are recorded with their balance check; the same file again, an
// overlapping statement and two identical entries in one statement each
// import as often as they happened.
func TestImportStatements(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	as := claims(tenant)
	acc := newAccount(t, h, as, "DE89370400440532013000", "1800")
	store := postgres.New(h.Pool)
	ctx := context.Background()
	d := decimal.RequireFromString
	bal := func(date, amount string) *bank.Balance { return &bank.Balance{Date: date, Amount: d(amount)} }
	fee := bank.Entry{BookingDate: "2025-03-03", Amount: d("-2.50"), Currency: "EUR", Reference: "Kontoführung"}
	in := bank.Entry{BookingDate: "2025-03-03", Amount: d("100"), Currency: "EUR", BankReference: "AS-1", EndToEndID: "E2E-1", CounterpartyName: "Kunde"}
	out := bank.Entry{BookingDate: "2025-03-04", Amount: d("-40"), Currency: "EUR", BankReference: "NONREF", EndToEndID: "E2E-2"}
	day1 := bank.ParsedStatement{Statement: bank.Statement{ID: "S1", Number: "1", Kind: "camt.053", IBAN: "DE89370400440532013000", Opening: bal("2025-03-02", "1000")},
		Entries: []bank.Entry{fee, fee, in}, End: bank.StatementEnd{Closing: bal("2025-03-03", "1095"), Entries: 3, Sum: d("95")}}
	// The second statement overlaps the first by its entry in, and its
	// closing balance misses 10.00.
	day2 := bank.ParsedStatement{Statement: bank.Statement{ID: "S2", Number: "2", Kind: "camt.053", Opening: bal("2025-03-03", "1095")},
		Entries: []bank.Entry{in, out}, End: bank.StatementEnd{Closing: bal("2025-03-04", "1145"), Entries: 2, Sum: d("60")}}
	sha := strings.Repeat("ab", 32)
	r, err := store.ImportStatements(ctx, tenant, acc, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceCAMT, FileSHA256: sha}, []bank.ParsedStatement{day1, day2})
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalRows != 5 || r.Imported != 4 || r.SkippedDuplicates != 1 || r.DuplicateFile || len(r.Statements) != 2 {
		t.Fatalf("result: %+v", r)
	}
	if s := r.Statements[0]; s.BalanceMismatch || s.Imported != 3 || !s.ExpectedClosing.Equal(d("1095")) {
		t.Fatalf("statement 1: %+v", s)
	}
	if s := r.Statements[1]; !s.BalanceMismatch || s.Imported != 1 || s.SkippedDuplicates != 1 || !s.ExpectedClosing.Equal(d("1155")) || !s.Closing.Equal(d("1145")) {
		t.Fatalf("statement 2: %+v", s)
	}
	var mismatch bool
	var expected, closing decimal.Decimal
	if err := h.Pool.QueryRow(ctx, "SELECT balance_mismatch, expected_closing, closing_balance FROM bank.statements WHERE statement_ref = 'S2'").Scan(&mismatch, &expected, &closing); err != nil ||
		!mismatch || !expected.Equal(d("1155")) || !closing.Equal(d("1145")) {
		t.Fatalf("stored statement: %v %s %s %v", mismatch, expected, closing, err)
	}

	// The same file again: nothing written, everything skipped.
	again, err := store.ImportStatements(ctx, tenant, acc, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceCAMT, FileSHA256: sha}, []bank.ParsedStatement{day1, day2})
	if err != nil || !again.DuplicateFile || again.Imported != 0 || again.SkippedDuplicates != 5 {
		t.Fatalf("same file: %+v %v", again, err)
	}
	// Another file with the first statement (an intraday report of the
	// same day): its entries are known.
	day1.Statement.Kind = "camt.052"
	intraday, err := store.ImportStatements(ctx, tenant, acc, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceCAMT, FileSHA256: strings.Repeat("cd", 32)}, []bank.ParsedStatement{day1})
	if err != nil || intraday.Imported != 0 || intraday.SkippedDuplicates != 3 {
		t.Fatalf("overlapping file: %+v %v", intraday, err)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant); n != 4 {
		t.Fatalf("%d transactions, want 4", n)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1 AND statement_id IS NOT NULL AND reference = 'Kontoführung'", tenant); n != 2 {
		t.Fatalf("%d fees, want both", n)
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.imports WHERE tenant_id = $1 AND state = 'done' AND finished_at IS NOT NULL", tenant); n != 2 {
		t.Fatalf("%d finished imports, want 2", n)
	}
	// An account of another tenant is not found; nothing is written.
	if _, err := store.ImportStatements(ctx, uuid.NewString(), acc, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceMT940}, []bank.ParsedStatement{day1}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("foreign account: %v", err)
	}

	// A statement the database refuses half-way (an entry of zero, which
	// no parser hands over) writes nothing at all: no import, no
	// statement, none of the entries before it.
	broken := bank.ParsedStatement{Statement: bank.Statement{Kind: "mt940"}, Entries: []bank.Entry{
		{BookingDate: "2025-05-01", Amount: d("1"), Currency: "EUR", Reference: "vorher"},
		{BookingDate: "2025-05-02", Amount: decimal.Zero, Currency: "EUR"},
	}}
	if _, err := store.ImportStatements(ctx, tenant, acc, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceMT940}, []bank.ParsedStatement{broken}); err == nil {
		t.Fatal("an entry of zero was imported")
	}
	if n := testkit.Count(t, h.Pool, "SELECT (SELECT count(*) FROM bank.imports WHERE tenant_id = $1) + (SELECT count(*) FROM bank.statements WHERE tenant_id = $1) + (SELECT count(*) FROM bank.transactions WHERE tenant_id = $1)", tenant); n != 2+3+4 {
		t.Fatalf("%d rows after the failed import, want the 9 from before", n)
	}
}

// TestImportParsedFiles: real statement files, parsed by the camt and
// mt940 packages into a bank.Collector, import with the count and sum of
// amounts read from the files by hand; the same file again, or the same
// statements in another file, imports nothing.
func TestImportParsedFiles(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	ctx := context.Background()
	store := postgres.New(h.Pool)
	for _, tc := range []struct {
		file, source string
		parse        func(io.Reader, bank.Sink) error
		statements   int
		entries      int
		sum          string
	}{
		// Two statements: 18.15 + 8.85 = 27.00, 27.00 - 7.00 = 20.00.
		{"camt053.v2.multi.statement.xml", bank.SourceCAMT, camt.Parse, 2, 2, "1.85"},
		// -150.00 + 2500.00 - 49.99 (RC: a reversed credit) = 2300.01; -100.00.
		{"volksbank.sta", bank.SourceMT940, mt940.Parse, 2, 4, "2200.01"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tenant := uuid.NewString()
			acc := newAccount(t, h, claims(tenant), "DE89370400440532013000", "1800")
			raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var c bank.Collector
			if err := tc.parse(bytes.NewReader(raw), &c); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			imp := func(sha string) bank.ImportResult {
				r, err := store.ImportStatements(ctx, tenant, acc, bank.ImportMeta{ID: uuid.NewString(), Source: tc.source, FileSHA256: sha}, c.Statements)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			r := imp(hex.EncodeToString(sum[:]))
			if r.TotalRows != tc.entries || r.Imported != tc.entries || r.SkippedDuplicates != 0 || len(r.Statements) != tc.statements {
				t.Fatalf("first import: %+v", r)
			}
			for _, s := range r.Statements {
				if s.BalanceMismatch || s.ExpectedClosing == nil {
					t.Errorf("balance check of %+v", s)
				}
			}
			var got decimal.Decimal
			if err := h.Pool.QueryRow(ctx, "SELECT sum(amount) FROM bank.transactions WHERE tenant_id = $1", tenant).Scan(&got); err != nil || !got.Equal(decimal.RequireFromString(tc.sum)) {
				t.Fatalf("sum %s, want %s (%v)", got, tc.sum, err)
			}
			if again := imp(hex.EncodeToString(sum[:])); !again.DuplicateFile || again.Imported != 0 || again.SkippedDuplicates != tc.entries {
				t.Fatalf("same file: %+v", again)
			}
			if other := imp(strings.Repeat("0", 64)); other.DuplicateFile || other.Imported != 0 || other.SkippedDuplicates != tc.entries {
				t.Fatalf("same statements in another file: %+v", other)
			}
			if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.transactions WHERE tenant_id = $1", tenant); n != tc.entries {
				t.Fatalf("%d transactions, want %d", n, tc.entries)
			}
		})
	}
}
