// Package reportingd runs the reporting service: migrations, the consumer
// that keeps the balance projection, and the NATS endpoints of the reports
// and exports.
package reportingd

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// Role is the database role the service runs as.
const Role = postgres.Role

// Defaults used when the environment names no server.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultNATSURL     = nats.DefaultURL
)

// Config configures Run.
type Config struct {
	DatabaseURL string // DATABASE_URL, owner of the reporting schema; used when Deps.Pool is nil
	NATSURL     string // NATS_URL; used when Deps.NC is nil
	DBMaxConns  int32  // REPORTING_DB_MAX_CONNS, default 10
}

// LoadConfig reads the environment.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{DatabaseURL: getenv("DATABASE_URL"), NATSURL: getenv("NATS_URL"), DBMaxConns: 10}
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	if c.NATSURL == "" {
		c.NATSURL = DefaultNATSURL
	}
	if s := getenv("REPORTING_DB_MAX_CONNS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 3 {
			return c, fmt.Errorf("reportingd: REPORTING_DB_MAX_CONNS must be an integer of at least 3")
		}
		c.DBMaxConns = int32(n)
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

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	pool, err := migrate.ServicePool(ctx, deps.Pool, cfg.DatabaseURL, Role, cfg.DBMaxConns, postgres.Migrations)
	if err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	defer pool.Close()

	nc := deps.NC
	if nc == nil {
		if nc, err = nats.Connect(cfg.NATSURL, nats.Name("reporting"), nats.MaxReconnects(-1)); err != nil {
			return fmt.Errorf("reportingd: connect to NATS: %w", err)
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("reportingd: jetstream: %w", err)
	}
	if err := natsx.EnsureStream(ctx, js, ledgerv1.StreamEvents, ledgerv1.EventsFilter); err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	if err := natsrpc.EnsureJobStream(ctx, js); err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	client := &natsx.Client{NC: nc, Timeout: 30 * time.Second}
	svc := reporting.New(postgres.New(pool, log), natsrpc.Ledger{Client: client}, natsrpc.Tenants{Client: client}, natsrpc.Periods{Client: client})
	svc.SetChainVerifier(natsrpc.ChainVerifier{Client: client})
	svc.SetJobQueue(natsrpc.JobQueue{JS: js, Log: log})
	keys := idem.PG{Pool: pool, Schema: "reporting"}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	consumerDone, err := natsrpc.ConsumeBalances(ctx, js, svc, log, natsrpc.ConsumerConfig{})
	if err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	defer func() { cancel(); <-consumerDone }()
	workersDone, err := natsrpc.ConsumeExportJobs(ctx, js, svc, log, natsrpc.WorkerConfig{})
	if err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	defer func() { cancel(); <-workersDone }()
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); sweep(ctx, svc, keys, log) }()
	defer func() { cancel(); <-sweepDone }()

	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "reporting", Logger: log})
	if err != nil {
		return fmt.Errorf("reportingd: %w", err)
	}
	if err := natsrpc.Register(srv, svc, keys); err != nil {
		_ = srv.Stop()
		return fmt.Errorf("reportingd: %w", err)
	}
	return srv.Serve(ctx, deps.Ready)
}

// sweep drops expired export jobs and Idempotency-Key records and queues
// again the jobs whose command was lost, at start and then every minute.
func sweep(ctx context.Context, svc *reporting.Service, keys idem.PG, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if dropped, requeued, err := svc.SweepJobs(ctx); err != nil {
			if ctx.Err() == nil {
				log.Warn("export job sweep failed", "err", err)
			}
		} else if dropped > 0 || requeued > 0 {
			log.Info("export job sweep", "dropped", dropped, "requeued", requeued)
		}
		if _, err := keys.Prune(ctx, time.Now().Add(-idem.KeepFor)); err != nil && ctx.Err() == nil {
			log.Warn("pruning idempotency keys failed", "err", err)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
