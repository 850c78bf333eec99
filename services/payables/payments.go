package payables

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
)

// PaymentEvent is what a bank reconciliation event means to the
// payables: the settled amounts of open liabilities, by ledger intent.
// Release is set for an undone reconciliation (transaction_unmatched).
type PaymentEvent struct {
	EventID          string
	ReconciliationID string
	Release          bool
	PaidOn           string // YYYY-MM-DD, the bank transaction's date
	Allocations      []PaymentAllocation
}

// PaymentAllocation settles Amount (in Currency) of the liability posted
// under IntentID; one per intent and event.
type PaymentAllocation struct {
	IntentID string
	Amount   decimal.Decimal
	Currency string
}

// PaymentStore applies payment events; postgres.Store implements it.
type PaymentStore interface {
	// ApplyPayments applies the events of one tenant in one transaction,
	// each at most once (the inbox): a reconciliation records what it
	// settled of each incoming invoice whose booking intent it names
	// (other intents are not the payables' and are ignored) and raises
	// the invoice's paid amount; an undone one releases those records
	// and lowers it again.
	ApplyPayments(ctx context.Context, tenantID string, evs []PaymentEvent) error
}

// ErrMalformedPayment marks an event that can never be applied.
var ErrMalformedPayment = errors.New("malformed bank reconciliation event")

// PaymentFromEvent reads a bank reconciliation event (subject
// bankv1.EventTransactionReconciled or ...Unmatched); ok is false for an
// event of the bank stream that is no payment. Only allocations to open
// liabilities count (an incoming invoice's posting credits the creditor
// account, which the bank offers as an open liability); two allocations
// to one intent are added up.
func PaymentFromEvent(eventID, subject string, e bankv1.TransactionReconciled) (PaymentEvent, bool, error) {
	var release bool
	switch subject {
	case bankv1.EventTransactionReconciled:
	case bankv1.EventTransactionUnmatched:
		release = true
	default:
		return PaymentEvent{}, false, nil
	}
	if !ValidID(e.TenantID) || !ValidID(e.ReconciliationID) {
		return PaymentEvent{}, false, fmt.Errorf("%w: event %s without tenant or reconciliation id", ErrMalformedPayment, eventID)
	}
	p := PaymentEvent{EventID: eventID, ReconciliationID: e.ReconciliationID, Release: release, PaidOn: e.TxDate}
	at := map[string]int{}
	for _, a := range e.Allocations {
		if a.CandidateKind != bankv1.CandidateOpenLiability {
			continue
		}
		if !ValidID(a.IntentID) || a.Amount.Sign() <= 0 {
			return PaymentEvent{}, false, fmt.Errorf("%w: event %s allocates %s to intent %q", ErrMalformedPayment, eventID, a.Amount.String(), a.IntentID)
		}
		if i, ok := at[a.IntentID]; ok {
			p.Allocations[i].Amount = p.Allocations[i].Amount.Add(a.Amount.Decimal)
			continue
		}
		at[a.IntentID] = len(p.Allocations)
		p.Allocations = append(p.Allocations, PaymentAllocation{IntentID: a.IntentID, Amount: a.Amount.Decimal, Currency: a.Currency})
	}
	return p, true, nil
}
