package postgres_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/postgres"
)

// salesInvoice is a row of sales_invoices a test writes behind the
// store's back, standing in for the finalisation the views read.
type salesInvoice struct {
	id, debtor, typ, state, number string
	date, due                      string
	gross, paid, credited          string
	corrects                       string
	intent                         string
}

// insertInvoice writes inv as the schema owner and returns its id (and
// booking intent, for a posted one).
func insertInvoice(t *testing.T, owner *pgxpool.Pool, tenant string, inv salesInvoice) salesInvoice {
	t.Helper()
	if inv.id == "" {
		inv.id = uuid.NewString()
	}
	if inv.typ == "" {
		inv.typ = "invoice"
	}
	if inv.state == "" {
		inv.state = "posted"
	}
	if inv.paid == "" {
		inv.paid = "0"
	}
	if inv.credited == "" {
		inv.credited = "0"
	}
	var number, intent, doc, corrects any
	if inv.state != "draft" {
		number = inv.number
	}
	if inv.state == "posted" {
		if inv.intent == "" {
			inv.intent = uuid.NewString()
		}
		intent, doc = inv.intent, uuid.NewString()
	}
	if inv.corrects != "" {
		corrects = inv.corrects
	}
	_, err := owner.Exec(context.Background(), `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, number,
			invoice_date, due_date, lines, total_net, total_tax, total_gross, paid_amount, credited_amount, corrects_id,
			booking_intent_id, document_id, xml, pdf)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '[]', $9::numeric, 0, $9::numeric, $10::numeric, $11::numeric, $12, $13, $14,
			CASE WHEN $13::uuid IS NULL THEN NULL ELSE '\x3c3e'::bytea END, CASE WHEN $13::uuid IS NULL THEN NULL ELSE '\x25'::bytea END)`,
		inv.id, tenant, inv.debtor, inv.typ, inv.state, number, inv.date, inv.due, inv.gross, inv.paid, inv.credited, corrects, intent, doc)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func createDebtor(t *testing.T, s *postgres.Store, tenant, name string) string {
	t.Helper()
	d, err := s.CreateDebtor(context.Background(), tenant, debtor(name, ""))
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestApplyPayments: reconciliations raise the paid amount of the
// invoices whose booking intents they settle, exactly and once per event;
// an undone one lowers it again, even when its release comes first; other
// intents and tenants are untouched.
func TestApplyPayments(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	deb, otherDeb := createDebtor(t, s, tenant, "Kunde"), createDebtor(t, s, other, "Fremd")
	a := insertInvoice(t, owner, tenant, salesInvoice{debtor: deb, number: "RE-2026-00001", date: "2026-03-01", due: "2026-03-15", gross: "119.00"})
	b := insertInvoice(t, owner, tenant, salesInvoice{debtor: deb, number: "RE-2026-00002", date: "2026-03-02", due: "2026-03-16", gross: "0.30"})
	foreign := insertInvoice(t, owner, other, salesInvoice{debtor: otherDeb, number: "RE-2026-00001", date: "2026-03-01", due: "2026-03-15", gross: "50.00"})
	paid := func(tenant string, inv salesInvoice) string {
		t.Helper()
		var p string
		if err := owner.QueryRow(ctx, `SELECT paid_amount::text FROM receivables.sales_invoices WHERE tenant_id = $1 AND id = $2`, tenant, inv.id).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	apply := func(tenant string, evs ...receivables.PaymentEvent) {
		t.Helper()
		if err := s.ApplyPayments(ctx, tenant, evs); err != nil {
			t.Fatal(err)
		}
	}
	alloc := func(intent, amount string) receivables.PaymentAllocation {
		return receivables.PaymentAllocation{IntentID: intent, Amount: dec(amount), Currency: "EUR"}
	}
	r1, r2, r3, r4 := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()

	// A part payment of a and 0.10 of b, and an intent that is no
	// invoice's (ignored); then the rest of b. 0.1 + 0.2 is exactly 0.30.
	apply(tenant,
		receivables.PaymentEvent{EventID: "e1", ReconciliationID: r1, PaidOn: "2026-03-10", Allocations: []receivables.PaymentAllocation{
			alloc(a.intent, "100.00"), alloc(b.intent, "0.10"), alloc(uuid.NewString(), "5.00")}},
		receivables.PaymentEvent{EventID: "e2", ReconciliationID: r2, PaidOn: "2026-03-11", Allocations: []receivables.PaymentAllocation{alloc(b.intent, "0.20")}})
	// Redelivered: nothing changes. Another tenant's event names a's
	// intent: not its invoice.
	apply(tenant, receivables.PaymentEvent{EventID: "e1", ReconciliationID: r1, PaidOn: "2026-03-10", Allocations: []receivables.PaymentAllocation{alloc(a.intent, "100.00")}})
	apply(other, receivables.PaymentEvent{EventID: "o1", ReconciliationID: uuid.NewString(), PaidOn: "2026-03-10",
		Allocations: []receivables.PaymentAllocation{alloc(a.intent, "1.00"), alloc(foreign.intent, "50.00")}})
	got := []string{paid(tenant, a), paid(tenant, b), paid(other, foreign)}
	if d := cmp.Diff([]string{"100.00", "0.30", "50.00"}, got); d != "" {
		t.Fatalf("paid amounts (-want +got):\n%s", d)
	}

	// r1 undone: a and b lose its part. A release seen before its
	// reconciliation (r3) leaves nothing paid when the reconciliation
	// follows; a reconciliation in another currency is no payment.
	apply(tenant, receivables.PaymentEvent{EventID: "e3", ReconciliationID: r1, Release: true, PaidOn: "2026-03-10",
		Allocations: []receivables.PaymentAllocation{alloc(a.intent, "100.00"), alloc(b.intent, "0.10")}})
	apply(tenant, receivables.PaymentEvent{EventID: "e4", ReconciliationID: r3, Release: true, PaidOn: "2026-03-12", Allocations: []receivables.PaymentAllocation{alloc(a.intent, "19.00")}},
		receivables.PaymentEvent{EventID: "e5", ReconciliationID: r3, PaidOn: "2026-03-12", Allocations: []receivables.PaymentAllocation{alloc(a.intent, "19.00")}},
		receivables.PaymentEvent{EventID: "e6", ReconciliationID: r4, PaidOn: "2026-03-12", Allocations: []receivables.PaymentAllocation{
			{IntentID: a.intent, Amount: dec("7.00"), Currency: "USD"}}})
	got = []string{paid(tenant, a), paid(tenant, b)}
	if d := cmp.Diff([]string{"0.00", "0.20"}, got); d != "" {
		t.Fatalf("paid amounts after the releases (-want +got):\n%s", d)
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM receivables.invoice_payments WHERE released`); n != 3 {
		t.Fatalf("%d released payments, want 3 (a and b of r1, a of r3)", n)
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM receivables.processed_events WHERE consumer = 'receivables-payments'`); n != 7 {
		t.Fatalf("%d events in the inbox, want 7", n)
	}
}
