package einvoicein

import "strings"

// readCII maps a CrossIndustryInvoice (D16B, as ZUGFeRD 2.x, Factur-X and
// XRechnung CII use it) onto an Invoice.
func readCII(root *node) (Invoice, error) {
	doc := root.child("ExchangedDocument")
	tx := root.child("SupplyChainTradeTransaction")
	agr := tx.child("ApplicableHeaderTradeAgreement")
	dlv := tx.child("ApplicableHeaderTradeDelivery")
	set := tx.child("ApplicableHeaderTradeSettlement")
	if doc == nil || tx == nil {
		return Invoice{}, refuse(ErrNotInvoice, "file", "CrossIndustryInvoice without ExchangedDocument or SupplyChainTradeTransaction")
	}
	var nums numbers
	var ds dates

	inv := Invoice{
		Format:   FormatCII,
		Syntax:   SyntaxCII,
		Profile:  root.str("ExchangedDocumentContext", "GuidelineSpecifiedDocumentContextParameter", "ID"),
		TypeCode: doc.str("TypeCode"),
		Number:   doc.str("ID"),
		Currency: set.str("InvoiceCurrencyCode"),
	}
	inv.IsCreditNote = creditNoteTypes[inv.TypeCode]
	for _, n := range doc.all("IncludedNote") {
		if c := n.str("Content"); c != "" {
			inv.Notes = append(inv.Notes, c)
		}
	}
	inv.IssueDate = ds.cii(doc.child("IssueDateTime"), "IssueDateTime")
	inv.DeliveryDate = ds.cii(dlv.at("ActualDeliverySupplyChainEvent", "OccurrenceDateTime"), "ActualDeliverySupplyChainEvent")
	period := set.child("BillingSpecifiedPeriod")
	inv.DeliveryPeriod = Period{
		Start: ds.cii(period.child("StartDateTime"), "BillingSpecifiedPeriod/StartDateTime"),
		End:   ds.cii(period.child("EndDateTime"), "BillingSpecifiedPeriod/EndDateTime"),
	}

	// Payment terms: there may be several (EXTENDED); the first due date
	// counts, the descriptions are all kept.
	var terms []string
	for _, pt := range set.all("SpecifiedTradePaymentTerms") {
		if d := pt.str("Description"); d != "" {
			terms = append(terms, d)
		}
		if inv.DueDate.IsZero() {
			inv.DueDate = ds.cii(pt.child("DueDateDateTime"), "SpecifiedTradePaymentTerms/DueDateDateTime")
		}
	}
	inv.PaymentTerms = strings.Join(terms, "\n")
	inv.PaymentReference = set.str("PaymentReference")
	inv.PrecedingInvoice = set.str("InvoiceReferencedDocument", "IssuerAssignedID")

	seller := agr.child("SellerTradeParty")
	inv.Seller = Seller{
		Name:    seller.str("Name"),
		Street:  seller.str("PostalTradeAddress", "LineOne"),
		Zip:     seller.str("PostalTradeAddress", "PostcodeCode"),
		City:    seller.str("PostalTradeAddress", "CityName"),
		Country: seller.str("PostalTradeAddress", "CountryID"),
		Email:   seller.str("DefinedTradeContact", "EmailURIUniversalCommunication", "URIID"),
	}
	inv.Seller.VATID, inv.Seller.TaxNumber = ciiTaxIDs(seller)
	if inv.Seller.Email == "" {
		if u := seller.at("URIUniversalCommunication", "URIID"); u.attr("schemeID") == "EM" {
			inv.Seller.Email = u.text
		}
	}
	for _, pm := range set.all("SpecifiedTradeSettlementPaymentMeans") {
		if inv.PaymentMeansCode == "" {
			inv.PaymentMeansCode = pm.str("TypeCode")
		}
		if iban := pm.str("PayeePartyCreditorFinancialAccount", "IBANID"); iban != "" && inv.Seller.IBAN == "" {
			inv.Seller.IBAN = normIBAN(iban)
			inv.Seller.BIC = pm.str("PayeeSpecifiedCreditorFinancialInstitution", "BICID")
		}
	}

	buyer := agr.child("BuyerTradeParty")
	inv.Buyer = Buyer{
		Name:      buyer.str("Name"),
		Street:    buyer.str("PostalTradeAddress", "LineOne"),
		Zip:       buyer.str("PostalTradeAddress", "PostcodeCode"),
		City:      buyer.str("PostalTradeAddress", "CityName"),
		Country:   buyer.str("PostalTradeAddress", "CountryID"),
		Reference: agr.str("BuyerReference"),
	}
	inv.Buyer.VATID, _ = ciiTaxIDs(buyer)

	for _, it := range tx.all("IncludedSupplyChainTradeLineItem") {
		prod := it.child("SpecifiedTradeProduct")
		ltax := it.at("SpecifiedLineTradeSettlement", "ApplicableTradeTax")
		price := it.at("SpecifiedLineTradeAgreement", "NetPriceProductTradePrice")
		qty := it.at("SpecifiedLineTradeDelivery", "BilledQuantity")
		l := Line{
			ID:           it.str("AssociatedDocumentLineDocument", "LineID"),
			Description:  prod.str("Name"),
			Quantity:     nums.opt(qty, "BilledQuantity"),
			Unit:         qty.attr("unitCode"),
			UnitPrice:    nums.opt(price.child("ChargeAmount"), "NetPriceProductTradePrice/ChargeAmount"),
			BaseQuantity: nums.opt(price.child("BasisQuantity"), "NetPriceProductTradePrice/BasisQuantity"),
			NetAmount:    nums.req(it.at("SpecifiedLineTradeSettlement", "SpecifiedTradeSettlementLineMonetarySummation", "LineTotalAmount"), "LineTotalAmount"),
			TaxCategory:  ltax.str("CategoryCode"),
			TaxRate:      nums.opt(ltax.child("RateApplicablePercent"), "RateApplicablePercent"),
		}
		if lp := it.at("SpecifiedLineTradeSettlement", "BillingSpecifiedPeriod"); lp != nil {
			l.Period = Period{
				Start: ds.cii(lp.child("StartDateTime"), "SpecifiedLineTradeSettlement/BillingSpecifiedPeriod/StartDateTime"),
				End:   ds.cii(lp.child("EndDateTime"), "SpecifiedLineTradeSettlement/BillingSpecifiedPeriod/EndDateTime"),
			}
		}
		if l.Description == "" {
			l.Description = prod.str("Description")
		}
		inv.Lines = append(inv.Lines, l)
	}

	for _, t := range set.all("ApplicableTradeTax") {
		inv.TaxBreakdown = append(inv.TaxBreakdown, TaxBreakdown{
			Category:            t.str("CategoryCode"),
			Rate:                nums.opt(t.child("RateApplicablePercent"), "ApplicableTradeTax/RateApplicablePercent"),
			Basis:               nums.req(t.child("BasisAmount"), "ApplicableTradeTax/BasisAmount"),
			Tax:                 nums.req(t.child("CalculatedAmount"), "ApplicableTradeTax/CalculatedAmount"),
			ExemptionReason:     t.str("ExemptionReason"),
			ExemptionReasonCode: t.str("ExemptionReasonCode"),
		})
	}

	sum := set.child("SpecifiedTradeSettlementHeaderMonetarySummation")
	if sum == nil {
		return Invoice{}, refuse(ErrAmountsMissing, "SpecifiedTradeSettlementHeaderMonetarySummation", "the document totals are missing")
	}
	inv.LineTotal = nums.opt(sum.child("LineTotalAmount"), "LineTotalAmount")
	inv.AllowanceTotal = nums.opt(sum.child("AllowanceTotalAmount"), "AllowanceTotalAmount")
	inv.ChargeTotal = nums.opt(sum.child("ChargeTotalAmount"), "ChargeTotalAmount")
	inv.TotalNet = nums.req(sum.child("TaxBasisTotalAmount"), "TaxBasisTotalAmount")
	// TaxTotalAmount appears once in the invoice currency (BT-110) and
	// may appear again in the VAT accounting currency (BT-111); the
	// currencyID tells them apart.
	for _, tt := range sum.all("TaxTotalAmount") {
		if c := tt.attr("currencyID"); c == "" || c == inv.Currency {
			inv.TotalTax = nums.opt(tt, "TaxTotalAmount")
			break
		}
	}
	inv.TotalGross = nums.req(sum.child("GrandTotalAmount"), "GrandTotalAmount")
	inv.Prepaid = nums.opt(sum.child("TotalPrepaidAmount"), "TotalPrepaidAmount")
	inv.DuePayable = nums.req(sum.child("DuePayableAmount"), "DuePayableAmount")

	if err := firstErr(nums.err, ds.err, required(&inv)); err != nil {
		return Invoice{}, err
	}
	return inv, nil
}

// ciiTaxIDs reads a party's VAT ID (scheme VA) and tax number (FC).
func ciiTaxIDs(party *node) (vat, taxNumber string) {
	for _, r := range party.all("SpecifiedTaxRegistration") {
		id := r.child("ID")
		switch id.attr("schemeID") {
		case "VA":
			if vat == "" {
				vat = id.text
			}
		case "FC":
			if taxNumber == "" {
				taxNumber = id.text
			}
		}
	}
	return vat, taxNumber
}

// required checks the fields without which an invoice cannot be booked.
func required(inv *Invoice) error {
	switch {
	case inv.Number == "":
		return refuse(ErrMissingField, "Number", "the invoice number (BT-1) is missing")
	case inv.TypeCode == "":
		return refuse(ErrMissingField, "TypeCode", "the document type (BT-3) is missing")
	case inv.IssueDate.IsZero():
		return refuse(ErrMissingField, "IssueDate", "the issue date (BT-2) is missing")
	case inv.Currency == "":
		return refuse(ErrMissingField, "Currency", "the invoice currency (BT-5) is missing")
	}
	return nil
}
