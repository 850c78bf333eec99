// Package settle is the consumer of the bank's reconciliation events for a
// service that owns open items of one kind (receivables: sales invoices,
// payables: incoming invoices): it turns transaction_reconciled and
// transaction_unmatched events into the settled amounts of that kind
// (bankv1.SettlementOf) and hands them to the service's store.
package settle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Store applies the settlements of one tenant in one transaction, each
// event at most once (pkg/inbox).
type Store interface {
	ApplyPayments(ctx context.Context, tenantID string, evs []bankv1.Settlement) error
}

// Consumer is the durable consumer of the bank's event stream that
// applies the settlements of kind. A consumer has one filter, so it reads
// the whole stream and acknowledges the other events unread. The events
// of one tenant go to one worker in stream order and a batch is applied
// per tenant in one transaction; a malformed event is poison: retried
// alone, then dropped.
func Consumer(durable, kind string, store Store) natsx.Consumer {
	return natsx.Consumer{
		Stream: bankv1.StreamEvents, Durable: durable, Filter: bankv1.EventsFilter,
		Workers: 2, Batch: 64, Key: natsx.TenantKey,
		Handle: func(ctx context.Context, msgs []jetstream.Msg) error {
			var order []string
			groups := map[string][]bankv1.Settlement{}
			for _, m := range msgs {
				if s := m.Subject(); s != bankv1.EventTransactionReconciled && s != bankv1.EventTransactionUnmatched {
					continue
				}
				id := natsx.EventID(m)
				var e bankv1.TransactionReconciled
				if err := json.Unmarshal(m.Data(), &e); err != nil {
					return fmt.Errorf("%w: malformed bank event %s: %v", natsx.ErrPoison, id, err)
				}
				p, ok, err := bankv1.SettlementOf(id, m.Subject(), e, kind)
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
					if errors.Is(err, bankv1.ErrMalformedSettlement) {
						return fmt.Errorf("%w: tenant %s: %w", natsx.ErrPoison, t, err)
					}
					return fmt.Errorf("payments of tenant %s: %w", t, err)
				}
			}
			return nil
		},
	}
}
