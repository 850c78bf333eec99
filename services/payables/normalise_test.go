package payables_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables"
)

func a(s string) money.Amount   { return money.MustParse(s) }
func ap(s string) *money.Amount { v := a(s); return &v }
func sp(s string) *string       { return &s }

var amounts = cmp.Comparer(func(x, y money.Amount) bool { return x.Equal(y.Decimal) })

func TestDueDate(t *testing.T) {
	for _, tc := range []struct{ date, terms, want string }{
		{"2026-03-02", "", "2026-04-01"},
		{"2026-03-02", "zahlbar innerhalb von 14 Tagen ohne Abzug", "2026-03-16"},
		{"2026-03-02", "Zahlungsziel: 10 Tage", "2026-03-12"},
		{"2026-03-02", "Payment terms: net 45", "2026-04-16"},
		{"2026-03-02", "60 days", "2026-05-01"},
		{"2026-03-02", "sofort", "2026-04-01"},
		{"2026-03-02", "999 Tage", "2026-04-01"},
		{"kein Datum", "", ""},
	} {
		if got := payables.DueDate(tc.date, tc.terms); got != tc.want {
			t.Errorf("DueDate(%s, %q) = %s, want %s", tc.date, tc.terms, got, tc.want)
		}
	}
}

func TestNormalise(t *testing.T) {
	vendor := payables.Vendor{ID: "9f1c1d3e-8b0a-4a57-9a43-1f7b5a0c2d11", Name: "Nord GmbH", DefaultAccount: sp("6815")}
	for _, tc := range []struct {
		name   string
		ocr    payablesv1.OCRResult
		vendor *payables.Vendor
		want   payablesv1.ReviewInvoice
	}{
		{"line items, two rates, the vendor's account", payablesv1.OCRResult{VendorName: "Nord", InvoiceNumber: " R-1 ", InvoiceDate: sp("2026-03-02"),
			DueDate: sp("2026-03-20"), Currency: "eur", TotalGross: ap("172.50"),
			TaxBreakdown: []payablesv1.TaxLine{{Rate: a("19"), Net: a("100"), Tax: a("19")}, {Rate: a("7"), Net: a("50"), Tax: a("3.50")}},
			LineItems: []payablesv1.OCRLine{{Description: "Papier", TaxRate: ap("19"), LineTotal: ap("60")}, {Description: "Toner", TaxRate: ap("19"), LineTotal: ap("40")},
				{Description: "Buch", TaxRate: ap("7"), LineTotal: ap("50")}}}, &vendor,
			payablesv1.ReviewInvoice{VendorID: &vendor.ID, VendorName: "Nord GmbH", InvoiceNumber: "R-1", InvoiceDate: sp("2026-03-02"), DueDate: sp("2026-03-20"),
				Currency: "EUR", StatedGross: ap("172.50"),
				Lines: []payablesv1.ReviewLine{{Description: "Papier", Account: "6815", TaxRate: a("19"), Net: a("60")},
					{Description: "Toner", Account: "6815", TaxRate: a("19"), Net: a("40")}, {Description: "Buch", Account: "6815", TaxRate: a("7"), Net: a("50")}},
				TaxBreakdown: []payablesv1.ReviewTaxGroup{{Rate: a("19"), Net: a("100"), Tax: a("19"), Gross: a("119")}, {Rate: a("7"), Net: a("50"), Tax: a("3.5"), Gross: a("53.5")}},
				TotalNet:     a("150"), TotalTax: a("22.5"), TotalGross: a("172.5")}},
		{"only totals, no vendor: 6300, rate from the totals, due in 30 days", payablesv1.OCRResult{VendorName: "Unbekannt", InvoiceDate: sp("2026-03-02"),
			TotalNet: ap("200"), TotalTax: ap("14")}, nil,
			payablesv1.ReviewInvoice{VendorName: "Unbekannt", InvoiceDate: sp("2026-03-02"), DueDate: sp("2026-04-01"), Currency: "EUR",
				Lines:        []payablesv1.ReviewLine{{Description: "Rechnung", Account: "6300", TaxRate: a("7"), Net: a("200")}},
				TaxBreakdown: []payablesv1.ReviewTaxGroup{{Rate: a("7"), Net: a("200"), Tax: a("14"), Gross: a("214")}},
				TotalNet:     a("200"), TotalTax: a("14"), TotalGross: a("214")}},
		{"reverse charge by its note", payablesv1.OCRResult{InvoiceNumber: "EU-7", InvoiceDate: sp("2026-03-02"), Notes: []string{"Steuerschuldnerschaft des Leistungsempfängers"},
			TaxBreakdown: []payablesv1.TaxLine{{Rate: a("0"), Net: a("1000"), Tax: a("0"), Category: "AE"}}}, nil,
			payablesv1.ReviewInvoice{InvoiceNumber: "EU-7", InvoiceDate: sp("2026-03-02"), DueDate: sp("2026-04-01"), Currency: "EUR", ReverseCharge: true,
				Lines:        []payablesv1.ReviewLine{{Description: "Rechnung EU-7", Account: "6300", TaxRate: a("0"), Net: a("1000")}},
				TaxBreakdown: []payablesv1.ReviewTaxGroup{{Rate: a("0"), Net: a("1000"), Tax: a("0"), Gross: a("1000")}},
				TotalNet:     a("1000"), TotalTax: a("0"), TotalGross: a("1000")}},
		{"a scan's table read in part: the totals per rate instead", payablesv1.OCRResult{InvoiceNumber: "R-2", InvoiceDate: sp("2026-03-02"),
			TotalNet: ap("150"), TotalTax: ap("22.50"), TotalGross: ap("172.50"),
			TaxBreakdown: []payablesv1.TaxLine{{Rate: a("19"), Net: a("100"), Tax: a("19")}, {Rate: a("7"), Net: a("50"), Tax: a("3.50")}},
			LineItems:    []payablesv1.OCRLine{{Description: "Papier", TaxRate: ap("19"), LineTotal: ap("60")}, {Description: "Buch", TaxRate: ap("7"), LineTotal: ap("50")}}}, nil,
			payablesv1.ReviewInvoice{InvoiceNumber: "R-2", InvoiceDate: sp("2026-03-02"), DueDate: sp("2026-04-01"), Currency: "EUR", StatedGross: ap("172.50"),
				Lines: []payablesv1.ReviewLine{{Description: "Rechnung R-2", Account: "6300", TaxRate: a("19"), Net: a("100")},
					{Description: "Rechnung R-2", Account: "6300", TaxRate: a("7"), Net: a("50")}},
				TaxBreakdown: []payablesv1.ReviewTaxGroup{{Rate: a("19"), Net: a("100"), Tax: a("19"), Gross: a("119")}, {Rate: a("7"), Net: a("50"), Tax: a("3.5"), Gross: a("53.5")}},
				TotalNet:     a("150"), TotalTax: a("22.5"), TotalGross: a("172.5")}},
		{"nothing readable", payablesv1.OCRResult{InvoiceDate: sp("2026-02-30")}, nil,
			payablesv1.ReviewInvoice{Currency: "EUR", Lines: []payablesv1.ReviewLine{}, TaxBreakdown: []payablesv1.ReviewTaxGroup{},
				TotalNet: a("0"), TotalTax: a("0"), TotalGross: a("0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, payables.Normalise(tc.ocr, tc.vendor), amounts); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestIssuesAndQueueState(t *testing.T) {
	id := "9f1c1d3e-8b0a-4a57-9a43-1f7b5a0c2d11"
	good := payablesv1.ReviewInvoice{VendorID: &id, InvoiceNumber: "R-1", InvoiceDate: sp("2026-03-02"), DueDate: sp("2026-04-01"), Currency: "EUR",
		Lines: []payablesv1.ReviewLine{{Account: "6300", TaxRate: a("19"), Net: a("100")}}}
	payables.Compute(&good, nil)
	bad := good
	bad.VendorID, bad.Currency, bad.StatedGross = nil, "USD", ap("120")
	bad.Lines = []payablesv1.ReviewLine{{Account: "6300", TaxRate: a("16"), Net: a("100")}}
	payables.Compute(&bad, nil)
	failed := &payablesv1.ComplianceCheck{IsInvoice: true, Checks: []payablesv1.CheckEntry{{Rule: "UStG 14(4) Nr. 4", Label: "Rechnungsnummer", Status: payablesv1.CheckMissing}}}
	strong := []payablesv1.DuplicateHint{{Kind: payablesv1.HintSameVendorNumber}}
	weak := []payablesv1.DuplicateHint{{Kind: payablesv1.HintSameAmountDate}}
	fields := func(is []payablesv1.Issue) []string {
		out := []string{}
		for _, i := range is {
			out = append(out, i.Field)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		inv       payablesv1.ReviewInvoice
		cc        *payablesv1.ComplianceCheck
		corrected bool
		hints     []payablesv1.DuplicateHint
		issues    []string
		state     string
	}{
		{"complete", good, nil, false, weak, []string{}, payablesv1.QueueApproval},
		{"a strong duplicate", good, nil, false, strong, []string{}, payablesv1.QueueException},
		{"not an invoice", good, &payablesv1.ComplianceCheck{}, false, nil, []string{}, payablesv1.QueueException},
		{"§14 failed", good, failed, false, nil, []string{"compliance_check"}, payablesv1.QueueCorrection},
		{"§14 failed, corrected since", good, failed, true, nil, []string{}, payablesv1.QueueApproval},
		{"wrong fields", bad, nil, false, nil, []string{"vendor_id", "currency", "lines[0].tax_rate", "total_gross"}, payablesv1.QueueCorrection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := payables.Issues(tc.inv, tc.cc, false, tc.corrected)
			if d := cmp.Diff(tc.issues, fields(is)); d != "" {
				t.Errorf("issues (-want +got):\n%s", d)
			}
			if got := payables.QueueState(is, tc.cc, tc.corrected, tc.hints); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
		})
	}
}

func TestPostingLines(t *testing.T) {
	inv := payablesv1.ReviewInvoice{Lines: []payablesv1.ReviewLine{{Account: "6815", TaxRate: a("19"), Net: a("60")}, {Account: "0650", TaxRate: a("19"), Net: a("40")},
		{Account: "6815", TaxRate: a("7"), Net: a("50")}, {Account: "6815", TaxRate: a("0"), Net: a("10")}}}
	payables.Compute(&inv, nil)
	want := []ledgerv1.Line{
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("71.40"), TaxCode: "VSt19", ExternalReference: "R-1"},
		{AccountDebit: "0650", AccountCredit: "3300", Amount: a("47.60"), TaxCode: "VSt19", ExternalReference: "R-1"},
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("53.50"), TaxCode: "VSt7", ExternalReference: "R-1"},
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("10"), ExternalReference: "R-1"},
	}
	if d := cmp.Diff(want, payables.PostingLines(inv, "3300", "R-1"), amounts); d != "" {
		t.Errorf("input VAT (-want +got):\n%s", d)
	}
	inv.ReverseCharge = true
	payables.Compute(&inv, nil)
	want = []ledgerv1.Line{
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("60"), TaxCode: "RC19", ExternalReference: "R-1"},
		{AccountDebit: "0650", AccountCredit: "3300", Amount: a("40"), TaxCode: "RC19", ExternalReference: "R-1"},
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("50"), TaxCode: "RC7", ExternalReference: "R-1"},
		{AccountDebit: "6815", AccountCredit: "3300", Amount: a("10"), TaxCode: "RC19", ExternalReference: "R-1"},
	}
	if d := cmp.Diff(want, payables.PostingLines(inv, "3300", "R-1"), amounts); d != "" {
		t.Errorf("reverse charge (-want +got):\n%s", d)
	}
}

