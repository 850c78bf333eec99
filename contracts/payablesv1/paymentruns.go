package payablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Subjects of the payment runs (SEPA credit transfers of open incoming
// invoices); path parameters travel in the Path-Params header under the
// names noted.
const (
	SubjectPaymentRunsList     = "payables.v1.payment-runs.list"
	SubjectPaymentRunsCreate   = "payables.v1.payment-runs.create"
	SubjectPaymentRunsGet      = "payables.v1.payment-runs.get"      // param id
	SubjectPaymentRunsApprove  = "payables.v1.payment-runs.approve"  // param id
	SubjectPaymentRunsExport   = "payables.v1.payment-runs.export"   // param id
	SubjectPaymentRunsComplete = "payables.v1.payment-runs.complete" // param id
	SubjectPaymentRunsCancel   = "payables.v1.payment-runs.cancel"   // param id
	SubjectPaymentRunsReturn   = "payables.v1.payment-runs.return"   // param id
)

// Statuses of a payment run. A run is created in draft; approve, export
// and complete move it on one step each; a draft, approved or exported run
// may be cancelled. Draft, approved and exported runs are active: an
// invoice is in at most one active run.
const (
	RunDraft     = "draft"
	RunApproved  = "approved"
	RunExported  = "exported"
	RunCompleted = "completed"
	RunCancelled = "cancelled"
)

// RunStatuses lists the statuses in their order of the life cycle.
var RunStatuses = []string{RunDraft, RunApproved, RunExported, RunCompleted, RunCancelled}

// PaymentRunInput is the body of SubjectPaymentRunsCreate (POST
// /v1/payment-runs).
type PaymentRunInput struct {
	BankAccountID string   `json:"bank_account_id"`
	ExecutionDate string   `json:"execution_date"` // YYYY-MM-DD, the requested SEPA execution date
	InvoiceIDs    []string `json:"invoice_ids"`
	Label         *string  `json:"label,omitempty"`
}

// PaymentRunItem is one invoice of a run, paid by one credit transfer.
// Amount is what is transferred: the invoice's remaining amount less the
// cash discount (Skonto) still open at the execution date, which is
// Discount. IBAN, BIC, vendor name and address are the vendor's when the
// run was created: the file pays what was approved.
type PaymentRunItem struct {
	InvoiceID     string       `json:"invoice_id"`
	VendorID      string       `json:"vendor_id"`
	VendorName    string       `json:"vendor_name"`
	InvoiceNumber string       `json:"invoice_number"`
	IBAN          string       `json:"iban"`
	BIC           *string      `json:"bic"`
	Amount        money.Amount `json:"amount"`
	Discount      money.Amount `json:"discount"`
	Remittance    string       `json:"remittance"`
	EndToEndID    string       `json:"end_to_end_id"`
	// ReturnedAt is when a return of the transfer by the bank was
	// recorded (SubjectPaymentRunsReturn), with the reason given.
	ReturnedAt   *time.Time `json:"returned_at"`
	ReturnReason *string    `json:"return_reason"`
}

// PaymentRunReturn is the body of SubjectPaymentRunsReturn (POST
// /v1/payment-runs/{id}/returns): the invoice whose transfer the bank sent
// back, and why (the bank's return reason, such as "AC04 account closed").
type PaymentRunReturn struct {
	InvoiceID string  `json:"invoice_id"`
	Reason    *string `json:"reason,omitempty"`
}

// PaymentRun is a payment run. Items are given by the create, get and
// state-change answers, not by the list. The debtor is the bank account
// paid from, held by the tenant's company.
type PaymentRun struct {
	ID            string           `json:"id"`
	Status        string           `json:"status"`
	Label         *string          `json:"label"`
	BankAccountID string           `json:"bank_account_id"`
	DebtorName    string           `json:"debtor_name"`
	DebtorIBAN    string           `json:"debtor_iban"`
	DebtorBIC     *string          `json:"debtor_bic"`
	ExecutionDate string           `json:"execution_date"`
	TotalAmount   money.Amount     `json:"total_amount"`
	TotalDiscount money.Amount     `json:"total_discount"`
	InvoiceCount  int              `json:"invoice_count"`
	Items         []PaymentRunItem `json:"items,omitempty"`
	// CreatedBy and ApprovedBy are who prepared and who released the run:
	// "key:<API key id>" or "user:<user id>".
	CreatedBy   *string    `json:"created_by"`
	ApprovedBy  *string    `json:"approved_by"`
	CreatedAt   time.Time  `json:"created_at"`
	ApprovedAt  *time.Time `json:"approved_at"`
	ExportedAt  *time.Time `json:"exported_at"`
	CompletedAt *time.Time `json:"completed_at"`
	CancelledAt *time.Time `json:"cancelled_at"`
}

// PaymentRunList is the reply of SubjectPaymentRunsList, newest first.
type PaymentRunList struct {
	PaymentRuns []PaymentRun `json:"payment_runs"`
}

// PaymentRunFilter is the query of SubjectPaymentRunsList.
type PaymentRunFilter struct {
	Status string // "" for every status
	Limit  int
	Offset int
}
