// Package allinone runs the whole platform in one process: an embedded NATS
// server with JetStream, every service and the gateway, on Postgres and
// Redis found (or, for Postgres, made) on this machine. It is what
// `make run` starts and what the end-to-end tests drive.
package allinone

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsembed"
	"github.com/ledgerplatform/ledger/services/bank/bankd"
	"github.com/ledgerplatform/ledger/services/identity/identityd"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
	"github.com/ledgerplatform/ledger/services/payables/payablesd"
	"github.com/ledgerplatform/ledger/services/periods/periodsd"
	"github.com/ledgerplatform/ledger/services/receivables/receivablesd"
	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

// Services are the services the platform runs, in start order; each is a
// declaration that pkg/daemon runs.
var Services = []func(getenv func(string) string) (daemon.Service, error){
	identityd.Service,
	ledgerd.Service,
	periodsd.Service,
	reportingd.Service,
	bankd.Service,
	receivablesd.Service,
	payablesd.Service,
}

// Config gathers every part's configuration.
type Config struct {
	DataDir  string // DATA_DIR, default .data
	NATSPort int    // NATS_PORT for the embedded server, default 14222 (-1 picks one)
	// NATSURL, NATS_URL, is a server or comma-separated list of a
	// cluster's servers to use instead of the embedded one (with
	// NATS_STREAM_REPLICAS=3 on a 3-node cluster, as the fault test runs).
	NATSURL  string
	Services []Service
	Gateway  gatewayd.Config
}

// Service is one declared service with its configuration.
type Service struct {
	daemon.Service
	Config daemon.Config
}

// LoadConfig reads the environment.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{DataDir: getenv("DATA_DIR"), NATSPort: 14222, NATSURL: getenv("NATS_URL")}
	if c.DataDir == "" {
		c.DataDir = ".data"
	}
	if s := getenv("NATS_PORT"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil {
			return c, fmt.Errorf("allinone: NATS_PORT: %w", err)
		}
		c.NATSPort = p
	}
	// The ledger signs its chain checkpoints with a key the database never
	// holds; the all-in-one keeps one in the data directory.
	if getenv("LEDGER_CHECKPOINT_KEY") == "" && getenv("LEDGER_CHECKPOINT_KEY_FILE") == "" {
		path := filepath.Join(c.DataDir, "keys", "ledger-checkpoint.key")
		if err := ledgerd.EnsureKeyFile(path); err != nil {
			return c, err
		}
		env := getenv
		getenv = func(k string) string {
			if k == "LEDGER_CHECKPOINT_KEY_FILE" {
				return path
			}
			return env(k)
		}
	}
	for _, declare := range Services {
		svc, err := declare(getenv)
		if err != nil {
			return c, err
		}
		cfg, err := daemon.LoadConfig(svc.Name, getenv)
		if err != nil {
			return c, err
		}
		cfg.HealthAddr = "" // one process: the services cannot share one listener
		c.Services = append(c.Services, Service{svc, cfg})
	}
	var err error
	if c.Gateway, err = gatewayd.LoadConfig(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// Deps may supply ready dependencies (tests do); missing ones are found or
// started here. The gateway's are the platform's: its Ready receives the
// gateway's address once the platform serves. No part shares a NATS
// connection: each logs in with its own key of Keys.
type Deps struct {
	DatabaseURL string // owner connection; migrations run with it
	// NATSURL is a NATS server admitting Keys (every user of
	// natsauth.Table); without it an embedded server runs with the keys
	// kept under DataDir/keys.
	NATSURL string
	Keys    natsauth.Keys
	gatewayd.Deps
}

// Run starts everything and blocks until ctx ends or a part fails.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	log := cmp.Or(deps.Log, slog.Default())
	if deps.DatabaseURL == "" {
		url, stop, err := EnsurePostgres(ctx, cfg.DataDir, log)
		if err != nil {
			return err
		}
		defer stop()
		deps.DatabaseURL = url
	}
	if deps.NC != nil {
		return errors.New("allinone: every part opens its own NATS connection; pass NATSURL and Keys")
	}
	if deps.NATSURL == "" && cfg.NATSURL != "" {
		// A server or cluster run apart (the fault test's, or an
		// operator's): it must admit the keys kept under DataDir/keys
		// (go run ./deploy/natskeys renders its authorization block).
		keys, err := natsauth.LoadOrCreate(filepath.Join(cfg.DataDir, "keys"))
		if err != nil {
			return err
		}
		deps.NATSURL, deps.Keys = cfg.NATSURL, keys
	}
	if deps.NATSURL == "" {
		dir := filepath.Join(cfg.DataDir, "keys")
		keys, err := natsauth.LoadOrCreate(dir)
		if err != nil {
			return err
		}
		srv, err := natsembed.Start(filepath.Join(cfg.DataDir, "nats"), "127.0.0.1", cfg.NATSPort, natsembed.Users(keys))
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		deps.NATSURL, deps.Keys = srv.ClientURL(), keys
		log.Info("embedded NATS with JetStream", "url", srv.ClientURL(), "store", filepath.Join(cfg.DataDir, "nats"), "keys", dir)
	}
	trust, err := natsauth.ParseTrust(deps.Keys.Signers())
	if err != nil {
		return err
	}
	if deps.Redis == nil {
		// The gateway connects to the Redis found, if any.
		url, err := RedisURL(ctx)
		if err != nil {
			return err
		}
		cfg.Gateway.RedisURL = cmp.Or(url, cfg.Gateway.RedisURL)
	}
	owner, err := db.Open(ctx, deps.DatabaseURL, "", 8)
	if err != nil {
		return err
	}
	defer owner.Close()

	g, ctx := errgroup.WithContext(ctx)
	// Each service signals readiness; the gateway starts once they all serve.
	for _, s := range cfg.Services {
		ready := make(chan struct{})
		s.Config.NATSURL, s.Config.Key, s.Config.Trust = deps.NATSURL, deps.Keys[s.Name], trust
		g.Go(func() error {
			return daemon.Run(ctx, s.Service, s.Config, daemon.Deps{Pool: owner, Log: log, Ready: func() { close(ready) }})
		})
		select {
		case <-ready:
		case <-ctx.Done():
			// A part that failed ended ctx: its error, not the
			// cancellation, is what to report.
			if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return ctx.Err()
		}
	}
	g.Go(func() error {
		gw := deps.Deps
		gw.Log = log.With("service", "gateway")
		cfg.Gateway.NATSURL, cfg.Gateway.Key = deps.NATSURL, deps.Keys[natsauth.Gateway]
		return gatewayd.Run(ctx, cfg.Gateway, gw)
	})
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
