package bank_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/services/bank"
)

func receivable(id, date, desc, ref, open string) bank.OpenItem {
	it := bank.OpenItem{IntentID: id, AccountNumber: "1200", Party: bank.Debtor, Direction: bank.Receivable, BookingDate: date,
		Description: desc, OriginalAmount: money.MustParse(open), OpenAmount: money.MustParse(open)}
	if ref != "" {
		it.ExternalReference = &ref
	}
	return it
}

// usdItem is a receivable invoiced in US dollars, carried at eur.
func usdItem(id, date, ref, usd, eur string) bank.OpenItem {
	it := receivable(id, date, "Invoice "+ref, ref, eur)
	doc := money.MustParse(usd)
	it.Currency, it.OriginalDocAmount = "USD", &doc
	return it
}

func payable(id, date, desc, ref, open string) bank.OpenItem {
	it := receivable(id, date, desc, ref, open)
	it.AccountNumber, it.Party, it.Direction = "3300", bank.Creditor, bank.Payable
	return it
}

func booking(id, date, desc, amount string) bank.LedgerBooking {
	return bank.LedgerBooking{IntentID: id, AccountNumber: "1800", BookingDate: date, Description: desc, Amount: money.MustParse(amount)}
}

func tx(date, amount, name, iban, remittance string) bank.SuggestTx {
	return bank.SuggestTx{ID: "tx", Date: date, Amount: decimal.RequireFromString(amount), Currency: "EUR",
		CounterpartyName: name, CounterpartyIBAN: iban, Remittance: remittance}
}

// got renders suggestions as "intent kind score" for comparison.
func got(ss []bankv1.Suggestion) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %s %.2f", s.LedgerIntentID, s.CandidateKind, s.MatchScore))
	}
	return out
}

