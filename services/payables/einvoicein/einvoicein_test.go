package einvoicein

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func tax(cat, rate, basis, amount string) TaxBreakdown {
	return TaxBreakdown{Category: cat, Rate: dec(rate), Basis: dec(basis), Tax: dec(amount)}
}

// summary is what the sample table checks of every document: the fields
// a payable is booked and paid from.
type summary struct {
	Format           Format
	Profile          string
	TypeCode         string
	IsCreditNote     bool
	Number           string
	IssueDate        time.Time
	DueDate          time.Time
	DeliveryDate     time.Time
	DeliveryPeriod   Period
	Currency         string
	SellerName       string
	SellerVATID      string
	SellerTaxNumber  string
	SellerEmail      string
	SellerIBAN       string
	SellerBIC        string
	BuyerName        string
	BuyerVATID       string
	BuyerReference   string
	Lines            int
	Tax              []TaxBreakdown
	TotalNet         decimal.Decimal
	TotalTax         decimal.Decimal
	TotalGross       decimal.Decimal
	Prepaid          decimal.Decimal
	DuePayable       decimal.Decimal
	PaymentMeansCode string
	PaymentTerms     string
	PaymentReference string
	PrecedingInvoice string
}

func summarize(inv Invoice) summary {
	return summary{
		Format: inv.Format, Profile: inv.Profile, TypeCode: inv.TypeCode, IsCreditNote: inv.IsCreditNote,
		Number: inv.Number, IssueDate: inv.IssueDate, DueDate: inv.DueDate, DeliveryDate: inv.DeliveryDate,
		DeliveryPeriod: inv.DeliveryPeriod, Currency: inv.Currency,
		SellerName: inv.Seller.Name, SellerVATID: inv.Seller.VATID, SellerTaxNumber: inv.Seller.TaxNumber,
		SellerEmail: inv.Seller.Email, SellerIBAN: inv.Seller.IBAN, SellerBIC: inv.Seller.BIC,
		BuyerName: inv.Buyer.Name, BuyerVATID: inv.Buyer.VATID, BuyerReference: inv.Buyer.Reference,
		Lines: len(inv.Lines), Tax: inv.TaxBreakdown,
		TotalNet: inv.TotalNet, TotalTax: inv.TotalTax, TotalGross: inv.TotalGross, Prepaid: inv.Prepaid, DuePayable: inv.DuePayable,
		PaymentMeansCode: inv.PaymentMeansCode, PaymentTerms: inv.PaymentTerms, PaymentReference: inv.PaymentReference,
		PrecedingInvoice: inv.PrecedingInvoice,
	}
}

const (
	xrechnung30 = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
	en16931     = "urn:cen.eu:en16931:2017"
)

