package natsx

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// PerTenant is the batch handler of a projection consumer: it decodes
// each message (an error is poison, the message is retried alone and
// then dropped), groups the batch by tenant in the order the tenants
// first appear, and applies each group (in one transaction, typically).
// An apply error wrapping malformed is poison too: the event is well
// formed JSON but not what the projection can take. Any other error
// sends the batch back; the consumer's inbox or head makes the groups
// already applied a no-op then.
func PerTenant[T any](decode func(jetstream.Msg) (T, string, error), apply func(ctx context.Context, tenantID string, items []T) error, malformed error) BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) error {
		var order []string
		groups := map[string][]T{}
		for _, m := range msgs {
			v, tenant, err := decode(m)
			if err != nil || tenant == "" {
				return fmt.Errorf("%w: malformed event %s on %s: %v", ErrPoison, EventID(m), m.Subject(), err)
			}
			if _, ok := groups[tenant]; !ok {
				order = append(order, tenant)
			}
			groups[tenant] = append(groups[tenant], v)
		}
		for _, t := range order {
			err := apply(ctx, t, groups[t])
			if malformed != nil && errors.Is(err, malformed) {
				return fmt.Errorf("%w: tenant %s: %w", ErrPoison, t, err)
			}
			if err != nil {
				return fmt.Errorf("tenant %s: %w", t, err)
			}
		}
		return nil
	}
}
