// Package daemon runs a service declared as data: its name, schema, role
// and migrations, the streams it owns, and what Build wires on the
// connections the daemon opened (route table, consumers, background
// loops). Start-up, readiness, graceful shutdown (drain the requests in
// flight, then stop consumers, loops and the outbox relay), pruning of
// idempotency keys and handled events, and request metrics come from here,
// the same for every service; cmd/<name>/main.go and the all-in-one binary
// are lists of such declarations.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/inbox"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/pkg/secrets"
)

// Service declares one service.
type Service struct {
	// Name is the NATS service name and queue group, and the prefix of
	// its environment variables (LEDGER_DB_MAX_CONNS).
	Name string
	// DB is the service's schema: its role, migrations and the shared
	// tables it holds. A zero DB means the service keeps no state.
	DB migrate.Set
	// Streams are the JetStream streams the service owns and publishes
	// to; it never creates another service's.
	Streams []natsx.Stream
	// Build wires the service on the connections Run opened.
	Build func(ctx context.Context, env Env) (Parts, error)
}

// Env is what Build gets.
type Env struct {
	Pool   *pgxpool.Pool // runs as DB.Role; nil without a schema
	NC     *nats.Conn
	JS     jetstream.JetStream
	Client *natsx.Client // requests to other services
	Log    *slog.Logger
	Getenv func(string) string
}

// Parts is what a service serves.
type Parts struct {
	Routes    []natsx.Route
	Consumers []natsx.Consumer
	Loops     []Loop
	// Middleware wraps every endpoint inside the shared ones (tenant,
	// idempotency), for example to record provenance.
	Middleware []endpoint.Middleware
}

// Loop is background work: Run is called every Every, or once (and
// expected to block until ctx ends) when Every is zero.
type Loop struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Config is what every service reads from the environment.
type Config struct {
	DatabaseURL string // DATABASE_URL, owner of the schema; used when Deps.Pool is nil
	NATSURL     string // NATS_URL; used when Deps.NC is nil
	DBMaxConns  int32  // <NAME>_DB_MAX_CONNS, default 20
	// Workers is how many requests of one subject run at once,
	// <NAME>_MAX_CONCURRENT, default 128 (see natsx.ServerConfig.Workers).
	Workers int
	// StreamReplicas is the replica count of the streams the service owns,
	// NATS_STREAM_REPLICAS, default 1; 3 on a 3-node cluster.
	StreamReplicas int
	// HealthAddr, HEALTH_ADDR, is where the service answers GET /readyz
	// (503 naming the problem while its outbox cannot publish) and GET
	// /metrics (outbox backlog); empty serves neither.
	HealthAddr string
	// Key is the service's NKEY: its NATS login and the key it signs its
	// own principals with (NATS_NKEY_SEED or NATS_NKEY_SEED_FILE).
	Key *natsauth.Key
	// Trust are the signers whose principals the service accepts
	// (PLATFORM_SIGNERS: gateway=U…,ledger=U…).
	Trust  *natsauth.Trust
	Getenv func(string) string
}

// LoadConfig reads the environment of the service called name.
func LoadConfig(name string, getenv func(string) string) (Config, error) {
	c := Config{DatabaseURL: getenv("DATABASE_URL"), NATSURL: getenv("NATS_URL"), DBMaxConns: 20, Workers: 128, HealthAddr: getenv("HEALTH_ADDR"), Getenv: getenv}
	var err error
	if c.StreamReplicas, err = natsx.ParseReplicas(getenv("NATS_STREAM_REPLICAS")); err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if err := secrets.CheckNotPlaceholder("DATABASE_URL", c.DatabaseURL); err != nil {
		return c, fmt.Errorf("%s: invalid config: %w", name, err)
	}
	if c.NATSURL == "" {
		c.NATSURL = nats.DefaultURL
	}
	prefix := strings.ToUpper(name) + "_"
	if s := getenv(prefix + "DB_MAX_CONNS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 3 {
			return c, fmt.Errorf("%s: %sDB_MAX_CONNS must be an integer of at least 3", name, prefix)
		}
		c.DBMaxConns = int32(n)
	}
	if s := getenv(prefix + "MAX_CONCURRENT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s: %sMAX_CONCURRENT must be a positive integer", name, prefix)
		}
		c.Workers = n
	}
	// Both are checked by Run: the all-in-one process sets them itself.
	if getenv("NATS_NKEY_SEED") != "" || getenv("NATS_NKEY_SEED_FILE") != "" {
		if c.Key, err = natsauth.KeyFromEnv(name, getenv); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}
	if s := getenv("PLATFORM_SIGNERS"); s != "" {
		if c.Trust, err = natsauth.ParseTrust(s); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}
	return c, nil
}

