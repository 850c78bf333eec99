package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// stores returns the projection on a fresh database, running as the
// service's role, and the schema owner's pool for checks behind its back.
func stores(t *testing.T) (*bank.OpenItems, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(t, postgres.Schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 4, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return bank.NewOpenItems(postgres.New(pool)), owner
}

func intentOf(tenant, id, date, desc string, first int64, lines ...ledgerv1.EventLine) bank.PostedIntent {
	return bank.PostedIntent{EventID: "ledger-" + id, Intent: ledgerv1.IntentPosted{TenantID: tenant, IntentID: id, BookingDate: date,
		Period: date[:7], Description: desc, Source: "api", FirstNumber: first, LastNumber: first + int64(len(lines)) - 1, Events: lines}}
}

func ln(debit, credit, amount, reference string) ledgerv1.EventLine {
	l := ledgerv1.EventLine{AccountDebit: debit, AccountCredit: credit, Amount: amount, Description: "Zeile"}
	if reference != "" {
		l.ExternalReference = &reference
	}
	return l
}

// summary is an item as the assertions read it.
func summary(its []bank.OpenItem) []string {
	out := []string{}
	for _, it := range its {
		r := ""
		if it.ExternalReference != nil {
			r = *it.ExternalReference
		}
		out = append(out, it.IntentID[:4]+" "+it.AccountNumber+" "+it.Party+" "+it.Direction+" "+it.BookingDate+" "+r+" "+
			it.OpenAmount.StringFixed(2)+"/"+it.OriginalAmount.StringFixed(2))
	}
	return out
}

func bookings(bs []bank.LedgerBooking) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.IntentID[:4]+" "+b.AccountNumber+" "+b.BookingDate+" "+b.Description+" "+b.Amount.StringFixed(2))
	}
	return out
}

func id(prefix string) string { return prefix + uuid.NewString()[4:] }

