package extract

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/vatid"
)

// SmallAmountLimit is the gross up to which §33 UStDV
// (Kleinbetragsrechnung) relaxes §14 Abs. 4 UStG.
var SmallAmountLimit = decimal.NewFromInt(250)

// Rules of the compliance check.
const (
	RuleSupplier    = "UStG 14(4) Nr. 1 Leistender"
	RuleRecipient   = "UStG 14(4) Nr. 1 Empfänger"
	RuleTaxID       = "UStG 14(4) Nr. 2"
	RuleDate        = "UStG 14(4) Nr. 3"
	RuleNumber      = "UStG 14(4) Nr. 4"
	RuleGoods       = "UStG 14(4) Nr. 5"
	RuleDelivery    = "UStG 14(4) Nr. 6"
	RuleNetByRate   = "UStG 14(4) Nr. 7"
	RuleTax         = "UStG 14(4) Nr. 8"
	RuleReverse     = "UStG 14a(5)"
	RuleSmallAmount = "UStDV 33 Nr. 4"
)

var (
	reverseChargeNote = regexp.MustCompile(`(?i)steuerschuldnerschaft\s+des\s+leistungsempf|reverse[\s-]*charge|§\s*13b\s*UStG|autoliquidation|inversión del sujeto pasivo|art(icle|\.)?\s*196`)
	exemptionNote     = regexp.MustCompile(`(?i)steuerfrei|steuerbefrei|umsatzsteuerbefrei|§\s*4\s*(Nr\.?\s*\d+\w?\s*)?UStG|§\s*19\s*(Abs\.?\s*1\s*)?UStG|kleinunternehmer|§\s*6a\s*UStG|innergemeinschaftliche\s+lieferung|vat\s+exempt|exempt\s+from\s+vat|tax[\s-]exempt|intra-community\s+supply|art(icle|\.)?\s*13[2-8]`)
	invoiceWord       = regexp.MustCompile(`(?i)rechnung|invoice|gutschrift|credit\s+note|quittung|beleg|receipt|kassenbon|bon-?nr`)
)

