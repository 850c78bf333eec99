package payables

import (
	"context"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables/einvoicein"
)

// EInvoiceExtractor is the Extractor of e-invoices only: CII and UBL XML
// and ZUGFeRD/Factur-X PDFs, read exactly by einvoicein. Anything else
// (a scan, a PDF without an invoice attached) is refused as INVALID_INPUT.
// It stands in until the OCR extraction library, which reads e-invoices
// the same way and everything else by text extraction and OCR, replaces
// it; nothing else depends on it.
type EInvoiceExtractor struct{}

// Extract implements Extractor.
func (EInvoiceExtractor) Extract(_ context.Context, data []byte, _ string) (payablesv1.OCRResult, payablesv1.ComplianceCheck, error) {
	inv, err := einvoicein.ReadBytes(data)
	if err != nil {
		return payablesv1.OCRResult{}, payablesv1.ComplianceCheck{}, err
	}
	r := payablesv1.OCRResult{
		VendorName: inv.Seller.Name, VendorVATID: inv.Seller.VATID, VendorTaxID: inv.Seller.TaxNumber,
		VendorIBAN: inv.Seller.IBAN, VendorBIC: inv.Seller.BIC,
		VendorAddress: address(inv.Seller.Street, inv.Seller.Zip, inv.Seller.City, inv.Seller.Country),
		BuyerName:     inv.Buyer.Name,
		BuyerAddress:  address(inv.Buyer.Street, inv.Buyer.Zip, inv.Buyer.City, inv.Buyer.Country),
		InvoiceNumber: inv.Number, InvoiceDate: day(inv.IssueDate), DueDate: day(inv.DueDate), DeliveryDate: day(inv.DeliveryDate),
		TotalNet: amount(inv.TotalNet), TotalTax: amount(inv.TotalTax), TotalGross: amount(inv.TotalGross),
		Currency: inv.Currency, PaymentTerms: inv.PaymentTerms, ReferenceText: inv.PaymentReference,
		IsCreditNote: inv.IsCreditNote, TaxBreakdown: []payablesv1.TaxLine{}, LineItems: []payablesv1.OCRLine{}, Notes: []string{},
	}
	if p := inv.DeliveryPeriod; !p.Start.IsZero() || !p.End.IsZero() {
		r.ServicePeriod = &payablesv1.Period{Start: deref(day(p.Start)), End: deref(day(p.End))}
	}
	switch {
	case inv.Format == einvoicein.FormatZUGFeRDPDF:
		r.Source = "zugferd_pdf"
	case inv.Syntax == einvoicein.SyntaxUBL:
		r.Source = "einvoice_ubl"
	default:
		r.Source = "einvoice_cii"
	}
	for _, t := range inv.TaxBreakdown {
		r.TaxBreakdown = append(r.TaxBreakdown, payablesv1.TaxLine{Rate: money.New(t.Rate), Net: money.New(t.Basis), Tax: money.New(t.Tax), Category: t.Category})
		if t.ExemptionReason != "" {
			r.Notes = append(r.Notes, t.ExemptionReason)
		}
	}
	for _, l := range inv.Lines {
		r.LineItems = append(r.LineItems, payablesv1.OCRLine{Description: l.Description, Quantity: amount(l.Quantity), Unit: l.Unit,
			UnitPrice: amount(l.UnitPrice), TaxRate: amount(l.TaxRate), LineTotal: amount(l.NetAmount)})
	}
	return r, compliance(r), nil
}

// compliance applies the §14 Abs. 4 UStG fields an e-invoice states or
// omits; the structured data leaves nothing to guess.
func compliance(r payablesv1.OCRResult) payablesv1.ComplianceCheck {
	present := func(ok bool) string {
		if ok {
			return payablesv1.CheckPassed
		}
		return payablesv1.CheckMissing
	}
	checks := []payablesv1.CheckEntry{
		{Rule: "UStG 14(4) Nr. 1", Label: "Name und Anschrift des leistenden Unternehmers", Status: present(r.VendorName != "" && r.VendorAddress != nil)},
		{Rule: "UStG 14(4) Nr. 1", Label: "Name und Anschrift des Leistungsempfängers", Status: present(r.BuyerName != "" && r.BuyerAddress != nil)},
		{Rule: "UStG 14(4) Nr. 2", Label: "Steuernummer oder USt-IdNr. des leistenden Unternehmers", Status: present(r.VendorVATID != "" || r.VendorTaxID != "")},
		{Rule: "UStG 14(4) Nr. 3", Label: "Ausstellungsdatum", Status: present(r.InvoiceDate != nil)},
		{Rule: "UStG 14(4) Nr. 4", Label: "Fortlaufende Rechnungsnummer", Status: present(strings.TrimSpace(r.InvoiceNumber) != "")},
		{Rule: "UStG 14(4) Nr. 8", Label: "Entgelt und Steuersatz bzw. Steuerbefreiung", Status: present(r.TotalNet != nil && len(r.TaxBreakdown) > 0)},
		{Rule: "UStG 14(4) Nr. 8", Label: "Auf das Entgelt entfallender Steuerbetrag", Status: present(r.TotalTax != nil)},
	}
	c := payablesv1.ComplianceCheck{DocumentType: "invoice", IsInvoice: true, Checks: checks, Total: len(checks)}
	if r.IsCreditNote {
		c.DocumentType = "credit_note"
	}
	for _, e := range checks {
		if e.Status == payablesv1.CheckPassed {
			c.Passed++
		}
	}
	c.Compliant = c.Passed == c.Total
	return c
}

func address(street, zip, city, country string) *payablesv1.Address {
	if street == "" && zip == "" && city == "" && country == "" {
		return nil
	}
	return &payablesv1.Address{Street: street, Zip: zip, City: city, Country: country}
}

func day(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.Format(time.DateOnly)
	return &s
}

func amount(d decimal.Decimal) *money.Amount {
	a := money.New(d)
	return &a
}
