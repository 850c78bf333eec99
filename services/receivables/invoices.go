package receivables

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

// Sales invoices (issue 12). Issuing one spans three stores, so it runs in
// steps that each survive a crash, like the bank's reconciliation:
//
//  1. one short transaction takes the gapless number and moves the row to
//     pending with its document model (IssueInvoice, or CreateInvoice for
//     an invoice issued at once: the row is inserted and numbered in one
//     commit); the tenant's counter row stays locked only for that;
//  2. the XML and PDF are rendered from the stored document model outside
//     any lock: inside the counter lock rendering made one tenant's
//     invoices wait for each other;
//  3. the PDF is stored as a ledger document (deduplicated by its hash,
//     so a retry finds the same document) and the receivable is posted
//     under an intent id derived from the invoice id (a retry answers the
//     intent already posted);
//  4. one transaction stores the XML and PDF, moves the row to posted and
//     writes the event (ConfirmInvoice); the row's CHECK refuses a posted
//     row without its XML and PDF.
//
// A retry of any kind (the same Idempotency-Key, which derives the same
// invoice id, or POST .../finalize) finds the pending row and resumes at
// step 2: rendering is deterministic, so it renders the bytes the first
// attempt stored with the ledger, whose document store then answers the
// same document. A pending invoice is never numbered again. A posting the
// ledger refuses for good voids the invoice: its number stays accounted
// for. Four commits make an invoice (two here, two in the ledger).

// Limits of a sales invoice.
const (
	MaxInvoiceLines        = 500
	MaxLineDescription     = 1000
	MaxNotesLength         = 5000
	MaxBuyerReference      = 200
	MaxExemptionReason     = 1000
	DefaultInvoicesLimit   = 100
	MaxInvoicesLimit       = 500
	DefaultUnitCode        = "C62" // UN/ECE Rec. 20 "one" (piece)
	invoiceSource          = "receivables"
	placeholderNumber      = "0" // validates a document before its number exists
	maxBookingDescription  = 200
	maxExternalReferenceLn = 100
)

// Line is a checked line item as the row keeps it (sales_invoices.lines).
// TaxCode is the ledger's output code the line posts with, empty for the
// categories that post without one (Z, AE).
type Line struct {
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	Unit        string          `json:"unit"`
	UnitPrice   decimal.Decimal `json:"unit_price"`
	Discount    decimal.Decimal `json:"discount"`
	TaxCode     string          `json:"tax_code,omitempty"`
	TaxCategory string          `json:"tax_category"`
	TaxRate     decimal.Decimal `json:"tax_rate"`
}

// InvoiceRecord is a sales invoice as the store keeps it.
type InvoiceRecord struct {
	ID              string
	Type            string // receivablesv1.TypeInvoice or TypeCreditNote
	CorrectsID      string // a credit note's invoice
	DebtorID        string
	Debtor          receivablesv1.InvoiceDebtor
	State           string // draft, pending, posted, void
	Number          string // "" for a draft
	InvoiceDate     string
	DueDate         string
	DeliveryDate    string
	ServiceStart    string
	ServiceEnd      string
	Currency        string
	ExchangeRate    decimal.Decimal // zero for EUR
	BuyerReference  string
	Notes           string
	ExemptionReason string
	Lines           []Line
	Document        *einvoice.Document // set from pending on
	// HasFiles: the XML and PDF are stored (a pending invoice may lack
	// them when its issuing stopped between numbering and rendering).
	HasFiles        bool
	TotalNet        decimal.Decimal
	TotalTax        decimal.Decimal
	TotalGross      decimal.Decimal
	PaidAmount      decimal.Decimal
	CreditedAmount  decimal.Decimal
	BookingIntentID string
	DocumentID      string
	VoidReason      string
	RequestHash     string
	CreatedAt       time.Time
	FinalizedAt     *time.Time
	// Today is the store's current date, which decides overdue.
	Today string
}

// Issued is what IssueInvoice stores on the row with its number.
type Issued struct {
	Document einvoice.Document
	XML, PDF []byte
}

// InvoiceStore keeps the sales invoices; postgres.Store implements it.
type InvoiceStore interface {
	// CreateInvoice inserts r in state draft; an invoice with r.ID that
	// exists already (a retried request) is returned as it is, with
	// created false. With issue, a new row is issued in the same
	// transaction as IssueInvoice issues a draft.
	CreateInvoice(ctx context.Context, tenantID string, r InvoiceRecord, issue func(number string) (einvoice.Document, error)) (rec InvoiceRecord, created bool, err error)
	// IssueInvoice locks the invoice; a draft gets the next number of its
	// invoice date's year and issue's document and moves to pending
	// without XML and PDF, in one transaction (an error of issue rolls the
	// number back). issue runs under the number's lock: it must be quick
	// (no rendering). An invoice past draft is returned as it is.
	IssueInvoice(ctx context.Context, tenantID, id string, issue func(number string) (einvoice.Document, error)) (InvoiceRecord, error)
	// ConfirmInvoice stores the XML and PDF of a pending invoice, moves it
	// to posted and writes ev to the outbox; a posted one is returned as
	// it is.
	ConfirmInvoice(ctx context.Context, tenantID, id, intentID, documentID string, xml, pdf []byte, ev receivablesv1.InvoiceIssued) (InvoiceRecord, error)
	// VoidInvoice moves a pending invoice to void with the reason.
	VoidInvoice(ctx context.Context, tenantID, id, reason string) error
	// Invoice reads one; NOT_FOUND when unknown.
	Invoice(ctx context.Context, tenantID, id string) (InvoiceRecord, error)
	// Invoices lists the tenant's invoices matching f (Status an API
	// status), newest invoice date first.
	Invoices(ctx context.Context, tenantID string, f receivablesv1.InvoiceFilter) ([]InvoiceRecord, error)
	// InvoiceFile returns the invoice's number and its PDF (pdf true) or
	// XML; NOT_FOUND for an unknown invoice or one without files (draft).
	InvoiceFile(ctx context.Context, tenantID, id string, pdf bool) (number string, content []byte, err error)
	// InvoiceSettings reads the tenant's settings (defaults when none).
	InvoiceSettings(ctx context.Context, tenantID string) (receivablesv1.Settings, error)
	// PutInvoiceSettings stores s.
	PutInvoiceSettings(ctx context.Context, tenantID string, s receivablesv1.Settings) error
}

