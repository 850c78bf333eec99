package identityd_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/identityd"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

const bootstrapKey = "lgr_identityd-test-key-0123456789abcdef"

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    identityd.Config
		wantErr string
	}{
		{"defaults", nil, identityd.Config{DatabaseURL: identityd.DefaultDatabaseURL, NATSURL: identityd.DefaultNATSURL, DBMaxConns: 10}, ""},
		{"everything", map[string]string{
			"DATABASE_URL": "postgres://db/ledger", "NATS_URL": "nats://nats:4222", "IDENTITY_DB_MAX_CONNS": "20",
			"BOOTSTRAP_API_KEY": bootstrapKey, "BOOTSTRAP_ADMIN_EMAIL": "ops@example.com",
		}, identityd.Config{DatabaseURL: "postgres://db/ledger", NATSURL: "nats://nats:4222", DBMaxConns: 20, BootstrapAPIKey: bootstrapKey, BootstrapAdminEmail: "ops@example.com"}, ""},
		{"short key", map[string]string{"BOOTSTRAP_API_KEY": "short"}, identityd.Config{}, "BOOTSTRAP_API_KEY"},
		{"bad pool size", map[string]string{"IDENTITY_DB_MAX_CONNS": "one"}, identityd.Config{}, "IDENTITY_DB_MAX_CONNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := identityd.LoadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// start runs identityd until the returned stop is called, which waits for
// Run to return and reports its error.
func start(t *testing.T, cfg identityd.Config, deps identityd.Deps) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	deps.Ready = func() { close(ready) }
	deps.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	done := make(chan error, 1)
	go func() { done <- identityd.Run(ctx, cfg, deps) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("Run did not become ready")
	}
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not stop")
			return nil
		}
	}
}

func verify(t *testing.T, nc *nats.Conn, token string) (*auth.Claims, error) {
	t.Helper()
	var c auth.Claims
	err := (&natsx.Client{NC: nc, Timeout: 10 * time.Second}).Call(context.Background(), identityv1.SubjectVerify, nil, identityv1.VerifyRequest{Token: token}, &c)
	return &c, err
}

// Two starts on one database keep one operator tenant, and the configured
// bootstrap key works after each.
func TestRunIsRepeatable(t *testing.T) {
	t.Parallel()
	url := testkit.Postgres(t, postgres.Migrations)
	owner, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	_, nc := testkit.NATS(t)
	cfg := identityd.Config{BootstrapAPIKey: bootstrapKey}

	var tenantID string
	for i := range 2 {
		stop := start(t, cfg, identityd.Deps{Pool: owner, NC: nc})
		c, err := verify(t, nc, bootstrapKey)
		if err != nil {
			t.Fatalf("start %d: verify the bootstrap key: %v", i+1, err)
		}
		if !c.Operator || !c.Has(auth.Admin) || (tenantID != "" && c.TenantID != tenantID) {
			t.Errorf("start %d: claims = %+v", i+1, c)
		}
		tenantID = c.TenantID
		if err := stop(); err != nil {
			t.Fatalf("start %d: Run = %v", i+1, err)
		}
	}
	var operators, keys int
	if err := owner.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM identity.tenants WHERE is_operator), (SELECT count(*) FROM identity.api_keys)").Scan(&operators, &keys); err != nil {
		t.Fatal(err)
	}
	if operators != 1 || keys != 1 {
		t.Errorf("after two starts: %d operator tenants and %d keys, want 1 and 1", operators, keys)
	}
	// Once stopped, nobody answers.
	if _, err := verify(t, nc, bootstrapKey); !errs.Is(err, errs.Unavailable) {
		t.Errorf("verify after stop = %v, want UNAVAILABLE", err)
	}
}

// Without Deps, Run connects from the configuration.
func TestRunOpensConnections(t *testing.T) {
	t.Parallel()
	url := testkit.Postgres(t, postgres.Migrations)
	natsURL, nc := testkit.NATS(t)
	stop := start(t, identityd.Config{DatabaseURL: url, NATSURL: natsURL, DBMaxConns: 4, BootstrapAPIKey: bootstrapKey}, identityd.Deps{})
	if _, err := verify(t, nc, bootstrapKey); err != nil {
		t.Errorf("verify: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRunRefusesShortBootstrapKey(t *testing.T) {
	t.Parallel()
	err := identityd.Run(context.Background(), identityd.Config{BootstrapAPIKey: "short"}, identityd.Deps{})
	if err == nil || !strings.Contains(err.Error(), "BOOTSTRAP_API_KEY") {
		t.Errorf("Run = %v, want an error about BOOTSTRAP_API_KEY", err)
	}
}
