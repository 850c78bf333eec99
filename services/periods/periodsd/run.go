package periodsd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/periods"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// Deps are connections Run uses instead of opening its own. Pool connects
// as an owner of the periods schema; Run migrates with it and serves from a
// second pool of the same database running as periods_svc.
type Deps struct {
	Pool  *pgxpool.Pool
	NC    *nats.Conn
	Log   *slog.Logger
	Ready func() // called once the service answers requests
}

// peerTimeout bounds a call to the ledger or identity when the request
// carries no deadline.
const peerTimeout = 10 * time.Second

// Run serves the periods service until ctx ends, then stops taking
// requests, finishes those in flight and returns.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	pool, err := servicePool(ctx, cfg, deps.Pool)
	if err != nil {
		return err
	}
	defer pool.Close()

	nc := deps.NC
	if nc == nil {
		if nc, err = nats.Connect(cfg.NATSURL, nats.Name("periods"), nats.MaxReconnects(-1)); err != nil {
			return fmt.Errorf("periodsd: connect to NATS: %w", err)
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("periodsd: jetstream: %w", err)
	}
	for _, s := range []struct{ name, filter string }{
		{periodsv1.StreamEvents, periodsv1.EventsFilter},
		{ledgerv1.StreamEvents, ledgerv1.EventsFilter},
	} {
		if err := natsx.EnsureStream(ctx, js, s.name, s.filter); err != nil {
			return fmt.Errorf("periodsd: %w", err)
		}
	}

	peers := natsrpc.Peers{Client: &natsx.Client{NC: nc, Timeout: peerTimeout}}
	svc := periods.New(postgres.New(pool), peers, peers)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Schema: postgres.Schema, JS: js, Log: log}
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		_ = relay.Run(ctx) // returns nil when ctx ends; it retries failures itself
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		prune(ctx, svc, idem.PG{Pool: pool, Schema: postgres.Schema}, log)
	}()
	defer func() { cancel(); <-done; <-done }()

	if err := natsrpc.ConsumeBookings(ctx, js, svc, log); err != nil {
		return fmt.Errorf("periodsd: %w", err)
	}
	if err := natsrpc.ConsumeLocks(ctx, js, svc, log); err != nil {
		return fmt.Errorf("periodsd: %w", err)
	}
	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "periods", Logger: log})
	if err != nil {
		return fmt.Errorf("periodsd: %w", err)
	}
	if err := natsrpc.Register(srv, svc, idem.PG{Pool: pool, Schema: postgres.Schema}); err != nil {
		_ = srv.Stop()
		return fmt.Errorf("periodsd: %w", err)
	}
	return srv.Serve(ctx, deps.Ready)
}

// servicePool applies the migrations as the owner and returns a pool of the
// same database that runs as periods_svc.
func servicePool(ctx context.Context, cfg Config, owner *pgxpool.Pool) (*pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if url == "" {
		url = DefaultDatabaseURL
	}
	maxConns := cfg.DBMaxConns
	if maxConns == 0 {
		maxConns = DefaultDBMaxConns
	}
	pool, err := migrate.ServicePool(ctx, owner, url, postgres.Role, maxConns, postgres.Migrations)
	if err != nil {
		return nil, fmt.Errorf("periodsd: %w", err)
	}
	return pool, nil
}

// prune forgets old consumed event ids and idempotency keys once an hour.
func prune(ctx context.Context, svc *periods.Service, keys idem.PG, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := svc.PruneProcessed(ctx); err != nil && ctx.Err() == nil {
			log.Warn("pruning consumed event ids failed", "err", err)
		} else if n > 0 {
			log.Info("pruned consumed event ids", "count", n)
		}
		if n, err := keys.Prune(ctx, time.Now().Add(-idem.KeepFor)); err != nil && ctx.Err() == nil {
			log.Warn("pruning idempotency keys failed", "err", err)
		} else if n > 0 {
			log.Info("pruned idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
