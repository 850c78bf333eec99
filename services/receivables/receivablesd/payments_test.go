package receivablesd_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// publishBank puts a bank event on the bank's stream as its outbox does.
func publishBank(t *testing.T, js jetstream.JetStream, subject, msgID string, payload any) {
	t.Helper()
	b, ok := payload.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(payload); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(context.Background(), subject, b, jetstream.WithMsgID(msgID)); err != nil {
		t.Fatal(err)
	}
}

// TestPayments: the service consumes the bank's reconciliation events
// with its own key; a reconciled invoice turns partially paid, then paid,
// an undone reconciliation opens it again; the views show it. Other bank
// events and malformed ones hold nothing back.
func TestPayments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := start(t)
	// The bank owns its stream; here the harness stands in for it.
	if err := (natsx.Stream{Name: bankv1.StreamEvents, Subjects: []string{bankv1.EventsFilter}}).Ensure(ctx, h.JS); err != nil {
		t.Fatal(err)
	}
	tenant := uuid.NewString()
	as := &auth.Claims{TenantID: tenant, KeyID: "k", Scopes: []string{"debitoren:read", "debitoren:write"}}
	var d receivablesv1.Debtor
	h.OK(receivablesv1.SubjectDebtorsCreate, testkit.Rq{As: as, Body: minimal + `}`}, 201, &d)
	inv, intent := uuid.NewString(), uuid.NewString()
	if _, err := h.Pool.Exec(ctx, `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, number, invoice_date, due_date,
			lines, total_net, total_tax, total_gross, booking_intent_id, document_id, xml, pdf)
		VALUES ($1, $2, $3, 'invoice', 'posted', 'RE-2026-00001', '2026-03-01', '2999-12-31', '[]', 100, 19, 119, $4, $5, '\x3c3e', '\x25')`,
		inv, tenant, d.ID, intent, uuid.NewString()); err != nil {
		t.Fatal(err)
	}
	view := func() string {
		var l receivablesv1.OutgoingInvoiceList
		h.OK(receivablesv1.SubjectOutgoingInvoicesList, testkit.Rq{As: as}, 200, &l)
		if len(l.Invoices) != 1 {
			t.Fatalf("%d invoices listed, want 1", len(l.Invoices))
		}
		return l.Invoices[0].Status + " " + l.Invoices[0].RemainingAmount.StringFixed(2)
	}
	if got := view(); got != "open 119.00" {
		t.Fatalf("before payment: %s", got)
	}
	event := func(rec string, amount string) bankv1.TransactionReconciled {
		return bankv1.TransactionReconciled{TenantID: tenant, ReconciliationID: rec, BankTransactionID: uuid.NewString(), Mode: "open_item",
			IntentID: uuid.NewString(), TxDate: "2026-03-10", Allocations: []bankv1.Allocation{
				{IntentID: intent, CandidateKind: bankv1.CandidateOpenReceivable, OpenItemAccount: "1200", Amount: money.MustParse(amount), Currency: "EUR"}}}
	}
	r1, r2 := uuid.NewString(), uuid.NewString()
	publishBank(t, h.JS, bankv1.EventTransactionReconciled, "b1", event(r1, "19.00"))
	publishBank(t, h.JS, bankv1.EventTransactionReconciled, "b2", []byte(`{"tenant_id":`)) // poison
	publishBank(t, h.JS, "evt.bank.v1.transactions_imported", "b3", map[string]string{"tenant_id": tenant})
	testkit.Eventually(t, "partially paid", func() bool { return view() == "partially_paid 100.00" })
	publishBank(t, h.JS, bankv1.EventTransactionReconciled, "b4", event(r2, "100.00"))
	publishBank(t, h.JS, bankv1.EventTransactionReconciled, "b4", event(r2, "100.00")) // the stream drops the duplicate
	testkit.Eventually(t, "paid", func() bool { return view() == "paid 0.00" })
	publishBank(t, h.JS, bankv1.EventTransactionUnmatched, "b5", event(r1, "19.00"))
	testkit.Eventually(t, "open again", func() bool { return view() == "partially_paid 19.00" })

	var items receivablesv1.OpenItemList
	h.OK(receivablesv1.SubjectSalesInvoiceOpenItems, testkit.Rq{As: as, Query: url.Values{"debtor_id": {d.ID}, "period": {"2026-03"}}}, 200, &items)
	want := []receivablesv1.OpenItem{{InvoiceID: inv, Number: "RE-2026-00001", DebtorID: d.ID, InvoiceDate: "2026-03-01", DueDate: "2999-12-31",
		Currency: "EUR", Amount: money.MustParse("19.00"), TotalGross: money.MustParse("119.00"), Status: "partially_paid"}}
	if diff := cmp.Diff(want, items.OpenItems, cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })); diff != "" {
		t.Fatalf("open items (-want +got):\n%s", diff)
	}
	var grouped receivablesv1.OutgoingOpenItems
	h.OK(receivablesv1.SubjectOutgoingOpenItems, testkit.Rq{As: as}, 200, &grouped)
	if len(grouped.Customers) != 1 || grouped.Customers[0].NetOpen.StringFixed(2) != "19.00" || grouped.Customers[0].CustomerName != "Muster GmbH" {
		t.Fatalf("grouped: %+v", grouped)
	}
	h.Fails(receivablesv1.SubjectSalesInvoiceOpenItems, testkit.Rq{As: as, Query: url.Values{"period": {"2026-13"}}}, 400, errs.InvalidInput)
	h.Fails(receivablesv1.SubjectOutgoingInvoicesList, testkit.Rq{As: as, Query: url.Values{"status": {"void"}}}, 400, errs.InvalidInput)
	h.Fails(receivablesv1.SubjectOutgoingInvoicesList, testkit.Rq{As: as, Query: url.Values{"limit": {"501"}}}, 400, errs.InvalidInput)
}
