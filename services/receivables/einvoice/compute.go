package einvoice

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

var (
	hundred = decimal.NewFromInt(100)
	// maxAmount bounds quantities, prices and amounts: far beyond any
	// invoice, and it keeps absurd input from costing unbounded arithmetic.
	maxAmount    = decimal.New(1, 12)
	reCurrency   = regexp.MustCompile(`^[A-Z]{3}$`)
	reCountry    = regexp.MustCompile(`^[A-Z]{2}$`)
	reUnitCode   = regexp.MustCompile(`^[A-Z0-9]{2,3}$`)
	reIBAN       = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	reBIC        = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	reEmail      = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	categoryRank = map[TaxCategory]int{CategoryStandard: 0, CategoryZero: 1, CategoryExempt: 2,
		CategoryReverseCharge: 3, CategoryIntraCommunity: 4, CategoryExportOutsideEU: 5}
)

// Standard exemption reasons (BT-120) and VATEX codes (BT-121). The German
// wording is what §14a UStG asks the invoice to say.
var exemption = map[TaxCategory]struct{ reason, code string }{
	CategoryReverseCharge:   {"Reverse charge - Steuerschuldnerschaft des Leistungsempfängers", "VATEX-EU-AE"},
	CategoryIntraCommunity:  {"Intra-Community supply - Steuerfreie innergemeinschaftliche Lieferung", "VATEX-EU-IC"},
	CategoryExportOutsideEU: {"Export outside the EU - Steuerfreie Ausfuhrlieferung", "VATEX-EU-G"},
}

// Compute validates d and fills in every derived amount: line net amounts,
// the VAT breakdown per (category, rate) and the document totals. It returns
// an errs.InvalidInput error whose details name each offending field; d's
// computed fields are only written when the document is valid.
//
// Rounding follows EN 16931: each line net amount is rounded to cents
// (half away from zero, i.e. half-up for positive amounts), and the VAT of a
// breakdown group is rounded once from the group's basis (BR-CO-17), never
// summed from rounded line taxes.
func (d *Document) Compute() error {
	v := &validation{}
	d.validate(v)
	if len(v.details) > 0 {
		sort.SliceStable(v.details, func(i, j int) bool { return v.details[i].Field < v.details[j].Field })
		return errs.Wrap("einvoice.Compute", errs.Invalid("document is not a valid e-invoice", v.details...))
	}

	type key struct {
		cat  TaxCategory
		rate string
	}
	groups := map[key]*TaxSubtotal{}
	lineTotal := decimal.Zero
	for i := range d.Lines {
		l := &d.Lines[i]
		l.NetAmount = l.Quantity.Mul(l.UnitPrice).Sub(l.Discount).Round(2)
		lineTotal = lineTotal.Add(l.NetAmount)
		k := key{l.TaxCategory, l.TaxRate.String()}
		g, ok := groups[k]
		if !ok {
			g = &TaxSubtotal{Category: l.TaxCategory, Rate: l.TaxRate, Basis: decimal.Zero}
			if e, ok := exemption[l.TaxCategory]; ok {
				g.ExemptionReason, g.ExemptionReasonCode = e.reason, e.code
			}
			if l.TaxCategory == CategoryExempt {
				g.ExemptionReason = d.ExemptionReason
			}
			groups[k] = g
		}
		g.Basis = g.Basis.Add(l.NetAmount)
	}
	breakdown := make([]TaxSubtotal, 0, len(groups))
	taxTotal := decimal.Zero
	for _, g := range groups {
		g.Tax = g.Basis.Mul(g.Rate).Div(hundred).Round(2)
		taxTotal = taxTotal.Add(g.Tax)
		breakdown = append(breakdown, *g)
	}
	// A stable order keeps the XML and the PDF reproducible: standard rate
	// first, higher rates before lower ones.
	sort.Slice(breakdown, func(i, j int) bool {
		a, b := breakdown[i], breakdown[j]
		if a.Category != b.Category {
			return categoryRank[a.Category] < categoryRank[b.Category]
		}
		return a.Rate.GreaterThan(b.Rate)
	})
	d.TaxBreakdown = breakdown
	d.Totals = Totals{
		LineTotal:        lineTotal,
		TaxBasis:         lineTotal,
		Tax:              taxTotal,
		Grand:            lineTotal.Add(taxTotal),
		DuePayable:       lineTotal.Add(taxTotal),
		TaxInTaxCurrency: decimal.Zero,
	}
	if d.TaxCurrency != "" {
		d.Totals.TaxInTaxCurrency = taxTotal.Mul(d.ExchangeRate).Round(2)
	}
	if d.Profile == "" {
		d.Profile = ProfileEN16931
	}
	return nil
}

