package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// BalancesConsumer is the durable JetStream consumer that feeds the
// projection.
const BalancesConsumer = "reporting-balances"

// Balances is the "reporting-balances" consumer of the ledger's
// intent_posted events. Workers process tenants in parallel (the events of
// one tenant always go to the same worker, in stream order); each batch of
// up to 256 events is grouped by tenant and each group handed to
// Service.ApplyPosted, which applies it in one transaction (or catches up
// from the journal feed on a gap) and skips what the projection's head
// already covers, so a redelivered batch changes nothing. A malformed event
// is poison: retried alone, then dropped.
func Balances(svc *reporting.Service) natsx.Consumer {
	return natsx.Consumer{
		Stream: ledgerv1.StreamEvents, Durable: BalancesConsumer, Filter: ledgerv1.EventIntentPosted,
		Workers: 4, Batch: 256, MaxAckPending: 8192,
		Key: natsx.TenantKey,
		Handle: func(ctx context.Context, msgs []jetstream.Msg) error {
			var order []string
			groups := map[string][]ledgerv1.IntentPosted{}
			for _, m := range msgs {
				var ev ledgerv1.IntentPosted
				if err := json.Unmarshal(m.Data(), &ev); err != nil || ev.TenantID == "" {
					return fmt.Errorf("%w: malformed intent_posted event: %v", natsx.ErrPoison, err)
				}
				if _, ok := groups[ev.TenantID]; !ok {
					order = append(order, ev.TenantID)
				}
				groups[ev.TenantID] = append(groups[ev.TenantID], ev)
			}
			for _, t := range order {
				err := svc.ApplyPosted(ctx, groups[t]...)
				if errors.Is(err, reporting.ErrMalformedEvent) {
					return fmt.Errorf("%w: tenant %s: %w", natsx.ErrPoison, t, err)
				}
				if err != nil {
					return fmt.Errorf("tenant %s: %w", t, err)
				}
			}
			return nil
		},
	}
}
