package identityd

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/natsrpc"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// Deps are connections Run uses instead of opening its own. Pool connects
// as an owner of the identity schema; Run migrates with it and serves from a
// second pool of the same database running as identity_svc.
type Deps struct {
	Pool  *pgxpool.Pool
	NC    *nats.Conn
	Log   *slog.Logger
	Ready func() // called once the service answers requests
}

// Run serves the identity service until ctx ends, then stops taking
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
		if nc, err = nats.Connect(cfg.NATSURL, nats.Name("identity")); err != nil {
			return fmt.Errorf("identityd: connect to NATS: %w", err)
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("identityd: jetstream: %w", err)
	}
	if err := ensureStreams(ctx, js); err != nil {
		return err
	}

	svc, err := identity.New(ctx, postgres.New(pool))
	if err != nil {
		return fmt.Errorf("identityd: %w", err)
	}
	if err := bootstrap(ctx, svc, cfg, log); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relay := &outbox.Relay{Pool: pool, Schema: postgres.Schema, JS: js, Log: log}
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		_ = relay.Run(ctx) // returns nil when ctx ends; it retries failures itself
	}()
	defer func() { cancel(); <-relayDone }()

	if err := natsrpc.ConsumeAudit(ctx, js, svc, log); err != nil {
		return fmt.Errorf("identityd: %w", err)
	}
	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "identity", Logger: log})
	if err != nil {
		return fmt.Errorf("identityd: %w", err)
	}
	if err := natsrpc.Register(srv, svc); err != nil {
		_ = srv.Stop()
		return fmt.Errorf("identityd: %w", err)
	}
	return srv.Serve(ctx, deps.Ready)
}

// servicePool applies the migrations as the owner and returns a pool of the
// same database that runs as identity_svc, so at run time the service has
// only the privileges the migrations granted (no UPDATE or DELETE on the
// audit log, for one).
func servicePool(ctx context.Context, cfg Config, owner *pgxpool.Pool) (*pgxpool.Pool, error) {
	maxConns := cfg.DBMaxConns
	if maxConns == 0 {
		maxConns = DefaultDBMaxConns
	}
	pool, err := migrate.ServicePool(ctx, owner, cfg.DatabaseURL, postgres.Role, maxConns, postgres.Migrations)
	if err != nil {
		return nil, fmt.Errorf("identityd: %w", err)
	}
	return pool, nil
}

// ensureStreams creates the streams identity publishes to and consumes from.
func ensureStreams(ctx context.Context, js jetstream.JetStream) error {
	for _, s := range []struct{ name, filter string }{
		{identityv1.StreamEvents, identityv1.EventsFilter},
		{identityv1.StreamMail, identityv1.MailFilter},
		{gatewayv1.StreamCalls, gatewayv1.CallsFilter},
	} {
		if err := natsx.EnsureStream(ctx, js, s.name, s.filter); err != nil {
			return fmt.Errorf("identityd: %w", err)
		}
	}
	return nil
}

// bootstrap makes sure an operator tenant with an admin key exists and tells
// the operator how to get in.
func bootstrap(ctx context.Context, svc *identity.Service, cfg Config, log *slog.Logger) error {
	out, err := svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: cfg.BootstrapAPIKey, AdminEmail: cfg.BootstrapAdminEmail})
	if err != nil {
		return fmt.Errorf("identityd: %w", err)
	}
	if out.TenantCreated {
		log.Info("created the operator tenant", "tenant_id", out.TenantID, "company_name", identity.DemoCompanyName)
	}
	switch {
	case out.GeneratedKey != "":
		// Shown this once only: the store keeps just its hash.
		log.Info("generated the bootstrap admin API key", "api_key", out.GeneratedKey)
		fmt.Fprintf(os.Stdout, "\nBootstrap admin API key: %s\n\n", out.GeneratedKey)
	case out.KeyAdded:
		log.Info("added BOOTSTRAP_API_KEY as an admin key of the operator tenant", "tenant_id", out.TenantID)
	case cfg.BootstrapAPIKey == "":
		log.Info("the operator tenant exists; the bootstrap admin API key printed at its first start stays valid unless revoked", "tenant_id", out.TenantID)
	}
	if out.InviteToken != "" {
		// Without a mail sender the token is the only way to set a password.
		log.Info("invited the bootstrap admin user", "email", cfg.BootstrapAdminEmail)
		fmt.Fprintf(os.Stdout, "Bootstrap admin invite token for %s: %s\n\n", cfg.BootstrapAdminEmail, out.InviteToken)
	}
	return nil
}