type validation struct{ details []errs.Detail }

func (v *validation) add(field, format string, args ...any) {
	v.details = append(v.details, errs.Field(field, fmt.Sprintf(format, args...)))
}

func (v *validation) required(field, value, why string) bool {
	if strings.TrimSpace(value) == "" {
		v.add(field, "required: %s", why)
		return false
	}
	return true
}

func (v *validation) date(field, value string, required bool) {
	if value == "" {
		if required {
			v.add(field, "required (YYYY-MM-DD)")
		}
		return
	}
	if _, err := time.Parse(time.DateOnly, value); err != nil {
		v.add(field, "%q is not a date in the form YYYY-MM-DD", value)
	}
}

// number checks that n has at most places decimal places (trailing zeros
// aside) and is below maxAmount. The exponent is checked first: comparing
// or rounding 1e-99999999 would cost a hundred-million-digit integer.
func (v *validation) number(field string, n decimal.Decimal, places int32) {
	switch {
	case n.Exponent() < -20 || n.Exponent() > 12:
		v.add(field, "%s is out of range", n)
	case !n.Round(places).Equal(n):
		v.add(field, "%s has more than %d decimal places", n, places)
	case n.Abs().GreaterThanOrEqual(maxAmount):
		v.add(field, "%s is out of range", n)
	}
}

