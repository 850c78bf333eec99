package payablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Subjects of the invoice review cases and the incoming invoices; path
// parameters travel in the Path-Params header under the names noted.
const (
	SubjectReviewCasesList    = "payables.v1.review-cases.list"
	SubjectReviewCasesGet     = "payables.v1.review-cases.get"     // param id
	SubjectReviewCasesApprove = "payables.v1.review-cases.approve" // param id
	SubjectReviewCasesCorrect = "payables.v1.review-cases.correct" // param id
	SubjectReviewCasesReject  = "payables.v1.review-cases.reject"  // param id
	SubjectInvoicesList       = "payables.v1.invoices.list"
	SubjectInvoicesGet        = "payables.v1.invoices.get" // param id
	SubjectInvoicesOpenItems  = "payables.v1.invoices.open-items"
)

// Queue states of an invoice review case (spec: Invoice review case queue
// state).
const (
	QueueApproval      = "approval"       // complete, compliant, vendor known: waits for approval
	QueueCorrection    = "correction"     // fields missing, §14 checks failed or no vendor
	QueueException     = "exception"      // a likely duplicate, or not an invoice at all
	QueueApproved      = "approved"       // the incoming invoice is posted
	QueueRejected      = "rejected"       // refused by a reviewer
	QueuePostingFailed = "posting_failed" // the ledger refused the posting; approve again to retry
)

// Limits of SubjectReviewCasesList.
const (
	DefaultReviewCasesLimit = 50
	MaxReviewCasesLimit     = 200
)

// ReviewLine is one line of a case's invoice: its net amount posted to
// Account with the input VAT of TaxRate.
type ReviewLine struct {
	Description string       `json:"description"`
	Account     string       `json:"account"`
	TaxRate     money.Amount `json:"tax_rate"` // percent: 19, 7 or 0
	Net         money.Amount `json:"net"`
}

// ReviewTaxGroup is the net, tax and gross of one VAT rate.
type ReviewTaxGroup struct {
	Rate  money.Amount `json:"rate"`
	Net   money.Amount `json:"net"`
	Tax   money.Amount `json:"tax"`
	Gross money.Amount `json:"gross"`
}

// ReviewInvoice is the normalised invoice of a review case: what
// approving it books. A value not known is null (or "" for texts).
// ReverseCharge marks an invoice whose VAT the tenant owes (§13b UStG):
// its lines are posted net with the self-assessed tax pair.
type ReviewInvoice struct {
	VendorID      *string          `json:"vendor_id"`
	VendorName    string           `json:"vendor_name"`
	InvoiceNumber string           `json:"invoice_number"`
	InvoiceDate   *string          `json:"invoice_date"`
	DueDate       *string          `json:"due_date"`
	Currency      string           `json:"currency"`
	ReverseCharge bool             `json:"reverse_charge"`
	Lines         []ReviewLine     `json:"lines"`
	TaxBreakdown  []ReviewTaxGroup `json:"tax_breakdown"`
	TotalNet      money.Amount     `json:"total_net"`
	TotalTax      money.Amount     `json:"total_tax"`
	TotalGross    money.Amount     `json:"total_gross"`
	// StatedGross is the gross the document states, when it states one:
	// the lines must add up to it.
	StatedGross *money.Amount `json:"stated_gross"`
}

// VendorCandidate is a vendor the case's document may be from.
type VendorCandidate struct {
	VendorID   string       `json:"vendor_id"`
	Name       string       `json:"name"`
	Method     string       `json:"match_method"` // vat_id, iban, name or extraction
	Confidence money.Amount `json:"confidence"`
	Matched    bool         `json:"matched"` // the vendor the case's invoice names
}

// DuplicateHint names an invoice or another open case the case's invoice
// may duplicate. Kind same_vendor_number is strong (the case goes to
// exception), same_amount_date a hint only.
type DuplicateHint struct {
	Kind              string  `json:"kind"`
	IncomingInvoiceID *string `json:"incoming_invoice_id"`
	ReviewCaseID      *string `json:"review_case_id"`
	InvoiceNumber     string  `json:"invoice_number"`
	InvoiceDate       *string `json:"invoice_date"`
}

// Duplicate hint kinds.
const (
	HintSameVendorNumber = "same_vendor_number"
	HintSameAmountDate   = "same_amount_date"
)

