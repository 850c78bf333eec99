package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables"
)

// TestPaymentRunStore: a run's rows as created, read and changed; the
// invoices of an active run refused to another, also to concurrent
// creations; a refused plan or transition writes nothing; cancelling
// frees the invoices, completing pays them.
func TestPaymentRunStore(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant, other := uuid.NewString(), uuid.NewString()
	v := vendor("Nord GmbH")
	v.IBAN, v.Address = ptr("DE89370400440532013000"), &payablesv1.Address{City: "Hamburg", Country: "DE"}
	if _, err := s.CreateVendor(ctx, tenant, v); err != nil {
		t.Fatal(err)
	}
	exec := time.Date(2030, 3, 20, 0, 0, 0, 0, time.UTC)
	invoice := func(number, gross string, rate any) string {
		t.Helper()
		id := uuid.NewString()
		var until any
		if rate != nil {
			until = exec
		}
		if _, err := owner.Exec(ctx, `INSERT INTO payables.incoming_invoices (id, tenant_id, vendor_id, invoice_number, invoice_date, due_date,
				total_net, total_tax, total_gross, booking_intent_id, state, discount_rate, discount_until)
			VALUES ($1, $2, $3, $4, '2030-03-01', '2030-03-31', $5, 0, $5, $6, 'posted', $7, $8)`,
			id, tenant, v.ID, number, gross, uuid.NewString(), rate, until); err != nil {
			t.Fatal(err)
		}
		return id
	}
	inv1, inv2 := invoice("RE-1", "119.00", "2"), invoice("RE-2", "50.00", nil)
	newRun := func(ids ...string) payables.NewRun {
		return payables.NewRun{ID: uuid.NewString(), BankAccountID: uuid.NewString(), ExecutionDate: exec, InvoiceIDs: ids,
			Debtor: payables.Debtor{Name: "Zahllauf GmbH", IBAN: "DE02120300000000202051"}}
	}
	plan := func(r payables.NewRun) func([]payables.OpenInvoice) ([]payables.RunItem, error) {
		return func(invs []payables.OpenInvoice) ([]payables.RunItem, error) {
			return payables.PlanItems(r.ExecutionDate, r.InvoiceIDs, invs)
		}
	}
	create := func(r payables.NewRun) (payables.PaymentRun, error) {
		return s.CreatePaymentRun(ctx, tenant, r, plan(r))
	}
	runs := func() int {
		var n int
		if err := owner.QueryRow(ctx, `SELECT count(*) FROM payables.payment_runs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	r := newRun(inv2, inv1)
	run, err := create(r)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range run.Items {
		items = append(items, it.InvoiceNumber+" "+it.Amount.StringFixed(2)+" "+it.Discount.StringFixed(2)+" "+it.IBAN)
	}
	if diff := cmp.Diff([]string{"RE-2 50.00 0.00 DE89370400440532013000", "RE-1 116.62 2.38 DE89370400440532013000"}, items); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	if run.Status != payablesv1.RunDraft || run.TotalAmount.StringFixed(2) != "166.62" || run.TotalDiscount.StringFixed(2) != "2.38" ||
		run.InvoiceCount != 2 || run.ExecutionDate != "2030-03-20" || run.DebtorName != "Zahllauf GmbH" {
		t.Fatalf("run %+v", run)
	}
	got, err := s.PaymentRun(ctx, tenant, run.ID)
	if err != nil || !cmp.Equal(run, got.Run) || got.Items[1].Address.City != "Hamburg" || got.PainXML != nil {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, err := s.PaymentRun(ctx, other, run.ID); code(err) != errs.NotFound {
		t.Fatalf("other tenant reads the run: %v", err)
	}
	if list, err := s.PaymentRuns(ctx, tenant, payablesv1.PaymentRunFilter{Status: payablesv1.RunDraft, Limit: 10}); err != nil || len(list) != 1 || list[0].Items != nil {
		t.Fatalf("list %+v, %v", list, err)
	}

	// In an active run, the invoice is refused to another, named.
	if _, err := create(newRun(inv1)); code(err) != errs.InvoiceAlreadyInActiveRun+" invoice_ids[0]" {
		t.Fatalf("second run with RE-1: %v", err)
	}
	// A refused plan writes nothing.
	if _, err := s.CreatePaymentRun(ctx, tenant, newRun(invoice("RE-3", "1.00", nil)), func([]payables.OpenInvoice) ([]payables.RunItem, error) {
		return nil, errs.E(errs.VendorIBANMissing, "no")
	}); code(err) != errs.VendorIBANMissing || runs() != 1 {
		t.Fatalf("refused plan: %v, %d runs", err, runs())
	}

	// Concurrent runs over one invoice: one wins.
	shared := invoice("RE-4", "10.00", nil)
	var wg sync.WaitGroup
	errsOf := make([]error, 8)
	for i := range errsOf {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errsOf[i] = create(newRun(invoice("RE-own-"+uuid.NewString()[:8], "1.00", nil), shared))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errsOf {
		switch {
		case err == nil:
			won++
		case code(err) != errs.InvoiceAlreadyInActiveRun+" invoice_ids[1]":
			t.Errorf("concurrent run: %v", err)
		}
	}
	if won != 1 || runs() != 2 {
		t.Fatalf("%d concurrent runs won, %d runs stored", won, runs())
	}

	// A refused transition changes nothing; cancelling frees the invoices.
	refused := errors.New("refused")
	if _, err := s.ChangePaymentRun(ctx, tenant, run.ID, func(payables.RunFile) (payables.Transition, error) { return payables.Transition{}, refused }); !errors.Is(err, refused) {
		t.Fatalf("refused transition: %v", err)
	}
	if _, err := s.ChangePaymentRun(ctx, other, run.ID, func(payables.RunFile) (payables.Transition, error) { return payables.Transition{}, nil }); code(err) != errs.NotFound {
		t.Fatalf("other tenant's transition: %v", err)
	}
	at := time.Date(2030, 3, 2, 9, 0, 0, 0, time.UTC)
	to := func(id, status string, xml []byte) payables.RunFile {
		t.Helper()
		f, err := s.ChangePaymentRun(ctx, tenant, id, func(payables.RunFile) (payables.Transition, error) {
			return payables.Transition{To: status, At: at, PainXML: xml}, nil
		})
		if err != nil || f.Run.Status != status {
			t.Fatalf("to %s: %+v, %v", status, f.Run, err)
		}
		return f
	}
	if f := to(run.ID, payablesv1.RunCancelled, nil); f.Run.CancelledAt == nil || !f.Run.CancelledAt.Equal(at) {
		t.Fatalf("cancelled at %v", f.Run.CancelledAt)
	}
	again, err := create(newRun(inv1, inv2))
	if err != nil {
		t.Fatalf("after the cancel: %v", err)
	}

	// Exported, the file is kept; completed, the invoices stay in the
	// run (no other run pays them) and are paid once the bank's
	// reconciliation says so, not before.
	to(again.ID, payablesv1.RunApproved, nil)
	if f := to(again.ID, payablesv1.RunExported, []byte("<Document/>")); string(f.PainXML) != "<Document/>" {
		t.Fatalf("file %q", f.PainXML)
	}
	if f := to(again.ID, payablesv1.RunCompleted, nil); string(f.PainXML) != "<Document/>" || f.Run.CompletedAt == nil {
		t.Fatalf("completed %+v, file %q", f.Run, f.PainXML)
	}
	var paid int
	if err := owner.QueryRow(ctx, `SELECT count(*) FROM payables.incoming_invoices WHERE id = ANY($1::uuid[]) AND paid_amount = 0`, []string{inv1, inv2}).Scan(&paid); err != nil || paid != 2 {
		t.Fatalf("%d invoices unpaid after the run, want 2 until reconciled (%v)", paid, err)
	}
	if _, err := create(newRun(inv1)); code(err) != errs.InvoiceAlreadyInActiveRun+" invoice_ids[0]" {
		t.Fatalf("an invoice of a completed run in a new run: %v", err)
	}
}