// Deps are connections Run uses instead of opening its own.
type Deps struct {
	Pool *pgxpool.Pool // owner pool: Run migrates with it
	// NC, when set, must be logged in with Config.Key: a service never
	// shares another's connection.
	NC    *nats.Conn
	Log   *slog.Logger
	Ready func()
}

// PruneEvery is how often expired idempotency keys and handled-event ids
// are dropped; HandledFor is how long handled-event ids are kept: longer
// than a stream keeps events (30 days), so a consumer replaying a stream
// from its start still handles each event once.
const (
	PruneEvery = time.Hour
	HandledFor = 35 * 24 * time.Hour
)

// Run serves svc until ctx ends, then drains and stops.
func Run(ctx context.Context, svc Service, cfg Config, deps Deps) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: %w", svc.Name, err)
		}
	}()
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("service", svc.Name)
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Key == nil || cfg.Trust == nil {
		return errors.New("NATS needs the service's NKEY (NATS_NKEY_SEED or NATS_NKEY_SEED_FILE) and the trusted signers (PLATFORM_SIGNERS)")
	}
	if cfg.Key.Name != svc.Name {
		return fmt.Errorf("the NKEY given is %s's", cfg.Key.Name)
	}
	env := Env{Log: log, Getenv: cfg.Getenv}
	if svc.DB.Schema != "" {
		if env.Pool, err = migrate.ServicePool(ctx, deps.Pool, cfg.DatabaseURL, svc.DB.Role, cfg.DBMaxConns, svc.DB); err != nil {
			return err
		}
		defer env.Pool.Close()
	}
	if env.NC = deps.NC; env.NC == nil {
		if env.NC, err = cfg.Key.Connect(cfg.NATSURL, nats.MaxReconnects(-1), natsauth.LogErrors(log)); err != nil {
			return err
		}
		defer env.NC.Close()
	}
	if env.JS, err = jetstream.New(env.NC); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	env.Client = &natsx.Client{NC: env.NC, Signer: cfg.Key}
	for _, s := range svc.Streams {
		s.Replicas = max(s.Replicas, cfg.StreamReplicas)
		if err := s.Ensure(ctx, env.JS); err != nil {
			return err
		}
	}
	parts, err := svc.Build(ctx, env)
	if err != nil {
		return err
	}

	// Background work outlives ctx until the requests in flight are done.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() { stopBG(); wg.Wait() }()
	goLoop := func(l Loop) {
		wg.Add(1)
		go func() { defer wg.Done(); runLoop(bg, l, log) }()
	}
	var relay *outbox.Relay
	if svc.DB.Outbox {
		// The relay's own JetStream context forgets acknowledgements that
		// never come, so none piles up in it while a stream has no leader.
		js, err := jetstream.New(env.NC, jetstream.WithPublishAsyncTimeout(outbox.AckTimeout))
		if err != nil {
			return fmt.Errorf("jetstream: %w", err)
		}
		relay = &outbox.Relay{Pool: env.Pool, Schema: svc.DB.Schema, JS: js, Log: log}
		goLoop(Loop{Name: "outbox relay", Run: relay.Run})
	}
	if cfg.HealthAddr != "" {
		stop, err := serveHealth(cfg.HealthAddr, svc.Name, relay, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	for _, l := range append(sharedLoops(svc, env), parts.Loops...) {
		goLoop(l)
	}
	for _, c := range parts.Consumers {
		done, err := natsx.Consume(bg, env.JS, c, log)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); <-done }()
	}

	srv, err := natsx.NewServer(env.NC, natsx.ServerConfig{Name: svc.Name, Workers: cfg.Workers, Logger: log, Trust: cfg.Trust})
	if err != nil {
		return err
	}
	var keys db.Beginner
	if svc.DB.Idempotency {
		keys = env.Pool
	}
	for _, rt := range parts.Routes {
		if err := srv.Mount(rt, Chain(rt, keys, svc.DB.Schema, parts.Middleware...)...); err != nil {
			_ = srv.Stop()
			return err
		}
	}
	return srv.Serve(ctx, deps.Ready)
}

