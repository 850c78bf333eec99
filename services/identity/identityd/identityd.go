// Package identityd declares the identity service for pkg/daemon: its
// schema, the streams it owns (its events and the mail commands it queues),
// its route table, the consumer of the gateway's audit records, and the
// bootstrap of the operator tenant on start.
package identityd

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/natsrpc"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// Service declares identity. Its own settings:
//   - BOOTSTRAP_API_KEY, when set, is an admin key of the operator tenant;
//     at least 32 characters. When empty, the first start generates one
//     and prints it.
//   - BOOTSTRAP_ADMIN_EMAIL, when set, is invited as an admin user of the
//     operator tenant.
func Service(getenv func(string) string) (daemon.Service, error) {
	boot := identity.BootstrapInput{APIKey: getenv("BOOTSTRAP_API_KEY"), AdminEmail: getenv("BOOTSTRAP_ADMIN_EMAIL")}
	if boot.APIKey != "" {
		if err := identity.CheckBootstrapKey(boot.APIKey); err != nil {
			return daemon.Service{}, fmt.Errorf("identityd: invalid config: BOOTSTRAP_API_KEY: %w", err)
		}
	}
	return daemon.Service{
		Name: identityv1.ServiceName,
		DB:   postgres.Migrations,
		Streams: []natsx.Stream{
			{Name: identityv1.StreamEvents, Subjects: []string{identityv1.EventsFilter}},
			{Name: identityv1.StreamMail, Subjects: []string{identityv1.MailFilter}},
		},
		Build: func(ctx context.Context, env daemon.Env) (daemon.Parts, error) {
			svc, err := identity.New(ctx, postgres.New(env.Pool))
			if err != nil {
				return daemon.Parts{}, err
			}
			if err := bootstrap(ctx, svc, boot, env.Log); err != nil {
				return daemon.Parts{}, err
			}
			return daemon.Parts{Routes: natsrpc.Routes(svc), Consumers: []natsx.Consumer{natsrpc.Audit(svc, env.Log)}}, nil
		},
	}, nil
}

// bootstrap makes sure an operator tenant with an admin key exists and tells
// the operator how to get in. A second start reuses the tenant and key.
func bootstrap(ctx context.Context, svc *identity.Service, in identity.BootstrapInput, log *slog.Logger) error {
	out, err := svc.Bootstrap(ctx, in)
	if err != nil {
		return err
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
	case in.APIKey == "":
		log.Info("the operator tenant exists; the bootstrap admin API key printed at its first start stays valid unless revoked", "tenant_id", out.TenantID)
	}
	if out.InviteToken != "" {
		// Without a mail sender the token is the only way to set a password.
		log.Info("invited the bootstrap admin user", "email", in.AdminEmail)
		fmt.Fprintf(os.Stdout, "Bootstrap admin invite token for %s: %s\n\n", in.AdminEmail, out.InviteToken)
	}
	return nil
}
