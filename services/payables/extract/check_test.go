package extract

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
)

func TestCheck(t *testing.T) {
	s := func(v string) *string { return &v }
	m := func(v string) *money.Amount { a := money.MustParse(v); return &a }
	addr := &payablesv1.Address{Street: "Hauptstraße 1", Zip: "10115", City: "Berlin", Country: "DE"}
	line := []payablesv1.OCRLine{{Description: "Beratung", Quantity: m("1"), LineTotal: m("1000")}}
	full := func() payablesv1.OCRResult {
		return payablesv1.OCRResult{
			VendorName: "Lieferant GmbH", VendorAddress: addr, VendorVATID: "DE136695976",
			BuyerName: "Kunde AG", BuyerAddress: addr, InvoiceNumber: "R-1", InvoiceDate: s("2026-01-10"),
			DeliveryDate: s("2026-01-09"), TotalNet: m("1000"), TotalTax: m("190"), TotalGross: m("1190"),
			TaxBreakdown: []payablesv1.TaxLine{{Rate: money.MustParse("19"), Net: money.MustParse("1000"), Tax: money.MustParse("190"), Category: "S"}},
			LineItems:    line, Source: SourcePDFText, RawMarkdown: "Rechnung",
		}
	}
	cases := []struct {
		name    string
		edit    func(*payablesv1.OCRResult)
		docType string
		want    map[string]string // rule → status, only the rules named
	}{
		{"complete", func(*payablesv1.OCRResult) {}, "invoice", map[string]string{
			RuleSupplier: "passed", RuleRecipient: "passed", RuleTaxID: "passed", RuleDate: "passed", RuleNumber: "passed",
			RuleGoods: "passed", RuleDelivery: "passed", RuleNetByRate: "passed", RuleTax: "passed", RuleReverse: "not_applicable",
		}},
		{"invoice date alone is no delivery date", func(r *payablesv1.OCRResult) { r.DeliveryDate = nil }, "invoice",
			map[string]string{RuleDelivery: "missing"}},
		{"service period", func(r *payablesv1.OCRResult) {
			r.DeliveryDate, r.ServicePeriod = nil, &payablesv1.Period{Start: "2026-01-01", End: "2026-01-31"}
		}, "invoice", map[string]string{RuleDelivery: "passed"}},
		{"invalid VAT ID, no tax number", func(r *payablesv1.OCRResult) { r.VendorVATID = "DE12345" }, "invoice",
			map[string]string{RuleTaxID: "failed"}},
		{"tax number instead of VAT ID", func(r *payablesv1.OCRResult) { r.VendorVATID, r.VendorTaxID = "", "30/123/45678" }, "invoice",
			map[string]string{RuleTaxID: "passed"}},
		{"supplier without address", func(r *payablesv1.OCRResult) { r.VendorAddress = nil }, "invoice",
			map[string]string{RuleSupplier: "missing"}},
		{"supplier with city only", func(r *payablesv1.OCRResult) { r.VendorAddress = &payablesv1.Address{City: "Berlin"} }, "invoice",
			map[string]string{RuleSupplier: "failed"}},
		{"nets by rate do not add up", func(r *payablesv1.OCRResult) { r.TaxBreakdown[0].Net = money.MustParse("900") }, "invoice",
			map[string]string{RuleNetByRate: "failed"}},
		{"zero tax without note", func(r *payablesv1.OCRResult) {
			r.TaxBreakdown = []payablesv1.TaxLine{{Rate: money.Zero, Net: money.MustParse("1000"), Tax: money.Zero}}
			r.TotalTax, r.TotalGross = m("0"), m("1000")
		}, "invoice", map[string]string{RuleTax: "failed", RuleReverse: "not_applicable"}},
		{"reverse charge (AE) without note", func(r *payablesv1.OCRResult) {
			r.TaxBreakdown = []payablesv1.TaxLine{{Rate: money.Zero, Net: money.MustParse("1000"), Tax: money.Zero, Category: "AE"}}
			r.TotalTax, r.TotalGross = m("0"), m("1000")
		}, "invoice", map[string]string{RuleTax: "failed", RuleReverse: "failed"}},
		{"reverse charge with note", func(r *payablesv1.OCRResult) {
			r.TaxBreakdown = []payablesv1.TaxLine{{Rate: money.Zero, Net: money.MustParse("1000"), Tax: money.Zero, Category: "AE"}}
			r.TotalTax, r.TotalGross = m("0"), m("1000")
			r.Notes = []string{"Steuerschuldnerschaft des Leistungsempfängers"}
		}, "invoice", map[string]string{RuleTax: "passed", RuleReverse: "passed"}},
		{"buyer abroad, no tax, no note", func(r *payablesv1.OCRResult) {
			r.TaxBreakdown = nil
			r.TotalTax, r.TotalGross = m("0"), m("1000")
			r.BuyerAddress = &payablesv1.Address{Street: "Rue 1", Zip: "75001", City: "Paris", Country: "FR"}
		}, "invoice", map[string]string{RuleTax: "missing", RuleReverse: "failed"}},
		{"exempt with note", func(r *payablesv1.OCRResult) {
			r.TaxBreakdown = []payablesv1.TaxLine{{Rate: money.Zero, Net: money.MustParse("1000"), Tax: money.Zero, Category: "E"}}
			r.TotalTax, r.TotalGross = m("0"), m("1000")
			r.Notes = []string{"Steuerfrei nach § 4 Nr. 14 UStG"}
		}, "invoice", map[string]string{RuleTax: "passed", RuleReverse: "not_applicable"}},
		{"small amount", func(r *payablesv1.OCRResult) {
			r.TotalNet, r.TotalTax, r.TotalGross = m("100"), m("19"), m("119")
			r.TaxBreakdown[0].Net, r.TaxBreakdown[0].Tax = money.MustParse("100"), money.MustParse("19")
			r.BuyerName, r.BuyerAddress, r.InvoiceNumber, r.DeliveryDate, r.VendorVATID = "", nil, "", nil, ""
		}, "small_amount_invoice", map[string]string{
			"UStDV 33 Nr. 1": "passed", "UStDV 33 Nr. 2": "passed", "UStDV 33 Nr. 3": "passed", RuleSmallAmount: "passed",
			RuleRecipient: "not_applicable", RuleTaxID: "not_applicable", RuleNumber: "not_applicable", RuleDelivery: "not_applicable",
			RuleNetByRate: "not_applicable", RuleTax: "not_applicable", RuleReverse: "not_applicable",
		}},
		{"credit note", func(r *payablesv1.OCRResult) { r.IsCreditNote = true }, "credit_note", map[string]string{RuleDate: "passed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := full()
			c.edit(&r)
			check := Check(r, nil)
			if check.DocumentType != c.docType || !check.IsInvoice {
				t.Errorf("document type %s is_invoice %v, want %s", check.DocumentType, check.IsInvoice, c.docType)
			}
			got := map[string]string{}
			for rule := range c.want {
				got[rule] = statuses(check)[rule]
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("statuses (-want +got):\n%s", d)
			}
			// The counts follow the entries.
			passed, total, compliant := 0, 0, true
			for _, e := range check.Checks {
				switch e.Status {
				case payablesv1.CheckPassed:
					passed++
					total++
				case payablesv1.CheckFailed, payablesv1.CheckMissing:
					total++
					compliant = false
				}
			}
			if check.Passed != passed || check.Total != total || check.Compliant != compliant {
				t.Errorf("counts %d/%d compliant %v, entries say %d/%d %v", check.Passed, check.Total, check.Compliant, passed, total, compliant)
			}
		})
	}

	t.Run("not an invoice", func(t *testing.T) {
		got := Check(payablesv1.OCRResult{RawMarkdown: "Einladung zur Versammlung", Source: SourcePDFText}, nil)
		if d := cmp.Diff(payablesv1.ComplianceCheck{DocumentType: "not_an_invoice"}, got); d != "" {
			t.Error(d)
		}
	})
	t.Run("EN 16931 entries count", func(t *testing.T) {
		en := []payablesv1.CheckEntry{{Rule: "EN16931 BR-CO-15", Status: payablesv1.CheckFailed}}
		got := Check(full(), en)
		if got.Compliant || got.Total != 10 || got.Passed != 9 {
			t.Errorf("with a failed EN 16931 rule: compliant %v %d/%d", got.Compliant, got.Passed, got.Total)
		}
	})
}