func TestSuggestScoring(t *testing.T) {
	t.Parallel()
	inv := receivable("inv", "2026-03-02", "Ausgangsrechnung RE-2026-001 Müller KG", "RE-2026-001", "119.00")
	other := receivable("other", "2026-03-02", "Ausgangsrechnung RE-2026-002 Schmidt GmbH", "RE-2026-002", "119.00")
	bill := payable("bill", "2026-03-03", "Eingangsrechnung Werbeagentur ER-5501", "ER-5501", "238.00")
	for _, c := range []struct {
		name     string
		tx       bank.SuggestTx
		items    []bank.OpenItem
		bookings []bank.LedgerBooking
		want     []string
		reasons  []string // substrings of the first suggestion's reasons, in order
	}{
		{name: "exact amount, invoice number, name and date: full score",
			tx:    tx("2026-03-09", "119.00", "Müller KG", "", "Rechnung RE-2026-001"),
			items: []bank.OpenItem{other, inv}, want: []string{"inv open_receivable 1.00", "other open_receivable 0.55"},
			reasons: []string{"amount matches the open receivable on 1200 exactly (119.00 EUR)", "invoice number RE-2026-001 appears",
				"counterparty Müller KG appears", "Paid 7 days after the invoice date (2026-03-02)"}},
		{name: "reference normalised: case, spaces and dashes",
			tx:    tx("2026-03-09", "119.00", "", "", "re 2026 001 danke"),
			items: []bank.OpenItem{other, inv}, want: []string{"inv open_receivable 0.90", "other open_receivable 0.55"}},
		{name: "number without prefix",
			tx:    tx("2026-03-09", "119.00", "", "", "RG 2026-001"),
			items: []bank.OpenItem{other, inv}, want: []string{"inv open_receivable 0.90", "other open_receivable 0.55"}},
		{name: "a longer number is another document",
			tx:    tx("2026-03-09", "119.00", "", "", "RE-2026-0012"),
			items: []bank.OpenItem{inv}, want: []string{"inv open_receivable 0.55"}},
		{name: "money in never settles a payable",
			tx:    tx("2026-03-09", "238.00", "Werbeagentur", "", "ER-5501"),
			items: []bank.OpenItem{bill}, want: nil},
		{name: "money out settles the payable",
			tx:    tx("2026-03-10", "-238.00", "Werbeagentur Kreativ", "", "ER-5501"),
			items: []bank.OpenItem{bill}, want: []string{"bill open_liability 0.95"},
			reasons: []string{"matches the open payable on 3300 exactly", "ER-5501", "Part of the counterparty name"}},
		{name: "cash discount of 2 %",
			tx:    tx("2026-03-09", "116.62", "", "", "RE-2026-001 abzgl. 2% Skonto"),
			items: []bank.OpenItem{inv}, want: []string{"inv open_receivable 0.70"},
			reasons: []string{"2.0 % (2.38 EUR) below the open receivable on 1200 (119.00 EUR), as with a cash discount"}},
		{name: "partial payment by reference",
			tx:    tx("2026-03-09", "50.00", "", "", "Abschlag RE-2026-001"),
			items: []bank.OpenItem{inv}, want: []string{"inv open_receivable 0.45"},
			reasons: []string{"invoice number", "covers 50.00 of 119.00 EUR (a partial payment)"}},
		{name: "document number from the booking text",
			tx:    tx("2026-03-09", "300.00", "", "", "Auftrag A-77812"),
			items: []bank.OpenItem{receivable("ord", "2026-03-01", "Anzahlung Auftrag A-77812", "", "300.00")},
			want:  []string{"ord open_receivable 0.85"}, reasons: []string{"exactly", "The reference A-77812 from the booking text appears"}},
		{name: "years are no document numbers",
			tx:    tx("2026-03-09", "999.00", "", "", "Beitrag 2026"),
			items: []bank.OpenItem{receivable("y", "2026-03-01", "Beitrag 2026", "", "10.00")}, want: nil},
		{name: "name alone with a close date",
			tx:    tx("2026-03-09", "70.00", "Hans Meier", "", "Danke"),
			items: []bank.OpenItem{receivable("m", "2026-03-01", "Rechnung Hans Meier", "", "119.00")},
			want:  []string{"m open_receivable 0.20"}},
		{name: "IBAN in the booking text",
			tx:    tx("2026-03-09", "119.00", "", "DE44500105175407324931", ""),
			items: []bank.OpenItem{receivable("i", "2026-05-01", "Rechnung an IBAN DE44 5001 0517 5407 3249 31", "", "119.00")},
			want:  []string{"i open_receivable 0.55"}},
		{name: "near amount within a euro",
			tx:    tx("2026-03-09", "118.50", "", "", ""),
			items: []bank.OpenItem{inv}, want: []string{"inv open_receivable 0.40"}, reasons: []string{"differs by only 0.50 EUR"}},
		{name: "a euro off a small amount is not close",
			tx:    tx("2026-03-09", "5.00", "", "", ""),
			items: []bank.OpenItem{receivable("s", "2026-03-05", "Kleinbetrag", "", "4.10")}, want: nil},
		{name: "date alone suggests nothing",
			tx:    tx("2026-03-02", "5000.00", "", "", ""),
			items: []bank.OpenItem{inv}, want: nil},
		{name: "bank booking on the same day",
			tx:       tx("2026-03-31", "-9.90", "Sparkasse", "", "Entgelt"),
			bookings: []bank.LedgerBooking{booking("fee", "2026-03-31", "Kontoführungsgebühr März", "-9.90"), booking("in", "2026-03-31", "Einzahlung", "9.90")},
			want:     []string{"fee bank_booking 0.55"}, reasons: []string{"matches the booking on 1800 exactly (9.90 EUR)", "Booked on the same day"}},
		{name: "an open item in US dollars is settled by a match group",
			tx:    tx("2026-03-09", "930.00", "", "", "INV-US-7 thanks"),
			items: []bank.OpenItem{usdItem("usd", "2026-03-01", "INV-US-7", "1000.00", "920.00")}, want: []string{"usd open_receivable 0.55"},
			reasons: []string{"within 5 % of the open receivable", "INV-US-7 appears", "Paid 8 days after", "in USD (1000.00 USD open, carried at 920.00 EUR): settle it with a match group"}},
		{name: "foreign currency: no amount signal",
			tx:    bank.SuggestTx{ID: "tx", Date: "2026-03-09", Amount: decimal.RequireFromString("119.00"), Currency: "USD", Remittance: "RE-2026-001"},
			items: []bank.OpenItem{inv}, want: []string{"inv open_receivable 0.45"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss := bank.Suggest([]bank.SuggestTx{c.tx}, c.items, c.bookings, 0)
			if g := got(ss); strings.Join(g, "|") != strings.Join(c.want, "|") {
				t.Fatalf("suggestions %q, want %q; reasons %q", g, c.want, reasonsOf(ss))
			}
			if len(c.reasons) == 0 {
				return
			}
			r := ss[0].MatchReasons
			for i, want := range c.reasons {
				if i >= len(r) || !strings.Contains(r[i], want) {
					t.Fatalf("reasons %q, want %q at %d", r, want, i)
				}
			}
		})
	}
}

func reasonsOf(ss []bankv1.Suggestion) [][]string {
	var out [][]string
	for _, s := range ss {
		out = append(out, s.MatchReasons)
	}
	return out
}

