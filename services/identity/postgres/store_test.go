package postgres_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

func TestMigrationsReapply(t *testing.T) {
	t.Parallel()
	e := identitytest.New(t)
	if err := migrate.Up(context.Background(), e.Owner, postgres.Migrations); err != nil {
		t.Fatalf("applying the migrations to a migrated database: %v", err)
	}
}

func call(requestID, tenantID, keyID string, at time.Time) gatewayv1.Call {
	return gatewayv1.Call{RequestID: requestID, TenantID: tenantID, KeyID: keyID, Actor: "key:" + keyID, Surface: "api",
		Method: "GET", Route: "GET /v1/journal", Scope: "journal:read", Status: 200, DurationMS: 3, At: at}
}

// The audit log refuses changes twice over: identity_svc holds no UPDATE or
// DELETE privilege, and a trigger refuses them even to the owner.
func TestAuditLogAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	if _, err := e.Store.RecordCall(ctx, call("req-1", admin.TenantID, admin.KeyID, time.Now())); err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		"UPDATE identity.audit_log SET status = 500",
		"DELETE FROM identity.audit_log",
		"TRUNCATE identity.audit_log",
	}
	for _, pool := range []struct {
		name string
		p    *pgxpool.Pool
	}{{"identity_svc", e.Pool}, {"owner", e.Owner}} {
		for _, stmt := range stmts {
			err := db.WithTx(ctx, pool.p, pgx.TxOptions{}, func(tx pgx.Tx) error {
				if err := db.SetTenant(ctx, tx, "*"); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, stmt)
				return err
			})
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42501" {
				t.Errorf("%s: %s: error = %v, want insufficient_privilege (42501)", pool.name, stmt, err)
			}
		}
	}
	var n int
	if err := e.Owner.QueryRow(ctx, "SELECT count(*) FROM identity.audit_log").Scan(&n); err != nil || n != 1 {
		t.Errorf("audit rows = %d, %v; want 1", n, err)
	}
}

// Row-level security hides other tenants' rows even from a query that
// forgets to filter.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	a, _ := e.Tenant(t, "A GmbH")
	b, _ := e.Tenant(t, "B GmbH")
	e.User(t, a, "anna@a.example", "admin")
	e.User(t, b, "bert@b.example", "admin")
	for _, c := range []gatewayv1.Call{call("r-a", a.TenantID, a.KeyID, time.Now()), call("r-b", b.TenantID, b.KeyID, time.Now()), call("r-anon", "", "", time.Now())} {
		if _, err := e.Store.RecordCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	visible := func(setting, query string) []string {
		var out []string
		err := db.WithTx(ctx, e.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if setting != "" {
				if err := db.SetTenant(ctx, tx, setting); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, query)
			if err != nil {
				return err
			}
			out, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(out)
		return out
	}
	tests := []struct {
		setting, query string
		want           []string
	}{
		{a.TenantID, "SELECT email FROM identity.users", []string{"anna@a.example"}},
		{b.TenantID, "SELECT email FROM identity.users", []string{"bert@b.example"}},
		{"", "SELECT email FROM identity.users", nil},
		{a.TenantID, "SELECT label FROM identity.api_keys", []string{"admin"}},
		{a.TenantID, "SELECT company_name FROM identity.tenants", []string{"A GmbH"}},
		{a.TenantID, "SELECT request_id FROM identity.audit_log", []string{"r-a"}},
		{"*", "SELECT request_id FROM identity.audit_log", []string{"r-a", "r-anon", "r-b"}},
		{"*", "SELECT email FROM identity.users", []string{"anna@a.example", "bert@b.example"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, visible(tt.setting, tt.query), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("app.tenant_id=%q %s (-want +got):\n%s", tt.setting, tt.query, diff)
		}
	}
}

func TestRecordCallIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	later := time.Now().UTC().Truncate(time.Microsecond)
	earlier := later.Add(-time.Hour)
	steps := []struct {
		c        gatewayv1.Call
		inserted bool
	}{
		{call("req-1", admin.TenantID, admin.KeyID, later), true},
		{call("req-1", admin.TenantID, admin.KeyID, later), false},
		{call("req-2", admin.TenantID, admin.KeyID, earlier), true}, // arrives late
		{call("req-3", admin.TenantID, "", later), true},
	}
	for _, s := range steps {
		got, err := e.Store.RecordCall(ctx, s.c)
		if err != nil || got != s.inserted {
			t.Errorf("RecordCall(%s) = %v, %v; want %v", s.c.RequestID, got, err, s.inserted)
		}
	}
	k, err := e.Store.Key(ctx, admin.TenantID, admin.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	if k.CallCount != 2 || k.LastUsedAt == nil || !k.LastUsedAt.Equal(later) {
		t.Errorf("key call_count = %d, last_used_at = %v; want 2 and %v", k.CallCount, k.LastUsedAt, later)
	}
	entries, err := e.Store.AuditEntries(ctx, admin.TenantID, identity.AuditFilter{Page: identity.Page{Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, en := range entries {
		ids = append(ids, en.RequestID)
	}
	if diff := cmp.Diff([]string{"req-3", "req-1", "req-2"}, ids); diff != "" {
		t.Errorf("entries newest first (-want +got):\n%s", diff)
	}
}

// The client's X-Request-Id is stored beside the gateway's id and is no key:
// two calls sending the same one are two records, and both read back with it.
func TestRecordCallKeepsClientRequestID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	at := time.Now().UTC().Truncate(time.Microsecond)
	first, second := call("gw-1", admin.TenantID, admin.KeyID, at), call("gw-2", admin.TenantID, admin.KeyID, at.Add(time.Millisecond))
	first.ClientRequestID, second.ClientRequestID = "client-7", "client-7"
	if n, err := e.Store.RecordCalls(ctx, []gatewayv1.Call{first, second}); err != nil || n != 2 {
		t.Fatalf("RecordCalls = %d, %v; want 2 stored", n, err)
	}
	entries, err := e.Store.AuditEntries(ctx, admin.TenantID, identity.AuditFilter{Page: identity.Page{Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, en := range entries {
		got = append(got, [2]string{en.RequestID, en.ClientRequestID})
	}
	if diff := cmp.Diff([][2]string{{"gw-2", "client-7"}, {"gw-1", "client-7"}}, got); diff != "" {
		t.Errorf("audit entries (request id, client request id) (-want +got):\n%s", diff)
	}
}
