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
	"path/filepath"
	"strconv"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/natsrpc"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// DefaultBootstrapKeyFile is where a generated bootstrap key is written
// unless BOOTSTRAP_KEY_FILE names another file.
const DefaultBootstrapKeyFile = ".data/bootstrap-key"

// Service declares identity. Its own settings:
//   - BOOTSTRAP_API_KEY, when set, is an admin key of the operator tenant;
//     at least 32 characters, not a placeholder. When empty, the first
//     start generates one and writes it, mode 0600, to BOOTSTRAP_KEY_FILE
//     (default .data/bootstrap-key); the log names the file, never the key.
//   - BOOTSTRAP_ADMIN_EMAIL, when set, is invited as an admin user of the
//     operator tenant; the invitation goes out as a mail command.
//   - MAX_KEY_RATE_LIMIT caps the per-minute limit an admin may give an
//     API key (default 6000).
//   - MAILER_PUBLIC_KEY (standard base64 of an X25519 public key,
//     pkg/mailseal) seals the tokens of mailed links for the mail sender.
func Service(getenv func(string) string) (daemon.Service, error) {
	boot := identity.BootstrapInput{APIKey: getenv("BOOTSTRAP_API_KEY"), AdminEmail: getenv("BOOTSTRAP_ADMIN_EMAIL")}
	if boot.APIKey != "" {
		if err := identity.CheckBootstrapKey(boot.APIKey); err != nil {
			return daemon.Service{}, fmt.Errorf("identityd: invalid config: BOOTSTRAP_API_KEY: %w", err)
		}
	}
	keyFile := getenv("BOOTSTRAP_KEY_FILE")
	if keyFile == "" {
		keyFile = DefaultBootstrapKeyFile
	}
	opts := []identity.Option{}
	if s := getenv("MAX_KEY_RATE_LIMIT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return daemon.Service{}, fmt.Errorf("identityd: invalid config: MAX_KEY_RATE_LIMIT must be a positive integer")
		}
		opts = append(opts, identity.WithMaxKeyRateLimit(n))
	}
	mailerKey := getenv("MAILER_PUBLIC_KEY")
	if mailerKey != "" {
		k, err := mailseal.ParseKey(mailerKey)
		if err != nil {
			return daemon.Service{}, fmt.Errorf("identityd: invalid config: MAILER_PUBLIC_KEY: %w", err)
		}
		opts = append(opts, identity.WithMailerKey(k))
	}
	return daemon.Service{
		Name: identityv1.ServiceName,
		DB:   postgres.Migrations,
		Streams: []natsx.Stream{
			{Name: identityv1.StreamEvents, Subjects: []string{identityv1.EventsFilter}},
			{Name: identityv1.StreamMail, Subjects: []string{identityv1.MailFilter}},
		},
		Build: func(ctx context.Context, env daemon.Env) (daemon.Parts, error) {
			svc, err := identity.New(ctx, postgres.New(env.Pool), opts...)
			if err != nil {
				return daemon.Parts{}, err
			}
			if mailerKey == "" {
				env.Log.Warn("no MAILER_PUBLIC_KEY: invitation and password-reset mails carry no link")
			}
			if err := bootstrap(ctx, svc, boot, keyFile, env.Log); err != nil {
				return daemon.Parts{}, err
			}
			return daemon.Parts{Routes: natsrpc.Routes(svc), Consumers: []natsx.Consumer{natsrpc.Audit(svc, env.Log)}}, nil
		},
	}, nil
}

// bootstrap makes sure an operator tenant with an admin key exists and tells
// the operator how to get in. A second start reuses the tenant and key.
func bootstrap(ctx context.Context, svc *identity.Service, in identity.BootstrapInput, keyFile string, log *slog.Logger) error {
	var pending *os.File
	var fileErr error
	if in.APIKey == "" {
		// A key is generated only if this start creates the operator
		// tenant, and the store keeps only its hash: open the file before
		// the key is committed. A file that cannot be created matters only
		// if a key is generated (a read-only root once the tenant exists).
		pending, fileErr = createPrivate(keyFile)
		defer func() {
			if pending != nil {
				pending.Close()
				os.Remove(pending.Name())
			}
		}()
	}
	out, err := svc.Bootstrap(ctx, in)
	if err != nil {
		return err
	}
	if out.TenantCreated {
		log.Info("created the operator tenant", "tenant_id", out.TenantID, "company_name", identity.DemoCompanyName)
	}
	switch {
	case out.GeneratedKey != "":
		err := fileErr
		if err == nil {
			err = commitPrivate(pending, out.GeneratedKey, keyFile)
		}
		if err != nil {
			return fmt.Errorf("identityd: the generated bootstrap key is stored but could not be written to %s (set BOOTSTRAP_API_KEY to add another): %w", keyFile, err)
		}
		pending = nil
		log.Info("generated the bootstrap admin API key and wrote it to a file readable only by this user", "file", keyFile, "tenant_id", out.TenantID)
	case out.KeyAdded:
		log.Info("added BOOTSTRAP_API_KEY as an admin key of the operator tenant", "tenant_id", out.TenantID)
	case in.APIKey == "":
		log.Info("the operator tenant exists; the bootstrap admin API key written at its first start stays valid unless revoked", "tenant_id", out.TenantID, "file", keyFile)
	}
	if out.AdminInvited {
		log.Info("invited the bootstrap admin user; the invitation is queued for the mail sender", "email", in.AdminEmail)
	}
	return nil
}

// createPrivate creates a temporary file, mode 0600, beside path.
func createPrivate(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// CreateTemp makes the file 0600.
	return os.CreateTemp(dir, "."+filepath.Base(path)+".*")
}

// commitPrivate writes key to f and moves f to path, replacing a file left
// by an earlier database.
func commitPrivate(f *os.File, key, path string) error {
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