// samples are every invoice in testdata with what it says, read from the
// XML by hand (the literals are the document's, not the parser's).
var samples = map[string]summary{
	"CII_example1.xml": {
		Format: FormatCII, Profile: en16931, TypeCode: "380", Number: "12115118",
		IssueDate: day(2015, 1, 9), DueDate: day(2015, 1, 9), Currency: "EUR",
		SellerName: "De Koksmaat", SellerVATID: "NL8200.98.395.B.01", SellerIBAN: "NL57RABO0107307510",
		BuyerName: "ODIN 59", Lines: 20,
		Tax:      []TaxBreakdown{tax("S", "6", "183.23", "10.99"), tax("S", "21", "46.37", "9.74")},
		TotalNet: dec("229.6"), TotalTax: dec("20.73"), TotalGross: dec("250.33"), DuePayable: dec("250.33"),
		PaymentMeansCode: "30", PaymentReference: "Deb. 10202 / Fact. 12115118",
	},
	"kosit-01.01a-INVOICE_uncefact.xml": {
		Format: FormatCII, Profile: xrechnung30, TypeCode: "380", Number: "123456XX",
		// Its billing period 2016-01-01..2016-12-31 is the first line's
		// (BT-134/135), not the document's.
		IssueDate: day(2016, 4, 4), Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "DE 123456789", SellerEmail: "seller@email.de", SellerIBAN: "DE79000000001234567890",
		BuyerName: "[Buyer name]", BuyerReference: "04011000-12345-03", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7", "314.86", "22.04")},
		TotalNet: dec("314.86"), TotalTax: dec("22.04"), TotalGross: dec("336.9"), DuePayable: dec("336.9"),
		PaymentMeansCode: "58", PaymentTerms: "Zahlbar sofort ohne Abzug.",
	},
	"kosit-01.05a-INVOICE_uncefact.xml": {
		Format: FormatCII, Profile: xrechnung30, TypeCode: "380", Number: "PRG1502112",
		IssueDate: day(2015, 4, 24), DeliveryPeriod: Period{day(2015, 4, 20), day(2015, 4, 24)}, Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "DE123456789", SellerEmail: "xxx@schulung.de", SellerIBAN: "DE79000000001234567890",
		BuyerName: "[Buyer name]", BuyerReference: "99000000-18188-18", Lines: 4,
		Tax:      []TaxBreakdown{tax("S", "19", "8870", "1685.3")},
		TotalNet: dec("8870"), TotalTax: dec("1685.3"), TotalGross: dec("10555.3"), DuePayable: dec("10555.3"),
		PaymentMeansCode: "58", PaymentTerms: "14 Tage",
	},
	"kosit-01.14a-INVOICE_uncefact.xml": {
		Format: FormatCII, Profile: xrechnung30, TypeCode: "380", Number: "1234567",
		IssueDate: day(2018, 4, 13), DueDate: day(2018, 4, 13), DeliveryDate: day(2018, 4, 13),
		DeliveryPeriod: Period{day(2018, 4, 13), day(2018, 4, 13)}, Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "ATU123456789", SellerEmail: "tim.tester@test.com", SellerIBAN: "DE79000000001234567890",
		BuyerName: "[Buyer name]", BuyerVATID: "DE12345ABC", BuyerReference: "90000000-03083-72", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "19", "10781.25", "2048.44")},
		TotalNet: dec("10781.25"), TotalTax: dec("2048.44"), TotalGross: dec("12829.69"), DuePayable: dec("12829.69"),
		PaymentMeansCode: "58", PaymentReference: "Deb. 12345 / Fact. 9876543",
	},
	"zugferd-minimum-rechnung.xml": {
		Format: FormatCII, Profile: "urn:factur-x.eu:1p0:minimum", TypeCode: "380", Number: "471102",
		IssueDate: day(2020, 3, 5), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Frankreich",
		TotalNet:  dec("198.00"), TotalTax: dec("37.62"), TotalGross: dec("235.62"), DuePayable: dec("235.62"),
	},
	"zugferd-basic-einfach.xml": {
		Format: FormatCII, Profile: "urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic", TypeCode: "380", Number: "471102",
		IssueDate: day(2020, 3, 5), DueDate: day(2020, 4, 4), DeliveryDate: day(2020, 3, 5), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Mitte", Lines: 1,
		Tax:      []TaxBreakdown{tax("S", "19.00", "198.00", "37.62")},
		TotalNet: dec("198.00"), TotalTax: dec("37.62"), TotalGross: dec("235.62"), DuePayable: dec("235.62"),
	},
	"zugferd-en16931-einfach.xml": {
		Format: FormatCII, Profile: en16931, TypeCode: "380", Number: "471102",
		IssueDate: day(2018, 3, 5), DeliveryDate: day(2018, 3, 5), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Mitte", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7.00", "275.00", "19.25"), tax("S", "19.00", "198.00", "37.62")},
		TotalNet: dec("473.00"), TotalTax: dec("56.87"), TotalGross: dec("529.87"), Prepaid: dec("0.00"), DuePayable: dec("529.87"),
		PaymentTerms: "Zahlbar innerhalb 30 Tagen netto bis 04.04.2018, 3% Skonto innerhalb 10 Tagen bis 15.03.2018",
	},
	// 389 is a self-billed invoice (the buyer's Gutschrift), not a
	// credit note: the amounts are owed to the seller as usual.
	"zugferd-en16931-gutschrift.xml": {
		Format: FormatCII, Profile: en16931, TypeCode: "389", Number: "471102",
		IssueDate: day(2018, 3, 5), DeliveryDate: day(2018, 3, 5), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Mitte", BuyerVATID: "DE136695976", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7.00", "275.00", "19.25"), tax("S", "19.00", "198.00", "37.62")},
		TotalNet: dec("473.00"), TotalTax: dec("56.87"), TotalGross: dec("529.87"), Prepaid: dec("0.00"), DuePayable: dec("529.87"),
		PaymentTerms: "Der Betrag wird ihrem Kundenkonto gutgeschrieben und mit der nächsten Rechnung verrechnet.",
	},
	"zugferd-en16931-rabatte.xml": {
		Format: FormatCII, Profile: en16931, TypeCode: "380", Number: "471102",
		IssueDate: day(2018, 6, 5), DeliveryDate: day(2018, 6, 3), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Mitte", Lines: 4,
		Tax:      []TaxBreakdown{tax("S", "7.00", "129.37", "9.06"), tax("S", "19.00", "64.40", "12.24")},
		TotalNet: dec("193.77"), TotalTax: dec("21.30"), TotalGross: dec("215.07"), Prepaid: dec("50.00"), DuePayable: dec("165.07"),
		PaymentTerms: "Zahlbar innerhalb 30 Tagen netto bis 04.07.2018, 3% Skonto innerhalb 10 Tagen bis 15.06.2018",
	},
	"zugferd-xrechnung-einfach.xml": {
		Format: FormatCII, Profile: xrechnung30, TypeCode: "380", Number: "471102",
		IssueDate: day(2024, 11, 15), DueDate: day(2025, 12, 15), DeliveryDate: day(2024, 11, 14), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		SellerEmail: "Max@Mustermann.de", SellerIBAN: "DE02120300000000202051", SellerBIC: "BYLADEM1001",
		BuyerName: "Kunden AG Mitte", BuyerReference: "04011000-12345-34", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7.00", "275.00", "19.25"), tax("S", "19.00", "198.00", "37.62")},
		TotalNet: dec("473.00"), TotalTax: dec("56.87"), TotalGross: dec("529.87"), Prepaid: dec("0.00"), DuePayable: dec("529.87"),
		PaymentMeansCode: "58", PaymentTerms: "#SKONTO#TAGE=10#PROZENT=3.00#",
	},
	"kosit-01.01a-INVOICE_ubl.xml": {
		Format: FormatUBL, Profile: xrechnung30, TypeCode: "380", Number: "123456XX",
		IssueDate: day(2016, 4, 4), Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "DE 123456789", SellerEmail: "seller@email.de", SellerIBAN: "DE79000000001234567890",
		BuyerName: "[Buyer name]", BuyerReference: "04011000-12345-03", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7", "314.86", "22.04")},
		TotalNet: dec("314.86"), TotalTax: dec("22.04"), TotalGross: dec("336.9"), DuePayable: dec("336.9"),
		PaymentMeansCode: "58", PaymentTerms: "Zahlbar sofort ohne Abzug.",
	},
	"kosit-01.18a-INVOICE_ubl.xml": {
		Format: FormatUBL, Profile: xrechnung30, TypeCode: "384", Number: "PRG1502112",
		IssueDate: day(2015, 4, 24), DeliveryPeriod: Period{day(2015, 4, 20), day(2015, 4, 24)}, Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "DE123456789", SellerEmail: "xxx@schulung.de", SellerIBAN: "DE79000000001234567890",
		BuyerName: "[Buyer name]", BuyerReference: "99000000-18188-18", Lines: 4,
		Tax:      []TaxBreakdown{tax("S", "19", "8870", "1685.3")},
		TotalNet: dec("8870"), TotalTax: dec("1685.3"), TotalGross: dec("10555.3"), DuePayable: dec("10555.3"),
		PaymentMeansCode: "58", PaymentTerms: "14 Tage", PrecedingInvoice: "PRG1502168",
	},
	// Its second TaxTotal is in GBP (the VAT accounting currency, BT-111)
	// and must not be taken for BT-110.
	"kosit-02.01a-INVOICE_ubl.xml": {
		Format: FormatUBL, Profile: xrechnung30, TypeCode: "380", Number: "1234567",
		IssueDate: day(2018, 4, 13), DueDate: day(2018, 4, 13), DeliveryDate: day(2018, 4, 13),
		DeliveryPeriod: Period{day(2016, 1, 1), day(2016, 12, 31)}, Currency: "EUR",
		SellerName: "[Seller name]", SellerVATID: "ATU123456789", SellerTaxNumber: "123/456/789", SellerEmail: "tim.tester@test.com",
		SellerIBAN: "DE79000000001234567890", SellerBIC: "[BIC]",
		BuyerName: "[Buyer name]", BuyerVATID: "DE12345ABC", BuyerReference: "90000000-03083-72", Lines: 2,
		Tax: []TaxBreakdown{
			tax("S", "19", "10781.25", "2048.44"),
			{Category: "E", Rate: dec("0"), Basis: dec("0"), Tax: dec("0"), ExemptionReasonCode: "VATEX-EU-132-1A"},
		},
		TotalNet: dec("10781.25"), TotalTax: dec("2048.44"), TotalGross: dec("12829.69"), Prepaid: dec("0"), DuePayable: dec("12829.69"),
		PaymentMeansCode: "58", PaymentReference: "Deb. 12345 / Fact. 9876543",
		PaymentTerms: "Bitte überweisen Sie bis zum 24.01.2015 auf das unten aufgeführte Konto.",
	},
	"ubl-creditnote-noprefix.xml": {
		Format: FormatUBL, Profile: "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0",
		TypeCode: "381", IsCreditNote: true, Number: "GS-2026-0042",
		IssueDate: day(2026, 3, 10), DueDate: day(2026, 3, 24), Currency: "EUR",
		SellerName: "Bürobedarf Müller GmbH", SellerVATID: "DE811111111", SellerEmail: "buchhaltung@mueller.example",
		SellerIBAN: "DE02120300000000202051", SellerBIC: "BYLADEM1001",
		BuyerName: "Kunde KG", BuyerVATID: "DE822222222", BuyerReference: "PO-7781", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "19", "100.00", "19.00"), tax("S", "7", "50.00", "3.50")},
		TotalNet: dec("150.00"), TotalTax: dec("22.50"), TotalGross: dec("172.50"), DuePayable: dec("172.50"),
		PaymentMeansCode: "58", PaymentReference: "GS-2026-0042", PaymentTerms: "Wird mit der nächsten Rechnung verrechnet.",
		PrecedingInvoice: "R-2026-0017",
	},
}