// Chain is the endpoint middleware of a route, outermost first: the
// callers it accepts, the caller's tenant, then idempotency (keys in
// schema, claimed by the route's store), then the service's own.
func Chain(rt natsx.Route, keys db.Beginner, schema string, own ...endpoint.Middleware) []endpoint.Middleware {
	var mw []endpoint.Middleware
	if len(rt.Callers) > 0 {
		mw = append(mw, natsx.RequireCaller(rt.Callers...))
	}
	if !rt.Internal {
		mw = append(mw, natsx.RequireTenant)
	}
	if rt.Idempotent && keys != nil {
		mw = append(mw, idem.Middleware(keys, schema, rt.Subject))
	}
	return append(mw, own...)
}

// sharedLoops are the pruning every schema with the shared tables needs.
func sharedLoops(svc Service, env Env) []Loop {
	var ls []Loop
	if svc.DB.Idempotency {
		ls = append(ls, Loop{Name: "prune idempotency keys", Every: PruneEvery, Run: func(ctx context.Context) error {
			_, err := idem.Prune(ctx, env.Pool, svc.DB.Schema, time.Now().Add(-idem.KeepFor))
			return err
		}})
	}
	if svc.DB.Inbox {
		ls = append(ls, Loop{Name: "prune handled events", Every: PruneEvery, Run: func(ctx context.Context) error {
			_, err := inbox.Prune(ctx, env.Pool, svc.DB.Schema, time.Now().Add(-HandledFor))
			return err
		}})
	}
	return ls
}

func runLoop(ctx context.Context, l Loop, log *slog.Logger) {
	if l.Every <= 0 {
		if err := l.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("background work stopped", "loop", l.Name, "err", err)
		}
		return
	}
	t := time.NewTicker(l.Every)
	defer t.Stop()
	for {
		if err := l.Run(ctx); err != nil && ctx.Err() == nil {
			log.Warn("background work failed; will run again", "loop", l.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Main runs one service as a process: configuration from the environment,
// stopped by SIGINT or SIGTERM. load declares the service from the
// environment (services with settings of their own read them there).
func Main(load func(getenv func(string) string) (Service, error)) {
	Process(func(ctx context.Context, getenv func(string) string, log *slog.Logger) error {
		svc, err := load(getenv)
		if err != nil {
			return err
		}
		cfg, err := LoadConfig(svc.Name, getenv)
		if err != nil {
			return err
		}
		return Run(ctx, svc, cfg, Deps{Log: log})
	})
}

// Process is the main function of every command: run gets a context that
// ends on SIGINT or SIGTERM, the environment and a logger (JSON for log
// collectors; LOG_FORMAT=text for people, as `make run` sets); an error
// other than the context's own exits with status 1.
func Process(run func(ctx context.Context, getenv func(string) string, log *slog.Logger) error) {
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, nil)
	if os.Getenv("LOG_FORMAT") == "text" {
		h = slog.NewTextHandler(os.Stderr, nil)
	}
	log := slog.New(h)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv, log)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
	log.Info("stopped")
}
