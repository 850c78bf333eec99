package bank_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/services/bank"
)

const (
	tenant = "6f1c3a52-8d7e-4a43-9a51-0c2b1f7e9d10"
	intent = "0b7e5d4c-3f2a-4e19-8c6b-5a4d3c2b1a09"
	orig   = "a3c9e8f7-1b2d-4c5e-9f8a-7b6c5d4e3f21"
)

func ref(s string) *string { return &s }

func amt(s string) money.Amount { return money.MustParse(s) }

func ptr[T any](v T) *T { return &v }

// posted is an intent_posted event of lines "debit credit amount [ref]".
func posted(desc string, lines ...ledgerv1.EventLine) ledgerv1.IntentPosted {
	return ledgerv1.IntentPosted{TenantID: tenant, IntentID: intent, BookingDate: "2026-03-14", Period: "2026-03",
		Description: desc, Source: "api", FirstNumber: 41, LastNumber: 41 + int64(len(lines)) - 1, Events: lines}
}

func line(debit, credit, amount string, reference *string) ledgerv1.EventLine {
	return ledgerv1.EventLine{AccountDebit: debit, AccountCredit: credit, Amount: amount, Description: "Zeile", ExternalReference: reference}
}

// amountsEqual compares money by value: 119.00 is 119.
var amountsEqual = cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })

func TestOpenItemParty(t *testing.T) {
	cases := map[string]string{
		"1200": bank.Debtor, "1299": bank.Debtor, "10000": bank.Debtor, "69999": bank.Debtor,
		"3300": bank.Creditor, "3399": bank.Creditor, "70000": bank.Creditor, "99999": bank.Creditor,
		"1199": "", "1300": "", "3299": "", "3400": "", "9999": "", "100000": "", "01200": "", "12a0": "", "": "", "1800": "", "4400": "",
	}
	for account, want := range cases {
		got, ok := bank.OpenItemParty(account)
		if got != want || ok != (want != "") {
			t.Errorf("OpenItemParty(%q) = %q, %v; want %q", account, got, ok, want)
		}
	}
	for account, want := range map[string]bool{"1549": false, "1550": true, "1600": true, "1800": true, "1899": true, "1900": false, "18000": false, "1200": false} {
		if bank.LiquidFunds(account) != want {
			t.Errorf("LiquidFunds(%q) != %v", account, want)
		}
	}
}

