package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

func storeOf(tb testing.TB) (*postgres.Store, *pgxpool.Pool) {
	tb.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(tb, postgres.Schema))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 4, postgres.Schema)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return postgres.New(pool), owner
}

// suggestFixture is a tenant with a bank account on 1800, nTx open
// transactions and nItems open items posted as the ledger's events, half
// receivables, half payables, and nItems/20 bookings on 1800. Every fifth
// transaction names an invoice, every fifth pays one's amount exactly.
func suggestFixture(tb testing.TB, s *postgres.Store, nTx, nItems int) (tenant, account string) {
	tb.Helper()
	ctx := context.Background()
	tenant = uuid.NewString()
	acc, err := s.CreateAccount(ctx, tenant, bank.Account{ID: uuid.NewString(), Name: "Giro", IBAN: "DE89370400440532013000", AccountNumber: "1800", Currency: "EUR"})
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 9))
	names := []string{"Müller KG", "Schmidt GmbH", "Weber AG", "Fischer e.K.", "Becker OHG", "Hoffmann GmbH & Co. KG", "Schulz UG", "Koch Bau"}
	amount := func() decimal.Decimal { return decimal.New(int64(r.IntN(500000)+100), -2) }
	day := func(i int) string { return fmt.Sprintf("2026-%02d-%02d", 1+i%12, 1+r.IntN(28)) }
	type item struct {
		ref    string
		amount decimal.Decimal
		in     bool
		date   string
	}
	items := make([]item, nItems)
	var evs []bank.PostedIntent
	for i := range items {
		it := item{ref: fmt.Sprintf("RE-2026-%05d", i), amount: amount(), in: i%2 == 0, date: day(i)}
		items[i] = it
		name := names[r.IntN(len(names))] + fmt.Sprintf(" %d", r.IntN(400))
		line := ledgerv1.EventLine{AccountDebit: "1200", AccountCredit: "4400", Amount: it.amount.StringFixed(2), ExternalReference: &it.ref}
		desc := "Ausgangsrechnung " + it.ref + " " + name
		if !it.in {
			line.AccountDebit, line.AccountCredit, desc = "6815", "3300", "Eingangsrechnung "+it.ref+" "+name
		}
		id := uuid.NewString()
		evs = append(evs, bank.PostedIntent{EventID: "ev-" + id, Intent: ledgerv1.IntentPosted{TenantID: tenant, IntentID: id, BookingDate: it.date,
			Period: it.date[:7], Description: desc, Source: "api", FirstNumber: int64(i + 1), LastNumber: int64(i + 1), Events: []ledgerv1.EventLine{line}}})
	}
	for i := range nItems / 20 {
		id := uuid.NewString()
		d := day(i)
		evs = append(evs, bank.PostedIntent{EventID: "ev-" + id, Intent: ledgerv1.IntentPosted{TenantID: tenant, IntentID: id, BookingDate: d,
			Period: d[:7], Description: "Barauszahlung " + names[i%len(names)], Source: "api", FirstNumber: int64(nItems + i + 1), LastNumber: int64(nItems + i + 1),
			Events: []ledgerv1.EventLine{{AccountDebit: "1600", AccountCredit: "1800", Amount: amount().StringFixed(2)}}}})
	}
	oi := bank.NewOpenItems(s)
	for start := 0; start < len(evs); start += 1000 {
		if err := oi.Apply(ctx, tenant, evs[start:min(start+1000, len(evs))]...); err != nil {
			tb.Fatal(err)
		}
	}
	entries := make([]bank.Entry, nTx)
	for i := range entries {
		it := items[r.IntN(len(items))]
		amt := amount()
		rem := fmt.Sprintf("Verwendungszweck %d Kundennummer %d", r.IntN(100000), r.IntN(1000))
		switch i % 5 {
		case 0:
			amt, rem = it.amount, "Rechnung "+it.ref+" vom "+it.date
		case 1:
			amt = it.amount
		}
		if !it.in {
			amt = amt.Neg()
		}
		entries[i] = bank.Entry{BookingDate: day(i), Amount: amt, Currency: "EUR", BankReference: fmt.Sprintf("B%06d", i),
			CounterpartyName: names[r.IntN(len(names))], CounterpartyIBAN: "DE44500105175407324931", Reference: rem}
	}
	res, err := s.ImportStatements(ctx, tenant, acc.ID, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceJSON}, []bank.ParsedStatement{{Entries: entries}})
	if err != nil || res.Imported != nTx {
		tb.Fatalf("import: %+v %v", res, err)
	}
	return tenant, acc.ID
}

// TestSuggestionData: one snapshot of the open transactions (within the
// period), the open items and the account's unexplained bookings; a
// transaction no longer open is left out; another tenant's account is
// NOT_FOUND.
func TestSuggestionData(t *testing.T) {
	t.Parallel()
	s, owner := storeOf(t)
	ctx := context.Background()
	tenant, account := suggestFixture(t, s, 20, 40)
	d, err := s.SuggestionData(ctx, tenant, account, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Transactions) != 20 || len(d.Items) != 40 || len(d.Bookings) != 2 || d.Account.AccountNumber != "1800" {
		t.Fatalf("%d transactions, %d items, %d bookings, account %+v", len(d.Transactions), len(d.Items), len(d.Bookings), d.Account)
	}
	if d.Transactions[0].Remittance == "" || d.Transactions[0].CounterpartyIBAN != "DE44500105175407324931" || d.Transactions[0].Amount.IsZero() {
		t.Fatalf("transaction %+v", d.Transactions[0])
	}
	if _, err := owner.Exec(ctx, `UPDATE bank.transactions SET status = 'reconciled' WHERE id = $1`, d.Transactions[0].ID); err != nil {
		t.Fatal(err)
	}
	march, err := s.SuggestionData(ctx, tenant, account, "2026-03-01", "2026-03-31")
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range march.Transactions {
		if tx.Date < "2026-03-01" || tx.Date > "2026-03-31" || tx.ID == d.Transactions[0].ID {
			t.Fatalf("transaction %+v in March", tx)
		}
	}
	if len(march.Transactions) == 0 || len(march.Transactions) >= 19 {
		t.Fatalf("%d transactions in March", len(march.Transactions))
	}
	if _, err := s.SuggestionData(ctx, uuid.NewString(), account, "", ""); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another tenant: %v", err)
	}
	if ss := bank.Suggest(d.Transactions, d.Items, d.Bookings, 0); len(ss) == 0 {
		t.Fatal("no suggestions")
	}
}

// BenchmarkSuggest: suggestions for 1,000 open transactions against
// 10,000 open items (and 500 bank bookings), the store's reads and the
// scoring, as GET /v1/bank-transactions/suggestions does them.
func BenchmarkSuggest(b *testing.B) {
	s, _ := storeOf(b)
	ctx := context.Background()
	tenant, account := suggestFixture(b, s, 1000, 10000)
	b.ResetTimer()
	for range b.N {
		d, err := s.SuggestionData(ctx, tenant, account, "", "")
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Transactions) != 1000 || len(d.Items) != 10000 {
			b.Fatalf("%d transactions, %d items", len(d.Transactions), len(d.Items))
		}
		if ss := bank.Suggest(d.Transactions, d.Items, d.Bookings, bankv1.MaxSuggestionsLimit); len(ss) == 0 {
			b.Fatal("no suggestions")
		}
	}
}