// InvoiceLedger is what invoicing asks of the ledger; receivablesd wires
// the ledger's NATS subjects to it.
type InvoiceLedger interface {
	TaxCodes(ctx context.Context, tenantID string) ([]ledgerv1.TaxCode, error)
	Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error)
	// UploadPDF stores a PDF as a ledger document and returns its id (the
	// one already stored for the same bytes).
	UploadPDF(ctx context.Context, tenantID, filename string, pdf []byte) (string, error)
}

// TenantProfile reads the tenant's master data (identity).
type TenantProfile interface {
	Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error)
}

// Invoicing creates, issues and reads sales invoices.
type Invoicing struct {
	store   InvoiceStore
	debtors Store
	ledger  InvoiceLedger
	tenants TenantProfile
}

// NewInvoicing returns the invoicing service.
func NewInvoicing(store InvoiceStore, debtors Store, ledger InvoiceLedger, tenants TenantProfile) *Invoicing {
	return &Invoicing{store: store, debtors: debtors, ledger: ledger, tenants: tenants}
}

// Request is the context of a create: who asks under which
// Idempotency-Key with which body.
type Request struct {
	Actor, IdempotencyKey string
	Body                  []byte
}

var invoiceSpace = uuid.MustParse("2d1c9a47-0f6e-4c1b-8f0a-5b7e3c9d1a26")

// InvoiceIDFor is the invoice id of a create under an Idempotency-Key:
// derived, so that a retry after an outage finds (and resumes) the invoice
// the first attempt created instead of creating another.
func InvoiceIDFor(tenantID, actor, key string) string {
	return uuid.NewSHA1(invoiceSpace, []byte(tenantID+"/"+actor+"/"+key)).String()
}

// BookingIntentID is the ledger intent of an invoice's receivable.
func BookingIntentID(tenantID, invoiceID string) string {
	return uuid.NewSHA1(invoiceSpace, []byte(tenantID+"/"+invoiceID+"/issue")).String()
}

