package receivables_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
)

func doc(typ, state, due, gross, paid, credited string) receivables.SalesDocument {
	return receivables.SalesDocument{Type: typ, State: state, DueDate: due, TotalGross: decimal.RequireFromString(gross),
		PaidAmount: decimal.RequireFromString(paid), CreditedAmount: decimal.RequireFromString(credited)}
}

func TestSalesDocumentStatus(t *testing.T) {
	const today = "2026-04-10"
	for _, c := range []struct {
		name              string
		d                 receivables.SalesDocument
		status, remaining string
	}{
		{"draft", doc("invoice", "draft", "2026-01-01", "10.00", "0", "0"), "draft", "0"},
		{"pending", doc("invoice", "pending", "2026-01-01", "10.00", "0", "0"), "pending", "0"},
		{"void", doc("invoice", "void", "2026-01-01", "10.00", "0", "0"), "void", "0"},
		{"open, due today", doc("invoice", "posted", today, "119.00", "0", "0"), "open", "119"},
		{"overdue since yesterday", doc("invoice", "posted", "2026-04-09", "119.00", "0", "0"), "overdue", "119"},
		{"partly paid and overdue: overdue", doc("invoice", "posted", "2026-01-01", "119.00", "19.00", "0"), "overdue", "100"},
		{"partly credited", doc("invoice", "posted", "2026-05-01", "119.00", "0", "0.01"), "partially_paid", "118.99"},
		{"paid and credited in full", doc("invoice", "posted", "2026-01-01", "0.30", "0.10", "0.20"), "paid", "0"},
		{"overpaid", doc("invoice", "posted", "2026-01-01", "100.00", "100.01", "0"), "paid", "-0.01"},
		{"a zero invoice", doc("invoice", "posted", "2026-01-01", "0.00", "0", "0"), "paid", "0"},
		{"a credit note is applied to its invoice", doc("credit_note", "posted", "2026-01-01", "50.00", "0", "0"), "paid", "0"},
	} {
		if got := c.d.Status(today); got != c.status {
			t.Errorf("%s: status %s, want %s", c.name, got, c.status)
		}
		if got := c.d.Remaining(); !got.Equal(decimal.RequireFromString(c.remaining)) {
			t.Errorf("%s: remaining %s, want %s", c.name, got, c.remaining)
		}
	}
}

func TestGroupOpenItems(t *testing.T) {
	const today = "2026-04-10"
	in := func(id, debtor, name, gross, paid, credited string) receivables.SalesDocument {
		d := doc("invoice", "posted", "2026-05-01", gross, paid, credited)
		d.ID, d.DebtorID, d.DebtorName = id, debtor, name
		return d
	}
	ds := []receivables.SalesDocument{
		in("a1", "A", "Alpha", "119.00", "0", "19.00"),
		in("a2", "A", "Alpha", "0.30", "0.10", "0"),
		in("b1", "B", "Beta", "50.00", "0", "0"),
		in("b2", "B", "Beta", "20.00", "20.00", "0"), // settled: not an open item
	}
	type sums struct{ ID, Total, Credit, Net string }
	var got []sums
	var ids [][]string
	for _, c := range receivables.GroupOpenItems(ds, today) {
		got = append(got, sums{c.CustomerID, c.TotalOpen.StringFixed(2), c.CreditNoteTotal.StringFixed(2), c.NetOpen.StringFixed(2)})
		var is []string
		for _, i := range c.Invoices {
			is = append(is, i.ID+" "+i.Status+" "+i.RemainingAmount.StringFixed(2))
		}
		ids = append(ids, is)
	}
	if d := cmp.Diff([]sums{{"A", "119.20", "19.00", "100.20"}, {"B", "50.00", "0.00", "50.00"}}, got); d != "" {
		t.Errorf("sums (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]string{{"a1 partially_paid 100.00", "a2 partially_paid 0.20"}, {"b1 open 50.00"}}, ids); d != "" {
		t.Errorf("invoices (-want +got):\n%s", d)
	}
	if g := receivables.GroupOpenItems(nil, today); g == nil || len(g) != 0 {
		t.Errorf("nothing open: %#v, want an empty list", g)
	}
}

func TestCheckOutgoingFilter(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      receivablesv1.OutgoingFilter
		fields []string
	}{
		{"defaults", receivablesv1.OutgoingFilter{Limit: 100}, nil},
		{"everything", receivablesv1.OutgoingFilter{CustomerID: "8a6e0804-2bd0-4672-b79d-d97027f9071b", Status: "overdue", Type: "credit_note",
			StartDate: "2026-01-01", EndDate: "2026-01-01", Limit: 500, Offset: 3}, nil},
		{"bad", receivablesv1.OutgoingFilter{CustomerID: "x", Status: "void", Type: "bill", StartDate: "2026-02-30", EndDate: "26-01-01", Limit: 501},
			[]string{"customer_id", "status", "type", "start_date", "end_date", "limit"}},
		{"dates reversed", receivablesv1.OutgoingFilter{StartDate: "2026-02-01", EndDate: "2026-01-31", Limit: 1}, []string{"end_date"}},
	} {
		var fields []string
		if e := errs.As(receivables.CheckOutgoingFilter(c.f)); e != nil {
			if e.Code != errs.InvalidInput {
				t.Errorf("%s: code %s", c.name, e.Code)
			}
			for _, d := range e.Details {
				fields = append(fields, d.Field)
			}
		}
		if d := cmp.Diff(c.fields, fields); d != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.name, d)
		}
	}
}

func TestPaymentFromEvent(t *testing.T) {
	const tenant, rec, i1, i2 = "8a6e0804-2bd0-4672-b79d-d97027f9071b", "9a6e0804-2bd0-4672-b79d-d97027f9071b",
		"aa6e0804-2bd0-4672-b79d-d97027f9071b", "ba6e0804-2bd0-4672-b79d-d97027f9071b"
	e := bankv1.TransactionReconciled{TenantID: tenant, ReconciliationID: rec, TxDate: "2026-03-10", Allocations: []bankv1.Allocation{
		{IntentID: i1, CandidateKind: bankv1.CandidateOpenReceivable, Amount: money.MustParse("0.10"), Currency: "EUR"},
		{IntentID: i2, CandidateKind: bankv1.CandidateOpenLiability, Amount: money.MustParse("5.00"), Currency: "EUR"},
		{IntentID: i1, CandidateKind: bankv1.CandidateOpenReceivable, Amount: money.MustParse("0.20"), Currency: "EUR"},
	}}
	p, ok, err := receivables.PaymentFromEvent("e1", bankv1.EventTransactionUnmatched, e)
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	want := receivables.PaymentEvent{EventID: "e1", ReconciliationID: rec, Release: true, PaidOn: "2026-03-10",
		Allocations: []receivables.PaymentAllocation{{IntentID: i1, Amount: decimal.RequireFromString("0.30"), Currency: "EUR"}}}
	if d := cmp.Diff(want, p, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, ok, err := receivables.PaymentFromEvent("e2", "evt.bank.v1.transactions_imported", e); ok || err != nil {
		t.Errorf("another event: ok %v, err %v", ok, err)
	}
	e.Allocations[0].Amount = money.MustParse("-1")
	if _, _, err := receivables.PaymentFromEvent("e3", bankv1.EventTransactionReconciled, e); err == nil {
		t.Error("a negative allocation was accepted")
	}
}