// PostingError is why the ledger refused a case's posting.
type PostingError struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Issue is one reason a case needs correction: a field missing or wrong,
// a §14 check failed.
type Issue struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// ReviewCase is an invoice review case as the list shows it (spec: Review
// queue item and review case).
type ReviewCase struct {
	ID                string            `json:"id"`
	QueueState        string            `json:"queue_state"`
	DocumentID        string            `json:"document_id"`
	InboxItemID       *string           `json:"inbox_item_id"`
	ExtractionID      string            `json:"extraction_id"`
	Invoice           ReviewInvoice     `json:"invoice"`
	VendorCandidates  []VendorCandidate `json:"vendor_candidates"`
	Issues            []Issue           `json:"issues"`
	PostingErrors     []PostingError    `json:"posting_errors"`
	IncomingInvoiceID *string           `json:"incoming_invoice_id"`
	BookingIntentID   *string           `json:"booking_intent_id"`
	RejectReason      *string           `json:"reject_reason"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
}

// ReviewCaseDetail is one review case as GET .../:id shows it: the list's
// fields, the duplicate hints, vendor suggestions and the extraction's
// compliance check (left out when the extraction has none).
type ReviewCaseDetail struct {
	ReviewCase
	DuplicateHints    []DuplicateHint  `json:"duplicate_hints"`
	VendorSuggestions []VendorInput    `json:"vendor_suggestions"`
	ComplianceCheck   *ComplianceCheck `json:"compliance_check,omitempty"`
}

// ReviewCaseList answers SubjectReviewCasesList.
type ReviewCaseList struct {
	Cases []ReviewCase `json:"cases"`
}

// ReviewCaseFilter is the query of SubjectReviewCasesList.
type ReviewCaseFilter struct {
	QueueState string
	Limit      int
	Offset     int
}

// ReviewLineInput is a line of a correction.
type ReviewLineInput struct {
	Description string        `json:"description"`
	Account     *string       `json:"account,omitempty"` // default: the vendor's default account, else 6300
	TaxRate     *money.Amount `json:"tax_rate"`
	Net         *money.Amount `json:"net"`
}

// ReviewCorrection is the body of SubjectReviewCasesCorrect (POST
// /v1/invoice-review-cases/:id/correct): each given field replaces the
// case's; Lines replace all lines. TotalGross is the gross the document
// states, which the lines must add up to.
type ReviewCorrection struct {
	VendorID      *string           `json:"vendor_id,omitempty"`
	InvoiceNumber *string           `json:"invoice_number,omitempty"`
	InvoiceDate   *string           `json:"invoice_date,omitempty"`
	DueDate       *string           `json:"due_date,omitempty"`
	Currency      *string           `json:"currency,omitempty"`
	ReverseCharge *bool             `json:"reverse_charge,omitempty"`
	Lines         []ReviewLineInput `json:"lines,omitempty"`
	TotalGross    *money.Amount     `json:"total_gross,omitempty"`
}

// ReviewRejection is the body of SubjectReviewCasesReject.
type ReviewRejection struct {
	Reason string `json:"reason"`
}

// Incoming invoice statuses (spec: Invoice status).
const (
	StatusDraft         = "draft"
	StatusOpen          = "open"
	StatusPartiallyPaid = "partially_paid"
	StatusPaid          = "paid"
	StatusOverdue       = "overdue"
)

// Limits of SubjectInvoicesList.
const (
	DefaultInvoicesLimit = 100
	MaxInvoicesLimit     = 500
)

// InvoiceFilter is the query of SubjectInvoicesList (GET /v1/invoices):
// dates bound the invoice date, both inclusive; empty fields do not
// filter.
type InvoiceFilter struct {
	VendorID  string
	Status    string
	StartDate string
	EndDate   string
	Limit     int
	Offset    int
}

// IncomingInvoice is an incoming invoice as the list shows it (spec:
// Incoming invoice (list item)); RemainingAmount is its gross less what
// was paid of it once posted.
type IncomingInvoice struct {
	ID              string       `json:"id"`
	VendorID        string       `json:"vendor_id"`
	VendorName      string       `json:"vendor_name"`
	InvoiceNumber   string       `json:"invoice_number"`
	InvoiceDate     string       `json:"invoice_date"`
	DueDate         string       `json:"due_date"`
	Currency        string       `json:"currency"`
	TotalGross      money.Amount `json:"total_gross"`
	Status          string       `json:"status"`
	RemainingAmount money.Amount `json:"remaining_amount"`
}

// IncomingInvoiceDetail is one incoming invoice with its lines, totals,
// payments and where it came from.
type IncomingInvoiceDetail struct {
	IncomingInvoice
	TotalNet        money.Amount     `json:"total_net"`
	TotalTax        money.Amount     `json:"total_tax"`
	PaidAmount      money.Amount     `json:"paid_amount"`
	Lines           []ReviewLine     `json:"lines"`
	TaxBreakdown    []ReviewTaxGroup `json:"tax_breakdown"`
	ReverseCharge   bool             `json:"reverse_charge"`
	CreditorAccount string           `json:"creditor_account"`
	BookingIntentID *string          `json:"booking_intent_id"`
	DocumentID      *string          `json:"document_id"`
	ReviewCaseID    *string          `json:"review_case_id"`
	CreatedAt       time.Time        `json:"created_at"`
}

// IncomingInvoiceList answers SubjectInvoicesList.
type IncomingInvoiceList struct {
	Invoices []IncomingInvoice `json:"invoices"`
}

// VendorOpenItems are one vendor's open invoices (spec: Open items,
// payables): TotalOpen is the sum of what remains of them.
type VendorOpenItems struct {
	VendorID   string            `json:"vendor_id"`
	VendorName string            `json:"vendor_name"`
	TotalOpen  money.Amount      `json:"total_open"`
	Invoices   []IncomingInvoice `json:"invoices"`
}

// OpenItems answers SubjectInvoicesOpenItems (GET
// /v1/invoices/open-items), by vendor name.
type OpenItems struct {
	Vendors []VendorOpenItems `json:"vendors"`
}
