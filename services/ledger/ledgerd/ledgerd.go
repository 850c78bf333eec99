// Package ledgerd declares the ledger service for the shared daemon: its
// schema, the stream it owns, its route table and the consumer that seeds
// the chart of new tenants.
package ledgerd

import (
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/natsrpc"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
	"github.com/ledgerplatform/ledger/services/ledger/skr04"
)

// Seed is the chart every new tenant starts with.
func Seed() ([]ledger.Account, []ledger.TaxCode) { return skr04.Accounts(), skr04.TaxCodes() }

// Service declares the ledger; it has no settings of its own.
func Service(func(string) string) (daemon.Service, error) { return WithSeed(Seed), nil }

// WithSeed declares the ledger seeding new tenants with seed. It owns the
// LEDGER stream; identity's stream is its owner's, the tenant consumer
// only attaches to it.
func WithSeed(seed ledger.Seed) daemon.Service {
	return daemon.Service{
		Name:    "ledger",
		DB:      postgres.Migrations,
		Streams: []natsx.Stream{{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			svc := ledger.New(postgres.New(env.Pool, env.Log), seed)
			return daemon.Parts{
				Routes: natsrpc.Routes(svc),
				// New tenants get their chart as soon as identity announces them.
				Consumers: []natsx.Consumer{{Stream: identityv1.StreamEvents, Durable: "ledger-tenants", Filter: identityv1.EventTenantCreated,
					Handle: natsx.Each(func(ctx context.Context, msg jetstream.Msg) error {
						var ev identityv1.TenantEvent
						if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.TenantID == "" {
							return natsx.ErrPoison
						}
						return svc.EnsureTenant(ctx, ev.TenantID)
					})}},
			}, nil
		},
	}
}
