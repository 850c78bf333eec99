package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
	"github.com/ledgerplatform/ledger/services/ledger/skr04"
)

// chartDB is a store on its own database, run as ledger_svc, with tenants
// seeded with the SKR04 chart.
type chartDB struct {
	store *postgres.Store
	pool  *pgxpool.Pool // ledger_svc
}

func newChartDB(t *testing.T) *chartDB {
	t.Helper()
	pool, _ := ledgertest.DB(t, 20)
	return &chartDB{store: ledgertest.Store(pool), pool: pool}
}

func (c *chartDB) tenant(t *testing.T) string {
	t.Helper()
	tenant := uuid.NewString()
	if err := c.store.EnsureTenant(context.Background(), tenant, skr04.Accounts(), skr04.TaxCodes()); err != nil {
		t.Fatal(err)
	}
	return tenant
}

func chartIdem(key string) ledger.IdemRequest {
	return ledger.IdemRequest{Scope: "key:test", Key: key, Hash: "h-" + key}
}

// TestSeededChart: the seed lands as given, every account a system account.
func TestSeededChart(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	tenant := c.tenant(t)
	accounts, codes, err := c.store.LoadChart(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	want := skr04.Accounts()
	for i := range accounts {
		accounts[i].CreatedAt = want[i].CreatedAt
	}
	if diff := cmp.Diff(want, accounts); diff != "" {
		t.Errorf("accounts (-want +got):\n%s", diff)
	}
	if len(codes) != len(skr04.TaxCodes()) {
		t.Errorf("%d tax codes, want %d", len(codes), len(skr04.TaxCodes()))
	}
}

// TestCreateAccountRace: of concurrent creations of one number exactly one
// wins; the others are ACCOUNT_EXISTS.
func TestCreateAccountRace(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	tenant := c.tenant(t)
	wantRaceOutcomes(t, map[string]int{"": 1, errs.AccountExists: 7}, func(i int) error {
		_, _, err := c.store.CreateAccount(context.Background(), tenant, ledger.Account{Number: "6816", Name: "Abo", Type: ledger.Expense}, ledger.IdemRequest{})
		return err
	})
}

// TestCreateAccountIdempotentRace: concurrent retries with one key create
// one account; every other answer is the replay or IN_PROGRESS, never
// ACCOUNT_EXISTS.
func TestCreateAccountIdempotentRace(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	tenant := c.tenant(t)
	var mu sync.Mutex
	replays := 0
	codes := chartRace(8, func(i int) error {
		_, rec, err := c.store.CreateAccount(context.Background(), tenant, ledger.Account{Number: "6816", Name: "Abo", Type: ledger.Expense}, chartIdem("k"))
		if rec != nil {
			mu.Lock()
			replays++
			mu.Unlock()
		}
		return err
	})
	if codes[""]+codes[errs.IdempotencyKeyInProgress] != 8 || codes[""]-replays != 1 {
		t.Fatalf("outcomes %v with %d replays; want one creation, the rest replays or IN_PROGRESS", codes, replays)
	}
	_, rec, err := c.store.CreateAccount(context.Background(), tenant, ledger.Account{Number: "6816", Name: "Abo", Type: ledger.Expense}, chartIdem("k"))
	if err != nil || rec == nil || rec.Status != 201 {
		t.Fatalf("later retry: %+v %v", rec, err)
	}
	other := ledger.IdemRequest{Scope: "key:test", Key: "k", Hash: "other"}
	if _, _, err := c.store.CreateAccount(context.Background(), tenant, ledger.Account{Number: "6817", Name: "x", Type: ledger.Expense}, other); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body: %v", err)
	}
}

// TestUpdateTaxCodeSerialises: concurrent identical changes apply once;
// the others see the changed row and answer NO_CHANGES.
func TestUpdateTaxCodeSerialises(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	tenant := c.tenant(t)
	p, err := ledger.ParseTaxCodePatch([]byte(`{"is_active":false}`))
	if err != nil {
		t.Fatal(err)
	}
	wantRaceOutcomes(t, map[string]int{"": 1, errs.NoChanges: 7}, func(i int) error {
		_, _, err := c.store.UpdateTaxCode(context.Background(), tenant, "USt7", p, ledger.IdemRequest{})
		return err
	})
}

// TestChartTenantIsolation: a tenant's accounts and tax-code changes stay
// its own, and row-level security refuses another tenant's rows even to a
// query that names them.
func TestChartTenantIsolation(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	ctx := context.Background()
	a, b := c.tenant(t), c.tenant(t)
	if _, _, err := c.store.CreateAccount(ctx, a, ledger.Account{Number: "6816", Name: "A's account", Type: ledger.Expense}, ledger.IdemRequest{}); err != nil {
		t.Fatal(err)
	}
	p, _ := ledger.ParseTaxCodePatch([]byte(`{"label":"A's label"}`))
	if _, _, err := c.store.UpdateTaxCode(ctx, a, "USt19", p, ledger.IdemRequest{}); err != nil {
		t.Fatal(err)
	}
	hits, err := c.store.SearchAccounts(ctx, b, ledger.AccountSearch{Q: "6816", Limit: 10})
	if err != nil || len(hits) != 0 {
		t.Fatalf("b sees %v, %v", hits, err)
	}
	if _, err := c.store.AccountEntries(ctx, b, ledger.EntriesFilter{Number: "6816", Limit: 10}); !errs.Is(err, errs.NotFound) {
		t.Fatalf("b's entries of a's account: %v", err)
	}
	codes, err := c.store.ListTaxCodes(ctx, b, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range codes {
		if tc.Label == "A's label" {
			t.Fatal("b sees a's tax code label")
		}
	}
	// b may use the same number for its own account.
	if _, _, err := c.store.CreateAccount(ctx, b, ledger.Account{Number: "6816", Name: "B's account", Type: ledger.Expense}, ledger.IdemRequest{}); err != nil {
		t.Fatal(err)
	}
	// The second fence: scoped to b, a query for a's rows finds nothing.
	var n int
	err = db.WithTx(ctx, c.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := db.SetTenant(ctx, tx, b); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT count(*) FROM ledger.accounts WHERE tenant_id = $1", a).Scan(&n)
	})
	if err != nil || n != 0 {
		t.Fatalf("b's transaction sees %d of a's accounts (%v)", n, err)
	}
}

// TestAccountsAreNeverDeleted: the service role cannot delete an account.
func TestAccountsAreNeverDeleted(t *testing.T) {
	t.Parallel()
	c := newChartDB(t)
	ctx := context.Background()
	tenant := c.tenant(t)
	err := db.WithTx(ctx, c.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := db.SetTenant(ctx, tx, tenant); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM ledger.accounts WHERE tenant_id = $1 AND number = '6815'", tenant)
		return err
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Fatalf("DELETE as ledger_svc: %v, want insufficient_privilege", err)
	}
}

// wantRaceOutcomes runs f 8 times at once and wants the error codes
// counted in want ("" for success).
func wantRaceOutcomes(t *testing.T, want map[string]int, f func(i int) error) {
	t.Helper()
	if diff := cmp.Diff(want, chartRace(8, f)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
}

// chartRace runs f n times at once and counts the error codes ("" for success).
func chartRace(n int, f func(i int) error) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := f(i)
			code := ""
			if err != nil {
				code = errs.CodeOf(err)
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return codes
}
