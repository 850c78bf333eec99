// Package einvoicein reads incoming e-invoices exactly: UN/CEFACT CII XML
// (ZUGFeRD 2.x / Factur-X, every profile from MINIMUM to EXTENDED, and
// XRechnung CII), UBL 2.1 Invoice and CreditNote XML (XRechnung UBL, Peppol
// BIS 3), and ZUGFeRD/Factur-X PDFs with the XML embedded as an attachment.
//
// Elements are matched by their local name only: senders use any namespace
// prefix (rsm:, ram:, cbc:, cac:) or none, and the prefix carries no
// meaning once the root element has told which syntax it is.
//
// Amounts, quantities and rates are exact decimals taken from the text as
// written; nothing passes through float64. Amounts are kept with the sign
// the document gives them: a credit note (IsCreditNote) states positive
// amounts that the reader books in the other direction.
//
// The reader refuses, never panics: input that is not XML or PDF, XML that
// is no invoice, an invoice without its totals, a number or date that does
// not parse each come back as an *errs.Error (400 INVALID_INPUT, or 413
// FILE_TOO_LARGE for more than MaxSize bytes) that wraps one of the Err...
// sentinels below, so callers can tell the cases apart with errors.Is.
//
// Security: encoding/xml never fetches external entities or expands DTD
// entities; a document with a DOCTYPE is refused outright (no e-invoice
// standard uses one), input is bounded to MaxSize bytes, element nesting to
// MaxDepth and the element count to maxElements.
package einvoicein

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Limits.
const (
	// MaxSize is the largest input accepted, PDF or XML.
	MaxSize = 10 << 20
	// MaxDepth is far deeper than any CII or UBL element nests (about 12).
	MaxDepth = 64
	// maxElements bounds the tree held in memory; a 10 MB invoice of
	// ordinary lines has well under 200,000 elements.
	maxElements = 500_000
)

// Format is the container the invoice arrived in.
type Format string

const (
	FormatCII        Format = "cii"
	FormatUBL        Format = "ubl"
	FormatZUGFeRDPDF Format = "zugferd-pdf"
)

// Syntax is the XML syntax of the invoice data (for a PDF, of the
// embedded file).
type Syntax string

const (
	SyntaxCII Syntax = "cii"
	SyntaxUBL Syntax = "ubl"
)

// Invoice is what an incoming e-invoice says. Business term numbers (BT-n)
// refer to EN 16931. Absent optional dates are the zero time, absent
// optional amounts zero.
type Invoice struct {
	Format Format
	Syntax Syntax
	// Attachment is the name of the embedded XML file of a PDF.
	Attachment string
	// Profile is the specification identifier (BT-24): CII's guideline
	// ID, UBL's CustomizationID, e.g. urn:factur-x.eu:1p0:minimum.
	Profile string
	// TypeCode is the UNTDID 1001 document type (BT-3): 380 invoice, 381
	// credit note, 384 corrected invoice, 389 self-billed invoice, 875
	// partial construction invoice...
	TypeCode string
	// IsCreditNote is true for a UBL CreditNote and for the credit note
	// type codes (381, 396, 261, 262, 81, 83, 296, 308, 420, 458, 532).
	IsCreditNote bool
	Number       string    // BT-1
	IssueDate    time.Time // BT-2
	DueDate      time.Time // BT-9
	DeliveryDate time.Time // BT-72, the actual delivery date
	// DeliveryPeriod is the invoicing period (BT-73/74) the goods or
	// services were delivered in.
	DeliveryPeriod Period
	Currency       string // BT-5
	Seller         Seller
	Buyer          Buyer
	Lines          []Line
	TaxBreakdown   []TaxBreakdown
	LineTotal      decimal.Decimal // BT-106
	AllowanceTotal decimal.Decimal // BT-107
	ChargeTotal    decimal.Decimal // BT-108
	TotalNet       decimal.Decimal // BT-109, total without VAT
	TotalTax       decimal.Decimal // BT-110, VAT in the invoice currency
	TotalGross     decimal.Decimal // BT-112, total with VAT
	Prepaid        decimal.Decimal // BT-113
	DuePayable     decimal.Decimal // BT-115, amount due for payment
	// PaymentMeansCode is the UNTDID 4461 code of the first payment means
	// (BT-81): 58 SEPA credit transfer, 59 SEPA direct debit, 30 credit
	// transfer...
	PaymentMeansCode string
	PaymentTerms     string // BT-20, several terms joined by newlines
	PaymentReference string // BT-83, remittance information
	PrecedingInvoice string // BT-25, the invoice a correction refers to
	// Notes are the invoice notes (BG-1, BT-22) in document order: a
	// reverse-charge or exemption remark is often written there.
	Notes []string
}

// Period is a date range; either end may be zero.
type Period struct {
	Start, End time.Time
}

// Seller is the supplier (BG-4) with the account to pay to (BG-17).
type Seller struct {
	Name      string // BT-27 (legal name), else the trading name
	VATID     string // BT-31
	TaxNumber string // BT-32, the German Steuernummer
	Street    string // BT-35, address line 1
	Zip       string // BT-38
	City      string // BT-37
	Country   string // BT-40
	// IBAN is the first payee account (BT-84), without spaces, upper case.
	IBAN  string
	BIC   string // BT-86
	Email string // BT-43 contact e-mail, else BT-34 with scheme EM
}

