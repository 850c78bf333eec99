package receivables_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// taxCodes are the ledger's system codes as far as sales need them.
func taxCodes() []ledgerv1.TaxCode {
	c := func(code, kind, rate string, active bool) ledgerv1.TaxCode {
		return ledgerv1.TaxCode{Code: code, Kind: kind, Rate: money.MustParse(rate), IsActive: active}
	}
	return []ledgerv1.TaxCode{c("USt19", ledgerv1.TaxOutput, "19", true), c("USt7", ledgerv1.TaxOutput, "7", true),
		c("VSt19", ledgerv1.TaxInput, "19", true), c("IGL0", ledgerv1.TaxExempt, "0", true), c("AUS0", ledgerv1.TaxExempt, "0", true),
		c("STF0", ledgerv1.TaxExempt, "0", true), c("USt16", ledgerv1.TaxOutput, "16", false)}
}

func amt(s string) money.Amount    { return money.MustParse(s) }
func pamt(s string) *money.Amount  { a := money.MustParse(s); return &a }
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func line(desc, qty, price string) receivablesv1.LineItemInput {
	return receivablesv1.LineItemInput{Description: desc, Quantity: amt(qty), UnitPrice: amt(price), TaxCode: "USt19"}
}

func fields(err error) []string {
	e := errs.As(err)
	if e == nil {
		return nil
	}
	out := []string{e.Code}
	for _, d := range e.Details {
		out = append(out, d.Field+": "+d.Issue)
	}
	return out
}

