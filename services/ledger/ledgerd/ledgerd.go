// Package ledgerd runs the ledger service: migrations, the NATS endpoints,
// the outbox relay and the consumer that seeds new tenants.
package ledgerd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/natsrpc"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
	"github.com/ledgerplatform/ledger/services/ledger/skr04"
)

// Role is the database role the service runs as.
const Role = "ledger_svc"

// Config configures Run.
type Config struct {
	DatabaseURL   string // DATABASE_URL, owner of the ledger schema; used when Deps.Pool is nil
	NATSURL       string // NATS_URL; used when Deps.NC is nil
	DBMaxConns    int32  // LEDGER_DB_MAX_CONNS, default 20
	MaxConcurrent int    // LEDGER_MAX_CONCURRENT requests in flight, default 512
}

// LoadConfig reads the environment.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{DatabaseURL: getenv("DATABASE_URL"), NATSURL: getenv("NATS_URL"), DBMaxConns: 20, MaxConcurrent: 512}
	if c.DatabaseURL == "" {
		c.DatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if c.NATSURL == "" {
		c.NATSURL = nats.DefaultURL
	}
	if s := getenv("LEDGER_DB_MAX_CONNS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 3 {
			return c, fmt.Errorf("ledgerd: LEDGER_DB_MAX_CONNS must be an integer of at least 3")
		}
		c.DBMaxConns = int32(n)
	}
	if s := getenv("LEDGER_MAX_CONCURRENT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("ledgerd: LEDGER_MAX_CONCURRENT must be a positive integer")
		}
		c.MaxConcurrent = n
	}
	return c, nil
}

// Deps are connections Run uses instead of opening its own.
type Deps struct {
	Pool  *pgxpool.Pool // owner pool: Run migrates with it
	NC    *nats.Conn
	Log   *slog.Logger
	Ready func()
}

// Seed is the chart every new tenant starts with.
func Seed() ([]ledger.Account, []ledger.TaxCode) { return skr04.Accounts(), skr04.TaxCodes() }

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	pool, err := migrate.ServicePool(ctx, deps.Pool, cfg.DatabaseURL, Role, cfg.DBMaxConns, postgres.Migrations)
	if err != nil {
		return fmt.Errorf("ledgerd: %w", err)
	}
	defer pool.Close()

	nc := deps.NC
	if nc == nil {
		if nc, err = nats.Connect(cfg.NATSURL, nats.Name("ledger"), nats.MaxReconnects(-1)); err != nil {
			return fmt.Errorf("ledgerd: connect to NATS: %w", err)
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("ledgerd: jetstream: %w", err)
	}
	for _, s := range [][2]string{{ledgerv1.StreamEvents, ledgerv1.EventsFilter}, {identityv1.StreamEvents, identityv1.EventsFilter}} {
		if err := natsx.EnsureStream(ctx, js, s[0], s[1]); err != nil {
			return fmt.Errorf("ledgerd: %w", err)
		}
	}
	svc := ledger.New(postgres.New(pool, log), Seed)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Schema: "ledger", JS: js, Log: log}
	relayDone := make(chan struct{})
	go func() { defer close(relayDone); _ = relay.Run(ctx) }()
	defer func() { cancel(); <-relayDone }()
	go pruneIdempotencyKeys(ctx, idem.PG{Pool: pool, Schema: "ledger"}, log)

	// New tenants get their chart as soon as identity announces them.
	_, err = natsx.Consume(ctx, js, natsx.Consumer{Stream: identityv1.StreamEvents, Durable: "ledger-tenants", Filter: identityv1.EventTenantCreated,
		Handle: natsx.Each(func(ctx context.Context, msg jetstream.Msg) error {
			var ev identityv1.TenantEvent
			if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.TenantID == "" {
				log.Error("dropping malformed tenant event", "err", err)
				return nil
			}
			return svc.EnsureTenant(ctx, ev.TenantID)
		})}, log)
	if err != nil {
		return fmt.Errorf("ledgerd: %w", err)
	}
	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "ledger", Logger: log, Workers: cfg.MaxConcurrent})
	if err != nil {
		return fmt.Errorf("ledgerd: %w", err)
	}
	if err := natsrpc.Register(srv, svc, idem.PG{Pool: pool, Schema: "ledger"}); err != nil {
		_ = srv.Stop()
		return fmt.Errorf("ledgerd: %w", err)
	}
	return srv.Serve(ctx, deps.Ready)
}

// pruneIdempotencyKeys drops expired keys once an hour.
func pruneIdempotencyKeys(ctx context.Context, keys idem.PG, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
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
