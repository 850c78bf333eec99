package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// store returns the store on a fresh database, running as the service's
// role, and the schema owner's pool for rows the flows of later issues
// write (incoming invoices).
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

func ptr[T any](v T) *T { return &v }

func vendor(name string) payables.Vendor {
	return payables.Vendor{ID: uuid.NewString(), Name: name, IsActive: true}
}

func names(vs []payables.Vendor) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// code is the error's code and the field it names, "" for no error.
func code(err error) string {
	if err == nil {
		return ""
	}
	e := errs.As(err)
	if e == nil {
		return err.Error()
	}
	if len(e.Details) > 0 {
		return e.Code + " " + e.Details[0].Field
	}
	return e.Code
}

func TestVendors(t *testing.T) {
	s, _ := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	create := func(tenant string, v payables.Vendor) payables.Vendor {
		t.Helper()
		got, err := s.CreateVendor(ctx, tenant, v)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	full := vendor("Müller GmbH")
	full.TaxID, full.VATID, full.IBAN, full.BIC = ptr("143/123/45678"), ptr("DE123456789"), ptr("DE89370400440532013000"), ptr("COBADEFFXXX")
	full.Address = &payablesv1.Address{Street: "Hafenstr. 5", Zip: "20457", City: "Hamburg", Country: "DE"}
	full.DefaultAccount, full.Notes = ptr("5400"), ptr("Skonto 2 %")
	m := create(tenant, full)
	if m.OpenAmount.String() != "0" || m.CreatedAt.IsZero() || m.ID != full.ID {
		t.Fatalf("created: %+v", m)
	}
	read, err := s.Vendor(ctx, tenant, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, read); diff != "" {
		t.Fatalf("read back (-created +read):\n%s", diff)
	}
	zeta := create(tenant, vendor("zeta AG"))
	at := vendor("Alpen Holz KG")
	at.VATID = ptr("ATU12345678")
	create(tenant, at)
	create(tenant, vendor("Beta & Co."))
	create(other, vendor("Fremd GmbH"))

	// Duplicates: the name without case, umlaut spelling, punctuation and
	// legal form, the tax number by its digits, the VAT ID; another tenant
	// may have them all.
	for _, tc := range []struct {
		v    func(v *payables.Vendor)
		want string
	}{
		{func(v *payables.Vendor) { v.Name = "MUELLER GMBH" }, "DUPLICATE_NAME name"},
		{func(v *payables.Vendor) { v.Name = "Müller" }, "DUPLICATE_NAME name"},
		{func(v *payables.Vendor) { v.Name = "müller gmbh & co. kg" }, "DUPLICATE_NAME name"},
		{func(v *payables.Vendor) { v.Name = "Zeta" }, "DUPLICATE_NAME name"},
		{func(v *payables.Vendor) { v.TaxID = ptr("143/123/45678") }, "DUPLICATE_TAX_ID tax_id"},
		{func(v *payables.Vendor) { v.TaxID = ptr("14312345678") }, "DUPLICATE_TAX_ID tax_id"},
		{func(v *payables.Vendor) { v.VATID = ptr("DE123456789") }, "DUPLICATE_VAT_ID vat_id"},
	} {
		v := vendor("Neu")
		tc.v(&v)
		if diff := cmp.Diff(tc.want, code(func() error { _, err := s.CreateVendor(ctx, tenant, v); return err }())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", v, diff)
		}
	}
	same := vendor("MUELLER GMBH")
	same.TaxID, same.VATID = ptr("14312345678"), ptr("DE123456789")
	create(other, same)

	// Listing by name; search is case-blind over name and VAT ID, LIKE
	// characters taken literally; is_active, limit and offset filter.
	all := []string{"Alpen Holz KG", "Beta & Co.", "Müller GmbH", "zeta AG"}
	for _, tc := range []struct {
		f    payablesv1.VendorFilter
		want []string
	}{
		{payablesv1.VendorFilter{}, all},
		{payablesv1.VendorFilter{Search: "MÜLLER"}, []string{"Müller GmbH"}},
		{payablesv1.VendorFilter{Search: "atu123"}, []string{"Alpen Holz KG"}},
		{payablesv1.VendorFilter{Search: "de 123 456"}, []string{"Müller GmbH"}},
		{payablesv1.VendorFilter{Search: "&"}, []string{"Beta & Co."}},
		{payablesv1.VendorFilter{Search: "%"}, []string{}},
		{payablesv1.VendorFilter{Search: "_"}, []string{}},
		{payablesv1.VendorFilter{Search: "143"}, []string{}}, // the tax number is not searched
		{payablesv1.VendorFilter{IsActive: ptr(false)}, []string{}},
		{payablesv1.VendorFilter{IsActive: ptr(true)}, all},
		{payablesv1.VendorFilter{Limit: 2, Offset: 1}, []string{"Beta & Co.", "Müller GmbH"}},
		{payablesv1.VendorFilter{Offset: 4}, []string{}},
	} {
		if tc.f.Limit == 0 {
			tc.f.Limit = 50
		}
		got, err := s.Vendors(ctx, tenant, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, names(got)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.f, diff)
		}
	}

	// Changing: the row as it is comes to the change, the result is
	// stored; a vendor may take another spelling of its own name.
	changed, err := s.UpdateVendor(ctx, tenant, m.ID, func(v payables.Vendor) (payables.Vendor, error) {
		if v.Name != "Müller GmbH" {
			t.Errorf("change saw %q", v.Name)
		}
		v.Name, v.IsActive, v.Address, v.Notes = "MUELLER GMBH", false, nil, nil
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if changed.IsActive || changed.Name != "MUELLER GMBH" || changed.Address != nil || changed.Notes != nil || !changed.UpdatedAt.After(m.UpdatedAt) {
		t.Fatalf("changed: %+v", changed)
	}
	if read, err = s.Vendor(ctx, tenant, m.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(changed, read); diff != "" {
		t.Fatalf("read back (-changed +read):\n%s", diff)
	}
	inactive, _ := s.Vendors(ctx, tenant, payablesv1.VendorFilter{IsActive: ptr(false), Limit: 50})
	if diff := cmp.Diff([]string{"MUELLER GMBH"}, names(inactive)); diff != "" {
		t.Errorf("inactive (-want +got):\n%s", diff)
	}
	// A change onto another vendor's name, tax number or VAT ID is refused.
	for _, tc := range []struct {
		change func(v *payables.Vendor)
		want   string
	}{
		{func(v *payables.Vendor) { v.Name = "Müller e.K." }, "DUPLICATE_NAME name"},
		{func(v *payables.Vendor) { v.TaxID = ptr("143/123/45678") }, "DUPLICATE_TAX_ID tax_id"},
		{func(v *payables.Vendor) { v.VATID = ptr("DE123456789") }, "DUPLICATE_VAT_ID vat_id"},
	} {
		_, err := s.UpdateVendor(ctx, tenant, zeta.ID, func(v payables.Vendor) (payables.Vendor, error) { tc.change(&v); return v, nil })
		if diff := cmp.Diff(tc.want, code(err)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	refused := errs.E(errs.NoChanges, "nothing")
	if _, err := s.UpdateVendor(ctx, tenant, zeta.ID, func(payables.Vendor) (payables.Vendor, error) { return payables.Vendor{}, refused }); !errs.Is(err, errs.NoChanges) {
		t.Fatalf("refused change: %v", err)
	}

	// Another tenant's vendor is not there; an unknown id neither.
	if _, err := s.Vendor(ctx, other, m.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("other tenant read: %v", err)
	}
	if _, err := s.UpdateVendor(ctx, other, m.ID, func(v payables.Vendor) (payables.Vendor, error) { return v, nil }); !errs.Is(err, errs.NotFound) {
		t.Fatalf("other tenant change: %v", err)
	}
	if _, err := s.Vendor(ctx, tenant, uuid.NewString()); !errs.Is(err, errs.NotFound) {
		t.Fatalf("unknown read: %v", err)
	}
}

// TestOpenAmount: a vendor's open amount is what is still open of its
// posted invoices: drafts, pending and void invoices, paid and overpaid
// ones, and other vendors' and tenants' invoices do not count.
func TestOpenAmount(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	a, err := s.CreateVendor(ctx, tenant, vendor("Lieferant A"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateVendor(ctx, tenant, vendor("Lieferant B"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.CreateVendor(ctx, other, vendor("Lieferant A"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	invoice := func(tenant, vendorID, state, net, tax, gross, paid string) {
		t.Helper()
		n++
		var intent *string
		if state == "posted" {
			intent = ptr(uuid.NewString())
		}
		_, err := owner.Exec(ctx, `INSERT INTO payables.incoming_invoices (id, tenant_id, vendor_id, invoice_number, invoice_date, due_date,
				total_net, total_tax, total_gross, paid_amount, booking_intent_id, state)
			VALUES ($1, $2, $3, $4, '2025-03-01', '2025-03-31', $5, $6, $7, $8, $9, $10)`,
			uuid.NewString(), tenant, vendorID, fmt.Sprintf("ER-%d", n), net, tax, gross, paid, intent, state)
		if err != nil {
			t.Fatal(err)
		}
	}
	invoice(tenant, a.ID, "posted", "100.00", "19.00", "119.00", "0")
	invoice(tenant, a.ID, "posted", "200.00", "38.00", "238.00", "100.00")
	invoice(tenant, a.ID, "posted", "0.07", "0.01", "0.08", "0.05")
	invoice(tenant, a.ID, "posted", "50.00", "0.00", "50.00", "50.00")  // paid
	invoice(tenant, a.ID, "posted", "10.00", "0.00", "10.00", "20.00")  // overpaid: nothing open, not less
	invoice(tenant, a.ID, "draft", "1000.00", "190.00", "1190.00", "0") // not posted
	invoice(tenant, a.ID, "pending", "5.00", "0.00", "5.00", "0")
	invoice(tenant, a.ID, "void", "500.00", "95.00", "595.00", "0")
	invoice(tenant, b.ID, "posted", "0.10", "0.02", "0.12", "0")
	invoice(other, o.ID, "posted", "77.00", "0.00", "77.00", "0")

	got, err := s.Vendor(ctx, tenant, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.OpenAmount.String() != "257.03" {
		t.Errorf("open amount of A: %s, want 257.03", got.OpenAmount)
	}
	list, err := s.Vendors(ctx, tenant, payablesv1.VendorFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var amounts []string
	for _, v := range list {
		amounts = append(amounts, v.Name+" "+v.OpenAmount.String())
	}
	if diff := cmp.Diff([]string{"Lieferant A 257.03", "Lieferant B 0.12"}, amounts); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	changed, err := s.UpdateVendor(ctx, tenant, a.ID, func(v payables.Vendor) (payables.Vendor, error) { v.IsActive = false; return v, nil })
	if err != nil {
		t.Fatal(err)
	}
	if changed.OpenAmount.String() != "257.03" {
		t.Errorf("open amount after a change: %s", changed.OpenAmount)
	}
	if got, _ := s.Vendor(ctx, other, o.ID); got.OpenAmount.String() != "77" {
		t.Errorf("other tenant's open amount: %s", got.OpenAmount)
	}
}

// TestConcurrentDuplicates: spellings of one name created at once: the
// unique index lets exactly one through and answers the others
// DUPLICATE_NAME; likewise one tax number and one VAT ID.
func TestConcurrentDuplicates(t *testing.T) {
	s, _ := store(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		make  func(i int) payables.Vendor
		field string
	}{
		{"name", func(i int) payables.Vendor {
			return vendor([]string{"Müller GmbH", "MUELLER GMBH", "müller", "Müller & Co. KG"}[i%4])
		}, "DUPLICATE_NAME name"},
		{"tax id", func(i int) payables.Vendor {
			v := vendor(fmt.Sprintf("Steuer %d", i))
			v.TaxID = ptr([]string{"143/123/45678", "14312345678"}[i%2])
			return v
		}, "DUPLICATE_TAX_ID tax_id"},
		{"vat id", func(i int) payables.Vendor {
			v := vendor(fmt.Sprintf("UStId %d", i))
			v.VATID = ptr("DE123456789")
			return v
		}, "DUPLICATE_VAT_ID vat_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tenant := uuid.NewString()
			const n = 12
			var wg sync.WaitGroup
			codes := make(chan string, n)
			for i := range n {
				wg.Go(func() {
					_, err := s.CreateVendor(ctx, tenant, tc.make(i))
					codes <- code(err)
				})
			}
			wg.Wait()
			close(codes)
			count := map[string]int{}
			for c := range codes {
				count[c]++
			}
			if diff := cmp.Diff(map[string]int{"": 1, tc.field: n - 1}, count); diff != "" {
				t.Fatalf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}