// Buyer is the customer (BG-7), normally the reading tenant.
type Buyer struct {
	Name      string // BT-44
	VATID     string // BT-48
	Street    string // BT-50
	Zip       string // BT-53
	City      string // BT-52
	Country   string // BT-55
	Reference string // BT-10, Leitweg-ID in XRechnung
}

// Line is one invoice line (BG-25).
type Line struct {
	ID          string          // BT-126
	Description string          // BT-153 item name, else BT-154 description
	Quantity    decimal.Decimal // BT-129
	Unit        string          // BT-130, UN/ECE rec 20 code
	// UnitPrice is the net price (BT-146) per BaseQuantity (BT-149, zero
	// when the document gives none, meaning 1).
	UnitPrice    decimal.Decimal
	BaseQuantity decimal.Decimal
	NetAmount    decimal.Decimal // BT-131
	TaxCategory  string          // BT-151
	TaxRate      decimal.Decimal // BT-152, percent
	// Period is the line's invoicing period (BG-26, BT-134/135), where
	// the delivery time is given per line instead of for the invoice.
	Period Period
}

// TaxBreakdown is one VAT breakdown (BG-23).
type TaxBreakdown struct {
	Category            string          // BT-118
	Rate                decimal.Decimal // BT-119, percent
	Basis               decimal.Decimal // BT-116
	Tax                 decimal.Decimal // BT-117
	ExemptionReason     string          // BT-120
	ExemptionReasonCode string          // BT-121
}

// Sentinels wrapped by the errors Read returns.
var (
	ErrTooLarge        = errors.New("input larger than 10 MB")
	ErrEmpty           = errors.New("input is empty")
	ErrNotXML          = errors.New("not well-formed XML")
	ErrTooDeep         = errors.New("XML nested too deeply or too many elements")
	ErrNotInvoice      = errors.New("not a CII or UBL invoice")
	ErrMissingField    = errors.New("required field missing")
	ErrAmountsMissing  = errors.New("invoice amounts missing")
	ErrMalformedNumber = errors.New("malformed number")
	ErrMalformedDate   = errors.New("malformed date")
	ErrMalformedPDF    = errors.New("malformed PDF")
	ErrNoEmbeddedXML   = errors.New("PDF has no embedded e-invoice XML")
)

const op = "einvoicein.Read"

// refuse builds the client error for one problem: field names the element
// (or "file"), what says what is wrong with it.
func refuse(sentinel error, field, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	msg := "einvoice: " + sentinel.Error()
	if what != "" {
		msg += ": " + what
	}
	code := errs.InvalidInput
	if errors.Is(sentinel, ErrTooLarge) {
		code = errs.FileTooLarge
	}
	return &errs.Error{Code: code, Message: msg, Details: []errs.Detail{errs.Field(field, msg)}, Op: op, Err: sentinel}
}

// Read reads one e-invoice (CII or UBL XML, or a ZUGFeRD/Factur-X PDF)
// from r, at most MaxSize bytes.
func Read(r io.Reader) (Invoice, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		// The reader failed (a cut upload): not the file's fault.
		return Invoice{}, fmt.Errorf("%s: read: %w", op, err)
	}
	return ReadBytes(data)
}

// ReadBytes is Read for an invoice already in memory.
func ReadBytes(data []byte) (inv Invoice, err error) {
	// A bug in here or in a library must refuse one file, not bring the
	// process down.
	defer func() {
		if p := recover(); p != nil {
			inv, err = Invoice{}, refuse(ErrNotInvoice, "file", "unreadable input (%v)", p)
		}
	}()
	if len(data) > MaxSize {
		return Invoice{}, refuse(ErrTooLarge, "file", "")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Invoice{}, refuse(ErrEmpty, "file", "")
	}
	if isPDF(data) {
		name, xmlData, err := embeddedXML(data)
		if err != nil {
			return Invoice{}, err
		}
		inv, err := readXML(xmlData)
		if err != nil {
			return Invoice{}, err
		}
		inv.Format, inv.Attachment = FormatZUGFeRDPDF, name
		return inv, nil
	}
	return readXML(data)
}

func readXML(data []byte) (Invoice, error) {
	// Windows tools write a UTF-8 byte order mark, which encoding/xml
	// would take for text before the root element.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	root, err := parseTree(data)
	if err != nil {
		return Invoice{}, err
	}
	switch root.name {
	case "CrossIndustryInvoice":
		return readCII(root)
	case "Invoice", "CreditNote":
		return readUBL(root)
	case "CrossIndustryDocument":
		return Invoice{}, refuse(ErrNotInvoice, "file", "ZUGFeRD 1.0 (CrossIndustryDocument) is not supported, only ZUGFeRD 2.x / Factur-X")
	}
	return Invoice{}, refuse(ErrNotInvoice, "file", "root element is %q, want CrossIndustryInvoice, Invoice or CreditNote", root.name)
}

// creditNoteTypes are the UNTDID 1001 codes EN 16931 lists for credit
// notes.
var creditNoteTypes = map[string]bool{
	"81": true, "83": true, "261": true, "262": true, "296": true, "308": true,
	"381": true, "396": true, "420": true, "458": true, "532": true,
}
