package receivablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Sales invoices (issue 12): subjects of the REST routes.
const (
	SubjectInvoicesCreate   = "receivables.v1.invoices.create"
	SubjectInvoicesList     = "receivables.v1.invoices.list"
	SubjectInvoicesGet      = "receivables.v1.invoices.get"      // param id
	SubjectInvoicesFinalize = "receivables.v1.invoices.finalize" // param id
	SubjectInvoicesPDF      = "receivables.v1.invoices.pdf"      // param id
	SubjectInvoicesXML      = "receivables.v1.invoices.zugferd"  // param id
	SubjectSettingsGet      = "receivables.v1.settings.get"
	SubjectSettingsPut      = "receivables.v1.settings.put"
)

// EventInvoiceIssued is published through the outbox when an invoice's
// receivable is posted.
const EventInvoiceIssued = "evt.receivables.v1.invoice_issued"

// Invoice statuses as the API shows them: draft, then (once posted)
// open, partially_paid, paid or overdue; pending while the posting is not
// confirmed, void when the ledger refused it for good.
const (
	StatusDraft         = "draft"
	StatusPending       = "pending"
	StatusOpen          = "open"
	StatusPartiallyPaid = "partially_paid"
	StatusPaid          = "paid"
	StatusOverdue       = "overdue"
	StatusVoid          = "void"
)

// ServicePeriod is a service period, both ends inclusive (YYYY-MM-DD).
type ServicePeriod struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// LineItemInput is one line of POST /v1/sales-invoices.
type LineItemInput struct {
	Description string        `json:"description"`
	Quantity    money.Amount  `json:"quantity"`
	Unit        string        `json:"unit,omitempty"`
	UnitPrice   money.Amount  `json:"unit_price"`
	TaxCode     string        `json:"tax_code,omitempty"`
	TaxRate     *money.Amount `json:"tax_rate,omitempty"`
	TaxCategory string        `json:"tax_category,omitempty"`
	Discount    *money.Amount `json:"discount,omitempty"`
}

// InvoiceInput is the body of SubjectInvoicesCreate (POST
// /v1/sales-invoices).
type InvoiceInput struct {
	DebtorID        string          `json:"debtor_id"`
	InvoiceDate     string          `json:"invoice_date"`
	DueDate         string          `json:"due_date,omitempty"`
	LineItems       []LineItemInput `json:"line_items"`
	DeliveryDate    string          `json:"delivery_date,omitempty"`
	ServicePeriod   *ServicePeriod  `json:"service_period,omitempty"`
	Notes           string          `json:"notes,omitempty"`
	BuyerReference  string          `json:"buyer_reference,omitempty"`
	Currency        string          `json:"currency,omitempty"`
	ExchangeRate    *money.Amount   `json:"exchange_rate,omitempty"`
	ExemptionReason string          `json:"exemption_reason,omitempty"`
	Draft           bool            `json:"draft,omitempty"`
}

// InvoiceCreated answers creation and finalisation. BookingIntentID and
// DocumentID are null for a draft, Number too.
type InvoiceCreated struct {
	InvoiceID       string  `json:"invoice_id"`
	Number          *string `json:"number"`
	Status          string  `json:"status"`
	BookingIntentID *string `json:"booking_intent_id"`
	DocumentID      *string `json:"document_id"`
}

// InvoiceLine is a line of an invoice as the API shows it.
type InvoiceLine struct {
	Description string       `json:"description"`
	Quantity    money.Amount `json:"quantity"`
	Unit        string       `json:"unit"`
	UnitPrice   money.Amount `json:"unit_price"`
	Discount    money.Amount `json:"discount"`
	TaxCode     *string      `json:"tax_code"`
	TaxCategory string       `json:"tax_category"`
	TaxRate     money.Amount `json:"tax_rate"`
	NetAmount   money.Amount `json:"net_amount"`
}

// TaxGroup is one line of an invoice's VAT breakdown.
type TaxGroup struct {
	TaxCategory string       `json:"tax_category"`
	TaxRate     money.Amount `json:"tax_rate"`
	Basis       money.Amount `json:"basis"`
	Tax         money.Amount `json:"tax"`
}

