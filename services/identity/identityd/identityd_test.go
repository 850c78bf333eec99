package identityd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/identityd"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

const bootstrapKey = "lgr_identityd-test-key-0123456789abcdef"

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// The service's settings are the daemon's (daemon.TestLoadConfig), read
// under its name; Service checks its own, the bootstrap settings
// (TestRefusesShortBootstrapKey).
func TestConfig(t *testing.T) {
	t.Parallel()
	svc, err := identityd.Service(getenv(map[string]string{"BOOTSTRAP_API_KEY": bootstrapKey, "BOOTSTRAP_ADMIN_EMAIL": "ops@example.com"}))
	if err != nil || svc.Name != "identity" || svc.DB.Schema != "identity" {
		t.Fatalf("declared %q on schema %q, %v", svc.Name, svc.DB.Schema, err)
	}
}

// start runs identity's daemon until the returned stop is called, which
// waits for it to return and reports its error.
func start(t *testing.T, env map[string]string, deps daemon.Deps) (stop func() error) {
	t.Helper()
	svc, err := identityd.Service(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(svc.Name, getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	deps.Ready = func() { close(ready) }
	deps.Log = testkit.QuietLog()
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx, svc, cfg, deps) }()
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

// verify asks identity to verify token as the gateway does.
func verify(t *testing.T, bus *testkit.Bus, token string) (*auth.Claims, error) {
	t.Helper()
	var c auth.Claims
	client := bus.Client(t, natsauth.Gateway)
	client.Timeout = 10 * time.Second
	err := client.Call(context.Background(), identityv1.SubjectVerify, nil, identityv1.VerifyRequest{Token: token}, &c)
	return &c, err
}

// Two starts on one database keep one operator tenant, one bootstrap admin
// user, and the configured bootstrap key works after each.
func TestRunIsRepeatable(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Migrations)
	env := h.Bus.Env(t, "identity")
	env["BOOTSTRAP_API_KEY"], env["BOOTSTRAP_ADMIN_EMAIL"] = bootstrapKey, "ops@example.com"

	var tenantID string
	for i := range 2 {
		stop := start(t, env, daemon.Deps{Pool: h.Pool})
		c, err := verify(t, h.Bus, bootstrapKey)
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
	var operators, keys, admins int
	if err := h.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM identity.tenants WHERE is_operator), (SELECT count(*) FROM identity.api_keys),
		(SELECT count(*) FROM identity.users WHERE email = 'ops@example.com' AND role = 'admin' AND tenant_id = $1)`, tenantID).Scan(&operators, &keys, &admins); err != nil {
		t.Fatal(err)
	}
	if operators != 1 || keys != 1 || admins != 1 {
		t.Errorf("after two starts: %d operator tenants, %d keys and %d invited admins, want 1, 1 and 1", operators, keys, admins)
	}
	// Once stopped, nobody answers.
	if _, err := verify(t, h.Bus, bootstrapKey); !errs.Is(err, errs.Unavailable) {
		t.Errorf("verify after stop = %v, want UNAVAILABLE", err)
	}
}

// Without Deps, Run connects from the configuration.
func TestRunOpensConnections(t *testing.T) {
	t.Parallel()
	url := testkit.Postgres(t, postgres.Migrations)
	bus := testkit.NewBus(t)
	env := bus.Env(t, "identity")
	env["DATABASE_URL"], env["IDENTITY_DB_MAX_CONNS"], env["BOOTSTRAP_API_KEY"] = url, "4", bootstrapKey
	stop := start(t, env, daemon.Deps{})
	if _, err := verify(t, bus, bootstrapKey); err != nil {
		t.Errorf("verify: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesShortBootstrapKey(t *testing.T) {
	t.Parallel()
	_, err := identityd.Service(getenv(map[string]string{"BOOTSTRAP_API_KEY": "short"}))
	if err == nil || !strings.Contains(err.Error(), "BOOTSTRAP_API_KEY") {
		t.Errorf("Service = %v, want an error about BOOTSTRAP_API_KEY", err)
	}
}
