package payablesd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/payables"
)

// PaymentsConsumer is the durable consumer of the bank's reconciliation
// events that marks incoming invoices paid.
const PaymentsConsumer = "payables-payments"

// Payments consumes the bank's transaction_reconciled and
// transaction_unmatched events into the incoming invoices' paid amounts. A
// consumer has one filter, so it reads the bank's whole event stream and
// acknowledges the other events unread. The events of one tenant go to
// one worker in stream order, a batch is applied per tenant in one
// transaction that the inbox makes idempotent; a malformed event is
// poison: retried alone, then dropped.
func Payments(store payables.PaymentStore) natsx.Consumer {
	return natsx.Consumer{
		Stream: bankv1.StreamEvents, Durable: PaymentsConsumer, Filter: bankv1.EventsFilter,
		Workers: 2, Batch: 64, Key: natsx.TenantKey,
		Handle: func(ctx context.Context, msgs []jetstream.Msg) error {
			var order []string
			groups := map[string][]payables.PaymentEvent{}
			for _, m := range msgs {
				if s := m.Subject(); s != bankv1.EventTransactionReconciled && s != bankv1.EventTransactionUnmatched {
					continue
				}
				id := natsx.EventID(m)
				var e bankv1.TransactionReconciled
				if err := json.Unmarshal(m.Data(), &e); err != nil {
					return fmt.Errorf("%w: malformed bank event %s: %v", natsx.ErrPoison, id, err)
				}
				p, ok, err := payables.PaymentFromEvent(id, m.Subject(), e)
				if err != nil {
					return fmt.Errorf("%w: %w", natsx.ErrPoison, err)
				}
				if !ok {
					continue
				}
				if _, seen := groups[e.TenantID]; !seen {
					order = append(order, e.TenantID)
				}
				groups[e.TenantID] = append(groups[e.TenantID], p)
			}
			for _, t := range order {
				if err := store.ApplyPayments(ctx, t, groups[t]); err != nil {
					if errors.Is(err, payables.ErrMalformedPayment) {
						return fmt.Errorf("%w: tenant %s: %w", natsx.ErrPoison, t, err)
					}
					return fmt.Errorf("payments of tenant %s: %w", t, err)
				}
			}
			return nil
		},
	}
}