// TestOpenItemsStore: events projected once however often they come, in
// any order, per tenant; reversals cancel; allocations reduce what is
// open and can never exceed it; bank bookings of a bank account's linked
// account until a bank transaction explains them.
func TestOpenItemsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, owner := stores(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	inv, in, pay, rev, fee := id("aaaa"), id("bbbb"), id("cccc"), id("dddd"), id("eeee")

	outgoing := intentOf(alice, inv, "2026-03-02", "Ausgangsrechnung 42", 1, ln("1200", "4400", "100.00", "RE-42"), ln("1200", "3806", "19.00", "RE-42"))
	incoming := intentOf(alice, in, "2026-03-01", "Eingangsrechnung", 3, ln("6815", "3300", "84.03", "ER-7"), ln("1406", "3300", "15.97", "ER-7"))
	payment := intentOf(alice, pay, "2026-03-05", "Zahlungseingang", 5, ln("1800", "1200", "50.00", "RE-42"))
	feeBooking := intentOf(alice, fee, "2026-03-06", "Kontoführung", 6, ln("6855", "1800", "4.90", ""))
	if err := svc.Apply(ctx, alice, outgoing, incoming, payment, feeBooking); err != nil {
		t.Fatal(err)
	}
	want := []string{
		in[:4] + " 3300 creditor payable 2026-03-01 ER-7 100.00/100.00",
		inv[:4] + " 1200 debtor receivable 2026-03-02 RE-42 119.00/119.00",
	}
	list := func(tenant, dir string) []string {
		t.Helper()
		its, err := svc.List(ctx, tenant, dir)
		if err != nil {
			t.Fatal(err)
		}
		return summary(its)
	}
	if diff := cmp.Diff(want, list(alice, "")); diff != "" {
		t.Fatalf("open items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], list(alice, bank.Receivable)); diff != "" {
		t.Fatalf("receivables (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:1], list(alice, bank.Payable)); diff != "" {
		t.Fatalf("payables (-want +got):\n%s", diff)
	}
	if _, err := svc.List(ctx, alice, "both"); !errs.Is(err, errs.InvalidInput) {
		t.Fatalf("direction both: %v", err)
	}
	if got := list(bob, ""); len(got) != 0 {
		t.Fatalf("another tenant sees %v", got)
	}

	// Redelivered events change nothing, even in a batch of their own
	// with different content: the inbox has their ids.
	again := outgoing
	again.Intent.Events = []ledgerv1.EventLine{ln("1200", "4400", "999.00", "")}
	if err := svc.Apply(ctx, alice, again, incoming); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, list(alice, "")); diff != "" {
		t.Fatalf("after redelivery (-want +got):\n%s", diff)
	}

	// Bank bookings: the bank account links 1800; the payment and the fee
	// are there, signed as the bank sees them.
	giro := uuid.NewString()
	if _, err := owner.Exec(ctx, `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number) VALUES ($1, $2, 'Giro', 'DE89370400440532013000', '1800')`, giro, alice); err != nil {
		t.Fatal(err)
	}
	bbs, err := svc.BankBookings(ctx, alice, giro)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{pay[:4] + " 1800 2026-03-05 Zahlungseingang 50.00", fee[:4] + " 1800 2026-03-06 Kontoführung -4.90"}, bookings(bbs)); diff != "" {
		t.Fatalf("bank bookings (-want +got):\n%s", diff)
	}
	for _, acc := range []string{uuid.NewString(), "nope"} {
		if _, err := svc.BankBookings(ctx, alice, acc); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown bank account %s: %v", acc, err)
		}
	}
	if _, err := svc.BankBookings(ctx, bob, giro); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another tenant's bank account: %v", err)
	}
	// One explained by a bank transaction is no candidate any more.
	if _, err := owner.Exec(ctx, `UPDATE bank.ledger_bookings SET explained_by = $1 WHERE intent_id = $2`, uuid.NewString(), fee); err != nil {
		t.Fatal(err)
	}
	if bbs, err = svc.BankBookings(ctx, alice, giro); err != nil || len(bbs) != 1 || bbs[0].IntentID != pay {
		t.Fatalf("after explaining the fee: %v %v", bookings(bbs), err)
	}

	// Reconciliation allocates: open_amount follows allocated_amount, an
	// item fully allocated is open no more, and more than the original is
	// refused by the table itself.
	if _, err := owner.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = allocated_amount + 19.01 WHERE intent_id = $1`, inv); err != nil {
		t.Fatal(err)
	}
	want[1] = inv[:4] + " 1200 debtor receivable 2026-03-02 RE-42 99.99/119.00"
	if diff := cmp.Diff(want, list(alice, "")); diff != "" {
		t.Fatalf("after an allocation (-want +got):\n%s", diff)
	}
	if _, err := owner.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = allocated_amount + 100.00 WHERE intent_id = $1`, inv); err == nil {
		t.Fatal("allocated more than the original amount")
	}
	if _, err := owner.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = 100.00 WHERE intent_id = $1`, in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[1:], list(alice, "")); diff != "" {
		t.Fatalf("after settling the payable (-want +got):\n%s", diff)
	}

	// A reversal cancels its original's item and booking, even when it is
	// projected first; the reversal itself opens nothing.
	late := id("ffff")
	reversal := intentOf(alice, rev, "2026-03-10", "Storno: Rechnung 43", 20, ln("4400", "1200", "10.00", "RE-43"))
	reversal.Intent.Reverses, reversal.Intent.Source = late, "reversal"
	if err := svc.Apply(ctx, alice, reversal); err != nil {
		t.Fatal(err)
	}
	if err := svc.Apply(ctx, alice, intentOf(alice, late, "2026-03-09", "Rechnung 43", 19, ln("1200", "4400", "10.00", "RE-43"))); err != nil {
		t.Fatal(err)
	}
	revPay := intentOf(alice, id("9999"), "2026-03-11", "Storno: Zahlungseingang", 21, ln("1200", "1800", "50.00", "RE-42"))
	revPay.Intent.Reverses = pay
	revInv := intentOf(alice, id("8888"), "2026-03-11", "Storno: Ausgangsrechnung 42", 22, ln("4400", "1200", "100.00", "RE-42"), ln("3806", "1200", "19.00", "RE-42"))
	revInv.Intent.Reverses = inv
	if err := svc.Apply(ctx, alice, revPay, revInv); err != nil {
		t.Fatal(err)
	}
	if got := list(alice, ""); len(got) != 0 {
		t.Fatalf("after the reversals: %v", got)
	}
	if bbs, err = svc.BankBookings(ctx, alice, giro); err != nil || len(bbs) != 0 {
		t.Fatalf("bank bookings after the reversal: %v %v", bookings(bbs), err)
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND reversed_by IS NOT NULL`, alice); n != 2 {
		t.Fatalf("%d reversed items, want 2 (kept for the record)", n)
	}

	// An account linked to a bank account settles like a bank from then on.
	card := uuid.NewString()
	if _, err := owner.Exec(ctx, `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number) VALUES ($1, $2, 'Karte', 'DE02120300000000202051', '1360')`, card, alice); err != nil {
		t.Fatal(err)
	}
	charge := id("7777")
	if err := svc.Apply(ctx, alice, intentOf(alice, charge, "2026-03-12", "Kartenzahlung", 30, ln("3300", "1360", "12.34", "ER-8"))); err != nil {
		t.Fatal(err)
	}
	if bbs, err = svc.BankBookings(ctx, alice, card); err != nil || len(bbs) != 1 || !bbs[0].Amount.Equal(money.MustParse("-12.34").Decimal) {
		t.Fatalf("card bookings: %v %v", bookings(bbs), err)
	}
	if got := list(alice, ""); len(got) != 0 {
		t.Fatalf("a payment by card opened %v", got)
	}
}

// TestOpenItemsApplyRefuses: events the projection cannot take are
// refused before anything is written.
func TestOpenItemsApplyRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, owner := stores(t)
	alice := uuid.NewString()
	good := intentOf(alice, uuid.NewString(), "2026-03-02", "Rechnung", 1, ln("1200", "4400", "10.00", ""))
	bad := intentOf(alice, uuid.NewString(), "2026-03-02", "Rechnung", 2, ln("1200", "4400", "ten", ""))
	other := intentOf(uuid.NewString(), uuid.NewString(), "2026-03-02", "Rechnung", 1, ln("1200", "4400", "10.00", ""))
	noID := good
	noID.EventID = ""
	for name, evs := range map[string][]bank.PostedIntent{"bad amount": {good, bad}, "other tenant": {good, other}, "no event id": {noID}} {
		if err := svc.Apply(ctx, alice, evs...); err == nil || !isMalformed(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM bank.open_items`); n != 0 {
		t.Fatalf("%d items written", n)
	}
}

func isMalformed(err error) bool { return errors.Is(err, bank.ErrMalformedEvent) }
