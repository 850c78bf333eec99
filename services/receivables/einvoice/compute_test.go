package einvoice_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

var decimalEq = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func sample(t *testing.T, name string) einvoice.Document {
	t.Helper()
	for _, s := range einvoicetest.Samples() {
		if s.Name == name {
			return s.Doc
		}
	}
	t.Fatalf("no sample %q", name)
	return einvoice.Document{}
}

func TestComputeTotals(t *testing.T) {
	tiny := einvoicetest.Invoice19()
	// Three lines whose taxes round to 0.00 each: BR-CO-17 rounds the
	// group's tax once (0.15 * 7 % = 0.0105 -> 0.01), so the total is 0.01.
	tiny.Lines = []einvoice.Line{
		{ID: "1", Description: "a", Quantity: dec("1"), UnitCode: "C62", UnitPrice: dec("0.05"), TaxCategory: "S", TaxRate: dec("7")},
		{ID: "2", Description: "b", Quantity: dec("1"), UnitCode: "C62", UnitPrice: dec("0.05"), TaxCategory: "S", TaxRate: dec("7")},
		// 7.00 and 7 are one rate, one group.
		{ID: "3", Description: "c", Quantity: dec("1"), UnitCode: "C62", UnitPrice: dec("0.045"), TaxCategory: "S", TaxRate: dec("7.00")},
	}
	tests := []struct {
		name      string
		doc       einvoice.Document
		nets      []string
		breakdown []einvoice.TaxSubtotal
		totals    einvoice.Totals
	}{
		{
			name: "19 %", doc: sample(t, "invoice-19"),
			// 3 * 333.3333 = 999.9999 rounds half-up to 1000.00.
			nets: []string{"1500.00", "1000.00"},
			breakdown: []einvoice.TaxSubtotal{
				{Category: "S", Rate: dec("19"), Basis: dec("2500.00"), Tax: dec("475.00")},
			},
			totals: einvoice.Totals{LineTotal: dec("2500"), TaxBasis: dec("2500"), Tax: dec("475"),
				Grand: dec("2975"), DuePayable: dec("2975")},
		},
		{
			name: "19 %, 7 %, 0 % with a line discount", doc: sample(t, "mixed-19-7-0"),
			// 0.755 kg * 18.99 = 14.33745 -> 14.34.
			nets: []string{"449.99", "79.80", "14.34", "4.95", "420.00"},
			breakdown: []einvoice.TaxSubtotal{
				{Category: "S", Rate: dec("19"), Basis: dec("454.94"), Tax: dec("86.44")},
				{Category: "S", Rate: dec("7"), Basis: dec("94.14"), Tax: dec("6.59")},
				{Category: "Z", Rate: dec("0"), Basis: dec("420.00"), Tax: dec("0")},
			},
			totals: einvoice.Totals{LineTotal: dec("969.08"), TaxBasis: dec("969.08"), Tax: dec("93.03"),
				Grand: dec("1062.11"), DuePayable: dec("1062.11")},
		},
		{
			name: "USD with the VAT in EUR", doc: sample(t, "foreign-usd"),
			nets: []string{"7640.00"},
			breakdown: []einvoice.TaxSubtotal{
				{Category: "S", Rate: dec("19"), Basis: dec("7640"), Tax: dec("1451.60")},
			},
			// 1451.60 USD * 0.9214 EUR/USD = 1337.50424 EUR.
			totals: einvoice.Totals{LineTotal: dec("7640"), TaxBasis: dec("7640"), Tax: dec("1451.60"),
				Grand: dec("9091.60"), DuePayable: dec("9091.60"), TaxInTaxCurrency: dec("1337.50")},
		},
		{
			name: "intra-community supply", doc: sample(t, "intra-community"),
			nets: []string{"4996.00", "680.40"},
			breakdown: []einvoice.TaxSubtotal{
				{Category: "K", Rate: dec("0"), Basis: dec("5676.40"), Tax: dec("0"),
					ExemptionReason:     "Intra-Community supply - Steuerfreie innergemeinschaftliche Lieferung",
					ExemptionReasonCode: "VATEX-EU-IC"},
			},
			totals: einvoice.Totals{LineTotal: dec("5676.40"), TaxBasis: dec("5676.40"), Tax: dec("0"),
				Grand: dec("5676.40"), DuePayable: dec("5676.40")},
		},
		{
			name: "group tax rounded once", doc: tiny,
			// 0.045 rounds half-up to 0.05.
			nets: []string{"0.05", "0.05", "0.05"},
			breakdown: []einvoice.TaxSubtotal{
				{Category: "S", Rate: dec("7"), Basis: dec("0.15"), Tax: dec("0.01")},
			},
			totals: einvoice.Totals{LineTotal: dec("0.15"), TaxBasis: dec("0.15"), Tax: dec("0.01"),
				Grand: dec("0.16"), DuePayable: dec("0.16")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.doc
			if err := d.Compute(); err != nil {
				t.Fatal(err)
			}
			var nets []string
			for _, l := range d.Lines {
				nets = append(nets, einvoice.Amount(l.NetAmount))
			}
			if diff := cmp.Diff(tc.nets, nets); diff != "" {
				t.Errorf("line nets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.breakdown, d.TaxBreakdown, decimalEq); diff != "" {
				t.Errorf("breakdown (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.totals, d.Totals, decimalEq); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			// Compute is idempotent: the service may call it before CII does.
			again := d
			if err := again.Compute(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d.Totals, again.Totals, decimalEq); diff != "" {
				t.Errorf("second Compute changed totals:\n%s", diff)
			}
		})
	}
}

func TestComputeRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d *einvoice.Document)
		fields []string
	}{
		{"no number", func(d *einvoice.Document) { d.Number = " " }, []string{"number"}},
		{"bad issue date", func(d *einvoice.Document) { d.IssueDate = "20.11.2026" }, []string{"issueDate"}},
		{"unknown type", func(d *einvoice.Document) { d.TypeCode = "384" }, []string{"typeCode"}},
		{"credit note without invoice", func(d *einvoice.Document) { d.TypeCode = einvoice.TypeCreditNote },
			[]string{"precedingInvoice.number"}},
		{"foreign currency without EUR tax currency", func(d *einvoice.Document) { d.Currency = "USD" },
			[]string{"taxCurrency"}},
		{"tax currency without rate", func(d *einvoice.Document) { d.Currency, d.TaxCurrency = "CHF", "EUR" },
			[]string{"exchangeRate"}},
		{"no time of supply", func(d *einvoice.Document) { d.DeliveryDate = "" }, []string{"deliveryDate"}},
		{"period backwards", func(d *einvoice.Document) {
			d.DeliveryDate, d.ServicePeriod = "", &einvoice.Period{Start: "2026-11-30", End: "2026-11-01"}
		}, []string{"servicePeriod.end"}},
		{"neither due date nor terms", func(d *einvoice.Document) { d.DueDate, d.PaymentTerms = "", "" },
			[]string{"dueDate"}},
		{"IBAN check digits", func(d *einvoice.Document) { d.PaymentMeans.IBAN = "DE03120300000000202051" },
			[]string{"paymentMeans.iban"}},
		{"seller without tax ID", func(d *einvoice.Document) { d.Seller.VATID, d.Seller.TaxNumber = "", "" },
			[]string{"seller.vatId"}},
		{"buyer without address", func(d *einvoice.Document) { d.Buyer.Street, d.Buyer.Country = "", "Deutschland" },
			[]string{"buyer.country", "buyer.street"}},
		{"control character", func(d *einvoice.Document) { d.Buyer.Name = "Kunden\x00AG" }, []string{"buyer.name"}},
		{"invalid UTF-8", func(d *einvoice.Document) { d.Lines[0].Description = "Bro\xfcschüre" }, []string{"lines[0].description"}},
		{"absurd quantity", func(d *einvoice.Document) { d.Lines[0].Quantity = dec("1e15") }, []string{"lines[0].quantity"}},
		{"no lines", func(d *einvoice.Document) { d.Lines = nil }, []string{"lines"}},
		{"duplicate line id", func(d *einvoice.Document) { d.Lines[1].ID = "1" }, []string{"lines[1].id"}},
		{"zero quantity", func(d *einvoice.Document) { d.Lines[0].Quantity = decimal.Zero }, []string{"lines[0].quantity"}},
		{"price with 5 decimals", func(d *einvoice.Document) { d.Lines[0].UnitPrice = dec("1.00001") },
			[]string{"lines[0].unitPrice"}},
		{"negative price", func(d *einvoice.Document) { d.Lines[0].UnitPrice = dec("-1") }, []string{"lines[0].unitPrice"}},
		{"bad unit code", func(d *einvoice.Document) { d.Lines[0].UnitCode = "Stück" }, []string{"lines[0].unitCode"}},
		{"standard rate 0", func(d *einvoice.Document) { d.Lines[0].TaxRate = decimal.Zero }, []string{"lines[0].taxRate"}},
		{"zero rated with a rate", func(d *einvoice.Document) { d.Lines[0].TaxCategory = einvoice.CategoryZero },
			[]string{"lines[0].taxRate"}},
		{"unknown category", func(d *einvoice.Document) { d.Lines[0].TaxCategory = "O" }, []string{"lines[0].taxCategory"}},
		{"exempt without reason", func(d *einvoice.Document) {
			d.Lines[0].TaxCategory, d.Lines[0].TaxRate = einvoice.CategoryExempt, decimal.Zero
		}, []string{"exemptionReason"}},
		{"reverse charge without buyer VAT ID", func(d *einvoice.Document) {
			d.Buyer.VATID = ""
			d.Lines[0].TaxCategory, d.Lines[0].TaxRate = einvoice.CategoryReverseCharge, decimal.Zero
		}, []string{"buyer.vatId"}},
		{"intra-community supply within Germany", func(d *einvoice.Document) {
			d.Lines[0].TaxCategory, d.Lines[0].TaxRate = einvoice.CategoryIntraCommunity, decimal.Zero
		}, []string{"buyer.country"}},
		{"XRechnung without Leitweg-ID, contact, buyer e-mail", func(d *einvoice.Document) {
			d.Profile = einvoice.ProfileXRechnung
			d.Seller.ContactName, d.Seller.Phone = "", ""
		}, []string{"buyer.email", "buyerReference", "seller.contactName", "seller.phone"}},
		{"XRechnung without payment means", func(d *einvoice.Document) {
			*d = sample(t, "xrechnung")
			d.PaymentMeans = nil
		}, []string{"paymentMeans"}},
		{"XRechnung with a blank buyer reference", func(d *einvoice.Document) {
			*d = sample(t, "xrechnung")
			d.BuyerReference = " "
		}, []string{"buyerReference"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := einvoicetest.Invoice19()
			tc.mutate(&d)
			err := d.Compute()
			if !errs.Is(err, errs.InvalidInput) {
				t.Fatalf("want %s, got %v", errs.InvalidInput, err)
			}
			var fields []string
			for _, det := range errs.As(err).Details {
				if det.Issue == "" {
					t.Errorf("detail for %s says nothing", det.Field)
				}
				fields = append(fields, det.Field)
			}
			sort.Strings(fields)
			if diff := cmp.Diff(tc.fields, fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s\n%v", diff, err)
			}
			if !d.Totals.Grand.IsZero() {
				t.Errorf("a rejected document got totals")
			}
		})
	}
}

func TestCIIDoesNotModifyTheCallersDocument(t *testing.T) {
	d := einvoicetest.Invoice19()
	if _, err := einvoice.CII(d); err != nil {
		t.Fatal(err)
	}
	if !d.Lines[0].NetAmount.IsZero() || d.TaxBreakdown != nil {
		t.Fatalf("CII wrote into the caller's document: %+v", d.Lines[0])
	}
}
