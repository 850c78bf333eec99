package bankd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
)

// OpenItemsConsumer is the durable consumer of the ledger's intent_posted
// events that feeds the open-items projection.
const OpenItemsConsumer = "bank-open-items"

// OpenItems consumes the ledger's intent_posted events into the open-items
// projection. The events of one tenant always go to the same worker, in
// stream order; a batch of up to 256 is grouped by tenant and each group
// applied in one transaction, which the inbox makes idempotent: when a
// later group fails and the batch comes back, the groups already applied
// are skipped. A malformed event is poison: retried alone, then dropped.
func OpenItems(svc *bank.OpenItems) natsx.Consumer {
	return natsx.Consumer{
		Stream: ledgerv1.StreamEvents, Durable: OpenItemsConsumer, Filter: ledgerv1.EventIntentPosted,
		Workers: 2, Batch: 256, MaxAckPending: 2048,
		Key: natsx.TenantKey,
		Handle: func(ctx context.Context, msgs []jetstream.Msg) error {
			var order []string
			groups := map[string][]bank.PostedIntent{}
			for _, m := range msgs {
				e := bank.PostedIntent{EventID: natsx.EventID(m)}
				if err := json.Unmarshal(m.Data(), &e.Intent); err != nil || e.Intent.TenantID == "" {
					return fmt.Errorf("%w: malformed intent_posted event %s: %v", natsx.ErrPoison, e.EventID, err)
				}
				t := e.Intent.TenantID
				if _, ok := groups[t]; !ok {
					order = append(order, t)
				}
				groups[t] = append(groups[t], e)
			}
			for _, t := range order {
				err := svc.Apply(ctx, t, groups[t]...)
				if errors.Is(err, bank.ErrMalformedEvent) {
					return fmt.Errorf("%w: tenant %s: %w", natsx.ErrPoison, t, err)
				}
				if err != nil {
					return fmt.Errorf("open items of tenant %s: %w", t, err)
				}
			}
			return nil
		},
	}
}
