package identityd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity"
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

// serviceConfig builds identity's service and its daemon configuration
// from env.
func serviceConfig(t *testing.T, env map[string]string) (daemon.Service, daemon.Config) {
	t.Helper()
	svc, err := identityd.Service(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(svc.Name, getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	return svc, cfg
}

// start runs identity's daemon until the returned stop is called, which
// waits for it to return and reports its error.
func start(t *testing.T, env map[string]string, deps daemon.Deps) (stop func() error) {
	t.Helper()
	svc, cfg := serviceConfig(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	deps.Ready = func() { close(ready) }
	if deps.Log == nil {
		deps.Log = testkit.QuietLog()
	}
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

// A placeholder bootstrap key, such as deploy/k8s/secret.yaml ships, stops
// the start with a clear error.
func TestRefusesPlaceholderBootstrapKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"CHANGE-ME-to-a-random-value-of-32-or-more-characters", "placeholder-placeholder-placeholder-0123"} {
		_, err := identityd.Service(getenv(map[string]string{"BOOTSTRAP_API_KEY": k}))
		if err == nil || !strings.Contains(err.Error(), "BOOTSTRAP_API_KEY") || !strings.Contains(err.Error(), "placeholder") {
			t.Errorf("Service with %q = %v, want an error naming BOOTSTRAP_API_KEY as a placeholder", k, err)
		}
	}
	for name, v := range map[string]string{"MAX_KEY_RATE_LIMIT": "lots", "MAILER_PUBLIC_KEY": "not a key"} {
		if _, err := identityd.Service(getenv(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Service with %s=%q = %v, want an error naming it", name, v, err)
		}
	}
}

// Without BOOTSTRAP_API_KEY the first start writes the generated key to
// BOOTSTRAP_KEY_FILE, mode 0600, and logs the file, never the key; neither
// the key nor the bootstrap admin's invite token reaches the log. A second
// start leaves the file alone.
func TestGeneratedKeyGoesToAFile(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Migrations)
	file := filepath.Join(t.TempDir(), "secrets", "bootstrap-key")
	pub, priv, err := mailseal.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	env := h.Bus.Env(t, "identity")
	env["BOOTSTRAP_KEY_FILE"], env["BOOTSTRAP_ADMIN_EMAIL"], env["MAILER_PUBLIC_KEY"] = file, "ops@example.com", mailseal.Encode(pub)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := start(t, env, daemon.Deps{Pool: h.Pool, Log: log})(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(b))
	ctx := context.Background()
	var mail identityv1.Mail
	testkit.Eventually(t, "the invitation on the MAIL stream", func() bool {
		st, err := h.JS.Stream(ctx, identityv1.StreamMail)
		if err != nil {
			return false
		}
		msg, err := st.GetLastMsgForSubject(ctx, identityv1.SubjectSendMail)
		return err == nil && json.Unmarshal(msg.Data, &mail) == nil
	})
	if mail.To != "ops@example.com" {
		t.Fatalf("mail %+v", mail)
	}
	invite, err := mailseal.Open(pub, priv, mail.SealedToken)
	if err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if len(key) < identity.MinBootstrapKeyLen || strings.Contains(out, key) || strings.Contains(out, invite) {
		t.Errorf("log output shows the key or the invite token:\n%s", out)
	}
	if !strings.Contains(out, file) {
		t.Errorf("log output does not name the key file:\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("key directory holds %d entries, want the key file alone", len(entries))
	}

	// The key in the file is the operator's admin key.
	stop := start(t, env, daemon.Deps{Pool: h.Pool})
	c, err := verify(t, h.Bus, key)
	if err != nil || !c.Operator || !c.Has(auth.Admin) {
		t.Errorf("verify the key from the file: %+v, %v", c, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(file); string(b2) != string(b) {
		t.Error("the second start rewrote the key file")
	}
}

// A key file that cannot be written stops a start that would generate a
// key nobody could read, but not a start on an existing operator tenant (a
// read-only root file system once BOOTSTRAP_API_KEY is gone).
func TestUnwritableKeyFile(t *testing.T) {
	t.Parallel()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BOOTSTRAP_KEY_FILE": filepath.Join(notADir, "bootstrap-key")}

	h := testkit.NewRPC(t, postgres.Migrations)
	maps.Copy(env, h.Bus.Env(t, "identity"))
	svc, cfg := serviceConfig(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := daemon.Run(ctx, svc, cfg, daemon.Deps{Pool: h.Pool, Log: testkit.QuietLog()})
	if err == nil || !strings.Contains(err.Error(), "BOOTSTRAP_API_KEY") {
		t.Fatalf("first start with an unwritable key file = %v, want an error pointing to BOOTSTRAP_API_KEY", err)
	}

	h = testkit.NewRPC(t, postgres.Migrations)
	withKey := h.Bus.Env(t, "identity")
	withKey["BOOTSTRAP_API_KEY"] = bootstrapKey
	maps.Copy(env, h.Bus.Env(t, "identity"))
	if err := start(t, withKey, daemon.Deps{Pool: h.Pool})(); err != nil {
		t.Fatal(err)
	}
	stop := start(t, env, daemon.Deps{Pool: h.Pool})
	if _, err := verify(t, h.Bus, bootstrapKey); err != nil {
		t.Errorf("verify after a start without the key: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
