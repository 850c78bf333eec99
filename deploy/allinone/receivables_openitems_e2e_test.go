package allinone_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// insertSalesInvoice writes a posted sales invoice as the schema owner,
// standing in for the finalisation: a receivable of gross posted under
// intent (a ledger intent of the tenant, so the bank can settle it; a
// new id when empty).
func insertSalesInvoice(t testing.TB, p *platform, tenant, debtor, number, date, due, gross, intent string) string {
	t.Helper()
	id := uuid.NewString()
	if intent == "" {
		intent = uuid.NewString()
	}
	_, err := p.owner.Exec(context.Background(), `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, number,
			invoice_date, due_date, lines, total_net, total_tax, total_gross, booking_intent_id, document_id, xml, pdf)
		VALUES ($1, $2, $3, 'invoice', 'posted', $4, $5, $6, '[]', round($7::numeric / 1.19, 2), $7::numeric - round($7::numeric / 1.19, 2), $7::numeric, $8, $9, '\x3c3e', '\x25')`,
		id, tenant, debtor, number, date, due, gross, intent, uuid.NewString())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// invoiceState is "status remaining" of one invoice in the list.
func invoiceState(p *platform, token, id string) string {
	p.t.Helper()
	for _, inv := range p.must(200, "GET", "/v1/outgoing-invoices?limit=500", token, nil).list("invoices") {
		if inv["id"] == id {
			return fmt.Sprintf("%s %.2f", inv["status"], inv["remaining_amount"])
		}
	}
	p.t.Fatalf("invoice %s not listed", id)
	return ""
}

// TestReceivablesPayments: reconciling a bank transaction against an
// invoice's booking intent through the bank's routes pays the invoice;
// unmatching opens it again; the views show it all, through REST and MCP.
func TestReceivablesPayments(t *testing.T) {
	s := newReconcileSetup(t, "Offene Posten GmbH")
	p, w := s.p, s.w
	rw := p.apiKey(s.admin, "debitoren:read", "debitoren:write")
	reader, outsider := p.apiKey(s.admin, "debitoren:read"), p.apiKey(s.admin, "journal:read")
	deb := p.must(201, "POST", "/v1/debtors", rw, map[string]any{"name": "Müller KG", "address": berlin()}).str("id")
	other := p.must(201, "POST", "/v1/debtors", rw, map[string]any{"name": "Anders AG", "address": berlin()}).str("id")
	inv := insertSalesInvoice(t, p, s.tenant, deb, "RE-2026-00001", "2026-03-02", "2999-12-31", "119.00", s.invoice)
	late := insertSalesInvoice(t, p, s.tenant, other, "RE-2026-00002", "2026-02-01", "2026-02-15", "50.00", uuid.NewString())

	if got := invoiceState(p, reader, inv); got != "open 119.00" {
		t.Fatalf("before payment: %s", got)
	}
	wait := func(want string) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			if got := invoiceState(p, reader, inv); got != want {
				return fmt.Errorf("invoice %s, want %s", got, want)
			}
			return nil
		})
	}
	// A part payment, undone, then the whole amount.
	p.must(200, "POST", s.reconcile("Teil A"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"})
	wait("partially_paid 100.00")
	p.must(200, "POST", s.unmatch("Teil A"), w, nil)
	wait("open 119.00")
	p.must(200, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"})
	wait("paid 0.00")
	if n := count(t, p.owner, `SELECT count(*) FROM receivables.invoice_payments WHERE tenant_id = $1 AND NOT released`, s.tenant); n != 1 {
		t.Fatalf("%d payments in force, want 1", n)
	}

	// The views: filters, the open items of the unpaid one.
	ids := func(path string) []string {
		out := []string{}
		for _, i := range p.must(200, "GET", path, reader, nil).list("invoices") {
			out = append(out, i["invoice_number"].(string)+" "+i["status"].(string))
		}
		return out
	}
	if d := cmp.Diff([]string{"RE-2026-00001 paid", "RE-2026-00002 overdue"}, ids("/v1/outgoing-invoices")); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RE-2026-00002 overdue"}, ids("/v1/outgoing-invoices?status=overdue&type=invoice")); d != "" {
		t.Errorf("overdue (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RE-2026-00001 paid"}, ids("/v1/outgoing-invoices?customer_id="+deb+"&start_date=2026-03-01&end_date=2026-03-31")); d != "" {
		t.Errorf("a customer's March (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{}, ids("/v1/outgoing-invoices?type=credit_note")); d != "" {
		t.Errorf("credit notes (-want +got):\n%s", d)
	}
	grouped := p.must(200, "GET", "/v1/outgoing-invoices/open-items", reader, nil).list("customers")
	if len(grouped) != 1 || grouped[0]["customer_id"] != other || grouped[0]["customer_name"] != "Anders AG" ||
		fmt.Sprint(grouped[0]["net_open"]) != "50" || fmt.Sprint(grouped[0]["credit_note_total"]) != "0" {
		t.Fatalf("open items by customer: %v", grouped)
	}
	items := p.must(200, "GET", "/v1/sales-invoices/open-items?period=2026-02", reader, nil).list("open_items")
	if len(items) != 1 || items[0]["invoice_id"] != late || items[0]["status"] != "overdue" || fmt.Sprint(items[0]["amount"]) != "50" {
		t.Fatalf("open items of February: %v", items)
	}
	if n := len(p.must(200, "GET", "/v1/sales-invoices/open-items?debtor_id="+deb, reader, nil).list("open_items")); n != 0 {
		t.Fatalf("the paid invoice's debtor has %d open items", n)
	}

	// Refusals: bad queries name each parameter; scopes; tenants apart.
	p.expectInvalid([]string{"customer_id", "status", "type", "start_date"}, "GET",
		"/v1/outgoing-invoices?customer_id=x&status=void&type=bill&start_date=2026-02-30", reader, nil)
	p.expectInvalid([]string{"end_date"}, "GET", "/v1/outgoing-invoices?start_date=2026-03-02&end_date=2026-03-01", reader, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/outgoing-invoices?limit=0", reader, nil)
	p.expectInvalid([]string{"offset"}, "GET", "/v1/outgoing-invoices?offset=-1", reader, nil)
	p.expectInvalid([]string{"debtor_id", "period"}, "GET", "/v1/sales-invoices/open-items?debtor_id=1&period=2026-3", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/outgoing-invoices?customer_id="+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/sales-invoices/open-items?debtor_id="+uuid.NewString(), reader, nil)
	for _, path := range []string{"/v1/outgoing-invoices", "/v1/outgoing-invoices/open-items", "/v1/sales-invoices/open-items"} {
		p.expectError(403, "FORBIDDEN", "GET", path, outsider, nil)
		p.expectError(401, "UNAUTHENTICATED", "GET", path, "", nil)
	}
	stranger, _ := p.newTenant("Fremde Offene Posten GmbH")
	if n := len(p.must(200, "GET", "/v1/outgoing-invoices", stranger, nil).list("invoices")); n != 0 {
		t.Fatalf("another tenant sees %d invoices", n)
	}
}