func TestCheckInvoiceInputLines(t *testing.T) {
	const debtor = "3f0e7c1a-5b2d-4c8e-9a61-2d4b6f8a0c1e"
	with := func(f func(*receivablesv1.LineItemInput)) receivablesv1.InvoiceInput {
		l := line("Beratung", "2", "100")
		f(&l)
		return receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01", LineItems: []receivablesv1.LineItemInput{line("ok", "1", "1"), l}}
	}
	for _, tc := range []struct {
		name string
		in   receivablesv1.InvoiceInput
		want []string
		line *receivables.Line // the checked second line when valid
	}{
		{"tax code", with(func(*receivablesv1.LineItemInput) {}), nil,
			&receivables.Line{Description: "Beratung", Quantity: dec("2"), Unit: "C62", UnitPrice: dec("100"), Discount: decimal.Zero, TaxCode: "USt19", TaxCategory: "S", TaxRate: dec("19")}},
		{"rate 7", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate, l.Unit = "", pamt("7"), "HUR" }), nil,
			&receivables.Line{Description: "Beratung", Quantity: dec("2"), Unit: "HUR", UnitPrice: dec("100"), Discount: decimal.Zero, TaxCode: "USt7", TaxCategory: "S", TaxRate: dec("7")}},
		{"K by code", with(func(l *receivablesv1.LineItemInput) { l.TaxCode = "IGL0" }), nil,
			&receivables.Line{Description: "Beratung", Quantity: dec("2"), Unit: "C62", UnitPrice: dec("100"), Discount: decimal.Zero, TaxCode: "IGL0", TaxCategory: "K", TaxRate: dec("0")}},
		{"AE by rate", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate, l.TaxCategory = "", pamt("0"), "AE" }), nil,
			&receivables.Line{Description: "Beratung", Quantity: dec("2"), Unit: "C62", UnitPrice: dec("100"), Discount: decimal.Zero, TaxCategory: "AE", TaxRate: dec("0")}},
		{"discount", with(func(l *receivablesv1.LineItemInput) { l.Discount = pamt("12.5") }), nil,
			&receivables.Line{Description: "Beratung", Quantity: dec("2"), Unit: "C62", UnitPrice: dec("100"), Discount: dec("12.5"), TaxCode: "USt19", TaxCategory: "S", TaxRate: dec("19")}},
		{"description", with(func(l *receivablesv1.LineItemInput) { l.Description = "  " }), []string{"INVALID_INPUT", "line_items[1].description: required"}, nil},
		{"quantity", with(func(l *receivablesv1.LineItemInput) { l.Quantity = amt("0.00001") }), []string{"INVALID_INPUT", "line_items[1].quantity: must be positive with at most 4 decimals"}, nil},
		{"negative quantity", with(func(l *receivablesv1.LineItemInput) { l.Quantity = amt("-1") }), []string{"INVALID_INPUT", "line_items[1].quantity: must be positive with at most 4 decimals"}, nil},
		{"price", with(func(l *receivablesv1.LineItemInput) { l.UnitPrice = amt("-0.01") }), []string{"INVALID_INPUT", "line_items[1].unit_price: must be 0 or more with at most 4 decimals"}, nil},
		{"unit", with(func(l *receivablesv1.LineItemInput) { l.Unit = "Stk" }), []string{"INVALID_INPUT", "line_items[1].unit: a UN/ECE Recommendation 20 unit code such as C62 (piece), HUR (hour), DAY, KGM"}, nil},
		{"discount too big", with(func(l *receivablesv1.LineItemInput) { l.Discount = pamt("200.01") }), []string{"INVALID_INPUT", "line_items[1].discount: more than the line's amount (quantity × unit_price)"}, nil},
		{"discount places", with(func(l *receivablesv1.LineItemInput) { l.Discount = pamt("1.001") }), []string{"INVALID_INPUT", "line_items[1].discount: must be 0 or more with at most 2 decimals"}, nil},
		{"input code", with(func(l *receivablesv1.LineItemInput) { l.TaxCode = "VSt19" }), []string{"INVALID_INPUT", "line_items[1].tax_code: tax code VSt19 is not one for sales (an output code such as USt19 or USt7, or IGL0, AUS0, STF0)"}, nil},
		{"inactive code", with(func(l *receivablesv1.LineItemInput) { l.TaxCode = "USt16" }), []string{"INVALID_INPUT", "line_items[1].tax_code: tax code USt16 is inactive"}, nil},
		{"both", with(func(l *receivablesv1.LineItemInput) { l.TaxRate = pamt("19") }), []string{"INVALID_INPUT", "line_items[1].tax_code: give tax_code or tax_rate with tax_category, not both"}, nil},
		{"neither", with(func(l *receivablesv1.LineItemInput) { l.TaxCode = "" }), []string{"INVALID_INPUT", "line_items[1].tax_code: required: a tax code such as USt19, or tax_rate with tax_category"}, nil},
		{"rate", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate = "", pamt("16") }), []string{"INVALID_INPUT", "line_items[1].tax_rate: 19, 7 or 0"}, nil},
		{"0 without category", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate = "", pamt("0") }), []string{"INVALID_INPUT", "line_items[1].tax_category: a 0 % line needs its category: Z, E, AE, K or G"}, nil},
		{"K at 19", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate, l.TaxCategory = "", pamt("19"), "K" }), []string{"INVALID_INPUT", "line_items[1].tax_rate: must be 0 for category K"}, nil},
		{"category", with(func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate, l.TaxCategory = "", pamt("0"), "O" }), []string{"INVALID_INPUT", "line_items[1].tax_category: S, Z, E, AE, K or G"}, nil},
		{"E without reason", with(func(l *receivablesv1.LineItemInput) { l.TaxCode = "STF0" }), []string{"INVALID_INPUT", "exemption_reason: required with tax category E: the legal ground of the exemption"}, nil},
		{"zero total", receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01", LineItems: []receivablesv1.LineItemInput{line("gratis", "1", "0")}},
			[]string{"INVALID_INPUT", "line_items: the invoice total must be positive"}, nil},
		{"no lines", receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01"}, []string{"INVALID_INPUT", "line_items: at least one line is required"}, nil},
		{"too many lines", receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01", LineItems: make([]receivablesv1.LineItemInput, 501)},
			[]string{"INVALID_INPUT", "line_items: at most 500 lines"}, nil},
		{"head", receivablesv1.InvoiceInput{DebtorID: "x", InvoiceDate: "2026-02-30", DueDate: "2026-01-01", Currency: "usd", LineItems: []receivablesv1.LineItemInput{line("a", "1", "1")}},
			[]string{"INVALID_INPUT", "debtor_id: must be a UUID", "invoice_date: required date YYYY-MM-DD", "due_date: before the invoice date", "currency: an ISO 4217 code such as EUR or USD"}, nil},
		{"foreign currency without rate", receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01", Currency: "USD", LineItems: []receivablesv1.LineItemInput{line("a", "1", "1")}},
			[]string{"INVALID_INPUT", "exchange_rate: required for a USD invoice: EUR per 1 USD"}, nil},
		{"rate places", receivablesv1.InvoiceInput{DebtorID: debtor, InvoiceDate: "2026-03-01", Currency: "USD", ExchangeRate: pamt("0.9214567"), LineItems: []receivablesv1.LineItemInput{line("a", "1", "1")}},
			[]string{"INVALID_INPUT", "exchange_rate: must be positive, below 1000000, with at most 6 decimals"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := receivables.CheckInvoiceInput(tc.in, taxCodes())
			if diff := cmp.Diff(tc.want, fields(err)); diff != "" {
				t.Fatalf("refusal (-want +got):\n%s", diff)
			}
			if tc.line != nil {
				if diff := cmp.Diff(*tc.line, r.Lines[1]); diff != "" {
					t.Fatalf("line (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCheckInvoiceInputDefaults(t *testing.T) {
	r, err := receivables.CheckInvoiceInput(receivablesv1.InvoiceInput{DebtorID: "3f0e7c1a-5b2d-4c8e-9a61-2d4b6f8a0c1e", InvoiceDate: "2026-03-01",
		Notes: "  Danke  ", LineItems: []receivablesv1.LineItemInput{line("a", "3", "33.3333"), line("b", "1", "0.01")}}, taxCodes())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.Currency, " ", r.DeliveryDate, " ", r.Notes, " ", r.TotalNet, " ", r.TotalTax, " ", r.TotalGross)
	// 3 × 33.3333 = 99.9999 -> 100.00 net, + 0.01; VAT 19 % of 100.01 = 19.0019 -> 19.00.
	if want := "EUR 2026-03-01 Danke 100.01 19 119.01"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// issued computes the document of r as issuing does.
func issued(t *testing.T, lines []receivablesv1.LineItemInput, currency string, rate *money.Amount, vatID string) (einvoice.Document, receivables.InvoiceRecord) {
	t.Helper()
	in := receivablesv1.InvoiceInput{DebtorID: "3f0e7c1a-5b2d-4c8e-9a61-2d4b6f8a0c1e", InvoiceDate: "2026-03-01", DueDate: "2026-03-31",
		Currency: currency, ExchangeRate: rate, ExemptionReason: "Steuerfrei nach § 4 Nr. 8 UStG", LineItems: lines}
	r, err := receivables.CheckInvoiceInput(in, taxCodes())
	if err != nil {
		t.Fatal(err)
	}
	d := receivables.Debtor{Name: "Dupont SARL", Address: receivablesv1.Address{Street: "1 Rue de Rivoli", Zip: "75001", City: "Paris", Country: "FR"}}
	if vatID != "" {
		d.VATID = &vatID
	}
	tenant := identityv1.Tenant{CompanyName: "Muster", LegalForm: "GmbH", VATID: "DE123456789", Address: identityv1.Address{Street: "Lindenstr. 5", Zip: "10969", City: "Berlin", Country: "DE"}}
	doc := receivables.BuildDocument(r, "RE-2026-00001", d, tenant, receivablesv1.Settings{})
	if err := doc.Compute(); err != nil {
		t.Fatal(err)
	}
	return doc, r
}

func TestPostingLines(t *testing.T) {
	with := func(l receivablesv1.LineItemInput, f func(*receivablesv1.LineItemInput)) receivablesv1.LineItemInput {
		f(&l)
		return l
	}
	rate := func(r, cat string) func(*receivablesv1.LineItemInput) {
		return func(l *receivablesv1.LineItemInput) { l.TaxCode, l.TaxRate, l.TaxCategory = "", pamt(r), cat }
	}
	code := func(c string) func(*receivablesv1.LineItemInput) {
		return func(l *receivablesv1.LineItemInput) { l.TaxCode = c }
	}
	for _, tc := range []struct {
		name     string
		lines    []receivablesv1.LineItemInput
		currency string
		rate     *money.Amount
		want     []string
	}{
		{"19", []receivablesv1.LineItemInput{line("a", "10", "120")}, "EUR", nil, []string{"1200>4400 1428.00 USt19"}},
		{"7", []receivablesv1.LineItemInput{with(line("a", "3", "33.3333"), code("USt7"))}, "EUR", nil, []string{"1200>4300 107.00 USt7"}},
		{"mixed rates: one line per rate, VAT per group",
			[]receivablesv1.LineItemInput{line("a", "1", "0.05"), line("b", "1", "0.05"), with(line("c", "1", "10"), rate("7", "")), with(line("d", "1", "50"), code("STF0"))},
			"EUR", nil, []string{"1200>4400 0.12 USt19", "1200>4300 10.70 USt7", "1200>4100 50.00 STF0"}},
		{"Z", []receivablesv1.LineItemInput{with(line("a", "1", "100"), rate("0", "Z"))}, "EUR", nil, []string{"1200>4200 100.00 "}},
		{"K", []receivablesv1.LineItemInput{with(line("a", "1", "5000"), rate("0", "K"))}, "EUR", nil, []string{"1200>4125 5000.00 IGL0"}},
		{"AE", []receivablesv1.LineItemInput{with(line("a", "8", "95"), rate("0", "AE"))}, "EUR", nil, []string{"1200>4337 760.00 "}},
		{"G in USD: EUR rounded, the USD amount kept", []receivablesv1.LineItemInput{with(line("a", "100", "12.345"), code("AUS0"))}, "USD", pamt("0.9214"),
			[]string{"1200>4120 1137.47 AUS0 USD 1234.50"}},
		{"a zero line posts nothing", []receivablesv1.LineItemInput{line("a", "1", "10"), with(line("free", "1", "0"), code("USt7"))}, "EUR", nil,
			[]string{"1200>4400 11.90 USt19"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, r := issued(t, tc.lines, tc.currency, tc.rate, "FR40303265045")
			var got []string
			for _, l := range receivables.PostingLines(doc, r.Lines, "1200", "RE-2026-00001") {
				s := fmt.Sprintf("%s>%s %s %s", l.AccountDebit, l.AccountCredit, l.Amount.StringFixed(2), l.TaxCode)
				if l.FXAmount != nil {
					s += " " + l.FXCurrency + " " + l.FXAmount.StringFixed(2)
				}
				if l.ExternalReference != "RE-2026-00001" {
					t.Errorf("line without the invoice number: %+v", l)
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("posting lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRevenueTable(t *testing.T) {
	var got []string
	for _, c := range []struct {
		cat  einvoice.TaxCategory
		rate string
	}{{"S", "19"}, {"S", "7"}, {"S", "16"}, {"Z", "0"}, {"E", "0"}, {"AE", "0"}, {"K", "0"}, {"G", "0"}} {
		r := receivables.Revenue(c.cat, dec(c.rate))
		got = append(got, fmt.Sprintf("%s %s: %s %s", c.cat, c.rate, r.Account, r.TaxCode))
	}
	want := []string{"S 19: 4400 USt19", "S 7: 4300 USt7", "S 16: 4200 ", "Z 0: 4200 ", "E 0: 4100 STF0", "AE 0: 4337 ", "K 0: 4125 IGL0", "G 0: 4120 AUS0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("revenue accounts (-want +got):\n%s", diff)
	}
}

func TestBuildDocumentWithoutPaymentAccount(t *testing.T) {
	// Without an IBAN in the settings an EN 16931 invoice names no payment means.
	doc, _ := issued(t, []receivablesv1.LineItemInput{line("a", "1", "1")}, "EUR", nil, "")
	if doc.Profile != einvoice.ProfileEN16931 || doc.PaymentMeans != nil {
		t.Fatalf("profile %s, payment means %+v", doc.Profile, doc.PaymentMeans)
	}
}

func TestInvoiceStatus(t *testing.T) {
	base := receivables.InvoiceRecord{State: "posted", TotalGross: dec("100"), PaidAmount: decimal.Zero, CreditedAmount: decimal.Zero, DueDate: "2026-03-31", Today: "2026-03-15"}
	for _, tc := range []struct {
		name string
		f    func(*receivables.InvoiceRecord)
		want string
	}{
		{"draft", func(r *receivables.InvoiceRecord) { r.State = "draft" }, "draft"},
		{"pending", func(r *receivables.InvoiceRecord) { r.State = "pending" }, "pending"},
		{"void", func(r *receivables.InvoiceRecord) { r.State = "void" }, "void"},
		{"open", func(*receivables.InvoiceRecord) {}, "open"},
		{"due today is not overdue", func(r *receivables.InvoiceRecord) { r.Today = "2026-03-31" }, "open"},
		{"overdue", func(r *receivables.InvoiceRecord) { r.Today = "2026-04-01" }, "overdue"},
		{"partially paid", func(r *receivables.InvoiceRecord) { r.PaidAmount = dec("40") }, "partially_paid"},
		{"partially credited and overdue", func(r *receivables.InvoiceRecord) { r.CreditedAmount = dec("40"); r.Today = "2026-04-01" }, "overdue"},
		{"paid", func(r *receivables.InvoiceRecord) { r.PaidAmount = dec("60"); r.CreditedAmount = dec("40") }, "paid"},
		{"overpaid", func(r *receivables.InvoiceRecord) { r.PaidAmount = dec("101"); r.Today = "2026-05-01" }, "paid"},
	} {
		r := base
		tc.f(&r)
		if got := receivables.InvoiceStatus(r); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestDetailOfADraft(t *testing.T) {
	r, err := receivables.CheckInvoiceInput(receivablesv1.InvoiceInput{DebtorID: "3f0e7c1a-5b2d-4c8e-9a61-2d4b6f8a0c1e", InvoiceDate: "2026-03-01",
		LineItems: []receivablesv1.LineItemInput{line("a", "2", "10"), {Description: "b", Quantity: amt("1"), UnitPrice: amt("10"), TaxRate: pamt("7")}}}, taxCodes())
	if err != nil {
		t.Fatal(err)
	}
	r.State, r.ID = "draft", "i-1"
	b, err := json.Marshal(receivables.Detail(r).TaxBreakdown)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"tax_category":"S","tax_rate":19.00,"basis":20.00,"tax":3.80},{"tax_category":"S","tax_rate":7.00,"basis":10.00,"tax":0.70}]`; string(b) != want {
		t.Fatalf("breakdown %s", b)
	}
}