// malformed are the files in testdata that must be refused.
var malformed = map[string]error{
	"invalid-malformed-1.xml": ErrNotInvoice,
}

func TestReadSamples(t *testing.T) {
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			inv, err := Read(bytes.NewReader(data))
			if want, bad := malformed[name]; bad {
				if !errors.Is(err, want) || errs.CodeOf(err) != errs.InvalidInput {
					t.Fatalf("Read = %v, want INVALID_INPUT wrapping %v", err, want)
				}
				return
			}
			want, ok := samples[name]
			if !ok {
				t.Fatalf("testdata/%s has no expectation in the test", name)
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if diff := cmp.Diff(want, summarize(inv)); diff != "" {
				t.Errorf("invoice (-want +got):\n%s", diff)
			}
			// The document's own arithmetic holds for every sample: the
			// reader dropped or doubled nothing.
			sumTax := decimal.Zero
			for _, b := range inv.TaxBreakdown {
				sumTax = sumTax.Add(b.Tax)
			}
			if len(inv.TaxBreakdown) > 0 && !sumTax.Equal(inv.TotalTax) {
				t.Errorf("breakdown tax %s != total tax %s", sumTax, inv.TotalTax)
			}
			if !inv.TotalNet.Add(inv.TotalTax).Equal(inv.TotalGross) {
				t.Errorf("net %s + tax %s != gross %s", inv.TotalNet, inv.TotalTax, inv.TotalGross)
			}
			if !inv.TotalGross.Sub(inv.Prepaid).Equal(inv.DuePayable) {
				t.Errorf("gross %s - prepaid %s != due %s", inv.TotalGross, inv.Prepaid, inv.DuePayable)
			}
		})
	}
	for name := range samples {
		if !seen[name] {
			t.Errorf("expected sample testdata/%s is missing", name)
		}
	}
}

