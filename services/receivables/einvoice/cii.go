package einvoice

import (
	"bytes"
	"encoding/xml"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Specification identifiers (BT-24) and the business process (BT-23).
const (
	GuidelineEN16931   = "urn:cen.eu:en16931:2017"
	GuidelineXRechnung = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
	businessProcess    = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
	schemeEmail        = "EM" // BT-34/BT-49 scheme: e-mail address
)

const (
	nsRSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
	nsRAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
	nsQDT = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
	nsUDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
)

// CII computes d (see Compute; the caller's document is not modified) and
// writes it as a UN/CEFACT Cross Industry Invoice D16B. Elements appear in
// the order of the D16B schema, which is a sequence everywhere: the EN 16931
// schematron and every CII reader rely on it.
func CII(d Document) ([]byte, error) {
	d.Lines = append([]Line(nil), d.Lines...)
	if err := d.Compute(); err != nil {
		return nil, errs.Wrap("einvoice.CII", err)
	}
	w := &xw{}
	w.b.WriteString(xml.Header)
	w.open("rsm:CrossIndustryInvoice",
		"xmlns:rsm", nsRSM, "xmlns:qdt", nsQDT, "xmlns:ram", nsRAM, "xmlns:udt", nsUDT)

	w.open("rsm:ExchangedDocumentContext")
	if d.Profile == ProfileXRechnung {
		w.open("ram:BusinessProcessSpecifiedDocumentContextParameter")
		w.leaf("ram:ID", businessProcess)
		w.close()
	}
	w.open("ram:GuidelineSpecifiedDocumentContextParameter")
	w.leaf("ram:ID", d.Guideline())
	w.close()
	w.close()

	w.open("rsm:ExchangedDocument")
	w.leaf("ram:ID", d.Number)
	w.leaf("ram:TypeCode", d.TypeCode)
	w.date("ram:IssueDateTime", d.IssueDate)
	for _, n := range d.AllNotes() {
		w.open("ram:IncludedNote")
		w.leaf("ram:Content", n)
		w.close()
	}
	w.close()

	w.open("rsm:SupplyChainTradeTransaction")
	for _, l := range d.Lines {
		w.line(l)
	}
	w.agreement(&d)
	w.delivery(&d)
	w.settlement(&d)
	w.close()

	w.close()
	return w.b.Bytes(), nil
}

// Guideline is the specification identifier (BT-24) of d's profile.
func (d *Document) Guideline() string {
	if d.Profile == ProfileXRechnung {
		return GuidelineXRechnung
	}
	return GuidelineEN16931
}

// AllNotes is Notes plus what the package adds itself: the exchange rate
// and the VAT in euro of a foreign-currency invoice, which a reader of the
// XML alone would otherwise not see.
func (d *Document) AllNotes() []string {
	notes := append([]string(nil), d.Notes...)
	if n := d.CurrencyNote(); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// CurrencyNote states the exchange rate and the VAT total in EUR of a
// foreign-currency invoice (§16 Abs. 6 UStG); empty for EUR invoices. Call it
// after Compute.
func (d *Document) CurrencyNote() string {
	if d.TaxCurrency == "" {
		return ""
	}
	return "Umrechnungskurs / exchange rate: 1 " + d.Currency + " = " + d.ExchangeRate.String() + " " +
		d.TaxCurrency + "; Umsatzsteuer / VAT: " + Amount(d.Totals.TaxInTaxCurrency) + " " + d.TaxCurrency
}

func (w *xw) line(l Line) {
	w.open("ram:IncludedSupplyChainTradeLineItem")
	w.open("ram:AssociatedDocumentLineDocument")
	w.leaf("ram:LineID", l.ID)
	w.close()
	w.open("ram:SpecifiedTradeProduct")
	w.leaf("ram:Name", l.Description)
	w.close()
	w.open("ram:SpecifiedLineTradeAgreement")
	w.open("ram:NetPriceProductTradePrice")
	w.leaf("ram:ChargeAmount", Price(l.UnitPrice))
	w.close()
	w.close()
	w.open("ram:SpecifiedLineTradeDelivery")
	w.leaf("ram:BilledQuantity", Price(l.Quantity), "unitCode", l.UnitCode)
	w.close()
	w.open("ram:SpecifiedLineTradeSettlement")
	w.open("ram:ApplicableTradeTax")
	w.leaf("ram:TypeCode", "VAT")
	w.leaf("ram:CategoryCode", string(l.TaxCategory))
	w.leaf("ram:RateApplicablePercent", Amount(l.TaxRate))
	w.close()
	if l.Discount.IsPositive() {
		w.open("ram:SpecifiedTradeAllowanceCharge")
		w.open("ram:ChargeIndicator")
		w.leaf("udt:Indicator", "false")
		w.close()
		w.leaf("ram:ActualAmount", Amount(l.Discount))
		w.leaf("ram:ReasonCode", "95") // UNTDID 5189: discount
		w.leaf("ram:Reason", "Rabatt")
		w.close()
	}
	w.open("ram:SpecifiedTradeSettlementLineMonetarySummation")
	w.leaf("ram:LineTotalAmount", Amount(l.NetAmount))
	w.close()
	w.close()
	w.close()
}

func (w *xw) agreement(d *Document) {
	w.open("ram:ApplicableHeaderTradeAgreement")
	w.opt("ram:BuyerReference", d.BuyerReference)

	s := d.Seller
	w.open("ram:SellerTradeParty")
	w.leaf("ram:Name", s.Name)
	if s.ContactName != "" || s.Phone != "" {
		w.open("ram:DefinedTradeContact")
		w.opt("ram:PersonName", s.ContactName)
		if s.Phone != "" {
			w.open("ram:TelephoneUniversalCommunication")
			w.leaf("ram:CompleteNumber", s.Phone)
			w.close()
		}
		if s.Email != "" {
			w.open("ram:EmailURIUniversalCommunication")
			w.leaf("ram:URIID", s.Email)
			w.close()
		}
		w.close()
	}
	w.address(s.Zip, s.Street, s.City, s.Country)
	w.uri(s.Email)
	w.taxRegistration("FC", s.TaxNumber)
	w.taxRegistration("VA", s.VATID)
	w.close()

	b := d.Buyer
	w.open("ram:BuyerTradeParty")
	w.leaf("ram:Name", b.Name)
	w.address(b.Zip, b.Street, b.City, b.Country)
	w.uri(b.Email)
	w.taxRegistration("VA", b.VATID)
	w.close()

	if d.OrderReference != "" {
		w.open("ram:BuyerOrderReferencedDocument")
		w.leaf("ram:IssuerAssignedID", d.OrderReference)
		w.close()
	}
	w.close()
}

func (w *xw) delivery(d *Document) {
	w.open("ram:ApplicableHeaderTradeDelivery")
	if d.hasCategory(CategoryIntraCommunity) {
		// BR-IC-12: an intra-community supply names the country it goes to.
		// Goods go to the buyer's address unless the service says otherwise.
		b := d.Buyer
		w.open("ram:ShipToTradeParty")
		w.leaf("ram:Name", b.Name)
		w.address(b.Zip, b.Street, b.City, b.Country)
		w.close()
	}
	if d.DeliveryDate != "" {
		w.open("ram:ActualDeliverySupplyChainEvent")
		w.date("ram:OccurrenceDateTime", d.DeliveryDate)
		w.close()
	}
	w.close()
}

func (w *xw) settlement(d *Document) {
	w.open("ram:ApplicableHeaderTradeSettlement")
	// BT-83: the invoice number as remittance information lets the bank
	// reconciliation match the payment.
	w.leaf("ram:PaymentReference", d.Number)
	w.opt("ram:TaxCurrencyCode", d.TaxCurrency)
	w.leaf("ram:InvoiceCurrencyCode", d.Currency)
	if pm := d.PaymentMeans; pm != nil {
		w.open("ram:SpecifiedTradeSettlementPaymentMeans")
		code := pm.TypeCode
		if code == "" {
			code = PaymentMeansSEPATransfer
		}
		w.leaf("ram:TypeCode", code)
		w.opt("ram:Information", pm.Information)
		w.open("ram:PayeePartyCreditorFinancialAccount")
		w.leaf("ram:IBANID", pm.IBAN)
		w.opt("ram:AccountName", pm.AccountName)
		w.close()
		if pm.BIC != "" {
			w.open("ram:PayeeSpecifiedCreditorFinancialInstitution")
			w.leaf("ram:BICID", pm.BIC)
			w.close()
		}
		w.close()
	}
	for _, t := range d.TaxBreakdown {
		w.open("ram:ApplicableTradeTax")
		w.leaf("ram:CalculatedAmount", Amount(t.Tax))
		w.leaf("ram:TypeCode", "VAT")
		w.opt("ram:ExemptionReason", t.ExemptionReason)
		w.leaf("ram:BasisAmount", Amount(t.Basis))
		w.leaf("ram:CategoryCode", string(t.Category))
		w.opt("ram:ExemptionReasonCode", t.ExemptionReasonCode)
		w.leaf("ram:RateApplicablePercent", Amount(t.Rate))
		w.close()
	}
	if p := d.ServicePeriod; p != nil {
		w.open("ram:BillingSpecifiedPeriod")
		w.date("ram:StartDateTime", p.Start)
		w.date("ram:EndDateTime", p.End)
		w.close()
	}
	if d.PaymentTerms != "" || d.DueDate != "" {
		w.open("ram:SpecifiedTradePaymentTerms")
		w.opt("ram:Description", d.PaymentTerms)
		if d.DueDate != "" {
			w.date("ram:DueDateDateTime", d.DueDate)
		}
		w.close()
	}
	t := d.Totals
	w.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
	w.leaf("ram:LineTotalAmount", Amount(t.LineTotal))
	w.leaf("ram:TaxBasisTotalAmount", Amount(t.TaxBasis))
	w.leaf("ram:TaxTotalAmount", Amount(t.Tax), "currencyID", d.Currency)
	if d.TaxCurrency != "" {
		w.leaf("ram:TaxTotalAmount", Amount(t.TaxInTaxCurrency), "currencyID", d.TaxCurrency)
	}
	w.leaf("ram:GrandTotalAmount", Amount(t.Grand))
	w.leaf("ram:DuePayableAmount", Amount(t.DuePayable))
	w.close()
	if p := d.PrecedingInvoice; p != nil {
		w.open("ram:InvoiceReferencedDocument")
		w.leaf("ram:IssuerAssignedID", p.Number)
		if p.IssueDate != "" {
			w.open("ram:FormattedIssueDateTime")
			w.leaf("qdt:DateTimeString", compactDate(p.IssueDate), "format", "102")
			w.close()
		}
		w.close()
	}
	w.close()
}

func (d *Document) hasCategory(c TaxCategory) bool {
	for _, l := range d.Lines {
		if l.TaxCategory == c {
			return true
		}
	}
	return false
}

// Amount formats a money amount or a percentage with exactly two decimals.
// Compute has already rounded amounts to cents, so this never rounds them.
func Amount(v decimal.Decimal) string { return v.StringFixed(2) }

// Price formats a unit price or a quantity with four decimals; Compute
// rejects more, so this never rounds either.
func Price(v decimal.Decimal) string { return v.StringFixed(4) }

func compactDate(iso string) string { return strings.ReplaceAll(iso, "-", "") }

// xw writes indented XML. It is hand-rolled rather than encoding/xml
// structs because CII needs fixed namespace prefixes and a fixed element
// order, both awkward to get out of encoding/xml.
type xw struct {
	b     bytes.Buffer
	stack []string
}

func (w *xw) indent() {
	for range w.stack {
		w.b.WriteString("  ")
	}
}

func (w *xw) start(name string, attrs []string) {
	w.indent()
	w.b.WriteByte('<')
	w.b.WriteString(name)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b.WriteByte(' ')
		w.b.WriteString(attrs[i])
		w.b.WriteString(`="`)
		_ = xml.EscapeText(&w.b, []byte(attrs[i+1]))
		w.b.WriteByte('"')
	}
	w.b.WriteByte('>')
}

func (w *xw) open(name string, attrs ...string) {
	w.start(name, attrs)
	w.b.WriteByte('\n')
	w.stack = append(w.stack, name)
}

func (w *xw) close() {
	name := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	w.indent()
	w.b.WriteString("</" + name + ">\n")
}

func (w *xw) leaf(name, text string, attrs ...string) {
	w.start(name, attrs)
	_ = xml.EscapeText(&w.b, []byte(text))
	w.b.WriteString("</" + name + ">\n")
}

func (w *xw) opt(name, text string) {
	if text != "" {
		w.leaf(name, text)
	}
}

func (w *xw) date(name, iso string) {
	w.open(name)
	w.leaf("udt:DateTimeString", compactDate(iso), "format", "102")
	w.close()
}

func (w *xw) address(zip, street, city, country string) {
	w.open("ram:PostalTradeAddress")
	w.opt("ram:PostcodeCode", zip)
	w.opt("ram:LineOne", street)
	w.opt("ram:CityName", city)
	w.leaf("ram:CountryID", country)
	w.close()
}

func (w *xw) uri(email string) {
	if email == "" {
		return
	}
	w.open("ram:URIUniversalCommunication")
	w.leaf("ram:URIID", email, "schemeID", schemeEmail)
	w.close()
}

func (w *xw) taxRegistration(scheme, id string) {
	if id == "" {
		return
	}
	w.open("ram:SpecifiedTaxRegistration")
	w.leaf("ram:ID", id, "schemeID", scheme)
	w.close()
}
