package einvoicein

import "strings"

// readUBL maps a UBL 2.1 Invoice or CreditNote (XRechnung UBL, Peppol BIS
// Billing 3) onto an Invoice. The two differ only in a few names:
// InvoiceTypeCode/CreditNoteTypeCode, InvoiceLine/CreditNoteLine,
// InvoicedQuantity/CreditedQuantity, and a credit note has its due date
// in PaymentMeans.
func readUBL(root *node) (Invoice, error) {
	credit := root.name == "CreditNote"
	typeEl, lineEl, qtyEl := "InvoiceTypeCode", "InvoiceLine", "InvoicedQuantity"
	if credit {
		typeEl, lineEl, qtyEl = "CreditNoteTypeCode", "CreditNoteLine", "CreditedQuantity"
	}
	var nums numbers
	var ds dates

	inv := Invoice{
		Format:       FormatUBL,
		Syntax:       SyntaxUBL,
		Profile:      root.str("CustomizationID"),
		TypeCode:     root.str(typeEl),
		Number:       root.str("ID"),
		Currency:     root.str("DocumentCurrencyCode"),
		IsCreditNote: credit,
	}
	if creditNoteTypes[inv.TypeCode] {
		inv.IsCreditNote = true
	}
	for _, n := range root.all("Note") {
		if n.text != "" {
			inv.Notes = append(inv.Notes, n.text)
		}
	}
	inv.IssueDate = ds.ubl(root.child("IssueDate"), "IssueDate")
	inv.DueDate = ds.ubl(root.child("DueDate"), "DueDate")
	inv.DeliveryDate = ds.ubl(root.at("Delivery", "ActualDeliveryDate"), "Delivery/ActualDeliveryDate")
	period := root.child("InvoicePeriod")
	inv.DeliveryPeriod = Period{
		Start: ds.ubl(period.child("StartDate"), "InvoicePeriod/StartDate"),
		End:   ds.ubl(period.child("EndDate"), "InvoicePeriod/EndDate"),
	}
	var terms []string
	for _, pt := range root.all("PaymentTerms") {
		for _, n := range pt.all("Note") {
			if n.text != "" {
				terms = append(terms, n.text)
			}
		}
	}
	inv.PaymentTerms = strings.Join(terms, "\n")
	inv.PrecedingInvoice = root.str("BillingReference", "InvoiceDocumentReference", "ID")

	seller := root.at("AccountingSupplierParty", "Party")
	inv.Seller = Seller{
		Name:    ublName(seller),
		Street:  seller.str("PostalAddress", "StreetName"),
		Zip:     seller.str("PostalAddress", "PostalZone"),
		City:    seller.str("PostalAddress", "CityName"),
		Country: seller.str("PostalAddress", "Country", "IdentificationCode"),
		Email:   seller.str("Contact", "ElectronicMail"),
	}
	inv.Seller.VATID, inv.Seller.TaxNumber = ublTaxIDs(seller)
	if inv.Seller.Email == "" {
		if e := seller.child("EndpointID"); e.attr("schemeID") == "EM" {
			inv.Seller.Email = e.text
		}
	}
	for _, pm := range root.all("PaymentMeans") {
		if inv.PaymentMeansCode == "" {
			inv.PaymentMeansCode = pm.str("PaymentMeansCode")
		}
		if inv.PaymentReference == "" {
			inv.PaymentReference = pm.str("PaymentID")
		}
		if inv.DueDate.IsZero() {
			inv.DueDate = ds.ubl(pm.child("PaymentDueDate"), "PaymentMeans/PaymentDueDate")
		}
		if iban := pm.str("PayeeFinancialAccount", "ID"); iban != "" && inv.Seller.IBAN == "" {
			inv.Seller.IBAN = normIBAN(iban)
			inv.Seller.BIC = pm.str("PayeeFinancialAccount", "FinancialInstitutionBranch", "ID")
		}
	}

	buyer := root.at("AccountingCustomerParty", "Party")
	inv.Buyer = Buyer{
		Name:      ublName(buyer),
		Street:    buyer.str("PostalAddress", "StreetName"),
		Zip:       buyer.str("PostalAddress", "PostalZone"),
		City:      buyer.str("PostalAddress", "CityName"),
		Country:   buyer.str("PostalAddress", "Country", "IdentificationCode"),
		Reference: root.str("BuyerReference"),
	}
	inv.Buyer.VATID, _ = ublTaxIDs(buyer)

	for _, it := range root.all(lineEl) {
		item := it.child("Item")
		tax := item.child("ClassifiedTaxCategory")
		qty := it.child(qtyEl)
		price := it.child("Price")
		l := Line{
			ID:           it.str("ID"),
			Description:  item.str("Name"),
			Quantity:     nums.opt(qty, qtyEl),
			Unit:         qty.attr("unitCode"),
			UnitPrice:    nums.opt(price.child("PriceAmount"), "Price/PriceAmount"),
			BaseQuantity: nums.opt(price.child("BaseQuantity"), "Price/BaseQuantity"),
			NetAmount:    nums.req(it.child("LineExtensionAmount"), lineEl+"/LineExtensionAmount"),
			TaxCategory:  tax.str("ID"),
			TaxRate:      nums.opt(tax.child("Percent"), "ClassifiedTaxCategory/Percent"),
		}
		if lp := it.child("InvoicePeriod"); lp != nil {
			l.Period = Period{
				Start: ds.ubl(lp.child("StartDate"), lineEl+"/InvoicePeriod/StartDate"),
				End:   ds.ubl(lp.child("EndDate"), lineEl+"/InvoicePeriod/EndDate"),
			}
		}
		if l.Description == "" {
			l.Description = item.str("Description")
		}
		inv.Lines = append(inv.Lines, l)
	}

	// TaxTotal appears once in the document currency, with the breakdown
	// (BT-110, BG-23), and may appear again in the VAT accounting currency
	// (BT-111) without one.
	for _, tt := range root.all("TaxTotal") {
		amt := tt.child("TaxAmount")
		if c := amt.attr("currencyID"); c != "" && c != inv.Currency {
			continue
		}
		inv.TotalTax = nums.opt(amt, "TaxTotal/TaxAmount")
		for _, st := range tt.all("TaxSubtotal") {
			cat := st.child("TaxCategory")
			inv.TaxBreakdown = append(inv.TaxBreakdown, TaxBreakdown{
				Category:            cat.str("ID"),
				Rate:                nums.opt(cat.child("Percent"), "TaxCategory/Percent"),
				Basis:               nums.req(st.child("TaxableAmount"), "TaxSubtotal/TaxableAmount"),
				Tax:                 nums.req(st.child("TaxAmount"), "TaxSubtotal/TaxAmount"),
				ExemptionReason:     cat.str("TaxExemptionReason"),
				ExemptionReasonCode: cat.str("TaxExemptionReasonCode"),
			})
		}
		break
	}

	sum := root.child("LegalMonetaryTotal")
	if sum == nil {
		return Invoice{}, refuse(ErrAmountsMissing, "LegalMonetaryTotal", "the document totals are missing")
	}
	inv.LineTotal = nums.opt(sum.child("LineExtensionAmount"), "LineExtensionAmount")
	inv.AllowanceTotal = nums.opt(sum.child("AllowanceTotalAmount"), "AllowanceTotalAmount")
	inv.ChargeTotal = nums.opt(sum.child("ChargeTotalAmount"), "ChargeTotalAmount")
	inv.TotalNet = nums.req(sum.child("TaxExclusiveAmount"), "TaxExclusiveAmount")
	inv.TotalGross = nums.req(sum.child("TaxInclusiveAmount"), "TaxInclusiveAmount")
	inv.Prepaid = nums.opt(sum.child("PrepaidAmount"), "PrepaidAmount")
	inv.DuePayable = nums.req(sum.child("PayableAmount"), "PayableAmount")

	if err := firstErr(nums.err, ds.err, required(&inv)); err != nil {
		return Invoice{}, err
	}
	return inv, nil
}

// ublName is the legal name (BT-27/BT-44), else the trading name.
func ublName(party *node) string {
	if n := party.str("PartyLegalEntity", "RegistrationName"); n != "" {
		return n
	}
	return party.str("PartyName", "Name")
}

// ublTaxIDs reads the VAT ID (tax scheme VAT) and the tax number (any
// other scheme, FC in XRechnung).
func ublTaxIDs(party *node) (vat, taxNumber string) {
	for _, ts := range party.all("PartyTaxScheme") {
		id := ts.str("CompanyID")
		if ts.str("TaxScheme", "ID") == "VAT" {
			if vat == "" {
				vat = id
			}
		} else if taxNumber == "" {
			taxNumber = id
		}
	}
	return vat, taxNumber
}
