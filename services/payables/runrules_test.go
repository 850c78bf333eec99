package payables_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables"
)

// oneRun is a RunStore holding one run, for the rules that decide on a
// stored run; what it is not asked for it does not implement.
type oneRun struct {
	payables.RunStore
	f        payables.RunFile
	returned []string
}

func (s *oneRun) ChangePaymentRun(_ context.Context, _, _ string, decide func(payables.RunFile) (payables.Transition, error)) (payables.RunFile, error) {
	t, err := decide(s.f)
	if err != nil {
		return payables.RunFile{}, err
	}
	s.f.Run.Status = t.To
	if t.By != "" {
		s.f.Run.ApprovedBy = &t.By
	}
	return s.f, nil
}

func (s *oneRun) ReturnPaymentRunItem(_ context.Context, _, _, invoiceID string, reason *string, _ time.Time, check func(payables.RunFile) error) (payables.RunFile, error) {
	if err := check(s.f); err != nil {
		return payables.RunFile{}, err
	}
	s.returned = append(s.returned, invoiceID+" "+*reason)
	return s.f, nil
}

const (
	runID      = "3b0e6f2a-9c1d-4e8b-a7f5-2d4c6b8a0e1f"
	runInvoice = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	preparer   = "key:11111111-1111-4111-8111-111111111111"
	releaser   = "key:22222222-2222-4222-8222-222222222222"
)

func storedRun(status string, createdBy *string, returnedAt *time.Time) *oneRun {
	it := payables.RunItem{PaymentRunItem: payablesv1.PaymentRunItem{InvoiceID: runInvoice, InvoiceNumber: "RE-1001", ReturnedAt: returnedAt}}
	return &oneRun{f: payables.RunFile{Run: payables.PaymentRun{ID: runID, Status: status, CreatedBy: createdBy}, Items: []payables.RunItem{it}}}
}

func TestApproveFourEyes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		createdBy *string
		by        payables.Actor
		want      []string
	}{
		{"someone else", ptr(preparer), payables.Actor{ID: releaser}, nil},
		{"who prepared it", ptr(preparer), payables.Actor{ID: preparer}, []string{"FORBIDDEN"}},
		{"who prepared it, the owner", ptr(preparer), payables.Actor{ID: preparer, Owner: true}, nil},
		{"a run from before the preparer was kept", nil, payables.Actor{ID: preparer}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := storedRun(payablesv1.RunDraft, tc.createdBy, nil)
			run, err := payables.NewPaymentRuns(s, nil, nil, nil).Approve(context.Background(), "t", runID, tc.by)
			if diff := cmp.Diff(tc.want, fieldsOf(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && (run.Status != payablesv1.RunApproved || run.ApprovedBy == nil || *run.ApprovedBy != tc.by.ID) {
				t.Fatalf("approved run %+v", run)
			}
		})
	}
}

func TestReturnTransfer(t *testing.T) {
	at := time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		status     string
		returnedAt *time.Time
		in         payablesv1.PaymentRunReturn
		want       []string
	}{
		{"recorded", payablesv1.RunCompleted, nil, payablesv1.PaymentRunReturn{InvoiceID: runInvoice, Reason: ptr(" AC04 ")}, nil},
		{"not completed", payablesv1.RunExported, nil, payablesv1.PaymentRunReturn{InvoiceID: runInvoice}, []string{"INVALID_STATE_TRANSITION", "status: exported"}},
		{"not in the run", payablesv1.RunCompleted, nil, payablesv1.PaymentRunReturn{InvoiceID: "1a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"}, []string{"NOT_FOUND"}},
		{"twice", payablesv1.RunCompleted, &at, payablesv1.PaymentRunReturn{InvoiceID: runInvoice}, []string{"CONFLICT"}},
		{"bad input", payablesv1.RunCompleted, nil, payablesv1.PaymentRunReturn{InvoiceID: "RE-1001", Reason: ptr(" ")},
			[]string{"INVALID_INPUT", "invoice_id: required: the id (UUID) of an invoice of the run", "reason: 1 to 500 characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := storedRun(tc.status, nil, tc.returnedAt)
			_, err := payables.NewPaymentRuns(s, nil, nil, func() time.Time { return at }).Return(context.Background(), "t", runID, tc.in)
			if diff := cmp.Diff(tc.want, fieldsOf(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && cmp.Diff([]string{runInvoice + " AC04"}, s.returned) != "" {
				t.Fatalf("stored %v", s.returned)
			}
		})
	}
}