// Check applies §14 Abs. 4 UStG (and §33 UStDV for a gross of at most
// 250 €) to a result; en16931 are the e-invoice rules Extract found, kept
// after the §14 entries and counted with them.
func Check(r payablesv1.OCRResult, en16931 []payablesv1.CheckEntry) payablesv1.ComplianceCheck {
	c := payablesv1.ComplianceCheck{DocumentType: "invoice", IsInvoice: true}
	if !isInvoice(r) {
		c.DocumentType, c.IsInvoice = "not_an_invoice", false
		return c
	}
	notes := strings.Join(r.Notes, "\n")
	small := !r.IsCreditNote && r.TotalGross != nil && r.TotalGross.Abs().LessThanOrEqual(SmallAmountLimit)
	switch {
	case r.IsCreditNote:
		c.DocumentType = "credit_note"
	case small:
		c.DocumentType = "small_amount_invoice"
	}
	add := func(rule, label, status, detail string) {
		c.Checks = append(c.Checks, payablesv1.CheckEntry{Rule: rule, Label: label, Status: status, Detail: detail})
	}
	na := func(rule, label string) {
		add(rule, label, payablesv1.CheckNA, "Kleinbetragsrechnung (§ 33 UStDV)")
	}

	// Nr. 1: supplier.
	const supplierLabel = "Name und Anschrift des leistenden Unternehmers"
	switch st, d := party(r.VendorName, r.VendorAddress); {
	case small:
		add("UStDV 33 Nr. 1", supplierLabel, st, d)
	default:
		add(RuleSupplier, supplierLabel, st, d)
	}
	const recipientLabel = "Name und Anschrift des Leistungsempfängers"
	if small {
		na(RuleRecipient, recipientLabel)
	} else {
		st, d := party(r.BuyerName, r.BuyerAddress)
		add(RuleRecipient, recipientLabel, st, d)
	}

	// Nr. 2: tax number or VAT ID.
	const taxIDLabel = "Steuernummer oder USt-IdNr. des leistenden Unternehmers"
	switch {
	case small:
		na(RuleTaxID, taxIDLabel)
	case r.VendorVATID != "" && vatid.Check(vatid.Normalize(r.VendorVATID)) == "":
		add(RuleTaxID, taxIDLabel, payablesv1.CheckPassed, "")
	case r.VendorTaxID != "":
		add(RuleTaxID, taxIDLabel, payablesv1.CheckPassed, "")
	case r.VendorVATID != "":
		add(RuleTaxID, taxIDLabel, payablesv1.CheckFailed, "USt-IdNr. "+r.VendorVATID+" ist ungültig: "+vatid.Check(vatid.Normalize(r.VendorVATID)))
	default:
		add(RuleTaxID, taxIDLabel, payablesv1.CheckMissing, "weder Steuernummer noch USt-IdNr. angegeben")
	}

	// Nr. 3: invoice date.
	rule := RuleDate
	if small {
		rule = "UStDV 33 Nr. 2"
	}
	if r.InvoiceDate != nil {
		add(rule, "Ausstellungsdatum", payablesv1.CheckPassed, "")
	} else {
		add(rule, "Ausstellungsdatum", payablesv1.CheckMissing, "kein Rechnungsdatum gefunden")
	}

	// Nr. 4: number.
	const numberLabel = "Fortlaufende Rechnungsnummer"
	switch {
	case small:
		na(RuleNumber, numberLabel)
	case r.InvoiceNumber != "":
		add(RuleNumber, numberLabel, payablesv1.CheckPassed, "")
	default:
		add(RuleNumber, numberLabel, payablesv1.CheckMissing, "keine Rechnungsnummer gefunden")
	}

	// Nr. 5: quantity and kind.
	rule = RuleGoods
	if small {
		rule = "UStDV 33 Nr. 3"
	}
	const goodsLabel = "Menge und Art der gelieferten Gegenstände oder Umfang und Art der Leistung"
	described := 0
	for _, l := range r.LineItems {
		if strings.TrimSpace(l.Description) != "" {
			described++
		}
	}
	switch {
	case len(r.LineItems) == 0:
		add(rule, goodsLabel, payablesv1.CheckMissing, "keine Positionen gefunden")
	case described < len(r.LineItems):
		add(rule, goodsLabel, payablesv1.CheckFailed, fmt.Sprintf("%d von %d Positionen ohne Bezeichnung", len(r.LineItems)-described, len(r.LineItems)))
	default:
		add(rule, goodsLabel, payablesv1.CheckPassed, "")
	}

	// Nr. 6: delivery date or period.
	const deliveryLabel = "Zeitpunkt der Lieferung oder sonstigen Leistung"
	switch {
	case small:
		na(RuleDelivery, deliveryLabel)
	case r.DeliveryDate != nil || r.ServicePeriod != nil && (r.ServicePeriod.Start != "" || r.ServicePeriod.End != ""):
		add(RuleDelivery, deliveryLabel, payablesv1.CheckPassed, "")
	default:
		add(RuleDelivery, deliveryLabel, payablesv1.CheckMissing, "weder Liefer-/Leistungsdatum noch Leistungszeitraum angegeben")
	}

	// Nr. 7: net by rate.
	const netLabel = "Nach Steuersätzen aufgeschlüsseltes Entgelt"
	switch {
	case small:
		na(RuleNetByRate, netLabel)
	case len(r.TaxBreakdown) == 0:
		add(RuleNetByRate, netLabel, payablesv1.CheckMissing, "kein Entgelt je Steuersatz gefunden")
	default:
		sum := decimal.Zero
		for _, t := range r.TaxBreakdown {
			sum = sum.Add(t.Net.Decimal)
		}
		if r.TotalNet != nil && !sum.Equal(r.TotalNet.Decimal) {
			add(RuleNetByRate, netLabel, payablesv1.CheckFailed, fmt.Sprintf("Σ Entgelte je Satz %s ≠ Nettobetrag %s", sum, r.TotalNet.Decimal))
		} else {
			add(RuleNetByRate, netLabel, payablesv1.CheckPassed, "")
		}
	}

	// Nr. 8: rate and tax, or the exemption note.
	exempt := exemptionNote.MatchString(notes)
	reverse := reverseChargeNote.MatchString(notes)
	if small {
		const label = "Entgelt und Steuerbetrag in einer Summe sowie Steuersatz"
		switch {
		case r.TotalGross == nil:
			add(RuleSmallAmount, label, payablesv1.CheckMissing, "kein Gesamtbetrag gefunden")
		case len(r.TaxBreakdown) == 0 && !exempt:
			add(RuleSmallAmount, label, payablesv1.CheckMissing, "kein Steuersatz gefunden")
		default:
			add(RuleSmallAmount, label, payablesv1.CheckPassed, "")
		}
		na(RuleTax, "Steuersatz und Steuerbetrag oder Hinweis auf Steuerbefreiung")
		na(RuleReverse, "Hinweis „Steuerschuldnerschaft des Leistungsempfängers“")
	} else {
		const label = "Steuersatz und Steuerbetrag oder Hinweis auf Steuerbefreiung"
		zeroTax := false
		for _, t := range r.TaxBreakdown {
			if t.Tax.IsZero() {
				zeroTax = true
			}
		}
		switch {
		case len(r.TaxBreakdown) == 0 && !exempt && !reverse:
			add(RuleTax, label, payablesv1.CheckMissing, "weder Steuersatz und Steuerbetrag noch Hinweis auf Steuerbefreiung")
		case zeroTax && !exempt && !reverse:
			add(RuleTax, label, payablesv1.CheckFailed, "Steuerbetrag 0 ohne Hinweis auf Steuerbefreiung")
		default:
			add(RuleTax, label, payablesv1.CheckPassed, "")
		}

		// §14a: the reverse-charge note, where the recipient owes the tax.
		const rcLabel = "Hinweis „Steuerschuldnerschaft des Leistungsempfängers“"
		applies := false
		for _, t := range r.TaxBreakdown {
			if strings.EqualFold(t.Category, "AE") {
				applies = true
			}
		}
		noTax := r.TotalTax == nil || r.TotalTax.IsZero()
		if noTax && !exempt && r.BuyerAddress != nil && r.BuyerAddress.Country != "" && !strings.EqualFold(r.BuyerAddress.Country, "DE") {
			applies = true
		}
		switch {
		case reverse:
			add(RuleReverse, rcLabel, payablesv1.CheckPassed, "")
		case applies:
			add(RuleReverse, rcLabel, payablesv1.CheckFailed, "Steuerschuldnerschaft des Leistungsempfängers ohne Hinweis auf der Rechnung")
		default:
			add(RuleReverse, rcLabel, payablesv1.CheckNA, "keine Umkehr der Steuerschuld")
		}
	}

	c.Checks = append(c.Checks, en16931...)
	c.Compliant = true
	for _, e := range c.Checks {
		switch e.Status {
		case payablesv1.CheckPassed:
			c.Passed++
			c.Total++
		case payablesv1.CheckFailed, payablesv1.CheckMissing:
			c.Compliant = false
			c.Total++
		}
	}
	return c
}

// party checks a name and a full address (street, zip, city).
func party(name string, a *payablesv1.Address) (status, detail string) {
	switch {
	case strings.TrimSpace(name) == "":
		return payablesv1.CheckMissing, "kein Name gefunden"
	case a == nil || a.Street == "" && a.Zip == "" && a.City == "":
		return payablesv1.CheckMissing, "keine Anschrift gefunden"
	case a.City == "" || a.Street == "" && a.Zip == "":
		return payablesv1.CheckFailed, "Anschrift unvollständig"
	}
	return payablesv1.CheckPassed, ""
}

// isInvoice: e-invoices are; a text is one when it has a total and says
// it is an invoice or bears an invoice number or date.
func isInvoice(r payablesv1.OCRResult) bool {
	switch r.Source {
	case SourceCII, SourceUBL, SourceZUGFeRD:
		return true
	}
	if r.TotalGross == nil {
		return false
	}
	return r.InvoiceNumber != "" || invoiceWord.MatchString(r.RawMarkdown)
}
