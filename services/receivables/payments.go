package receivables

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
)

// PaymentEvent is what a bank reconciliation event means to the
// receivables: the settled amounts of its open items, by ledger intent
// (bankv1.SettlementOf).
type PaymentEvent = bankv1.Settlement

// PaymentAllocation settles an amount of the item posted under an intent.
type PaymentAllocation = bankv1.SettledIntent

// PaymentStore applies payment events; postgres.Store implements it.
type PaymentStore interface {
	// ApplyPayments applies the events of one tenant in one transaction,
	// each at most once (the inbox): a reconciliation records what it
	// settled of each invoice whose booking intent it names (others are
	// not the receivables' and are ignored) and raises the invoice's paid
	// amount; an undone one releases those records and lowers it again.
	ApplyPayments(ctx context.Context, tenantID string, evs []PaymentEvent) error
}

// ErrMalformedPayment marks an event that can never be applied.
var ErrMalformedPayment = bankv1.ErrMalformedSettlement

// PaymentFromEvent reads a bank reconciliation event; ok is false for an
// event of the bank stream that is no payment. Only allocations to open
// receivables (a bank booking or a payable is not an invoice of ours) count.
func PaymentFromEvent(eventID, subject string, e bankv1.TransactionReconciled) (PaymentEvent, bool, error) {
	return bankv1.SettlementOf(eventID, subject, e, bankv1.CandidateOpenReceivable)
}
