// Package einvoice turns a sales invoice into a structured e-invoice in the
// UN/CEFACT Cross Industry Invoice syntax (CII D16B), either as the
// EN 16931 profile of ZUGFeRD 2.x / Factur-X or as XRechnung 3.0.
//
// The package knows nothing of databases or messaging: the receivables
// service maps its own invoice onto Document, calls Compute (which fills in
// every derived amount and rejects what a German invoice or EN 16931 does not
// allow) and then CII. Package invoicepdf renders the same Document as a
// PDF/A-3 with the XML embedded.
package einvoice

import "github.com/shopspring/decimal"

// Profile selects the CIUS the XML declares (BT-24).
type Profile string

const (
	// ProfileEN16931 is the EN 16931 (COMFORT) profile of ZUGFeRD 2.x / Factur-X.
	ProfileEN16931 Profile = "EN16931"
	// ProfileXRechnung is XRechnung 3.0, the German CIUS for public buyers.
	ProfileXRechnung Profile = "XRECHNUNG"
)

// Document type codes (BT-3, UNTDID 1001) this package writes.
const (
	TypeInvoice    = "380"
	TypeCreditNote = "381"
)

// TaxCategory is a VAT category code (BT-151 / BT-118, UNTDID 5305).
type TaxCategory string

const (
	CategoryStandard        TaxCategory = "S"  // standard or reduced rate
	CategoryZero            TaxCategory = "Z"  // zero rated goods
	CategoryExempt          TaxCategory = "E"  // exempt (needs Document.ExemptionReason)
	CategoryReverseCharge   TaxCategory = "AE" // VAT reverse charge, §13b UStG
	CategoryIntraCommunity  TaxCategory = "K"  // intra-community supply, §4 Nr. 1b UStG
	CategoryExportOutsideEU TaxCategory = "G"  // export outside the EU, §4 Nr. 1a UStG
)

// PaymentMeansSEPATransfer is the UNTDID 4461 code of a SEPA credit transfer.
const PaymentMeansSEPATransfer = "58"

// Document is one sales invoice or credit note. Fields marked "computed" are
// set by Compute; everything else is input. Dates are ISO 8601 calendar dates
// (YYYY-MM-DD). Money is exact: decimal.Decimal from the caller to the XML.
type Document struct {
	Profile  Profile
	TypeCode string // TypeInvoice or TypeCreditNote
	Number   string // BT-1
	// IssueDate is BT-2; DueDate BT-9 (optional when PaymentTerms say when).
	IssueDate string
	DueDate   string
	// Currency is the invoice currency (BT-5, ISO 4217).
	Currency string
	// TaxCurrency is BT-6: "EUR" when Currency is a foreign currency, since a
	// German invoice must state the VAT in euro (§16 Abs. 6 UStG); empty for
	// EUR invoices.
	TaxCurrency string
	// ExchangeRate is how many EUR one unit of Currency is worth
	// (1 USD = ExchangeRate EUR), e.g. 0.9214 when 1 USD = 0.9214 EUR. It is
	// required with TaxCurrency and converts the VAT total into BT-111.
	ExchangeRate decimal.Decimal
	// BuyerReference is BT-10: the Leitweg-ID for XRechnung.
	BuyerReference string
	// OrderReference is BT-13, the buyer's purchase order number (optional).
	OrderReference string
	// PrecedingInvoice is BT-25/BT-26, required for a credit note.
	PrecedingInvoice *DocumentRef
	// DeliveryDate (BT-72) or ServicePeriod (BG-14): the time of supply that
	// §14 Abs. 4 Nr. 6 UStG requires; at least one of them.
	DeliveryDate  string
	ServicePeriod *Period
	// Notes are free texts (BT-22).
	Notes []string
	// PaymentTerms is BT-20, free text.
	PaymentTerms string
	PaymentMeans *PaymentMeans
	// ExemptionReason (BT-120) is required when a line has category E, e.g.
	// "Steuerfrei nach § 4 Nr. 14 UStG". Categories AE, K and G get their
	// standard reason (and VATEX code) without it.
	ExemptionReason string
	Seller          Seller
	Buyer           Buyer
	Lines           []Line

	// Computed by Compute.
	TaxBreakdown []TaxSubtotal
	Totals       Totals
}

// DocumentRef names an earlier invoice (BG-3).
type DocumentRef struct {
	Number    string
	IssueDate string // optional
}

// Period is an invoicing or service period; both ends inclusive.
type Period struct {
	Start string
	End   string
}

// PaymentMeans is BG-16. TypeCode defaults to "58" (SEPA credit transfer),
// the only one this package supports so far.
type PaymentMeans struct {
	TypeCode    string
	Information string // BT-82, optional
	IBAN        string // BT-84
	BIC         string // BT-86, optional
	AccountName string // BT-85, optional
}

// Seller is BG-4 plus the seller contact BG-6.
type Seller struct {
	Name        string
	Street      string
	Zip         string
	City        string
	Country     string // ISO 3166-1 alpha-2
	VATID       string // BT-31 USt-IdNr.
	TaxNumber   string // BT-32 Steuernummer
	Email       string // BT-34 electronic address and BT-43 contact e-mail
	Phone       string // BT-42
	ContactName string // BT-41
}

// Buyer is BG-7.
type Buyer struct {
	Name    string
	Street  string
	Zip     string
	City    string
	Country string
	VATID   string // BT-48
	Email   string // BT-49 electronic address
}

// Line is one invoice line (BG-25).
type Line struct {
	ID          string
	Description string
	Quantity    decimal.Decimal // up to 4 decimal places
	UnitCode    string          // UN/ECE Rec. 20, e.g. C62, H87, HUR, DAY, KGM
	UnitPrice   decimal.Decimal // net price per unit, up to 4 decimal places
	// Discount is a line allowance (BT-136) in the invoice currency, optional.
	Discount    decimal.Decimal
	TaxCategory TaxCategory
	TaxRate     decimal.Decimal // percent, e.g. 19 or 7

	// NetAmount is computed: Quantity*UnitPrice - Discount, rounded to cents.
	NetAmount decimal.Decimal
}

// TaxSubtotal is one VAT breakdown group (BG-23).
type TaxSubtotal struct {
	Category            TaxCategory
	Rate                decimal.Decimal
	Basis               decimal.Decimal // BT-116
	Tax                 decimal.Decimal // BT-117
	ExemptionReason     string          // BT-120
	ExemptionReasonCode string          // BT-121
}

// Totals is BG-22.
type Totals struct {
	LineTotal  decimal.Decimal // BT-106
	TaxBasis   decimal.Decimal // BT-109
	Tax        decimal.Decimal // BT-110, in Currency
	Grand      decimal.Decimal // BT-112
	DuePayable decimal.Decimal // BT-115
	// TaxInTaxCurrency is BT-111, the VAT total in TaxCurrency (EUR); zero
	// when TaxCurrency is empty.
	TaxInTaxCurrency decimal.Decimal
}