// TestSuggestShape: suggestions name the intent with what a reconcile
// takes, amounts signed as the bank sees them, at most five per
// transaction, best first across transactions, cut at limit.
func TestSuggestShape(t *testing.T) {
	t.Parallel()
	var items []bank.OpenItem
	for i := range 8 {
		items = append(items, payable(fmt.Sprintf("p%d", i), "2026-03-01", "Eingangsrechnung", "", "50.00"))
	}
	a := tx("2026-03-05", "-50.00", "", "", "")
	a.ID = "a"
	b := tx("2026-03-04", "-50.00", "", "", "ER-9")
	b.ID = "b"
	items = append(items, payable("p9", "2026-03-01", "Eingangsrechnung", "ER-9", "50.00"))
	ss := bank.Suggest([]bank.SuggestTx{a, b}, items, nil, 0)
	if len(ss) != 2*bankv1.MaxSuggestionsPerTransaction {
		t.Fatalf("%d suggestions, want %d", len(ss), 2*bankv1.MaxSuggestionsPerTransaction)
	}
	first := ss[0]
	if first.BankTransactionID != "b" || first.LedgerIntentID != "p9" || first.CandidateKind != bankv1.CandidateOpenLiability ||
		first.OpenItemAccount == nil || *first.OpenItemAccount != "3300" || first.LedgerAmount.String() != "-50" || first.LedgerDate != "2026-03-01" {
		t.Fatalf("first %+v", first)
	}
	// Equal scores: the older transaction first.
	if ss[1].BankTransactionID != "b" || ss[5].BankTransactionID != "a" {
		t.Fatalf("order %v", got(ss))
	}
	if n := len(bank.Suggest([]bank.SuggestTx{a, b}, items, nil, 3)); n != 3 {
		t.Fatalf("limit 3: %d", n)
	}
	bk := bank.Suggest([]bank.SuggestTx{a}, nil, []bank.LedgerBooking{booking("bk", "2026-03-05", "Zahlung", "-50.00")}, 0)
	if len(bk) != 1 || bk[0].OpenItemAccount != nil || bk[0].CandidateKind != bankv1.CandidateBankBooking {
		t.Fatalf("bank booking %+v", bk)
	}
}

func TestParseSuggestionQuery(t *testing.T) {
	t.Parallel()
	q := map[string]string{"bank_account_id": "6f1c3a52-8d7e-4a43-9a51-0c2b1f7e9d10", "period": "2026-02"}
	got, err := bank.ParseSuggestionQuery(func(k string) string { return q[k] }, 10)
	if err != nil || got.Period != "2026-02" || got.Limit != 10 {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []map[string]string{{}, {"bank_account_id": "x"}, {"bank_account_id": q["bank_account_id"], "period": "2026-13"},
		{"bank_account_id": q["bank_account_id"], "period": "2026-02-01"}} {
		if _, err := bank.ParseSuggestionQuery(func(k string) string { return bad[k] }, 10); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// SuggestBenchData is 1,000 open transactions against 10,000 open items
// and 500 bank bookings: a fifth of the transactions name an invoice, a
// fifth pay an amount exactly, the rest are noise.
func SuggestBenchData(nTx, nItems int) ([]bank.SuggestTx, []bank.OpenItem, []bank.LedgerBooking) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"Müller KG", "Schmidt GmbH", "Weber AG", "Fischer e.K.", "Becker OHG", "Hoffmann GmbH & Co. KG", "Schulz UG", "Koch Bau"}
	amount := func() string { return decimal.New(int64(r.IntN(500000)+100), -2).StringFixed(2) }
	day := func(base int) string { return fmt.Sprintf("2026-%02d-%02d", 1+(base%12), 1+r.IntN(28)) }
	items := make([]bank.OpenItem, nItems)
	for i := range items {
		name := names[r.IntN(len(names))] + fmt.Sprintf(" %d", r.IntN(400))
		ref := fmt.Sprintf("RE-2026-%05d", i)
		if i%2 == 0 {
			items[i] = receivable(fmt.Sprintf("i%05d", i), day(i), "Ausgangsrechnung "+ref+" "+name, ref, amount())
		} else {
			items[i] = payable(fmt.Sprintf("i%05d", i), day(i), "Eingangsrechnung "+ref+" "+name, ref, amount())
		}
	}
	bookings := make([]bank.LedgerBooking, 500)
	for i := range bookings {
		bookings[i] = booking(fmt.Sprintf("b%03d", i), day(i), "Barauszahlung "+names[i%len(names)], "-"+amount())
	}
	txs := make([]bank.SuggestTx, nTx)
	for i := range txs {
		it := items[r.IntN(len(items))]
		amt := it.OpenAmount.String()
		if it.Direction == bank.Payable {
			amt = "-" + amt
		}
		rem := fmt.Sprintf("Verwendungszweck %d Kundennummer %d", r.IntN(100000), r.IntN(1000))
		switch i % 5 {
		case 0:
			rem = "Rechnung " + *it.ExternalReference + " vom " + it.BookingDate
		case 1:
		default:
			amt = amount()
		}
		txs[i] = tx(day(i), amt, names[r.IntN(len(names))], "DE44500105175407324931", rem)
		txs[i].ID = fmt.Sprintf("t%04d", i)
	}
	return txs, items, bookings
}

// BenchmarkSuggestPure: the scoring alone, 1,000 open transactions
// against 10,000 open items (BenchmarkSuggest in ./postgres adds the
// store reads).
func BenchmarkSuggestPure(b *testing.B) {
	txs, items, bookings := SuggestBenchData(1000, 10000)
	b.ResetTimer()
	for range b.N {
		if ss := bank.Suggest(txs, items, bookings, bankv1.MaxSuggestionsLimit); len(ss) == 0 {
			b.Fatal("no suggestions")
		}
	}
}