// TestProject: the projection of one event, a pure function.
func TestProject(t *testing.T) {
	inv, eingang := ref("RE-2026-0042"), ref("ER-778")
	item := func(account, party, dir, amount string, reference *string, desc string) bank.OpenItem {
		return bank.OpenItem{IntentID: intent, AccountNumber: account, Party: party, Direction: dir, BookingDate: "2026-03-14",
			Description: desc, ExternalReference: reference, JournalNumber: 41, OriginalAmount: amt(amount), OpenAmount: amt(amount), Currency: "EUR"}
	}
	taxed := func(l ledgerv1.EventLine, code string) ledgerv1.EventLine { l.TaxCode = &code; return l }
	fx := func(l ledgerv1.EventLine, cur, amount string) ledgerv1.EventLine {
		l.FXCurrency, l.FXAmount = &cur, &amount
		return l
	}
	with := func(it bank.OpenItem, change func(*bank.OpenItem)) bank.OpenItem { change(&it); return it }
	part := func(code, gross, tax, vat string) bank.TaxPart {
		return bank.TaxPart{TaxCode: code, Gross: amt(gross), Tax: amt(tax), VATAccount: vat}
	}
	booking := func(account, amount string, reference *string, desc string) bank.LedgerBooking {
		return bank.LedgerBooking{IntentID: intent, AccountNumber: account, BookingDate: "2026-03-14", Description: desc,
			ExternalReference: reference, JournalNumber: 41, Amount: amt(amount)}
	}
	linked := func(a string) bool { return a == "1360" || bank.LiquidFunds(a) }
	cases := []struct {
		name       string
		ev         ledgerv1.IntentPosted
		settlement func(string) bool
		want       bank.Projection
	}{
		{
			// 1200 -> 4400 with USt19: the ledger splits 119.00 into 100.00
			// net and 19.00 tax, both on the receivable.
			name: "outgoing invoice with output tax",
			ev:   posted("Ausgangsrechnung 42", line("1200", "4400", "100.00", inv), line("1200", "3806", "19.00", inv)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Receivable, "119.00", inv, "Ausgangsrechnung 42")}},
		},
		{
			name: "incoming invoice with input tax",
			ev:   posted("Eingangsrechnung Werbung", line("6815", "3300", "84.03", eingang), line("1406", "3300", "15.97", eingang)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("3300", bank.Creditor, bank.Payable, "100.00", eingang, "Eingangsrechnung Werbung")}},
		},
		{
			name: "personal accounts of a debtor and a creditor",
			ev:   posted("Personenkonten", line("10001", "4400", "50.00", nil), line("6300", "70001", "20.50", ref("K-9"))),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{
				item("10001", bank.Debtor, bank.Receivable, "50.00", nil, "Personenkonten"),
				item("70001", bank.Creditor, bank.Payable, "20.50", ref("K-9"), "Personenkonten")}},
		},
		{
			// A credit note to a customer: the tenant owes the money.
			name: "credit note on a debtor account",
			ev:   posted("Gutschrift", line("4400", "1200", "10.00", ref("GS-1"))),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Payable, "10.00", ref("GS-1"), "Gutschrift")}},
		},
		{
			// The customer's payment booked straight to the bank: money
			// that moved already is a bank booking, not an open item.
			name: "payment through the bank",
			ev:   posted("Zahlungseingang RE-2026-0042", line("1800", "1200", "119.00", inv)),
			want: bank.Projection{IntentID: intent, Bookings: []bank.LedgerBooking{booking("1800", "119.00", inv, "Zahlungseingang RE-2026-0042")}},
		},
		{
			name: "supplier paid from the bank, fees and all",
			ev:   posted("Zahlung ER-778", line("3300", "1800", "100.00", eingang), line("6855", "1800", "0.35", nil)),
			want: bank.Projection{IntentID: intent, Bookings: []bank.LedgerBooking{booking("1800", "-100.35", eingang, "Zahlung ER-778")}},
		},
		{
			name: "transfer between two bank accounts",
			ev:   posted("Umbuchung", line("1810", "1800", "500.00", nil)),
			want: bank.Projection{IntentID: intent, Bookings: []bank.LedgerBooking{booking("1810", "500.00", nil, "Umbuchung"), booking("1800", "-500.00", nil, "Umbuchung")}},
		},
		{
			name:       "an account linked to a bank account settles like a bank",
			ev:         posted("Kreditkarte", line("1360", "1200", "30.00", nil)),
			settlement: linked,
			want:       bank.Projection{IntentID: intent, Bookings: []bank.LedgerBooking{booking("1360", "30.00", nil, "Kreditkarte")}},
		},
		{
			name: "an account not linked is no bank",
			ev:   posted("Kreditkarte", line("1360", "1200", "30.00", nil)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Payable, "30.00", nil, "Kreditkarte")}},
		},
		{
			name: "lines that net to zero leave nothing",
			ev:   posted("Korrektur", line("1200", "4400", "10.00", nil), line("4400", "1200", "10.00", nil), line("1800", "1800", "5.00", nil)),
			want: bank.Projection{IntentID: intent},
		},
		{
			name: "no open-item or bank account",
			ev:   posted("Abschreibung", line("6220", "0520", "1000.00", nil)),
			want: bank.Projection{IntentID: intent},
		},
		{
			name: "without an intent description the first line's",
			ev:   posted("", line("1200", "4400", "1.00", nil)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Receivable, "1.00", nil, "Zeile")}},
		},
		{
			name: "the first reference on the account is the item's",
			ev:   posted("Sammelrechnung", line("1200", "4400", "1.00", ref("")), line("1200", "4400", "2.00", ref("RE-1")), line("1200", "4400", "3.00", ref("RE-2"))),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Receivable, "6.00", ref("RE-1"), "Sammelrechnung")}},
		},
		{
			// The ledger's split of 1200 -> 4400 119.00 USt19 and 1200 ->
			// 4300 53.50 USt7, plus a freight line without tax.
			name: "mixed-rate invoice: its composition by tax code",
			ev: posted("Ausgangsrechnung 43", taxed(line("1200", "4400", "100.00", inv), "USt19"), taxed(line("1200", "3806", "19.00", inv), "USt19"),
				taxed(line("1200", "4300", "50.00", inv), "USt7"), taxed(line("1200", "3801", "3.50", inv), "USt7"), line("1200", "4140", "5.00", inv)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{with(item("1200", bank.Debtor, bank.Receivable, "177.50", inv, "Ausgangsrechnung 43"),
				func(it *bank.OpenItem) {
					it.TaxSplit = []bank.TaxPart{part("USt19", "119.00", "19.00", "3806"), part("USt7", "53.50", "3.50", "3801"), part("", "5.00", "0", "")}
				})}},
		},
		{
			name: "supplier invoice with input tax: positive in the payable's direction",
			ev:   posted("Eingangsrechnung", taxed(line("6815", "3300", "200.00", eingang), "VSt19"), taxed(line("1406", "3300", "38.00", eingang), "VSt19")),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{with(item("3300", bank.Creditor, bank.Payable, "238.00", eingang, "Eingangsrechnung"),
				func(it *bank.OpenItem) { it.TaxSplit = []bank.TaxPart{part("VSt19", "238.00", "38.00", "1406")} })}},
		},
		{
			// An export invoice in USD, tax-free (no tax event).
			name: "foreign-currency invoice",
			ev:   posted("Invoice 7 USD", fx(taxed(line("1200", "4120", "900.00", inv), "AUS0"), "USD", "1000.00"), fx(line("1200", "4120", "90.00", nil), "USD", "100")),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{with(item("1200", bank.Debtor, bank.Receivable, "990.00", inv, "Invoice 7 USD"),
				func(it *bank.OpenItem) { it.Currency, it.OriginalDocAmount = "USD", ptr(amt("1100.00")) })}},
		},
		{
			name: "a payable in USD",
			ev:   posted("Bill USD", fx(line("6300", "70001", "46.00", nil), "USD", "50.00")),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{with(item("70001", bank.Creditor, bank.Payable, "46.00", nil, "Bill USD"),
				func(it *bank.OpenItem) { it.Currency, it.OriginalDocAmount = "USD", ptr(amt("50.00")) })}},
		},
		{
			name: "currencies mixed on the account: an EUR item",
			ev:   posted("Gemischt", fx(line("1200", "4120", "90.00", nil), "USD", "100"), fx(line("1200", "4120", "90.00", nil), "CHF", "95")),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Receivable, "180.00", nil, "Gemischt")}},
		},
		{
			name: "an FX line and an EUR line on the account: an EUR item",
			ev:   posted("Gemischt", fx(line("1200", "4120", "90.00", nil), "USD", "100"), line("1200", "4400", "10.00", nil)),
			want: bank.Projection{IntentID: intent, Items: []bank.OpenItem{item("1200", bank.Debtor, bank.Receivable, "100.00", nil, "Gemischt")}},
		},
		{
			// A match group's clearing: the discount and its VAT against the
			// receivable settle it; they open no payable.
			name: "the bank's own clearing booking opens no item",
			ev: func() ledgerv1.IntentPosted {
				ev := posted("Bankabgleich Sammelzahlung", line("1800", "1200", "116.62", inv), line("4730", "1200", "2.00", inv), line("3806", "1200", "0.38", inv))
				ev.Source = "bank"
				return ev
			}(),
			want: bank.Projection{IntentID: intent, Bookings: []bank.LedgerBooking{booking("1800", "116.62", inv, "Bankabgleich Sammelzahlung")}},
		},
		{
			// The reversal mirrors the lines; projecting them would open
			// the opposite item. It cancels the original instead.
			name: "a reversal only cancels",
			ev: func() ledgerv1.IntentPosted {
				ev := posted("Storno: Ausgangsrechnung 42", line("4400", "1200", "100.00", inv), line("3806", "1200", "19.00", inv))
				ev.Reverses, ev.Source = orig, "reversal"
				return ev
			}(),
			want: bank.Projection{IntentID: intent, Reverses: orig},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := bank.Project(c.ev, c.settlement)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, amountsEqual); diff != "" {
				t.Fatalf("projection (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectMalformed(t *testing.T) {
	good := posted("Rechnung", line("1200", "4400", "1.00", nil))
	cases := map[string]func(*ledgerv1.IntentPosted){
		"no tenant":         func(ev *ledgerv1.IntentPosted) { ev.TenantID = "" },
		"intent no UUID":    func(ev *ledgerv1.IntentPosted) { ev.IntentID = "42" },
		"reverses no UUID":  func(ev *ledgerv1.IntentPosted) { ev.Reverses = "x" },
		"no date":           func(ev *ledgerv1.IntentPosted) { ev.BookingDate = "2026-02-30" },
		"amount no decimal": func(ev *ledgerv1.IntentPosted) { ev.Events[0].Amount = "1,00" },
		"negative amount":   func(ev *ledgerv1.IntentPosted) { ev.Events[0].Amount = "-1.00" },
		"fractions of cent": func(ev *ledgerv1.IntentPosted) { ev.Events[0].Amount = "1.001" },
		"account no number": func(ev *ledgerv1.IntentPosted) { ev.Events[0].AccountDebit = "Kasse" },
		"no credit account": func(ev *ledgerv1.IntentPosted) { ev.Events[0].AccountCredit = "" },
	}
	for name, spoil := range cases {
		ev := good
		ev.Events = append([]ledgerv1.EventLine(nil), good.Events...)
		spoil(&ev)
		if _, err := bank.Project(ev, nil); !errors.Is(err, bank.ErrMalformedEvent) {
			t.Errorf("%s: %v, want ErrMalformedEvent", name, err)
		}
	}
}
