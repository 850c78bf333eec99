package natsrpc

import (
	"context"
	"encoding/json"

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
		Handle: natsx.PerTenant(func(m jetstream.Msg) (ledgerv1.IntentPosted, string, error) {
			var ev ledgerv1.IntentPosted
			err := json.Unmarshal(m.Data(), &ev)
			return ev, ev.TenantID, err
		}, func(ctx context.Context, _ string, evs []ledgerv1.IntentPosted) error {
			return svc.ApplyPosted(ctx, evs...)
		}, reporting.ErrMalformedEvent),
	}
}
