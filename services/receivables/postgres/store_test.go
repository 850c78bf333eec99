package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/postgres"
)

// store returns the store on a fresh database, running as the service's
// role, and the schema owner's pool for checks behind its back.
func store(t *testing.T) (*postgres.Store, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(t, postgres.Schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 8, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return postgres.New(pool), owner
}

func debtor(name, number string) receivables.Debtor {
	return receivables.Debtor{ID: uuid.NewString(), CustomerNumber: number, Name: name,
		Address:      receivablesv1.Address{Street: "Hauptstr. 1", Zip: "10115", City: "Berlin", Country: "DE"},
		PaymentTerms: receivablesv1.PaymentTerms{Days: 14, CashDiscountRate: money.Zero}, ReceivableAccount: "1200", IsActive: true}
}

func names(ds []receivables.Debtor) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.CustomerNumber+" "+d.Name)
	}
	return out
}

func TestDebtors(t *testing.T) {
	s, _ := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	create := func(tenant string, d receivables.Debtor) receivables.Debtor {
		t.Helper()
		got, err := s.CreateDebtor(ctx, tenant, d)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	// Numbers are assigned K-10001, K-10002, … per tenant; a number given
	// by a client that the counter reaches later is skipped.
	a := create(tenant, debtor("Zeta AG", ""))
	b := create(tenant, debtor("alpha GmbH", ""))
	create(tenant, debtor("Given", "K-10004"))
	vat := debtor("Beta KG", "")
	vat.VATID = ptr("ATU12345678")
	create(tenant, vat)
	create(tenant, debtor("Gamma", ""))
	create(other, debtor("Fremd GmbH", ""))
	all, err := s.Debtors(ctx, tenant, receivablesv1.DebtorFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"K-10002 alpha GmbH", "K-10003 Beta KG", "K-10005 Gamma", "K-10004 Given", "K-10001 Zeta AG"}, names(all)); diff != "" {
		t.Fatalf("debtors by name (-want +got):\n%s", diff)
	}

	// A customer number once per tenant, in any case; another tenant may
	// have it.
	_, err = s.CreateDebtor(ctx, tenant, debtor("Doppelt", "k-10001"))
	if e := errs.As(err); e == nil || e.Code != errs.DuplicateCustomerNumber || e.Details[0].Field != "customer_number" {
		t.Fatalf("duplicate number: %v", err)
	}
	create(other, debtor("Fremd 2", "K-10001x"))

	// Search is case-blind over name, number and VAT ID, LIKE characters
	// taken literally; is_active, limit and offset filter.
	for _, tc := range []struct {
		f    receivablesv1.DebtorFilter
		want []string
	}{
		{receivablesv1.DebtorFilter{Search: "ALPHA"}, []string{"K-10002 alpha GmbH"}},
		{receivablesv1.DebtorFilter{Search: "k-1000"}, []string{"K-10002 alpha GmbH", "K-10003 Beta KG", "K-10005 Gamma", "K-10004 Given", "K-10001 Zeta AG"}},
		{receivablesv1.DebtorFilter{Search: "atu123"}, []string{"K-10003 Beta KG"}},
		{receivablesv1.DebtorFilter{Search: "%"}, []string{}},
		{receivablesv1.DebtorFilter{Search: "_"}, []string{}},
		{receivablesv1.DebtorFilter{Limit: 2, Offset: 1}, []string{"K-10003 Beta KG", "K-10005 Gamma"}},
	} {
		if tc.f.Limit == 0 {
			tc.f.Limit = 100
		}
		got, err := s.Debtors(ctx, tenant, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, names(got)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.f, diff)
		}
	}

	// Changing: the row as it is comes to the change, the result is stored.
	changed, err := s.UpdateDebtor(ctx, tenant, a.ID, func(d receivables.Debtor) (receivables.Debtor, error) {
		if d.Name != "Zeta AG" {
			t.Errorf("change saw %q", d.Name)
		}
		d.IsActive, d.PaymentTerms.CashDiscountRate, d.PaymentTerms.CashDiscountDays = false, money.MustParse("2.5"), 7
		return d, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if changed.IsActive || changed.PaymentTerms.CashDiscountRate.String() != "2.5" || !changed.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("changed: %+v", changed)
	}
	got, err := s.Debtor(ctx, tenant, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(changed, got); diff != "" {
		t.Fatalf("read back (-changed +read):\n%s", diff)
	}
	active, _ := s.Debtors(ctx, tenant, receivablesv1.DebtorFilter{IsActive: ptr(false), Limit: 100})
	if diff := cmp.Diff([]string{"K-10001 Zeta AG"}, names(active)); diff != "" {
		t.Errorf("inactive (-want +got):\n%s", diff)
	}
	_, err = s.UpdateDebtor(ctx, tenant, b.ID, func(d receivables.Debtor) (receivables.Debtor, error) {
		d.CustomerNumber = "K-10001"
		return d, nil
	})
	if !errs.Is(err, errs.DuplicateCustomerNumber) {
		t.Fatalf("renumbered onto another: %v", err)
	}
	refused := errs.E(errs.NoChanges, "nothing")
	if _, err := s.UpdateDebtor(ctx, tenant, b.ID, func(receivables.Debtor) (receivables.Debtor, error) { return receivables.Debtor{}, refused }); err == nil || !errs.Is(err, errs.NoChanges) {
		t.Fatalf("refused change: %v", err)
	}

	// Another tenant's debtor is not there.
	if _, err := s.Debtor(ctx, other, a.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("other tenant read: %v", err)
	}
	if _, err := s.UpdateDebtor(ctx, other, a.ID, func(d receivables.Debtor) (receivables.Debtor, error) { return d, nil }); !errs.Is(err, errs.NotFound) {
		t.Fatalf("other tenant change: %v", err)
	}
}

// TestCustomerNumbersGapless: concurrent creations each get a number, none
// twice and none skipped, and a creation that fails gives its number back.
func TestCustomerNumbersGapless(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	if _, err := s.CreateDebtor(ctx, tenant, debtor("Erster", "")); err != nil {
		t.Fatal(err)
	}
	// The second fails after taking K-10002 (a check constraint refuses
	// the row), so K-10002 is the next one's.
	bad := debtor("Kaputt", "")
	bad.Address.Country = "de"
	if _, err := s.CreateDebtor(ctx, tenant, bad); err == nil {
		t.Fatal("a row breaking a check constraint was stored")
	}
	const n = 30
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := s.CreateDebtor(ctx, tenant, debtor(fmt.Sprintf("Kunde %02d", i), ""))
			errc <- err
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	rows, err := owner.Query(ctx, `SELECT customer_number FROM receivables.debtors WHERE tenant_id = $1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	slices.Sort(got)
	var want []string
	for i := range n + 1 {
		want = append(want, fmt.Sprintf("K-%d", 10001+i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("numbers (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCustomerNumbersGivenAndAssigned: numbers a client gives, created
// concurrently with assigned ones, never make an assignment fail; a given
// number the counter took first is DUPLICATE_CUSTOMER_NUMBER, and the
// numbers stored run from K-10001 without a gap.
func TestCustomerNumbersGivenAndAssigned(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	const assigned = 20
	given := []string{"K-10005", "K-10010", "K-10015"}
	var wg sync.WaitGroup
	errc := make(chan error, assigned+len(given))
	for i := range assigned {
		wg.Go(func() {
			if _, err := s.CreateDebtor(ctx, tenant, debtor(fmt.Sprintf("Kunde %02d", i), "")); err != nil {
				errc <- fmt.Errorf("assigned: %w", err)
			}
		})
	}
	for _, n := range given {
		wg.Go(func() {
			if _, err := s.CreateDebtor(ctx, tenant, debtor("Vorgabe "+n, n)); err != nil && !errs.Is(err, errs.DuplicateCustomerNumber) {
				errc <- fmt.Errorf("given %s: %w", n, err)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	var got []int
	rows, err := owner.Query(ctx, `SELECT substr(customer_number, 3)::int FROM receivables.debtors WHERE tenant_id = $1 ORDER BY 1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if len(got) < assigned {
		t.Fatalf("%d debtors, want at least %d", len(got), assigned)
	}
	for i, n := range got {
		if n != 10001+i {
			t.Fatalf("numbers %v have a gap or a repeat at %d", got, i)
		}
	}
}
