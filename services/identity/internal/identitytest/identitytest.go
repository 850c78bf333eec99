// Package identitytest gives the domain and store tests a fresh migrated database
// with the service running as identity_svc, and shortcuts to tenants,
// users and sessions built through the service itself.
package identitytest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// BootstrapKey is the operator's admin key in every Env.
const BootstrapKey = "lgr_test-bootstrap-key-0123456789abcdef"

// The mail sender's key pair every Env seals mailed links to.
var MailerPublic, MailerPrivate = mustMailerKey()

func mustMailerKey() (*mailseal.Key, *mailseal.Key) {
	pub, priv, err := mailseal.GenerateKey()
	if err != nil {
		panic(err)
	}
	return pub, priv
}

// MailToken opens the sealed token of a mail command's payload as the mail
// sender would; the payload must carry no token in the clear.
func MailToken(t testing.TB, payload map[string]any) string {
	t.Helper()
	if _, clear := payload["token"]; clear {
		t.Fatalf("mail command carries a raw token: %v", payload)
	}
	s, _ := payload["sealed_token"].(string)
	sealed, err := base64.StdEncoding.DecodeString(s)
	if err != nil || s == "" {
		t.Fatalf("mail command without a sealed token: %v", payload)
	}
	if payload["key_id"] != mailseal.KeyID(MailerPublic) {
		t.Fatalf("mail command sealed to key %v, want %s", payload["key_id"], mailseal.KeyID(MailerPublic))
	}
	token, err := mailseal.Open(MailerPublic, MailerPrivate, sealed)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// Env is one test's identity service.
type Env struct {
	URL   string        // the database, as its owner
	Owner *pgxpool.Pool // owner connections, for looking behind the service
	Pool  *pgxpool.Pool // the service's pool, running as identity_svc
	Store *postgres.Store
	Svc   *identity.Service
}

// New returns an Env on a new database.
func New(t testing.TB, opts ...identity.Option) *Env {
	t.Helper()
	url := testkit.Postgres(t, postgres.Migrations)
	pool := open(t, url, postgres.Migrations.Role, 10)
	store := postgres.New(pool)
	svc, err := identity.New(context.Background(), store, append([]identity.Option{identity.WithMailerKey(MailerPublic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{URL: url, Owner: open(t, url, "", 0), Pool: pool, Store: store, Svc: svc}
}

// open connects a pool as role ("" for the owner) that closes when the test
// ends.
func open(t testing.TB, url, role string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pool, err := db.Open(context.Background(), url, role, maxConns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Acme returns an Env on a new database with one tenant, Acme GmbH, and
// its admin key's claims.
func Acme(t testing.TB, opts ...identity.Option) (*Env, *auth.Claims) {
	t.Helper()
	e := New(t, opts...)
	admin, _ := e.Tenant(t, "Acme GmbH")
	return e, admin
}

// Operator bootstraps the operator tenant and returns its admin key's claims.
func (e *Env) Operator(t testing.TB) *auth.Claims {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: BootstrapKey}); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	return e.Claims(t, BootstrapKey)
}

// Tenant creates a tenant and returns its admin key's claims and raw key.
func (e *Env) Tenant(t testing.TB, name string) (*auth.Claims, string) {
	t.Helper()
	nt, err := e.Svc.CreateTenant(context.Background(), e.Operator(t), identity.TenantPatch{CompanyName: &name})
	if err != nil {
		t.Fatalf("create tenant %s: %v", name, err)
	}
	return e.Claims(t, nt.RawKey), nt.RawKey
}

// Claims verifies a credential the test expects to be valid.
func (e *Env) Claims(t testing.TB, token string) *auth.Claims {
	t.Helper()
	c, err := e.Svc.Verify(context.Background(), token)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return c
}

// Password is what User sets.
const Password = "correct horse battery staple"

// User invites a user into the caller's tenant, sets Password through the
// invitation and logs in.
func (e *Env) User(t testing.TB, by *auth.Claims, email, role string) identity.LoginResult {
	t.Helper()
	ctx := context.Background()
	inv, err := e.Svc.InviteUser(ctx, by, identity.InviteInput{Email: email, Role: role})
	if err != nil {
		t.Fatalf("invite %s: %v", email, err)
	}
	if err := e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: inv.InviteToken, Password: Password}); err != nil {
		t.Fatalf("setup password %s: %v", email, err)
	}
	res, err := e.Svc.Login(ctx, identity.LoginInput{Email: email, Password: Password})
	if err != nil {
		t.Fatalf("login %s: %v", email, err)
	}
	return res
}

// Event is an outbox row.
type Event struct {
	Subject string
	Payload map[string]any
}

// Outbox lists the outbox, oldest first.
func (e *Env) Outbox(t testing.TB) []Event {
	t.Helper()
	rows, err := e.Owner.Query(context.Background(), "SELECT subject, payload FROM identity.outbox ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var ev Event
		var b []byte
		if err := r.Scan(&ev.Subject, &b); err != nil {
			return ev, err
		}
		return ev, json.Unmarshal(b, &ev.Payload)
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Payloads lists the payloads of the outbox rows on subject, oldest first.
func (e *Env) Payloads(t testing.TB, subject string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range e.Outbox(t) {
		if ev.Subject == subject {
			out = append(out, ev.Payload)
		}
	}
	return out
}

// Exec runs sql as the owner, for arranging what the service cannot.
func (e *Env) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := e.Owner.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