func (d *Document) validate(v *validation) {
	d.validateTexts(v)
	switch d.Profile {
	case "", ProfileEN16931, ProfileXRechnung:
	default:
		v.add("profile", "%q is neither %s nor %s", d.Profile, ProfileEN16931, ProfileXRechnung)
	}
	xr := d.Profile == ProfileXRechnung
	switch d.TypeCode {
	case TypeInvoice:
	case TypeCreditNote:
		// §31 Abs. 5 UStDV: a correction must identify the invoice it corrects.
		if d.PrecedingInvoice == nil || strings.TrimSpace(d.PrecedingInvoice.Number) == "" {
			v.add("precedingInvoice.number", "required for a credit note (381): the invoice it corrects")
		}
	default:
		v.add("typeCode", "%q is not supported (380 invoice or 381 credit note)", d.TypeCode)
	}
	if d.PrecedingInvoice != nil {
		v.date("precedingInvoice.issueDate", d.PrecedingInvoice.IssueDate, false)
	}
	v.required("number", d.Number, "the invoice number (BT-1)")
	v.date("issueDate", d.IssueDate, true)
	v.date("dueDate", d.DueDate, false)

	if !reCurrency.MatchString(d.Currency) {
		v.add("currency", "%q is not an ISO 4217 code", d.Currency)
	}
	switch {
	case d.Currency == "EUR" && d.TaxCurrency != "":
		v.add("taxCurrency", "must be empty for an EUR invoice")
	case d.Currency != "EUR" && d.TaxCurrency != "EUR":
		v.add("taxCurrency", "must be EUR for a %s invoice: the VAT must also be stated in euro (§16 Abs. 6 UStG)", d.Currency)
	}
	if d.TaxCurrency != "" && !d.ExchangeRate.IsPositive() {
		v.add("exchangeRate", "required and positive with a tax currency (EUR per 1 %s)", d.Currency)
	}
	// EUR per unit: a yen is worth 0.0061938... EUR, so allow 10 places.
	v.number("exchangeRate", d.ExchangeRate, 10)
	if d.TaxCurrency == "" && !d.ExchangeRate.IsZero() {
		v.add("exchangeRate", "only allowed with a tax currency")
	}

	if xr {
		// Public buyers give a Leitweg-ID (e.g. 04011000-12345-34), companies
		// using XRechnung any reference of theirs: so no format check.
		v.required("buyerReference", d.BuyerReference, "XRechnung needs the buyer reference, for public buyers the Leitweg-ID (BT-10, BR-DE-15)")
	}

	if d.DeliveryDate == "" && d.ServicePeriod == nil {
		v.add("deliveryDate", "a delivery date or a service period is required (§14 Abs. 4 Nr. 6 UStG)")
	}
	v.date("deliveryDate", d.DeliveryDate, false)
	if p := d.ServicePeriod; p != nil {
		v.date("servicePeriod.start", p.Start, true)
		v.date("servicePeriod.end", p.End, true)
		if p.Start != "" && p.End != "" && p.End < p.Start {
			v.add("servicePeriod.end", "before the start")
		}
	}
	for i, n := range d.Notes {
		if strings.TrimSpace(n) == "" {
			v.add(fmt.Sprintf("notes[%d]", i), "empty note")
		}
	}

	if pm := d.PaymentMeans; pm != nil {
		if pm.TypeCode != "" && pm.TypeCode != PaymentMeansSEPATransfer {
			v.add("paymentMeans.typeCode", "%q is not supported (58 SEPA credit transfer)", pm.TypeCode)
		}
		if !validIBAN(pm.IBAN) {
			v.add("paymentMeans.iban", "%q is not a valid IBAN (upper case, no spaces)", pm.IBAN)
		}
		if pm.BIC != "" && !reBIC.MatchString(pm.BIC) {
			v.add("paymentMeans.bic", "%q is not a BIC", pm.BIC)
		}
	} else if xr {
		v.add("paymentMeans", "required by XRechnung (BR-DE-1)")
	}

	s := d.Seller
	v.required("seller.name", s.Name, "the seller's name (§14 Abs. 4 Nr. 1 UStG)")
	v.required("seller.street", s.Street, "the seller's full address (§14 Abs. 4 Nr. 1 UStG)")
	v.required("seller.zip", s.Zip, "the seller's full address (§14 Abs. 4 Nr. 1 UStG)")
	v.required("seller.city", s.City, "the seller's full address (§14 Abs. 4 Nr. 1 UStG)")
	if !reCountry.MatchString(s.Country) {
		v.add("seller.country", "%q is not an ISO 3166-1 alpha-2 code", s.Country)
	}
	if s.VATID == "" && s.TaxNumber == "" {
		v.add("seller.vatId", "the seller's VAT ID or tax number is required (§14 Abs. 4 Nr. 2 UStG)")
	}
	if s.Email != "" && !reEmail.MatchString(s.Email) {
		v.add("seller.email", "%q is not an e-mail address", s.Email)
	}
	if xr {
		v.required("seller.contactName", s.ContactName, "XRechnung needs a seller contact (BT-41, BR-DE-5)")
		v.required("seller.phone", s.Phone, "XRechnung needs the seller contact's phone (BT-42, BR-DE-6)")
		v.required("seller.email", s.Email, "XRechnung needs the seller's e-mail (BT-34/BT-43, BR-DE-7)")
	}

	b := d.Buyer
	v.required("buyer.name", b.Name, "the buyer's name (§14 Abs. 4 Nr. 1 UStG)")
	v.required("buyer.street", b.Street, "the buyer's full address (§14 Abs. 4 Nr. 1 UStG)")
	v.required("buyer.city", b.City, "the buyer's full address (§14 Abs. 4 Nr. 1 UStG)")
	if !reCountry.MatchString(b.Country) {
		v.add("buyer.country", "%q is not an ISO 3166-1 alpha-2 code", b.Country)
	}
	if b.Email != "" && !reEmail.MatchString(b.Email) {
		v.add("buyer.email", "%q is not an e-mail address", b.Email)
	}
	if xr {
		v.required("buyer.zip", b.Zip, "XRechnung needs the buyer's post code (BR-DE-9)")
		v.required("buyer.email", b.Email, "XRechnung needs the buyer's electronic address (BT-49)")
	}

	if len(d.Lines) == 0 {
		v.add("lines", "at least one line is required")
	}
	seen := map[string]bool{}
	cats := map[TaxCategory]bool{}
	for i, l := range d.Lines {
		f := func(name string) string { return fmt.Sprintf("lines[%d].%s", i, name) }
		if v.required(f("id"), l.ID, "a line ID (BT-126)") {
			if seen[l.ID] {
				v.add(f("id"), "%q is used by an earlier line", l.ID)
			}
			seen[l.ID] = true
		}
		v.required(f("description"), l.Description, "the item's name (§14 Abs. 4 Nr. 5 UStG)")
		v.number(f("quantity"), l.Quantity, 4)
		v.number(f("unitPrice"), l.UnitPrice, 4)
		v.number(f("discount"), l.Discount, 2)
		v.number(f("taxRate"), l.TaxRate, 2)
		if l.Quantity.IsZero() {
			v.add(f("quantity"), "must not be zero")
		}
		if !reUnitCode.MatchString(l.UnitCode) {
			v.add(f("unitCode"), "%q is not a UN/ECE Rec. 20 unit code (e.g. C62, H87, HUR)", l.UnitCode)
		}
		if l.UnitPrice.IsNegative() {
			v.add(f("unitPrice"), "must not be negative (BR-27); use a negative quantity")
		}
		if l.Discount.IsNegative() {
			v.add(f("discount"), "must not be negative")
		}
		cats[l.TaxCategory] = true
		switch l.TaxCategory {
		case CategoryStandard:
			if !l.TaxRate.IsPositive() {
				v.add(f("taxRate"), "must be positive for category S (use Z or E for 0 %%)")
			}
		case CategoryZero, CategoryExempt, CategoryReverseCharge, CategoryIntraCommunity, CategoryExportOutsideEU:
			if !l.TaxRate.IsZero() {
				v.add(f("taxRate"), "must be 0 for category %s", l.TaxCategory)
			}
		default:
			v.add(f("taxCategory"), "%q is not supported (S, Z, E, AE, K, G)", l.TaxCategory)
		}
	}
	if cats[CategoryExempt] && strings.TrimSpace(d.ExemptionReason) == "" {
		v.add("exemptionReason", "required with category E: the legal ground of the exemption (BR-E-10)")
	}
	if cats[CategoryReverseCharge] || cats[CategoryIntraCommunity] {
		if b.VATID == "" {
			v.add("buyer.vatId", "required for reverse charge (AE) and intra-community supply (K) (§14a UStG)")
		}
	}
	if cats[CategoryIntraCommunity] {
		if s.VATID == "" {
			v.add("seller.vatId", "required for an intra-community supply (K) (BR-IC-02)")
		}
		if b.Country == s.Country {
			v.add("buyer.country", "an intra-community supply (K) goes to another member state than the seller's")
		}
	}
	if cats[CategoryExportOutsideEU] && s.VATID == "" {
		v.add("seller.vatId", "required for an export (G) (BR-G-02)")
	}
	if d.DueDate == "" && strings.TrimSpace(d.PaymentTerms) == "" {
		v.add("dueDate", "a due date or payment terms are required (BR-CO-25)")
	}
}

