// Package reportingd declares the reporting service: its schema, the job
// queue it owns, its routes, the consumers of the ledger's events and of
// the job queue, and the sweep of export jobs.
package reportingd

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// SweepEvery is how often expired export jobs are dropped and jobs whose
// command was lost are queued again.
const SweepEvery = time.Minute

// Service declares the reporting service; it has no settings of its own.
func Service(func(string) string) (daemon.Service, error) {
	return daemon.Service{
		Name:    "reporting",
		DB:      postgres.Migrations,
		Streams: []natsx.Stream{natsrpc.JobStream},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			_, parts := Wire(env)
			return parts, nil
		},
	}, nil
}

// Wire builds the service on the daemon's connections and returns it with
// what it serves (tests keep the service to drive it directly).
func Wire(env daemon.Env) (*reporting.Service, daemon.Parts) {
	svc := reporting.New(postgres.New(env.Pool), natsrpc.Ledger{Client: env.Client}, natsrpc.Tenants{Client: env.Client}, natsrpc.Periods{Client: env.Client})
	svc.SetChainVerifier(natsrpc.ChainVerifier{Client: env.Client})
	svc.SetJobQueue(natsrpc.JobQueue{JS: env.JS, Log: env.Log})
	sweep := func(ctx context.Context) error {
		dropped, requeued, err := svc.SweepJobs(ctx)
		if dropped > 0 || requeued > 0 {
			env.Log.Info("export job sweep", "dropped", dropped, "requeued", requeued)
		}
		return err
	}
	return svc, daemon.Parts{
		Routes:    natsrpc.Routes(svc),
		Consumers: []natsx.Consumer{natsrpc.Balances(svc), natsrpc.ExportJobs(svc)},
		Loops:     []daemon.Loop{{Name: "export job sweep", Every: SweepEvery, Run: sweep}},
	}
}