// TestReadLines checks whole documents, lines and parties included.
func TestReadLines(t *testing.T) {
	tests := []struct {
		file  string
		lines []Line
	}{
		{"zugferd-en16931-einfach.xml", []Line{
			{ID: "1", Description: "Trennblätter A4", Quantity: dec("20.0000"), Unit: "H87", UnitPrice: dec("9.9000"),
				NetAmount: dec("198.00"), TaxCategory: "S", TaxRate: dec("19.00")},
			{ID: "2", Description: "Joghurt Banane", Quantity: dec("50.0000"), Unit: "H87", UnitPrice: dec("5.5000"),
				NetAmount: dec("275.00"), TaxCategory: "S", TaxRate: dec("7.00")},
		}},
		{"kosit-02.01a-INVOICE_ubl.xml", []Line{
			{ID: "1", Description: "Beratung", Quantity: dec("33"), Unit: "XPP", UnitPrice: dec("143.75"),
				NetAmount: dec("4743.75"), TaxCategory: "S", TaxRate: dec("19"), Period: Period{day(2016, 1, 1), day(2016, 12, 31)}},
			{ID: "2", Description: "Beratung", Quantity: dec("42"), Unit: "XPP", UnitPrice: dec("143.75"),
				NetAmount: dec("6037.5"), TaxCategory: "S", TaxRate: dec("19")},
		}},
		{"ubl-creditnote-noprefix.xml", []Line{
			{ID: "1", Description: "Toner schwarz (Rücknahme)", Quantity: dec("4"), Unit: "H87", UnitPrice: dec("25.00"),
				NetAmount: dec("100.00"), TaxCategory: "S", TaxRate: dec("19")},
			{ID: "2", Description: "Kaffee, Rückgabe", Quantity: dec("10"), Unit: "KGM", UnitPrice: dec("50.00"),
				BaseQuantity: dec("10"), NetAmount: dec("50.00"), TaxCategory: "S", TaxRate: dec("7")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			inv := mustRead(t, tt.file)
			if diff := cmp.Diff(tt.lines, inv.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}

	inv := mustRead(t, "zugferd-basic-einfach.xml")
	wantSeller := Seller{Name: "Lieferant GmbH", VATID: "DE123456789", TaxNumber: "201/113/40209",
		Street: "Lieferantenstraße 20", Zip: "80333", City: "München", Country: "DE"}
	wantBuyer := Buyer{Name: "Kunden AG Mitte", Street: "Hans Muster", Zip: "69876", City: "Frankfurt", Country: "DE"}
	if diff := cmp.Diff(wantSeller, inv.Seller); diff != "" {
		t.Errorf("seller (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBuyer, inv.Buyer); diff != "" {
		t.Errorf("buyer (-want +got):\n%s", diff)
	}
}

func mustRead(t *testing.T, file string) Invoice {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := ReadBytes(data)
	if err != nil {
		t.Fatalf("ReadBytes(%s): %v", file, err)
	}
	return inv
}

// TestReadRefuses: each kind of bad input is refused with the sentinel
// that names it and a 4xx code, never a panic.
func TestReadRefuses(t *testing.T) {
	cii := func(settlement string) string {
		return `<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="x" xmlns:udt="y">
<rsm:ExchangedDocument><ram:ID>R-1</ram:ID><ram:TypeCode>380</ram:TypeCode><ram:IssueDateTime><udt:DateTimeString format="102">20260101</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>
<rsm:SupplyChainTradeTransaction><ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>` + settlement +
			`</ram:ApplicableHeaderTradeSettlement></rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>`
	}
	sums := func(net, gross, due string) string {
		return `<ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:TaxBasisTotalAmount>` + net +
			`</ram:TaxBasisTotalAmount><ram:GrandTotalAmount>` + gross + `</ram:GrandTotalAmount><ram:DuePayableAmount>` + due +
			`</ram:DuePayableAmount></ram:SpecifiedTradeSettlementHeaderMonetarySummation>`
	}
	deep := strings.Repeat("<a>", MaxDepth+1) + strings.Repeat("</a>", MaxDepth+1)
	tests := []struct {
		name  string
		in    []byte
		want  error
		code  string
		field string
	}{
		{"empty", []byte("  \n"), ErrEmpty, errs.InvalidInput, "file"},
		{"not XML", []byte("Rechnung Nr. 1\nBetrag: 10,00 EUR"), ErrNotXML, errs.InvalidInput, "file"},
		{"truncated XML", []byte(cii(sums("1", "1", "1"))[:200]), ErrNotXML, errs.InvalidInput, "file"},
		{"DOCTYPE with an external entity", []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Invoice>&e;</Invoice>`), ErrNotXML, errs.InvalidInput, "file"},
		{"too deep", []byte(deep), ErrTooDeep, errs.InvalidInput, "file"},
		{"too large", bytes.Repeat([]byte(" "), MaxSize+1), ErrTooLarge, errs.FileTooLarge, "file"},
		{"other XML", []byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>`), ErrNotInvoice, errs.InvalidInput, "file"},
		{"ZUGFeRD 1", []byte(`<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>`), ErrNotInvoice, errs.InvalidInput, "file"},
		{"no totals", []byte(cii("")), ErrAmountsMissing, errs.InvalidInput, "SpecifiedTradeSettlementHeaderMonetarySummation"},
		{"no due amount", []byte(cii(`<ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:TaxBasisTotalAmount>1</ram:TaxBasisTotalAmount><ram:GrandTotalAmount>1</ram:GrandTotalAmount></ram:SpecifiedTradeSettlementHeaderMonetarySummation>`)), ErrAmountsMissing, errs.InvalidInput, "DuePayableAmount"},
		{"decimal comma", []byte(cii(sums("10,00", "11.90", "11.90"))), ErrMalformedNumber, errs.InvalidInput, "TaxBasisTotalAmount"},
		{"exponent", []byte(cii(sums("10.00", "1e3", "11.90"))), ErrMalformedNumber, errs.InvalidInput, "GrandTotalAmount"},
		{"empty amount", []byte(cii(sums("10.00", "11.90", ""))), ErrMalformedNumber, errs.InvalidInput, "DuePayableAmount"},
		{"bad date", []byte(strings.Replace(cii(sums("1", "1", "1")), "20260101", "2026-01-01", 1)), ErrMalformedDate, errs.InvalidInput, "IssueDateTime"},
		{"no number", []byte(strings.Replace(cii(sums("1", "1", "1")), "<ram:ID>R-1</ram:ID>", "", 1)), ErrMissingField, errs.InvalidInput, "Number"},
		{"PDF that is not one", []byte("%PDF-1.7\n garbage"), ErrMalformedPDF, errs.InvalidInput, "file"},
		{"XML mentioning %PDF- is still XML", []byte(`<?xml version="1.0"?><!-- from %PDF-1.7 --><x/>`), ErrNotInvoice, errs.InvalidInput, "file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadBytes(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadBytes = %v, want %v", err, tt.want)
			}
			e := errs.As(err)
			if e == nil || e.Code != tt.code || len(e.Details) != 1 || e.Details[0].Field != tt.field {
				t.Fatalf("error = %#v, want code %s on field %s", e, tt.code, tt.field)
			}
		})
	}
	// The minimal valid document the cases above break is itself read.
	if _, err := ReadBytes([]byte(cii(sums("10.00", "11.90", "11.90")))); err != nil {
		t.Fatalf("the valid base document: %v", err)
	}
}

// TestReadEncodings: a byte order mark and a declared Latin-1 encoding
// read as the same invoice as plain UTF-8.
func TestReadEncodings(t *testing.T) {
	base := mustRead(t, "zugferd-basic-einfach.xml")
	data, err := os.ReadFile(filepath.Join("testdata", "zugferd-basic-einfach.xml"))
	if err != nil {
		t.Fatal(err)
	}
	withBOM := append([]byte("\xef\xbb\xbf"), data...)
	// The licence comments hold characters Latin-1 lacks; the invoice
	// (München, Lieferantenstraße) does not.
	noComments := regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAll(data, nil)
	latin1, err := charmap.ISO8859_1.NewEncoder().Bytes(bytes.Replace(noComments,
		[]byte("encoding='UTF-8'"), []byte("encoding='ISO-8859-1'"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(latin1, data) {
		t.Fatal("the Latin-1 copy did not change (no umlauts in the sample?)")
	}
	for name, in := range map[string][]byte{"BOM": withBOM, "ISO-8859-1": latin1} {
		inv, err := ReadBytes(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(base, inv); diff != "" {
			t.Errorf("%s (-utf8 +got):\n%s", name, diff)
		}
	}
}

// TestReadReaderTooLarge: Read stops at MaxSize+1 bytes, whatever the
// reader would still give.
func TestReadReaderTooLarge(t *testing.T) {
	_, err := Read(endless{})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read = %v, want ErrTooLarge", err)
	}
}

// endless is an endless reader of spaces.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// FuzzRead: no input panics, and whatever is accepted is an invoice with
// its totals.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	files = append(files, "testdata/mustang-EN16931_Einfach.pdf")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"))
	if b, err := os.ReadFile("testdata/zugferd-minimum-rechnung.xml"); err == nil {
		f.Add(buildPDF(f, false, attachment{"factur-x.xml", b}))
		f.Add(buildPDF(f, true, attachment{"factur-x.xml", b}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ReadBytes(data)
		if err != nil {
			if errs.As(err) == nil {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if inv.Number == "" || inv.Currency == "" || inv.IssueDate.IsZero() {
			t.Fatalf("accepted without number, currency or date: %+v", inv)
		}
	})
}