func TestPaymentFromEvent(t *testing.T) {
	tenant, rec, intent := "9f1c1d3e-8b0a-4a57-9a43-1f7b5a0c2d11", "0b4e6a2c-3d5f-4e7a-8b9c-1d2e3f4a5b6c", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	e := bankv1.TransactionReconciled{TenantID: tenant, ReconciliationID: rec, TxDate: "2026-03-20", Allocations: []bankv1.Allocation{
		{IntentID: intent, CandidateKind: bankv1.CandidateOpenLiability, Amount: a("50"), Currency: "EUR"},
		{IntentID: intent, CandidateKind: bankv1.CandidateOpenLiability, Amount: a("19"), Currency: "EUR"},
		{IntentID: "2c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", CandidateKind: bankv1.CandidateOpenReceivable, Amount: a("5"), Currency: "EUR"},
	}}
	p, ok, err := payables.PaymentFromEvent("ev", bankv1.EventTransactionUnmatched, e)
	if err != nil || !ok || !p.Release || len(p.Allocations) != 1 || !p.Allocations[0].Amount.Equal(a("69").Decimal) {
		t.Fatalf("payment %+v %v %v", p, ok, err)
	}
	if _, ok, _ := payables.PaymentFromEvent("ev", "evt.bank.v1.transactions_imported", e); ok {
		t.Error("an import is no payment")
	}
	e.Allocations[0].Amount = a("-1")
	if _, _, err := payables.PaymentFromEvent("ev", bankv1.EventTransactionReconciled, e); err == nil {
		t.Error("a negative allocation accepted")
	}
}
