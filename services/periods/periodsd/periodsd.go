// Package periodsd declares the periods service for pkg/daemon: its
// schema, the stream of its events, its routes and the consumers of the
// ledger's events.
package periodsd

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/periods"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// peerTimeout bounds a call to the ledger or identity when the request
// carries no deadline.
const peerTimeout = 10 * time.Second

// Service declares the periods service; it has no settings of its own.
func Service(getenv func(string) string) (daemon.Service, error) {
	return Declare(), nil
}

// Declare is the periods service with options of the domain service
// (tests set its clock).
func Declare(opts ...periods.Option) daemon.Service {
	return daemon.Service{
		Name:    "periods",
		DB:      postgres.Migrations,
		Streams: []natsx.Stream{{Name: periodsv1.StreamEvents, Subjects: []string{periodsv1.EventsFilter}}},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			client := *env.Client
			client.Timeout = peerTimeout
			peers := natsrpc.Peers{Ledger: ledgerv1.Client{C: &client}, Identity: identityv1.Client{C: &client}, Bank: bankv1.Client{C: &client}}
			svc := periods.New(postgres.New(env.Pool), peers, peers, append([]periods.Option{periods.WithBank(peers)}, opts...)...)
			return daemon.Parts{Routes: natsrpc.Routes(svc), Consumers: natsrpc.Consumers(svc, env.Log)}, nil
		},
	}
}