// validateTexts rejects text an XML document cannot carry unchanged:
// invalid UTF-8 and control characters (encoding/xml would silently replace
// them, and the e-invoice would then differ from the booked invoice).
func (d *Document) validateTexts(v *validation) {
	texts := map[string]string{
		"number": d.Number, "buyerReference": d.BuyerReference, "orderReference": d.OrderReference,
		"paymentTerms": d.PaymentTerms, "exemptionReason": d.ExemptionReason,
		"seller.name": d.Seller.Name, "seller.street": d.Seller.Street, "seller.zip": d.Seller.Zip,
		"seller.city": d.Seller.City, "seller.vatId": d.Seller.VATID, "seller.taxNumber": d.Seller.TaxNumber,
		"seller.email": d.Seller.Email, "seller.phone": d.Seller.Phone, "seller.contactName": d.Seller.ContactName,
		"buyer.name": d.Buyer.Name, "buyer.street": d.Buyer.Street, "buyer.zip": d.Buyer.Zip,
		"buyer.city": d.Buyer.City, "buyer.vatId": d.Buyer.VATID, "buyer.email": d.Buyer.Email,
	}
	if d.PrecedingInvoice != nil {
		texts["precedingInvoice.number"] = d.PrecedingInvoice.Number
	}
	if pm := d.PaymentMeans; pm != nil {
		texts["paymentMeans.information"] = pm.Information
		texts["paymentMeans.accountName"] = pm.AccountName
	}
	for i, n := range d.Notes {
		texts[fmt.Sprintf("notes[%d]", i)] = n
	}
	for i, l := range d.Lines {
		texts[fmt.Sprintf("lines[%d].id", i)] = l.ID
		texts[fmt.Sprintf("lines[%d].description", i)] = l.Description
	}
	for field, s := range texts {
		if !utf8.ValidString(s) {
			v.add(field, "not valid UTF-8")
			continue
		}
		for _, r := range s {
			// Tabs and line breaks are fine in free text; other controls
			// and non-characters are not allowed in XML or mean nothing.
			if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r < 0xa0) || r == 0xfffe || r == 0xffff {
				v.add(field, "contains the control character %U", r)
				break
			}
		}
	}
}

// validIBAN checks the form and the ISO 7064 mod 97-10 check digits.
func validIBAN(iban string) bool {
	if !reIBAN.MatchString(iban) {
		return false
	}
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] {
		if r >= 'A' && r <= 'Z' {
			fmt.Fprintf(&digits, "%d", r-'A'+10)
		} else {
			digits.WriteRune(r)
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}
