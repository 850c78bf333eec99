package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/receivables/postgres"
)

// servicePool is a pool running as the service's role on a fresh database,
// for transactions the test opens itself, as invoice creation will.
func servicePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(t, postgres.Schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 12, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

var errRollback = errors.New("the invoice failed")

// TestInvoiceNumbersConcurrent: 50 transactions allocate at once, every
// fifth rolls back after taking its number; the committed ones hold
// RE-2025-00001 … RE-2025-00040 exactly, no gap and no number twice, and
// the next allocation goes on from there.
func TestInvoiceNumbersConcurrent(t *testing.T) {
	pool := servicePool(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	const n = 50
	var (
		mu        sync.Mutex
		committed []string
		wg        sync.WaitGroup
		start     = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			var number string
			err := db.InTenant(ctx, pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
				var err error
				if number, err = postgres.AllocateInvoiceNumber(ctx, tx, tenant, 2025); err != nil {
					return err
				}
				if i%5 == 4 {
					return errRollback
				}
				return nil
			})
			switch {
			case errors.Is(err, errRollback):
			case err != nil:
				t.Error(err)
			default:
				mu.Lock()
				committed = append(committed, number)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	slices.Sort(committed)
	var want []string
	for i := 1; i <= n-n/5; i++ {
		want = append(want, fmt.Sprintf("RE-2025-%05d", i))
	}
	if diff := cmp.Diff(want, committed); diff != "" {
		t.Fatalf("committed numbers (-want +got):\n%s", diff)
	}
	if got := allocate(t, pool, tenant, 2025); got != "RE-2025-00041" {
		t.Fatalf("next number %s, want RE-2025-00041", got)
	}
}

// TestInvoiceNumbersPerTenantAndYear: each tenant and year counts from 1;
// the tenant's prefix applies from the next number on and the sequence
// goes on.
func TestInvoiceNumbersPerTenantAndYear(t *testing.T) {
	pool := servicePool(t)
	s := postgres.New(pool)
	ctx := context.Background()
	alice, bob := uuid.NewString(), uuid.NewString()
	if p, err := s.InvoiceNumberPrefix(ctx, alice); err != nil || p != "RE-" {
		t.Fatalf("default prefix %q, %v", p, err)
	}
	got := []string{allocate(t, pool, alice, 2025), allocate(t, pool, alice, 2025), allocate(t, pool, alice, 2026), allocate(t, pool, bob, 2025)}
	if err := s.SetInvoiceNumberPrefix(ctx, alice, "AR/"); err != nil {
		t.Fatal(err)
	}
	got = append(got, allocate(t, pool, alice, 2025), allocate(t, pool, bob, 2025))
	if err := s.SetInvoiceNumberPrefix(ctx, bob, ""); err != nil {
		t.Fatal(err)
	}
	got = append(got, allocate(t, pool, bob, 2025))
	want := []string{"RE-2025-00001", "RE-2025-00002", "RE-2026-00001", "RE-2025-00001", "AR/2025-00003", "RE-2025-00002", "2025-00003"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("numbers (-want +got):\n%s", diff)
	}
	if err := s.SetInvoiceNumberPrefix(ctx, alice, "VIEL-ZU-LANG-"); err == nil {
		t.Fatal("an over-long prefix was stored")
	}
}

func allocate(t *testing.T, pool *pgxpool.Pool, tenant string, year int) string {
	t.Helper()
	var number string
	err := db.InTenant(context.Background(), pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		number, err = postgres.AllocateInvoiceNumber(context.Background(), tx, tenant, year)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return number
}
