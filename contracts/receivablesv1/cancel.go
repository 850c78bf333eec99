package receivablesv1

import "github.com/ledgerplatform/ledger/contracts/money"

// EventCreditNoteIssued is published through the outbox when a credit
// note's booking (the reversal of a cancelled invoice, or a partial
// credit note's own posting) is in the ledger; payload CreditNoteIssued.
const EventCreditNoteIssued = "evt.receivables.v1.credit_note_issued"

// Cancelled answers SubjectSalesInvoiceCancel (POST
// /v1/sales-invoices/:id/cancel): the credit note over the invoice's full
// gross and the ledger's reversal of its receivable.
type Cancelled struct {
	OK               bool   `json:"ok"`
	ReversalIntentID string `json:"reversal_intent_id"`
	CreditNoteID     string `json:"credit_note_id"`
	CreditNoteNumber string `json:"credit_note_number"`
}

// CreditNoteIssued is the payload of EventCreditNoteIssued.
type CreditNoteIssued struct {
	TenantID     string       `json:"tenant_id"`
	CreditNoteID string       `json:"credit_note_id"`
	Number       string       `json:"number"`
	CorrectsID   string       `json:"corrects_id"`
	DebtorID     string       `json:"debtor_id"`
	IntentID     string       `json:"intent_id"`
	Gross        money.Amount `json:"gross"`
	Currency     string       `json:"currency"`
}

// CreditLineInput names what a partial credit note credits of one line of
// the invoice (Line, from 1): the whole line, Quantity of it at its unit
// price, or a net Amount off it (a price reduction); not both.
type CreditLineInput struct {
	Line     int           `json:"line"`
	Quantity *money.Amount `json:"quantity,omitempty"`
	Amount   *money.Amount `json:"amount,omitempty"`
}

// CreditNoteInput is the body of SubjectSalesInvoiceCredit (POST
// /v1/sales-invoices/:id/credit-notes).
type CreditNoteInput struct {
	LineItems []CreditLineInput `json:"line_items"`
	Reason    string            `json:"reason"`
}

// CreditNoteCreated answers SubjectSalesInvoiceCredit.
type CreditNoteCreated struct {
	CreditNoteID     string       `json:"credit_note_id"`
	CreditNoteNumber string       `json:"credit_note_number"`
	CorrectsID       string       `json:"corrects_id"`
	BookingIntentID  string       `json:"booking_intent_id"`
	DocumentID       string       `json:"document_id"`
	TotalNet         money.Amount `json:"total_net"`
	TotalTax         money.Amount `json:"total_tax"`
	TotalGross       money.Amount `json:"total_gross"`
}
