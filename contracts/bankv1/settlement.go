package bankv1

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/shopspring/decimal"
)

// Settlement is what one reconciliation event means to the service that
// owns the open items of one kind (receivables: CandidateOpenReceivable,
// payables: CandidateOpenLiability): the amounts settled of its items, by
// the ledger intent that posted each. Release is set for an undone
// reconciliation (EventTransactionUnmatched).
type Settlement struct {
	EventID          string
	ReconciliationID string
	Release          bool
	PaidOn           string // YYYY-MM-DD, the bank transaction's date
	Allocations      []SettledIntent
}

// SettledIntent settles Amount (in Currency) of the item posted under
// IntentID; one per intent and event.
type SettledIntent struct {
	IntentID string
	Amount   decimal.Decimal
	Currency string
}

// ErrMalformedSettlement marks an event that can never be applied.
var ErrMalformedSettlement = errors.New("malformed bank reconciliation event")

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// SettlementOf reads a reconciliation event (subject
// EventTransactionReconciled or EventTransactionUnmatched) for the items
// of kind; ok is false for an event of the bank's stream that settles
// nothing. Allocations to other kinds are not the caller's and are left
// out; two allocations to one intent are added up.
func SettlementOf(eventID, subject string, e TransactionReconciled, kind string) (s Settlement, ok bool, err error) {
	var release bool
	switch subject {
	case EventTransactionReconciled:
	case EventTransactionUnmatched:
		release = true
	default:
		return Settlement{}, false, nil
	}
	if !uuidRe.MatchString(e.TenantID) || !uuidRe.MatchString(e.ReconciliationID) {
		return Settlement{}, false, fmt.Errorf("%w: event %s without tenant or reconciliation id", ErrMalformedSettlement, eventID)
	}
	s = Settlement{EventID: eventID, ReconciliationID: e.ReconciliationID, Release: release, PaidOn: e.TxDate}
	at := map[string]int{}
	for _, a := range e.Allocations {
		if a.CandidateKind != kind {
			continue
		}
		if !uuidRe.MatchString(a.IntentID) || a.Amount.Sign() <= 0 {
			return Settlement{}, false, fmt.Errorf("%w: event %s allocates %s to intent %q", ErrMalformedSettlement, eventID, a.Amount.String(), a.IntentID)
		}
		if i, ok := at[a.IntentID]; ok {
			s.Allocations[i].Amount = s.Allocations[i].Amount.Add(a.Amount.Decimal)
			continue
		}
		at[a.IntentID] = len(s.Allocations)
		s.Allocations = append(s.Allocations, SettledIntent{IntentID: a.IntentID, Amount: a.Amount.Decimal, Currency: a.Currency})
	}
	return s, true, nil
}