var (
	dateRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	unitRe     = regexp.MustCompile(`^[A-Z0-9]{2,3}$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	maxAmount  = decimal.New(1, 12)
)

func validDate(s string) bool {
	if !dateRe.MatchString(s) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// CheckInvoiceInput validates the request's own fields and resolves each
// line's tax (codes from the ledger's list codes), naming every field at
// fault. The defaults that need the debtor (due date, buyer reference)
// are the caller's.
func CheckInvoiceInput(in receivablesv1.InvoiceInput, codes []ledgerv1.TaxCode) (InvoiceRecord, error) {
	var c checker
	r := InvoiceRecord{DebtorID: in.DebtorID, InvoiceDate: in.InvoiceDate, DueDate: in.DueDate, Currency: in.Currency,
		Notes: strings.TrimSpace(in.Notes), BuyerReference: strings.TrimSpace(in.BuyerReference), ExemptionReason: strings.TrimSpace(in.ExemptionReason)}
	if r.DebtorID == "" {
		c.bad("debtor_id", "required")
	} else if !ValidID(r.DebtorID) {
		c.bad("debtor_id", "must be a UUID")
	}
	if !validDate(r.InvoiceDate) {
		c.bad("invoice_date", "required date YYYY-MM-DD")
	}
	if r.DueDate != "" && !validDate(r.DueDate) {
		c.bad("due_date", "must be a date YYYY-MM-DD")
	} else if r.DueDate != "" && r.DueDate < r.InvoiceDate {
		c.bad("due_date", "before the invoice date")
	}
	switch {
	case in.DeliveryDate != "" && in.ServicePeriod != nil:
		c.bad("service_period", "give a delivery date or a service period, not both")
	case in.DeliveryDate != "":
		if !validDate(in.DeliveryDate) {
			c.bad("delivery_date", "must be a date YYYY-MM-DD")
		}
		r.DeliveryDate = in.DeliveryDate
	case in.ServicePeriod != nil:
		p := in.ServicePeriod
		if !validDate(p.Start) {
			c.bad("service_period.start", "required date YYYY-MM-DD")
		}
		if !validDate(p.End) {
			c.bad("service_period.end", "required date YYYY-MM-DD")
		} else if p.End < p.Start {
			c.bad("service_period.end", "before the start")
		}
		r.ServiceStart, r.ServiceEnd = p.Start, p.End
	default:
		// §14 Abs. 4 Nr. 6 UStG needs the time of supply: without one, the
		// supply is taken to be on the invoice date.
		r.DeliveryDate = r.InvoiceDate
	}
	if utf8.RuneCountInString(r.Notes) > MaxNotesLength {
		c.bad("notes", fmt.Sprintf("at most %d characters", MaxNotesLength))
	}
	if utf8.RuneCountInString(r.BuyerReference) > MaxBuyerReference {
		c.bad("buyer_reference", fmt.Sprintf("at most %d characters", MaxBuyerReference))
	}
	if utf8.RuneCountInString(r.ExemptionReason) > MaxExemptionReason {
		c.bad("exemption_reason", fmt.Sprintf("at most %d characters", MaxExemptionReason))
	}
	if r.Currency == "" {
		r.Currency = "EUR"
	}
	switch {
	case !currencyRe.MatchString(r.Currency):
		c.bad("currency", "an ISO 4217 code such as EUR or USD")
	case r.Currency == "EUR" && in.ExchangeRate != nil:
		c.bad("exchange_rate", "only for an invoice in another currency than EUR")
	case r.Currency != "EUR" && in.ExchangeRate == nil:
		c.bad("exchange_rate", "required for a "+r.Currency+" invoice: EUR per 1 "+r.Currency)
	case r.Currency != "EUR" && (!in.ExchangeRate.IsPositive() || in.ExchangeRate.Places() > 6 || !in.ExchangeRate.LessThan(decimal.NewFromInt(1_000_000))):
		c.bad("exchange_rate", "must be positive, below 1000000, with at most 6 decimals")
	case r.Currency != "EUR":
		r.ExchangeRate = in.ExchangeRate.Decimal
	}
	switch {
	case len(in.LineItems) == 0:
		c.bad("line_items", "at least one line is required")
	case len(in.LineItems) > MaxInvoiceLines:
		c.bad("line_items", fmt.Sprintf("at most %d lines", MaxInvoiceLines))
	default:
		byCode := map[string]ledgerv1.TaxCode{}
		for _, tc := range codes {
			byCode[tc.Code] = tc
		}
		for i, li := range in.LineItems {
			if len(c.details) > 50 {
				break
			}
			r.Lines = append(r.Lines, c.line(fmt.Sprintf("line_items[%d].", i), li, byCode))
		}
	}
	if err := c.err("invalid sales invoice"); err != nil {
		return InvoiceRecord{}, err
	}
	hasE := false
	for _, l := range r.Lines {
		hasE = hasE || l.TaxCategory == string(einvoice.CategoryExempt)
	}
	if hasE && r.ExemptionReason == "" {
		c.bad("exemption_reason", "required with tax category E: the legal ground of the exemption")
	}
	computeRecord(&r)
	if !r.TotalGross.IsPositive() {
		c.bad("line_items", "the invoice total must be positive")
	}
	if err := c.err("invalid sales invoice"); err != nil {
		return InvoiceRecord{}, err
	}
	return r, nil
}

// line checks one line item and resolves its tax: a tax code of the
// ledger (an output code, or one of the tax-free sales codes) or a rate
// 19, 7 or 0 with a category (S by default).
func (c *checker) line(f string, li receivablesv1.LineItemInput, codes map[string]ledgerv1.TaxCode) Line {
	l := Line{Description: strings.TrimSpace(li.Description), Quantity: li.Quantity.Decimal, Unit: li.Unit,
		UnitPrice: li.UnitPrice.Decimal, Discount: decimal.Zero}
	c.text(f+"description", l.Description, MaxLineDescription, true)
	if !l.Quantity.IsPositive() || li.Quantity.Places() > 4 || !l.Quantity.LessThan(maxAmount) {
		c.bad(f+"quantity", "must be positive with at most 4 decimals")
	}
	if l.UnitPrice.IsNegative() || li.UnitPrice.Places() > 4 || !l.UnitPrice.LessThan(maxAmount) {
		c.bad(f+"unit_price", "must be 0 or more with at most 4 decimals")
	}
	if l.Unit == "" {
		l.Unit = DefaultUnitCode
	} else if !unitRe.MatchString(l.Unit) {
		c.bad(f+"unit", "a UN/ECE Recommendation 20 unit code such as C62 (piece), HUR (hour), DAY, KGM")
	}
	if li.Discount != nil {
		l.Discount = li.Discount.Decimal
		switch {
		case l.Discount.IsNegative() || li.Discount.Places() > 2:
			c.bad(f+"discount", "must be 0 or more with at most 2 decimals")
		case l.Discount.GreaterThan(l.Quantity.Mul(l.UnitPrice).Round(2)):
			c.bad(f+"discount", "more than the line's amount (quantity × unit_price)")
		}
	}
	switch {
	case li.TaxCode != "" && (li.TaxRate != nil || li.TaxCategory != ""):
		c.bad(f+"tax_code", "give tax_code or tax_rate with tax_category, not both")
	case li.TaxCode != "":
		tc, ok := codes[li.TaxCode]
		cat, known := codeCategory(tc)
		switch {
		case !ok:
			c.bad(f+"tax_code", "tax code "+li.TaxCode+" does not exist")
		case !tc.IsActive:
			c.bad(f+"tax_code", "tax code "+li.TaxCode+" is inactive")
		case !known:
			c.bad(f+"tax_code", "tax code "+li.TaxCode+" is not one for sales (an output code such as USt19 or USt7, or IGL0, AUS0, STF0)")
		default:
			l.TaxCode, l.TaxCategory, l.TaxRate = tc.Code, string(cat), tc.Rate.Decimal
		}
	case li.TaxRate == nil:
		c.bad(f+"tax_code", "required: a tax code such as USt19, or tax_rate with tax_category")
	default:
		cat := li.TaxCategory
		if cat == "" {
			cat = string(einvoice.CategoryStandard)
		}
		rate := li.TaxRate.Decimal
		switch {
		case !rate.Equal(decimal.NewFromInt(19)) && !rate.Equal(decimal.NewFromInt(7)) && !rate.IsZero():
			c.bad(f+"tax_rate", "19, 7 or 0")
		case !validCategory(cat):
			c.bad(f+"tax_category", "S, Z, E, AE, K or G")
		case cat == string(einvoice.CategoryStandard) && rate.IsZero():
			c.bad(f+"tax_category", "a 0 % line needs its category: Z, E, AE, K or G")
		case cat != string(einvoice.CategoryStandard) && !rate.IsZero():
			c.bad(f+"tax_rate", "must be 0 for category "+cat)
		default:
			l.TaxCategory, l.TaxRate = cat, rate
			l.TaxCode = Revenue(einvoice.TaxCategory(cat), rate).TaxCode
			if l.TaxCode != "" {
				if tc, ok := codes[l.TaxCode]; !ok || !tc.IsActive {
					c.bad(f+"tax_rate", "the ledger's tax code "+l.TaxCode+" for this rate is missing or inactive")
				}
			}
		}
	}
	return l
}

func validCategory(c string) bool {
	switch einvoice.TaxCategory(c) {
	case einvoice.CategoryStandard, einvoice.CategoryZero, einvoice.CategoryExempt,
		einvoice.CategoryReverseCharge, einvoice.CategoryIntraCommunity, einvoice.CategoryExportOutsideEU:
		return true
	}
	return false
}

// codeCategory is the e-invoice category of a ledger tax code a sale may
// name: output codes are standard rated, the system's tax-free sales codes
// map to their categories. Purchase-side codes are refused.
func codeCategory(tc ledgerv1.TaxCode) (einvoice.TaxCategory, bool) {
	switch {
	case tc.Kind == ledgerv1.TaxOutput && tc.Rate.IsPositive():
		return einvoice.CategoryStandard, true
	case tc.Code == "IGL0":
		return einvoice.CategoryIntraCommunity, true
	case tc.Code == "AUS0":
		return einvoice.CategoryExportOutsideEU, true
	case tc.Code == "STF0":
		return einvoice.CategoryExempt, true
	}
	return "", false
}

// RevenueRule is where the sales of one tax category and rate post.
type RevenueRule struct {
	Account string // SKR04 revenue account
	TaxCode string // the ledger's code that splits off the VAT; "" for none
}

// Revenue is the SKR04 revenue account and ledger tax code of the sales of
// one category and rate. The taxed ones post gross with the output code,
// and the ledger splits net (to the revenue account) from VAT (3806 for
// 19 %, 3801 for 7 %):
//
//	category  rate  tax code  account  SKR04 name
//	S         19    USt19     4400     Erlöse 19 % USt
//	S         7     USt7      4300     Erlöse 7 % USt
//	S         other (custom)  4200     Erlöse
//	Z         0     —         4200     Erlöse (Nullsteuersatz § 12 Abs. 3 UStG, no VAT event)
//	E         0     STF0      4100     Steuerfreie Umsätze § 4 Nr. 8 ff. UStG
//	AE        0     —         4337     Erlöse aus Leistungen, für die der Leistungsempfänger die Steuer nach § 13b UStG schuldet
//	K         0     IGL0      4125     Steuerfreie innergemeinschaftliche Lieferungen § 4 Nr. 1b UStG
//	G         0     AUS0      4120     Steuerfreie Umsätze § 4 Nr. 1a UStG (Ausfuhr Drittland)
func Revenue(cat einvoice.TaxCategory, rate decimal.Decimal) RevenueRule {
	switch cat {
	case einvoice.CategoryStandard:
		switch {
		case rate.Equal(decimal.NewFromInt(19)):
			return RevenueRule{"4400", "USt19"}
		case rate.Equal(decimal.NewFromInt(7)):
			return RevenueRule{"4300", "USt7"}
		}
		return RevenueRule{"4200", ""}
	case einvoice.CategoryExempt:
		return RevenueRule{"4100", "STF0"}
	case einvoice.CategoryReverseCharge:
		return RevenueRule{"4337", ""}
	case einvoice.CategoryIntraCommunity:
		return RevenueRule{"4125", "IGL0"}
	case einvoice.CategoryExportOutsideEU:
		return RevenueRule{"4120", "AUS0"}
	}
	return RevenueRule{"4200", ""}
}

// revenueFor is the rule of a breakdown group: a standard-rated line's
// own code decides (a tenant's custom output code), else the table.
func revenueFor(lines []Line, g einvoice.TaxSubtotal) RevenueRule {
	rule := Revenue(g.Category, g.Rate)
	if g.Category == einvoice.CategoryStandard && rule.TaxCode == "" {
		for _, l := range lines {
			if l.TaxCategory == string(g.Category) && l.TaxRate.Equal(g.Rate) && l.TaxCode != "" {
				rule.TaxCode = l.TaxCode
				break
			}
		}
	}
	return rule
}

// computeRecord fills the totals of r from its lines, by EN 16931's rules
// (as einvoice.Compute): line nets rounded to cents, the VAT of each
// (category, rate) group rounded once from the group's basis.
func computeRecord(r *InvoiceRecord) {
	groups := breakdown(r.Lines)
	r.TotalNet, r.TotalTax = decimal.Zero, decimal.Zero
	for _, g := range groups {
		r.TotalNet = r.TotalNet.Add(g.Basis.Decimal)
		r.TotalTax = r.TotalTax.Add(g.Tax.Decimal)
	}
	r.TotalGross = r.TotalNet.Add(r.TotalTax)
}

func lineNet(l Line) decimal.Decimal { return l.Quantity.Mul(l.UnitPrice).Sub(l.Discount).Round(2) }

func breakdown(lines []Line) []receivablesv1.TaxGroup {
	var out []receivablesv1.TaxGroup
	idx := map[string]int{}
	for _, l := range lines {
		k := l.TaxCategory + "/" + l.TaxRate.String()
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, receivablesv1.TaxGroup{TaxCategory: l.TaxCategory, TaxRate: money.New(l.TaxRate), Basis: money.Zero, Tax: money.Zero})
		}
		out[i].Basis = out[i].Basis.Add(money.New(lineNet(l)))
	}
	for i := range out {
		out[i].Tax = money.New(out[i].Basis.Mul(out[i].TaxRate.Decimal).Div(decimal.NewFromInt(100)).Round(2))
	}
	return out
}

// BuildDocument maps an invoice onto the e-invoice model: the seller from
// the tenant's master data and settings, the buyer from the debtor,
// XRechnung when the debtor has a Leitweg-ID.
func BuildDocument(r InvoiceRecord, number string, d Debtor, t identityv1.Tenant, s receivablesv1.Settings) einvoice.Document {
	doc := einvoice.Document{Profile: einvoice.ProfileEN16931, TypeCode: einvoice.TypeInvoice, Number: number,
		IssueDate: r.InvoiceDate, DueDate: r.DueDate, Currency: r.Currency, BuyerReference: r.BuyerReference,
		DeliveryDate: r.DeliveryDate, ExemptionReason: r.ExemptionReason}
	if d.LeitwegID != nil {
		doc.Profile = einvoice.ProfileXRechnung
	}
	if r.Currency != "EUR" {
		doc.TaxCurrency, doc.ExchangeRate = "EUR", r.ExchangeRate
	}
	if r.ServiceStart != "" {
		doc.ServicePeriod = &einvoice.Period{Start: r.ServiceStart, End: r.ServiceEnd}
	}
	if r.Notes != "" {
		doc.Notes = []string{r.Notes}
	}
	if d.PaymentTerms.Days > 0 {
		doc.PaymentTerms = fmt.Sprintf("Zahlbar innerhalb von %d Tagen ohne Abzug", d.PaymentTerms.Days)
	} else {
		doc.PaymentTerms = "Zahlbar sofort ohne Abzug"
	}
	if s.PaymentIBAN != nil {
		pm := &einvoice.PaymentMeans{TypeCode: einvoice.PaymentMeansSEPATransfer, IBAN: *s.PaymentIBAN, Information: "Überweisung"}
		if s.PaymentBIC != nil {
			pm.BIC = *s.PaymentBIC
		}
		pm.AccountName = sellerName(t)
		doc.PaymentMeans = pm
	}
	doc.Seller = einvoice.Seller{Name: sellerName(t), Street: t.Address.Street, Zip: t.Address.Zip, City: t.Address.City,
		Country: t.Address.Country, VATID: t.VATID, TaxNumber: t.TaxID,
		Email: deref(s.ContactEmail), Phone: deref(s.ContactPhone), ContactName: deref(s.ContactName)}
	if doc.Seller.Country == "" {
		doc.Seller.Country = DefaultCountry
	}
	doc.Buyer = einvoice.Buyer{Name: d.Name, Street: d.Address.Street, Zip: d.Address.Zip, City: d.Address.City,
		Country: d.Address.Country, VATID: deref(d.VATID), Email: deref(d.Email)}
	for i, l := range r.Lines {
		doc.Lines = append(doc.Lines, einvoice.Line{ID: fmt.Sprint(i + 1), Description: l.Description, Quantity: l.Quantity,
			UnitCode: l.Unit, UnitPrice: l.UnitPrice, Discount: l.Discount, TaxCategory: einvoice.TaxCategory(l.TaxCategory), TaxRate: l.TaxRate})
	}
	return doc
}

// sellerName is the company name with its legal form, unless the name
// carries it already.
func sellerName(t identityv1.Tenant) string {
	n := strings.TrimSpace(t.CompanyName)
	if lf := strings.TrimSpace(t.LegalForm); lf != "" && !strings.Contains(strings.ToLower(n), strings.ToLower(lf)) {
		n += " " + lf
	}
	return n
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// documentFields renames the fields of einvoice's errors into the
// request's and the settings' terms, so a client sees what to change.
func documentFields(err error) error {
	e := errs.As(err)
	if e == nil || e.Code != errs.InvalidInput {
		return err
	}
	out := *e
	out.Details = make([]errs.Detail, len(e.Details))
	for i, d := range e.Details {
		f := d.Field
		switch {
		case strings.HasPrefix(f, "lines["):
			f = "line_items[" + strings.TrimPrefix(f, "lines[")
			f = strings.NewReplacer(".unitPrice", ".unit_price", ".unitCode", ".unit", ".taxRate", ".tax_rate", ".taxCategory", ".tax_category").Replace(f)
			// einvoice numbers the lines from 0 as the request does.
		case strings.HasPrefix(f, "buyer."):
			f = "debtor." + strings.TrimPrefix(f, "buyer.")
		case strings.HasPrefix(f, "seller."):
			f = "tenant." + strings.TrimPrefix(f, "seller.")
		case f == "buyerReference":
			f = "buyer_reference"
		case f == "exemptionReason":
			f = "exemption_reason"
		case f == "paymentMeans" || strings.HasPrefix(f, "paymentMeans."):
			f = "settings.payment_iban"
		}
		out.Details[i] = errs.Field(f, d.Issue)
	}
	out.Message = "the invoice is not a valid e-invoice; nothing was issued"
	return &out
}

// PostingLines are the ledger lines of an invoice's receivable: one per
// VAT group, debiting the debtor's receivable account and crediting the
// group's revenue account with the group's gross, the tax code letting
// the ledger split off the VAT. A foreign-currency invoice posts the EUR
// value (the document amount × the rate, rounded to cents) and keeps the
// document amount in fx_currency/fx_amount.
func PostingLines(doc einvoice.Document, lines []Line, receivable, number string) []ledgerv1.Line {
	var out []ledgerv1.Line
	for _, g := range doc.TaxBreakdown {
		gross := g.Basis.Add(g.Tax)
		if !gross.IsPositive() {
			continue
		}
		rule := revenueFor(lines, g)
		l := ledgerv1.Line{AccountDebit: receivable, AccountCredit: rule.Account, Amount: money.New(gross), TaxCode: rule.TaxCode,
			ExternalReference: truncate(number, maxExternalReferenceLn)}
		if doc.Currency != "EUR" {
			fx := money.New(gross)
			l.Amount = money.New(gross.Mul(doc.ExchangeRate).Round(2))
			l.FXCurrency, l.FXAmount = doc.Currency, &fx
		}
		out = append(out, l)
	}
	return out
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// bodyHash identifies a create request: the same Idempotency-Key with
// another body is refused.
func bodyHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// CreateInvoice checks a new invoice and stores it as a draft or issues it
// at once.
func (s *Invoicing) CreateInvoice(ctx context.Context, tenantID string, req Request, in receivablesv1.InvoiceInput) (receivablesv1.InvoiceCreated, error) {
	// What the invoice needs of the ledger (tax codes), identity (the
	// seller) and the store (debtor, settings) is asked at once: one round
	// trip of waiting instead of four in a row. A request the checks
	// refuse has asked for nothing it did not need to answer.
	var (
		codes        []ledgerv1.TaxCode
		d            Debtor
		debtorErr    error
		pre          *prepared
		fetchedDebID = in.DebtorID
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		codes, err = s.ledger.TaxCodes(gctx, tenantID)
		return errs.Wrap("receivables.CreateInvoice: tax codes", err)
	})
	if ValidID(in.DebtorID) {
		g.Go(func() error {
			d, debtorErr = s.debtors.Debtor(gctx, tenantID, in.DebtorID)
			return nil // judged after the input's checks
		})
	}
	if !in.Draft {
		pre = &prepared{}
		g.Go(func() (err error) {
			pre.tenant, err = s.tenants.Tenant(gctx, tenantID)
			return errs.Wrap("receivables.CreateInvoice: tenant", err)
		})
		g.Go(func() (err error) {
			pre.settings, err = s.store.InvoiceSettings(gctx, tenantID)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	r, err := CheckInvoiceInput(in, codes)
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	if r.DebtorID != fetchedDebID || !ValidID(in.DebtorID) {
		d, debtorErr = s.debtors.Debtor(ctx, tenantID, r.DebtorID)
	}
	err = debtorErr
	if e := errs.As(err); e != nil && e.Code == errs.NotFound {
		return receivablesv1.InvoiceCreated{}, &errs.Error{Code: errs.NotFound, Message: "debtor " + r.DebtorID + " not found",
			Details: []errs.Detail{errs.Field("debtor_id", "no debtor of the tenant")}, Err: err}
	}
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	if !d.IsActive {
		return receivablesv1.InvoiceCreated{}, &errs.Error{Code: errs.Conflict, Message: "debtor " + d.CustomerNumber + " is deactivated",
			Details: []errs.Detail{errs.Field("debtor_id", "deactivated: activate it to invoice it")}}
	}
	if r.DueDate == "" {
		day, _ := time.Parse(time.DateOnly, r.InvoiceDate)
		r.DueDate = day.AddDate(0, 0, d.PaymentTerms.Days).Format(time.DateOnly)
	}
	if r.BuyerReference == "" && d.LeitwegID != nil {
		r.BuyerReference = *d.LeitwegID
	}
	r.ID = uuid.NewString()
	if req.IdempotencyKey != "" {
		r.ID = InvoiceIDFor(tenantID, req.Actor, req.IdempotencyKey)
	}
	r.RequestHash = bodyHash(req.Body)
	var issue func(number string) (einvoice.Document, error)
	if !in.Draft {
		// Everything the document needs is checked before anything is
		// written: a refusal takes no number.
		pre.debtor = d
		if err := pre.check(r); err != nil {
			return receivablesv1.InvoiceCreated{}, err
		}
		issue = pre.document(r)
	}
	rec, created, err := s.store.CreateInvoice(ctx, tenantID, r, issue)
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	if !created && rec.RequestHash != r.RequestHash {
		return receivablesv1.InvoiceCreated{}, errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request")
	}
	if in.Draft && rec.State == "draft" {
		return created0(rec), nil
	}
	return s.issue(ctx, tenantID, rec, pre)
}

// FinalizeInvoice issues a draft, or resumes an invoice whose issuing
// stopped half-way; an issued one is answered as it is.
func (s *Invoicing) FinalizeInvoice(ctx context.Context, tenantID, id string) (receivablesv1.InvoiceCreated, error) {
	if !ValidID(id) {
		return receivablesv1.InvoiceCreated{}, invoiceNotFound(id)
	}
	rec, err := s.store.Invoice(ctx, tenantID, id)
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	return s.issue(ctx, tenantID, rec, nil)
}

func invoiceNotFound(id string) error {
	return errs.NotFoundf("sales invoice %s not found", truncate(id, 40))
}

// prepared is what issuing a draft needs from other services, asked
// before its transaction.
type prepared struct {
	debtor   Debtor
	tenant   identityv1.Tenant
	settings receivablesv1.Settings
}

// prepare gathers the seller, buyer and settings and validates the
// document with a placeholder number.
func (s *Invoicing) prepare(ctx context.Context, tenantID string, r InvoiceRecord, d Debtor) (*prepared, error) {
	t, err := s.tenants.Tenant(ctx, tenantID)
	if err != nil {
		return nil, errs.Wrap("receivables.prepare: tenant", err)
	}
	set, err := s.store.InvoiceSettings(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	pre := &prepared{debtor: d, tenant: t, settings: set}
	return pre, pre.check(r)
}

// check validates r's document with a placeholder number against the
// seller, buyer and settings gathered.
func (pre *prepared) check(r InvoiceRecord) error {
	if pre.debtor.LeitwegID != nil && pre.settings.PaymentIBAN == nil {
		return &errs.Error{Code: errs.Conflict, Message: "set the payment account first: XRechnung requires the IBAN payments go to (PUT /v1/receivables/settings)",
			Details: []errs.Detail{errs.Field("settings.payment_iban", "required for XRechnung")}}
	}
	doc := BuildDocument(r, placeholderNumber, pre.debtor, pre.tenant, pre.settings)
	if err := doc.Compute(); err != nil {
		return documentFields(err)
	}
	return nil
}

// document is the function that builds r's document once its number is
// taken, under the number's lock.
func (pre *prepared) document(r InvoiceRecord) func(number string) (einvoice.Document, error) {
	return func(number string) (einvoice.Document, error) {
		doc := BuildDocument(r, number, pre.debtor, pre.tenant, pre.settings)
		if err := doc.Compute(); err != nil {
			return einvoice.Document{}, documentFields(err)
		}
		return doc, nil
	}
}

// issue runs the steps of issuing from wherever rec stands.
func (s *Invoicing) issue(ctx context.Context, tenantID string, rec InvoiceRecord, pre *prepared) (receivablesv1.InvoiceCreated, error) {
	switch rec.State {
	case "posted":
		return created0(rec), nil
	case "void":
		return receivablesv1.InvoiceCreated{}, &errs.Error{Code: errs.Conflict, Message: "sales invoice " + rec.Number + " is void: " + rec.VoidReason}
	case "draft":
		if pre == nil {
			d, err := s.debtors.Debtor(ctx, tenantID, rec.DebtorID)
			if err != nil {
				return receivablesv1.InvoiceCreated{}, err
			}
			if !d.IsActive {
				return receivablesv1.InvoiceCreated{}, &errs.Error{Code: errs.Conflict, Message: "debtor " + d.CustomerNumber + " is deactivated"}
			}
			if pre, err = s.prepare(ctx, tenantID, rec, d); err != nil {
				return receivablesv1.InvoiceCreated{}, err
			}
		}
		var err error
		rec, err = s.store.IssueInvoice(ctx, tenantID, rec.ID, pre.document(rec))
		if err != nil {
			return receivablesv1.InvoiceCreated{}, err
		}
		if rec.State != "pending" {
			return s.issue(ctx, tenantID, rec, nil)
		}
	}
	var known *Debtor
	if pre != nil {
		// Read a moment ago for this request: asking again would cost
		// another round trip while the client waits.
		known = &pre.debtor
	}
	return s.post(ctx, tenantID, rec, known)
}

// renderFiles renders the XML and PDF of an invoice from its stored
// document model: the first attempt and any resume render from the same
// JSON, and rendering is deterministic, so both give the same bytes.
func renderFiles(rec InvoiceRecord) (xml, pdf []byte, err error) {
	xml, err = einvoice.CII(*rec.Document)
	if err != nil {
		return nil, nil, fmt.Errorf("receivables.renderFiles: XML of %s: %w", rec.Number, err)
	}
	pdf, err = invoicepdf.Render(*rec.Document, xml)
	if err != nil {
		return nil, nil, fmt.Errorf("receivables.renderFiles: PDF of %s: %w", rec.Number, err)
	}
	return xml, pdf, nil
}

// post renders the files (or reads those an earlier version stored),
// stores the PDF with the ledger, posts the receivable and confirms with
// the files. d is the invoice's debtor when the caller has it (nil: read
// it).
func (s *Invoicing) post(ctx context.Context, tenantID string, rec InvoiceRecord, d *Debtor) (receivablesv1.InvoiceCreated, error) {
	if rec.Document == nil {
		return receivablesv1.InvoiceCreated{}, fmt.Errorf("receivables.post: pending invoice %s without its document", rec.ID)
	}
	var xml, pdf []byte
	var err error
	if rec.HasFiles {
		_, pdf, err = s.store.InvoiceFile(ctx, tenantID, rec.ID, true)
	} else {
		xml, pdf, err = renderFiles(rec)
	}
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	docID, err := s.ledger.UploadPDF(ctx, tenantID, rec.Number+".pdf", pdf)
	if err != nil {
		return receivablesv1.InvoiceCreated{}, s.refused(ctx, tenantID, rec, "storing the PDF", err)
	}
	if d == nil {
		read, err := s.debtors.Debtor(ctx, tenantID, rec.DebtorID)
		if err != nil {
			return receivablesv1.InvoiceCreated{}, err
		}
		d = &read
	}
	intent := BookingIntentID(tenantID, rec.ID)
	desc := truncate("Ausgangsrechnung "+rec.Number+" "+d.Name, maxBookingDescription)
	_, err = s.ledger.Post(ctx, ledgerv1.PostRequest{TenantID: tenantID, IntentID: intent, Source: invoiceSource, DocumentID: docID,
		Booking: ledgerv1.Booking{BookingDate: rec.InvoiceDate, Description: desc, SkipDuplicateCheck: true,
			Lines: PostingLines(*rec.Document, rec.Lines, d.ReceivableAccount, rec.Number)}})
	if err != nil {
		return receivablesv1.InvoiceCreated{}, s.refused(ctx, tenantID, rec, "posting the receivable", err)
	}
	ev := receivablesv1.InvoiceIssued{TenantID: tenantID, InvoiceID: rec.ID, Number: rec.Number, DebtorID: rec.DebtorID, IntentID: intent,
		Gross: money.New(rec.TotalGross), Currency: rec.Currency, DueDate: rec.DueDate}
	if rec.HasFiles {
		pdf = nil
	}
	rec, err = s.store.ConfirmInvoice(ctx, tenantID, rec.ID, intent, docID, xml, pdf, ev)
	if err != nil {
		return receivablesv1.InvoiceCreated{}, err
	}
	return created0(rec), nil
}

// refused voids the invoice when the ledger refused for good (anything
// but an outage, a timeout or an internal error) and answers its error;
// an outage leaves the invoice pending for a retry.
func (s *Invoicing) refused(ctx context.Context, tenantID string, rec InvoiceRecord, step string, err error) error {
	return voidOnRefusal(step, err, func(reason string) error { return s.store.VoidInvoice(ctx, tenantID, rec.ID, reason) })
}

func created0(rec InvoiceRecord) receivablesv1.InvoiceCreated {
	out := receivablesv1.InvoiceCreated{InvoiceID: rec.ID, Status: InvoiceStatus(rec)}
	if rec.Number != "" {
		out.Number = &rec.Number
	}
	if rec.BookingIntentID != "" {
		out.BookingIntentID = &rec.BookingIntentID
	}
	if rec.DocumentID != "" {
		out.DocumentID = &rec.DocumentID
	}
	return out
}

// InvoiceStatus is the status the API shows: the row's state, and for a
// posted invoice what payments and credit notes left of it.
func InvoiceStatus(r InvoiceRecord) string {
	switch r.State {
	case "draft":
		return receivablesv1.StatusDraft
	case "pending":
		return receivablesv1.StatusPending
	case "void":
		return receivablesv1.StatusVoid
	}
	remaining := r.TotalGross.Sub(r.PaidAmount).Sub(r.CreditedAmount)
	switch {
	case r.Type == receivablesv1.TypeCreditNote:
		// Applied to its invoice when issued: nothing of it stays open.
		return receivablesv1.StatusPaid
	case !remaining.IsPositive():
		return receivablesv1.StatusPaid
	case r.Today != "" && r.DueDate < r.Today:
		return receivablesv1.StatusOverdue
	case r.PaidAmount.Add(r.CreditedAmount).IsPositive():
		return receivablesv1.StatusPartiallyPaid
	}
	return receivablesv1.StatusOpen
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Summary is the invoice as a list shows it.
func Summary(r InvoiceRecord) receivablesv1.InvoiceSummary {
	rem := r.TotalGross.Sub(r.PaidAmount).Sub(r.CreditedAmount)
	if rem.IsNegative() || r.Type == receivablesv1.TypeCreditNote || r.State != "posted" {
		rem = decimal.Zero
	}
	typ := cmp.Or(r.Type, receivablesv1.TypeInvoice)
	return receivablesv1.InvoiceSummary{ID: r.ID, Type: typ, CorrectsID: optStr(r.CorrectsID), Number: optStr(r.Number), Status: InvoiceStatus(r), Debtor: r.Debtor,
		InvoiceDate: r.InvoiceDate, DueDate: r.DueDate, Currency: r.Currency,
		TotalNet: money.New(r.TotalNet), TotalTax: money.New(r.TotalTax), TotalGross: money.New(r.TotalGross),
		PaidAmount: money.New(r.PaidAmount), CreditedAmount: money.New(r.CreditedAmount), Remaining: money.New(rem),
		BookingIntentID: optStr(r.BookingIntentID), DocumentID: optStr(r.DocumentID), CreatedAt: r.CreatedAt}
}

// Detail is the invoice with its lines and VAT breakdown.
func Detail(r InvoiceRecord) receivablesv1.Invoice {
	out := receivablesv1.Invoice{InvoiceSummary: Summary(r), DeliveryDate: optStr(r.DeliveryDate), BuyerReference: optStr(r.BuyerReference),
		Notes: optStr(r.Notes), VoidReason: optStr(r.VoidReason), FinalizedAt: r.FinalizedAt,
		Lines: []receivablesv1.InvoiceLine{}, TaxBreakdown: breakdown(r.Lines)}
	if r.ServiceStart != "" {
		out.ServicePeriod = &receivablesv1.ServicePeriod{Start: r.ServiceStart, End: r.ServiceEnd}
	}
	if r.Currency != "EUR" {
		x := money.New(r.ExchangeRate)
		out.ExchangeRate = &x
	}
	if r.Document != nil {
		p := string(r.Document.Profile)
		out.Profile = &p
	}
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, receivablesv1.InvoiceLine{Description: l.Description, Quantity: money.New(l.Quantity), Unit: l.Unit,
			UnitPrice: money.New(l.UnitPrice), Discount: money.New(l.Discount), TaxCode: optStr(l.TaxCode), TaxCategory: l.TaxCategory,
			TaxRate: money.New(l.TaxRate), NetAmount: money.New(lineNet(l))})
	}
	if out.TaxBreakdown == nil {
		out.TaxBreakdown = []receivablesv1.TaxGroup{}
	}
	return out
}

// Invoice reads one invoice.
func (s *Invoicing) Invoice(ctx context.Context, tenantID, id string) (receivablesv1.Invoice, error) {
	if !ValidID(id) {
		return receivablesv1.Invoice{}, invoiceNotFound(id)
	}
	r, err := s.store.Invoice(ctx, tenantID, id)
	if err != nil {
		return receivablesv1.Invoice{}, err
	}
	return Detail(r), nil
}

// Invoices lists invoices.
func (s *Invoicing) Invoices(ctx context.Context, tenantID string, f receivablesv1.InvoiceFilter) (receivablesv1.InvoiceList, error) {
	if f.DebtorID != "" {
		// Another tenant's debtor is as unknown as no debtor at all.
		if _, err := s.debtors.Debtor(ctx, tenantID, f.DebtorID); err != nil {
			if e := errs.As(err); e != nil && e.Code == errs.NotFound {
				return receivablesv1.InvoiceList{}, &errs.Error{Code: errs.NotFound, Message: "debtor " + f.DebtorID + " not found",
					Details: []errs.Detail{errs.Field("debtor_id", "no debtor of the tenant")}, Err: err}
			}
			return receivablesv1.InvoiceList{}, err
		}
	}
	rs, err := s.store.Invoices(ctx, tenantID, f)
	if err != nil {
		return receivablesv1.InvoiceList{}, err
	}
	out := receivablesv1.InvoiceList{Invoices: []receivablesv1.InvoiceSummary{}}
	for _, r := range rs {
		out.Invoices = append(out.Invoices, Summary(r))
	}
	return out, nil
}

// InvoiceFile returns the PDF or the XML of an issued invoice with its
// number; a draft has none (NOT_FOUND).
func (s *Invoicing) InvoiceFile(ctx context.Context, tenantID, id string, pdf bool) (string, []byte, error) {
	if !ValidID(id) {
		return "", nil, invoiceNotFound(id)
	}
	return s.store.InvoiceFile(ctx, tenantID, id, pdf)
}

// Settings reads the tenant's invoicing settings.
func (s *Invoicing) Settings(ctx context.Context, tenantID string) (receivablesv1.Settings, error) {
	return s.store.InvoiceSettings(ctx, tenantID)
}

var bicRe = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// PutSettings changes the given settings.
func (s *Invoicing) PutSettings(ctx context.Context, tenantID string, in receivablesv1.SettingsInput) (receivablesv1.Settings, error) {
	cur, err := s.store.InvoiceSettings(ctx, tenantID)
	if err != nil {
		return receivablesv1.Settings{}, err
	}
	before := cur
	var c checker
	set := func(field string, v *string, dst **string, norm func(string) string, check func(string) string) {
		if v == nil {
			return
		}
		x := norm(*v)
		if x == "" {
			*dst = nil
			return
		}
		if msg := check(x); msg != "" {
			c.bad(field, msg)
		}
		*dst = &x
	}
	upper := func(s string) string { return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", "")) }
	if in.InvoiceNumberPrefix != nil {
		if msg := CheckInvoicePrefix(*in.InvoiceNumberPrefix); msg != "" {
			c.bad("invoice_number_prefix", msg)
		}
		cur.InvoiceNumberPrefix = *in.InvoiceNumberPrefix
	}
	set("payment_iban", in.PaymentIBAN, &cur.PaymentIBAN, upper, func(v string) string {
		if !einvoiceIBAN(v) {
			return "not a valid IBAN"
		}
		return ""
	})
	set("payment_bic", in.PaymentBIC, &cur.PaymentBIC, upper, func(v string) string {
		if !bicRe.MatchString(v) {
			return "not a BIC (8 or 11 letters and digits)"
		}
		return ""
	})
	set("contact_name", in.ContactName, &cur.ContactName, strings.TrimSpace, func(v string) string {
		if utf8.RuneCountInString(v) > 200 {
			return "at most 200 characters"
		}
		return ""
	})
	set("contact_email", in.ContactEmail, &cur.ContactEmail, strings.TrimSpace, func(v string) string {
		if len(v) > MaxEmailLength || !emailRe.MatchString(v) {
			return "not an e-mail address"
		}
		return ""
	})
	set("contact_phone", in.ContactPhone, &cur.ContactPhone, strings.TrimSpace, func(v string) string {
		if !phoneRe.MatchString(v) {
			return "a phone number: digits, spaces and + ( ) / -, at most 40"
		}
		return ""
	})
	if err := c.err("invalid receivables settings"); err != nil {
		return receivablesv1.Settings{}, err
	}
	if settingsEqual(before, cur) {
		return cur, errs.E(errs.NoChanges, "the request changes nothing: no field was given or every value equals the current one")
	}
	if err := s.store.PutInvoiceSettings(ctx, tenantID, cur); err != nil {
		return receivablesv1.Settings{}, err
	}
	return cur, nil
}

var phoneRe = regexp.MustCompile(`^\+?[0-9 ()/-]{3,40}$`)

// einvoiceIBAN checks an IBAN as the e-invoice does: its form and the
// ISO 13616 check digits.
func einvoiceIBAN(iban string) bool {
	doc := einvoice.Document{PaymentMeans: &einvoice.PaymentMeans{IBAN: iban}}
	err := doc.Compute()
	e := errs.As(err)
	if e == nil {
		return true
	}
	for _, d := range e.Details {
		if d.Field == "paymentMeans.iban" {
			return false
		}
	}
	return true
}

func settingsEqual(a, b receivablesv1.Settings) bool {
	same := func(x, y *string) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	return a.InvoiceNumberPrefix == b.InvoiceNumberPrefix && same(a.PaymentIBAN, b.PaymentIBAN) && same(a.PaymentBIC, b.PaymentBIC) &&
		same(a.ContactName, b.ContactName) && same(a.ContactEmail, b.ContactEmail) && same(a.ContactPhone, b.ContactPhone)
}
