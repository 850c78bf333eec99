package extract

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables/einvoicein"
)

// fromEInvoice maps an e-invoice onto the OCR result, every field it has,
// and checks the EN 16931 calculation and presence rules.
func fromEInvoice(inv einvoicein.Invoice) (payablesv1.OCRResult, []payablesv1.CheckEntry) {
	r := payablesv1.OCRResult{
		VendorName:    inv.Seller.Name,
		VendorVATID:   inv.Seller.VATID,
		VendorTaxID:   inv.Seller.TaxNumber,
		VendorIBAN:    inv.Seller.IBAN,
		VendorBIC:     inv.Seller.BIC,
		VendorAddress: address(inv.Seller.Street, inv.Seller.Zip, inv.Seller.City, inv.Seller.Country),
		BuyerName:     inv.Buyer.Name,
		BuyerAddress:  address(inv.Buyer.Street, inv.Buyer.Zip, inv.Buyer.City, inv.Buyer.Country),
		InvoiceNumber: inv.Number,
		InvoiceDate:   day(inv.IssueDate),
		DueDate:       day(inv.DueDate),
		DeliveryDate:  day(inv.DeliveryDate),
		TotalNet:      amt(inv.TotalNet),
		TotalTax:      amt(inv.TotalTax),
		TotalGross:    amt(inv.TotalGross),
		Currency:      inv.Currency,
		PaymentTerms:  inv.PaymentTerms,
		ReferenceText: inv.PaymentReference,
		IsCreditNote:  inv.IsCreditNote,
		Notes:         append([]string(nil), inv.Notes...),
	}
	switch {
	case inv.Format == einvoicein.FormatZUGFeRDPDF:
		r.Source = SourceZUGFeRD
	case inv.Syntax == einvoicein.SyntaxUBL:
		r.Source = SourceUBL
	default:
		r.Source = SourceCII
	}
	p := inv.DeliveryPeriod
	if p.Start.IsZero() && p.End.IsZero() {
		// The delivery time given per line (BG-26): their span.
		for _, l := range inv.Lines {
			if !l.Period.Start.IsZero() && (p.Start.IsZero() || l.Period.Start.Before(p.Start)) {
				p.Start = l.Period.Start
			}
			if l.Period.End.After(p.End) {
				p.End = l.Period.End
			}
		}
	}
	if !p.Start.IsZero() || !p.End.IsZero() {
		r.ServicePeriod = &payablesv1.Period{Start: dayString(p.Start), End: dayString(p.End)}
	}
	for _, t := range inv.TaxBreakdown {
		r.TaxBreakdown = append(r.TaxBreakdown, payablesv1.TaxLine{
			Rate: money.New(t.Rate), Net: money.New(t.Basis), Tax: money.New(t.Tax), Category: t.Category,
		})
		if reason := strings.TrimSpace(strings.Join(nonEmpty(t.ExemptionReasonCode, t.ExemptionReason), " ")); reason != "" {
			r.Notes = append(r.Notes, reason)
		}
	}
	for _, l := range inv.Lines {
		ol := payablesv1.OCRLine{
			Description: l.Description,
			Quantity:    amt(l.Quantity),
			Unit:        l.Unit,
			LineTotal:   amt(l.NetAmount),
		}
		// The price is per base quantity; the result's unit price is per
		// unit.
		price := l.UnitPrice
		if l.BaseQuantity.IsPositive() && !l.BaseQuantity.Equal(decimal.NewFromInt(1)) {
			price = price.Div(l.BaseQuantity)
		}
		ol.UnitPrice = amt(price)
		if l.TaxCategory != "" || !l.TaxRate.IsZero() {
			ol.TaxRate = amt(l.TaxRate)
		}
		r.LineItems = append(r.LineItems, ol)
	}
	return r, en16931(inv)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
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

func dayString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

func amt(d decimal.Decimal) *money.Amount {
	a := money.New(d)
	return &a
}

// zeroRated are the EN 16931 VAT categories whose tax is always 0, with
// the prefix of their rules (BR-Z-09, BR-E-09, BR-AE-09, BR-IC-09, BR-G-09,
// BR-O-09).
var zeroRated = map[string]string{"Z": "BR-Z", "E": "BR-E", "AE": "BR-AE", "K": "BR-IC", "G": "BR-G", "O": "BR-O"}

// en16931 checks the rules of EN 16931 that Go can check without the
// schematron: presence of the core fields (BR-01 … BR-16 as far as the
// reader keeps the field) and the calculation rules of the totals.
func en16931(inv einvoicein.Invoice) []payablesv1.CheckEntry {
	var out []payablesv1.CheckEntry
	add := func(rule, label string, ok bool, detail string) {
		e := payablesv1.CheckEntry{Rule: "EN16931 " + rule, Label: label, Status: payablesv1.CheckPassed}
		if !ok {
			e.Status, e.Detail = payablesv1.CheckFailed, detail
		}
		out = append(out, e)
	}
	present := func(rule, label string, ok bool, what string) {
		e := payablesv1.CheckEntry{Rule: "EN16931 " + rule, Label: label, Status: payablesv1.CheckPassed}
		if !ok {
			e.Status, e.Detail = payablesv1.CheckMissing, what+" fehlt"
		}
		out = append(out, e)
	}
	minimum := strings.Contains(strings.ToLower(inv.Profile), "minimum")
	na := func(rule, label, why string) {
		out = append(out, payablesv1.CheckEntry{Rule: "EN16931 " + rule, Label: label, Status: payablesv1.CheckNA, Detail: why})
	}
	const minWhy = "Profil MINIMUM: keine Rechnung nach EN 16931, ohne Positionen und Steueraufschlüsselung"

	present("BR-01", "Spezifikationskennung", inv.Profile != "", "BT-24")
	present("BR-02", "Rechnungsnummer", inv.Number != "", "BT-1")
	present("BR-03", "Rechnungsdatum", !inv.IssueDate.IsZero(), "BT-2")
	present("BR-04", "Rechnungstyp", inv.TypeCode != "", "BT-3")
	present("BR-05", "Währung", inv.Currency != "", "BT-5")
	present("BR-06", "Name des Verkäufers", inv.Seller.Name != "", "BT-27")
	present("BR-07", "Name des Käufers", inv.Buyer.Name != "", "BT-44")
	if minimum {
		for _, r := range [][2]string{
			{"BR-08", "Anschrift des Verkäufers"}, {"BR-09", "Ländercode des Verkäufers"},
			{"BR-10", "Anschrift des Käufers"}, {"BR-11", "Ländercode des Käufers"},
			{"BR-12", "Summe der Positionsnettobeträge"}, {"BR-16", "Mindestens eine Rechnungsposition"},
		} {
			na(r[0], r[1], minWhy)
		}
	} else {
		s, b := inv.Seller, inv.Buyer
		present("BR-08", "Anschrift des Verkäufers", s.Street != "" || s.Zip != "" || s.City != "" || s.Country != "", "BG-5")
		present("BR-09", "Ländercode des Verkäufers", s.Country != "", "BT-40")
		present("BR-10", "Anschrift des Käufers", b.Street != "" || b.Zip != "" || b.City != "" || b.Country != "", "BG-8")
		present("BR-11", "Ländercode des Käufers", b.Country != "", "BT-55")
		// einvoicein reads an absent BT-106 as 0: absent only if the
		// lines say otherwise.
		lineSum := decimal.Zero
		for _, l := range inv.Lines {
			lineSum = lineSum.Add(l.NetAmount)
		}
		present("BR-12", "Summe der Positionsnettobeträge", !inv.LineTotal.IsZero() || lineSum.IsZero(), "BT-106")
		present("BR-16", "Mindestens eine Rechnungsposition", len(inv.Lines) > 0, "BG-25")
	}
	// einvoicein refuses an invoice without BT-109, BT-112 or BT-115, so
	// these hold for every invoice that got here.
	present("BR-13", "Gesamtbetrag ohne Umsatzsteuer", true, "BT-109")
	present("BR-14", "Gesamtbetrag mit Umsatzsteuer", true, "BT-112")
	present("BR-15", "Fälliger Zahlbetrag", true, "BT-115")

	eq := func(a, b decimal.Decimal) bool { return a.Equal(b) }
	if len(inv.Lines) > 0 {
		sum := decimal.Zero
		for _, l := range inv.Lines {
			sum = sum.Add(l.NetAmount)
		}
		add("BR-CO-10", "Summe der Positionsnettobeträge", eq(inv.LineTotal, sum),
			fmt.Sprintf("BT-106 %s ≠ Σ BT-131 %s", inv.LineTotal, sum))
		want := inv.LineTotal.Sub(inv.AllowanceTotal).Add(inv.ChargeTotal)
		add("BR-CO-13", "Gesamtnettobetrag = Positionen − Nachlässe + Zuschläge", eq(inv.TotalNet, want),
			fmt.Sprintf("BT-109 %s ≠ %s − %s + %s = %s", inv.TotalNet, inv.LineTotal, inv.AllowanceTotal, inv.ChargeTotal, want))
	} else if minimum {
		na("BR-CO-10", "Summe der Positionsnettobeträge", minWhy)
		na("BR-CO-13", "Gesamtnettobetrag = Positionen − Nachlässe + Zuschläge", minWhy)
	}
	if len(inv.TaxBreakdown) > 0 {
		sum := decimal.Zero
		for _, t := range inv.TaxBreakdown {
			sum = sum.Add(t.Tax)
		}
		add("BR-CO-14", "Umsatzsteuergesamtbetrag = Σ Steuerbeträge je Satz", eq(inv.TotalTax, sum),
			fmt.Sprintf("BT-110 %s ≠ Σ BT-117 %s", inv.TotalTax, sum))
	} else if minimum {
		na("BR-CO-14", "Umsatzsteuergesamtbetrag = Σ Steuerbeträge je Satz", minWhy)
	} else {
		present("BR-CO-18", "Mindestens eine Umsatzsteueraufschlüsselung", false, "BG-23")
	}
	add("BR-CO-15", "Bruttobetrag = Nettobetrag + Umsatzsteuer", eq(inv.TotalGross, inv.TotalNet.Add(inv.TotalTax)),
		fmt.Sprintf("BT-112 %s ≠ %s + %s", inv.TotalGross, inv.TotalNet, inv.TotalTax))
	add("BR-CO-16", "Zahlbetrag = Bruttobetrag − Vorauszahlung", eq(inv.DuePayable, inv.TotalGross.Sub(inv.Prepaid)),
		fmt.Sprintf("BT-115 %s ≠ %s − %s", inv.DuePayable, inv.TotalGross, inv.Prepaid))

	hundred := decimal.NewFromInt(100)
	for _, t := range inv.TaxBreakdown {
		cat := strings.ToUpper(t.Category)
		label := fmt.Sprintf("Steuerbetrag %s %% (Kategorie %s)", t.Rate, cat)
		if prefix, ok := zeroRated[cat]; ok {
			add(prefix+"-09", label, t.Tax.IsZero(), fmt.Sprintf("Kategorie %s verlangt Steuer 0, angegeben %s", cat, t.Tax))
			continue
		}
		prefix := "BR-" + cat
		if cat == "" {
			prefix = "BR-S"
		}
		want := t.Basis.Mul(t.Rate).Div(hundred).Round(2)
		add(prefix+"-09", label, t.Tax.Equal(want),
			fmt.Sprintf("%s × %s %% = %s, angegeben %s", t.Basis, t.Rate, want, t.Tax))
	}
	return out
}
