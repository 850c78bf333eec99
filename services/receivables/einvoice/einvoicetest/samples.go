// Package einvoicetest holds sample documents covering each case the
// e-invoice packages must handle (rates, credit note, foreign currency,
// intra-community supply, reverse charge, XRechnung). Tests of einvoice,
// invoicepdf and the receivables service share them.
package einvoicetest

import (
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// Sample is a named document; Profile says which validator rules apply.
type Sample struct {
	Name string
	Doc  einvoice.Document
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// Seller is the issuing company of every sample.
func Seller() einvoice.Seller {
	return einvoice.Seller{
		Name: "Müller & Söhne Software GmbH", Street: "Hauptstraße 1", Zip: "10115", City: "Berlin",
		Country: "DE", VATID: "DE123456789", TaxNumber: "30/123/45678",
		Email: "rechnung@mueller-soehne.example", Phone: "+49 30 1234567", ContactName: "Erika Mustermann",
	}
}

// Bank is the seller's account.
func Bank() *einvoice.PaymentMeans {
	return &einvoice.PaymentMeans{
		TypeCode: einvoice.PaymentMeansSEPATransfer, IBAN: "DE02120300000000202051", BIC: "BYLADEM1001",
		AccountName: "Müller & Söhne Software GmbH",
	}
}

// Invoice19 is a plain domestic invoice at 19 %.
func Invoice19() einvoice.Document {
	return einvoice.Document{
		Profile: einvoice.ProfileEN16931, TypeCode: einvoice.TypeInvoice, Number: "RE-2026-0001",
		IssueDate: "2026-11-20", DueDate: "2026-12-20", Currency: "EUR", DeliveryDate: "2026-11-18",
		OrderReference: "PO-4711",
		PaymentTerms:   "Zahlbar innerhalb 30 Tagen ohne Abzug.",
		PaymentMeans:   Bank(),
		Seller:         Seller(),
		Buyer: einvoice.Buyer{Name: "Kunden AG Mitte", Street: "Kundenstraße 15", Zip: "69876",
			City: "Frankfurt", Country: "DE", VATID: "DE987654321"},
		Lines: []einvoice.Line{
			{ID: "1", Description: "Beratung Buchhaltungssoftware", Quantity: d("12.5"), UnitCode: "HUR",
				UnitPrice: d("120.00"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
			{ID: "2", Description: "Lizenz „Ledger Pro“ (1 Jahr)", Quantity: d("3"), UnitCode: "C62",
				UnitPrice: d("333.3333"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
		},
	}
}

// Samples returns one fresh copy of every sample.
func Samples() []Sample {
	mixed := Invoice19()
	mixed.Number = "RE-2026-0002"
	mixed.DeliveryDate = ""
	mixed.ServicePeriod = &einvoice.Period{Start: "2026-10-01", End: "2026-10-31"}
	mixed.Notes = []string{"Vielen Dank für Ihren Auftrag."}
	mixed.Lines = []einvoice.Line{
		{ID: "1", Description: "Wartungsvertrag Oktober", Quantity: d("1"), UnitCode: "C62",
			UnitPrice: d("499.99"), Discount: d("50.00"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
		{ID: "2", Description: "Fachbuch „GoBD in der Praxis“", Quantity: d("2"), UnitCode: "H87",
			UnitPrice: d("39.90"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("7")},
		{ID: "3", Description: "Kaffee (Bewirtung)", Quantity: d("0.755"), UnitCode: "KGM",
			UnitPrice: d("18.99"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("7")},
		{ID: "4", Description: "Versandkostenpauschale", Quantity: d("1"), UnitCode: "C62",
			UnitPrice: d("4.95"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
		{ID: "5", Description: "Solarmodul (Nullsteuersatz § 12 Abs. 3 UStG)", Quantity: d("2"), UnitCode: "H87",
			UnitPrice: d("210.00"), TaxCategory: einvoice.CategoryZero, TaxRate: d("0")},
	}

	credit := Invoice19()
	credit.TypeCode = einvoice.TypeCreditNote
	credit.Number = "GS-2026-0001"
	credit.IssueDate = "2026-11-25"
	credit.DueDate = ""
	credit.PaymentTerms = "Der Betrag wird mit Ihrer nächsten Zahlung verrechnet."
	credit.PaymentMeans = nil // nothing to pay to the seller
	credit.PrecedingInvoice = &einvoice.DocumentRef{Number: "RE-2026-0001", IssueDate: "2026-11-20"}
	credit.Notes = []string{"Korrektur der Rechnung RE-2026-0001: 2,5 Beratungsstunden zu viel berechnet."}
	credit.Lines = []einvoice.Line{
		{ID: "1", Description: "Beratung Buchhaltungssoftware (Korrektur)", Quantity: d("2.5"), UnitCode: "HUR",
			UnitPrice: d("120.00"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
	}

	usd := Invoice19()
	usd.Number = "RE-2026-0003"
	usd.Currency = "USD"
	usd.TaxCurrency = "EUR"
	usd.ExchangeRate = d("0.9214")
	usd.Buyer = einvoice.Buyer{Name: "Acme Corp. Europe GmbH", Street: "Friedrichstraße 100", Zip: "10117",
		City: "Berlin", Country: "DE", VATID: "DE111222333"}
	usd.PaymentMeans = nil
	usd.Lines = []einvoice.Line{
		{ID: "1", Description: "Software development (sprint 42)", Quantity: d("80"), UnitCode: "HUR",
			UnitPrice: d("95.50"), TaxCategory: einvoice.CategoryStandard, TaxRate: d("19")},
	}

	ic := Invoice19()
	ic.Number = "RE-2026-0004"
	ic.Buyer = einvoice.Buyer{Name: "Société Générale d'Équipement SARL", Street: "12 rue de l'Église",
		Zip: "75001", City: "Paris", Country: "FR", VATID: "FR12345678901"}
	ic.Notes = []string{"Steuerfreie innergemeinschaftliche Lieferung (§ 4 Nr. 1 Buchst. b i. V. m. § 6a UStG)."}
	ic.Lines = []einvoice.Line{
		{ID: "1", Description: "Kassenterminal KT-300", Quantity: d("4"), UnitCode: "H87",
			UnitPrice: d("1249.00"), TaxCategory: einvoice.CategoryIntraCommunity, TaxRate: d("0")},
		{ID: "2", Description: "Bondrucker", Quantity: d("4"), UnitCode: "H87",
			UnitPrice: d("189.00"), Discount: d("75.60"), TaxCategory: einvoice.CategoryIntraCommunity, TaxRate: d("0")},
	}

	// A buyer whose name and address Windows-1252 cannot write: the PDF
	// takes its Unicode fonts.
	pl := Invoice19()
	pl.Number = "RE-2026-0009"
	pl.Buyer = einvoice.Buyer{Name: "Przedsiębiorstwo Handlowe Łączność Sp. z o.o.", Street: "ul. Żółkiewskiego 12",
		Zip: "90-001", City: "Łódź", Country: "PL", VATID: "PL5260001246"}
	pl.Lines = []einvoice.Line{
		{ID: "1", Description: "Kassenterminal KT-300 (Dostawa wewnątrzwspólnotowa)", Quantity: d("2"), UnitCode: "H87",
			UnitPrice: d("1249.00"), TaxCategory: einvoice.CategoryIntraCommunity, TaxRate: d("0")},
	}

	rc := Invoice19()
	rc.Number = "RE-2026-0005"
	rc.Buyer = einvoice.Buyer{Name: "Alpenblick Bau GmbH", Street: "Mariahilfer Straße 7", Zip: "1060",
		City: "Wien", Country: "AT", VATID: "ATU12345678"}
	rc.Notes = []string{"Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge, Art. 196 MwStSystRL)."}
	rc.Lines = []einvoice.Line{
		{ID: "1", Description: "Implementierung Schnittstelle", Quantity: d("3"), UnitCode: "DAY",
			UnitPrice: d("960.00"), TaxCategory: einvoice.CategoryReverseCharge, TaxRate: d("0")},
	}

	xr := Invoice19()
	xr.Profile = einvoice.ProfileXRechnung
	xr.Number = "RE-2026-0006"
	xr.BuyerReference = "04011000-12345-34"
	xr.Buyer = einvoice.Buyer{Name: "Bezirksamt Mitte von Berlin", Street: "Karl-Marx-Allee 31", Zip: "10178",
		City: "Berlin", Country: "DE", Email: "e-rechnung@ba-mitte.berlin.example"}

	exempt := Invoice19()
	exempt.Number = "RE-2026-0007"
	exempt.ExemptionReason = "Steuerfrei nach § 4 Nr. 21 UStG"
	exempt.Lines = []einvoice.Line{
		{ID: "1", Description: "Schulung GoBD (Bildungsleistung)", Quantity: d("1"), UnitCode: "DAY",
			UnitPrice: d("850.00"), TaxCategory: einvoice.CategoryExempt, TaxRate: d("0")},
	}

	export := Invoice19()
	export.Number = "RE-2026-0008"
	export.Buyer = einvoice.Buyer{Name: "Bergbahn Zermatt AG", Street: "Bahnhofplatz 2", Zip: "3920",
		City: "Zermatt", Country: "CH", VATID: "CHE-123.456.789 MWST"}
	export.Lines = []einvoice.Line{
		{ID: "1", Description: "Zutrittsterminal ZT-9 (Ausfuhr)", Quantity: d("2"), UnitCode: "H87",
			UnitPrice: d("2450.00"), TaxCategory: einvoice.CategoryExportOutsideEU, TaxRate: d("0")},
	}

	return []Sample{
		{"invoice-19", Invoice19()},
		{"mixed-19-7-0", mixed},
		{"credit-note", credit},
		{"foreign-usd", usd},
		{"intra-community", ic},
		{"intra-community-pl", pl},
		{"reverse-charge", rc},
		{"xrechnung", xr},
		{"exempt", exempt},
		{"export", export},
	}
}
