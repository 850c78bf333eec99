package receivablesv1

import "github.com/ledgerplatform/ledger/contracts/money"

// Subjects of the outgoing-invoice views and of cancellation and credit
// notes (issue 12); path parameters travel in the Path-Params header.
const (
	SubjectOutgoingInvoicesList  = "receivables.v1.outgoing-invoices.list"
	SubjectOutgoingOpenItems     = "receivables.v1.outgoing-invoices.open-items"
	SubjectSalesInvoiceOpenItems = "receivables.v1.sales-invoices.open-items"
	SubjectSalesInvoiceCancel    = "receivables.v1.sales-invoices.cancel"       // param id
	SubjectSalesInvoiceCredit    = "receivables.v1.sales-invoices.credit-notes" // param id
)

// Document types of a sales invoice.
const (
	TypeInvoice    = "invoice"
	TypeCreditNote = "credit_note"
)

// Limits of SubjectOutgoingInvoicesList.
const (
	DefaultOutgoingLimit = 100
	MaxOutgoingLimit     = 500
)

// OutgoingFilter is the query of SubjectOutgoingInvoicesList (GET
// /v1/outgoing-invoices); empty fields do not filter. Dates are
// YYYY-MM-DD and bound the invoice date, both inclusive.
type OutgoingFilter struct {
	CustomerID string
	Status     string
	Type       string
	StartDate  string
	EndDate    string
	Limit      int
	Offset     int
}

// OutgoingInvoice is a sales invoice or credit note as the list shows it.
// InvoiceNumber is null for a draft. RemainingAmount is what is still
// open of a posted invoice: the gross less payments and credit notes.
type OutgoingInvoice struct {
	ID              string       `json:"id"`
	CustomerID      string       `json:"customer_id"`
	CustomerName    string       `json:"customer_name"`
	InvoiceNumber   *string      `json:"invoice_number"`
	InvoiceDate     string       `json:"invoice_date"`
	DueDate         string       `json:"due_date"`
	Currency        string       `json:"currency"`
	TotalGross      money.Amount `json:"total_gross"`
	Type            string       `json:"type"`
	Status          string       `json:"status"`
	RemainingAmount money.Amount `json:"remaining_amount"`
}

// OutgoingInvoiceList answers SubjectOutgoingInvoicesList.
type OutgoingInvoiceList struct {
	Invoices []OutgoingInvoice `json:"invoices"`
}

// CustomerOpenItems are one customer's open invoices: TotalOpen is their
// gross less payments, CreditNoteTotal what credit notes took off them,
// NetOpen the difference (the sum of their remaining amounts).
type CustomerOpenItems struct {
	CustomerID      string            `json:"customer_id"`
	CustomerName    string            `json:"customer_name"`
	TotalOpen       money.Amount      `json:"total_open"`
	CreditNoteTotal money.Amount      `json:"credit_note_total"`
	NetOpen         money.Amount      `json:"net_open"`
	Invoices        []OutgoingInvoice `json:"invoices"`
}

// OutgoingOpenItems answers SubjectOutgoingOpenItems (GET
// /v1/outgoing-invoices/open-items), by customer name.
type OutgoingOpenItems struct {
	Customers []CustomerOpenItems `json:"customers"`
}

// OpenItemsFilter is the query of SubjectSalesInvoiceOpenItems: a debtor,
// a month of invoice dates (YYYY-MM); empty for all.
type OpenItemsFilter struct {
	DebtorID string
	Period   string
}

// OpenItem is an open sales invoice: Amount is what remains of it.
type OpenItem struct {
	InvoiceID   string       `json:"invoice_id"`
	Number      string       `json:"number"`
	DebtorID    string       `json:"debtor_id"`
	InvoiceDate string       `json:"invoice_date"`
	DueDate     string       `json:"due_date"`
	Currency    string       `json:"currency"`
	Amount      money.Amount `json:"amount"`
	TotalGross  money.Amount `json:"total_gross"`
	Status      string       `json:"status"`
}

// OpenItemList answers SubjectSalesInvoiceOpenItems (GET
// /v1/sales-invoices/open-items).
type OpenItemList struct {
	OpenItems []OpenItem `json:"open_items"`
}
