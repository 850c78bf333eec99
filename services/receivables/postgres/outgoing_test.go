package postgres_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// TestSalesDocuments: the list filters by customer, type, dates and the
// status the domain computes (the SQL conditions agree with
// SalesDocument.Status), newest first, paged; open invoices are the
// posted ones with something remaining.
func TestSalesDocuments(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	alpha, beta := createDebtor(t, s, tenant, "Alpha GmbH"), createDebtor(t, s, tenant, "Beta AG")
	otherDeb := createDebtor(t, s, other, "Fremd")
	const today = "2026-04-10"
	ins := func(inv salesInvoice) string { return insertInvoice(t, owner, tenant, inv).id }
	draft := ins(salesInvoice{debtor: alpha, state: "draft", date: "2026-04-09", due: "2026-04-23", gross: "10.00"})
	open := ins(salesInvoice{debtor: alpha, number: "RE-5", date: "2026-04-05", due: "2026-04-19", gross: "119.00"})
	overdue := ins(salesInvoice{debtor: beta, number: "RE-4", date: "2026-03-01", due: "2026-03-15", gross: "238.00"})
	partial := ins(salesInvoice{debtor: alpha, number: "RE-3", date: "2026-02-01", due: "2026-04-30", gross: "100.00", paid: "40.00"})
	paid := ins(salesInvoice{debtor: beta, number: "RE-2", date: "2026-01-10", due: "2026-01-24", gross: "50.00", paid: "50.00"})
	credited := ins(salesInvoice{debtor: alpha, number: "RE-1", date: "2026-01-05", due: "2026-04-30", gross: "80.00", credited: "30.00"})
	note := ins(salesInvoice{debtor: alpha, typ: "credit_note", number: "RE-6", date: "2026-04-06", due: "2026-04-06", gross: "30.00", corrects: credited})
	pending := ins(salesInvoice{debtor: beta, state: "pending", number: "RE-7", date: "2026-04-07", due: "2026-04-21", gross: "5.00"})
	insertInvoice(t, owner, other, salesInvoice{debtor: otherDeb, number: "RE-1", date: "2026-04-01", due: "2026-04-02", gross: "1.00"})

	list := func(f receivablesv1.OutgoingFilter) []string {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 100
		}
		ds, err := s.SalesDocuments(ctx, tenant, receivables.OutgoingQuery{OutgoingFilter: f, Today: today})
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, d := range ds {
			if f.Status != "" && d.Status(today) != f.Status {
				t.Errorf("status %s lists %s, whose status is %s", f.Status, d.ID, d.Status(today))
			}
			out = append(out, d.ID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    receivablesv1.OutgoingFilter
		want []string
	}{
		{"all, newest first", receivablesv1.OutgoingFilter{}, []string{draft, pending, note, open, overdue, partial, paid, credited}},
		{"draft", receivablesv1.OutgoingFilter{Status: "draft"}, []string{draft}},
		{"open", receivablesv1.OutgoingFilter{Status: "open"}, []string{open}},
		{"overdue", receivablesv1.OutgoingFilter{Status: "overdue"}, []string{overdue}},
		{"partially paid or credited", receivablesv1.OutgoingFilter{Status: "partially_paid"}, []string{partial, credited}},
		{"paid, and the applied credit note", receivablesv1.OutgoingFilter{Status: "paid"}, []string{note, paid}},
		{"credit notes", receivablesv1.OutgoingFilter{Type: "credit_note"}, []string{note}},
		{"a customer's invoices", receivablesv1.OutgoingFilter{CustomerID: beta, Type: "invoice"}, []string{pending, overdue, paid}},
		{"dates inclusive", receivablesv1.OutgoingFilter{StartDate: "2026-01-10", EndDate: "2026-03-01"}, []string{overdue, partial, paid}},
		{"paged", receivablesv1.OutgoingFilter{Limit: 2, Offset: 1}, []string{pending, note}},
	} {
		if d := cmp.Diff(c.want, list(c.f)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}

	openIDs := func(debtor, period string) []string {
		t.Helper()
		ds, err := s.OpenInvoices(ctx, tenant, debtor, period)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	if d := cmp.Diff([]string{credited, partial, open, overdue}, openIDs("", "")); d != "" {
		t.Errorf("open invoices by customer and date (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{overdue}, openIDs(beta, "")); d != "" {
		t.Errorf("beta's open invoices (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{partial}, openIDs("", "2026-02")); d != "" {
		t.Errorf("open invoices of February (-want +got):\n%s", d)
	}
}
