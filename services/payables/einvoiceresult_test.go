package payables_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables"
)

// ocrSummary is what a test compares of an OCR result and its checks.
type ocrSummary struct {
	Source, Vendor, VATID, IBAN, Number string
	Date, Due                           string
	Net, Tax, Gross                     string
	TaxLines, Lines                     int
	CreditNote                          bool
	DocumentType                        string
	Passed, Total                       int
	Missing                             []string
}

func summarize(r payablesv1.OCRResult, c payablesv1.ComplianceCheck) ocrSummary {
	s := ocrSummary{Source: r.Source, Vendor: r.VendorName, VATID: r.VendorVATID, IBAN: r.VendorIBAN, Number: r.InvoiceNumber,
		TaxLines: len(r.TaxBreakdown), Lines: len(r.LineItems), CreditNote: r.IsCreditNote,
		DocumentType: c.DocumentType, Passed: c.Passed, Total: c.Total}
	if r.InvoiceDate != nil {
		s.Date = *r.InvoiceDate
	}
	if r.DueDate != nil {
		s.Due = *r.DueDate
	}
	s.Net, s.Tax, s.Gross = r.TotalNet.StringFixed(2), r.TotalTax.StringFixed(2), r.TotalGross.StringFixed(2)
	for _, e := range c.Checks {
		if e.Status != payablesv1.CheckPassed {
			s.Missing = append(s.Missing, e.Rule+" "+e.Label)
		}
	}
	return s
}

func TestEInvoiceExtractor(t *testing.T) {
	tests := []struct {
		file string
		want ocrSummary
	}{
		{"ubl-creditnote-noprefix.xml", ocrSummary{Source: "einvoice_ubl", Vendor: "Bürobedarf Müller GmbH", VATID: "DE811111111",
			IBAN: "DE02120300000000202051", Number: "GS-2026-0042", Date: "2026-03-10", Due: "2026-03-24",
			Net: "150.00", Tax: "22.50", Gross: "172.50", TaxLines: 2, Lines: 2, CreditNote: true, DocumentType: "credit_note",
			Passed: 7, Total: 7}},
		// MINIMUM carries no lines, no tax breakdown and no buyer
		// address: the checks say which §14 fields are missing.
		{"zugferd-minimum-rechnung.xml", ocrSummary{Source: "einvoice_cii", Vendor: "Lieferant GmbH", VATID: "DE123456789",
			Number: "471102", Date: "2020-03-05", Net: "198.00", Tax: "37.62", Gross: "235.62", DocumentType: "invoice", Passed: 5, Total: 7,
			Missing: []string{"UStG 14(4) Nr. 1 Name und Anschrift des Leistungsempfängers", "UStG 14(4) Nr. 8 Entgelt und Steuersatz bzw. Steuerbefreiung"}}},
		{"mustang-EN16931_Einfach.pdf", ocrSummary{Source: "zugferd_pdf", Vendor: "Lieferant GmbH", VATID: "DE123456789",
			Number: "471102", Date: "2024-11-15", Net: "473.00", Tax: "56.87", Gross: "529.87", TaxLines: 2, Lines: 2,
			DocumentType: "invoice", Passed: 7, Total: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("einvoicein", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			r, c, err := payables.EInvoiceExtractor{}.Extract(context.Background(), data, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(r, c)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.Compliant != (c.Passed == c.Total) || !c.IsInvoice {
				t.Errorf("compliance %+v", c)
			}
		})
	}
	// What is no e-invoice is refused as the client's fault.
	for _, in := range []string{"", "%PDF-1.4\n%%EOF", "<html/>"} {
		if _, _, err := (payables.EInvoiceExtractor{}).Extract(context.Background(), []byte(in), "application/pdf"); !errs.Is(err, errs.InvalidInput) {
			t.Errorf("Extract(%q) = %v, want INVALID_INPUT", in, err)
		}
	}
}