// InvoiceDebtor names the invoice's debtor.
type InvoiceDebtor struct {
	ID             string `json:"id"`
	CustomerNumber string `json:"customer_number"`
	Name           string `json:"name"`
}

// InvoiceSummary is an invoice in a list.
type InvoiceSummary struct {
	ID              string        `json:"id"`
	Type            string        `json:"type"`        // TypeInvoice or TypeCreditNote
	CorrectsID      *string       `json:"corrects_id"` // a credit note's invoice
	Number          *string       `json:"number"`
	Status          string        `json:"status"`
	Debtor          InvoiceDebtor `json:"debtor"`
	InvoiceDate     string        `json:"invoice_date"`
	DueDate         string        `json:"due_date"`
	Currency        string        `json:"currency"`
	TotalNet        money.Amount  `json:"total_net"`
	TotalTax        money.Amount  `json:"total_tax"`
	TotalGross      money.Amount  `json:"total_gross"`
	PaidAmount      money.Amount  `json:"paid_amount"`
	CreditedAmount  money.Amount  `json:"credited_amount"`
	Remaining       money.Amount  `json:"remaining"`
	BookingIntentID *string       `json:"booking_intent_id"`
	DocumentID      *string       `json:"document_id"`
	CreatedAt       time.Time     `json:"created_at"`
}

// Invoice is one invoice with its lines and VAT breakdown
// (SubjectInvoicesGet).
type Invoice struct {
	InvoiceSummary
	DeliveryDate   *string        `json:"delivery_date"`
	ServicePeriod  *ServicePeriod `json:"service_period"`
	BuyerReference *string        `json:"buyer_reference"`
	Notes          *string        `json:"notes"`
	ExchangeRate   *money.Amount  `json:"exchange_rate"`
	Profile        *string        `json:"profile"`
	VoidReason     *string        `json:"void_reason"`
	FinalizedAt    *time.Time     `json:"finalized_at"`
	Lines          []InvoiceLine  `json:"lines"`
	TaxBreakdown   []TaxGroup     `json:"tax_breakdown"`
}

// InvoiceList answers SubjectInvoicesList.
type InvoiceList struct {
	Invoices []InvoiceSummary `json:"invoices"`
}

// InvoiceFilter is the query of SubjectInvoicesList. Status is one of the
// API statuses; From and To bound the invoice date (inclusive).
type InvoiceFilter struct {
	DebtorID string
	Status   string
	From, To string
	Limit    int
	Offset   int
}

// InvoiceIssued is the payload of EventInvoiceIssued.
type InvoiceIssued struct {
	TenantID  string       `json:"tenant_id"`
	InvoiceID string       `json:"invoice_id"`
	Number    string       `json:"number"`
	DebtorID  string       `json:"debtor_id"`
	IntentID  string       `json:"intent_id"`
	Gross     money.Amount `json:"gross"`
	Currency  string       `json:"currency"`
	DueDate   string       `json:"due_date"`
}

// Settings are the tenant's invoicing settings (GET/PUT
// /v1/receivables/settings): the number prefix, the account payments go
// to and the contact printed on invoices. Texts are null when not set.
type Settings struct {
	InvoiceNumberPrefix string  `json:"invoice_number_prefix"`
	PaymentIBAN         *string `json:"payment_iban"`
	PaymentBIC          *string `json:"payment_bic"`
	ContactName         *string `json:"contact_name"`
	ContactEmail        *string `json:"contact_email"`
	ContactPhone        *string `json:"contact_phone"`
}

// SettingsInput is the body of SubjectSettingsPut: each given field
// replaces the current value, an empty text removes it.
type SettingsInput struct {
	InvoiceNumberPrefix *string `json:"invoice_number_prefix,omitempty"`
	PaymentIBAN         *string `json:"payment_iban,omitempty"`
	PaymentBIC          *string `json:"payment_bic,omitempty"`
	ContactName         *string `json:"contact_name,omitempty"`
	ContactEmail        *string `json:"contact_email,omitempty"`
	ContactPhone        *string `json:"contact_phone,omitempty"`
}
