package bankd

import (
	"context"
	"encoding/json"

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
		Handle: natsx.PerTenant(func(m jetstream.Msg) (bank.PostedIntent, string, error) {
			e := bank.PostedIntent{EventID: natsx.EventID(m)}
			err := json.Unmarshal(m.Data(), &e.Intent)
			return e, e.Intent.TenantID, err
		}, func(ctx context.Context, tenant string, es []bank.PostedIntent) error {
			return svc.Apply(ctx, tenant, es...)
		}, bank.ErrMalformedEvent),
	}
}
