package receivables_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func code(err error) string {
	if e := errs.As(err); e != nil {
		return e.Code
	}
	if err != nil {
		return "error"
	}
	return ""
}

func TestCheckCancelAndCredit(t *testing.T) {
	orig := func(typ, state, gross, paid, credited string) receivables.Original {
		return receivables.Original{Type: typ, State: state, Number: "RE-1", TotalGross: d(gross), PaidAmount: d(paid), CreditedAmount: d(credited)}
	}
	for _, c := range []struct {
		name           string
		o              receivables.Original
		cancel, credit string // error codes; credit is for 10.00
	}{
		{"open", orig("invoice", "posted", "119", "0", "0"), "", ""},
		{"draft", orig("invoice", "draft", "119", "0", "0"), "CONFLICT", "CONFLICT"},
		{"pending", orig("invoice", "pending", "119", "0", "0"), "CONFLICT", "CONFLICT"},
		{"void", orig("invoice", "void", "119", "0", "0"), "CONFLICT", "CONFLICT"},
		{"a credit note", orig("credit_note", "posted", "119", "0", "0"), "CONFLICT", "CONFLICT"},
		{"partly paid: credit yes, cancel no", orig("invoice", "posted", "119", "100", "0"), "CONFLICT", ""},
		{"partly credited", orig("invoice", "posted", "119", "0", "50"), "CONFLICT", ""},
		{"exactly 10 open", orig("invoice", "posted", "119", "100", "9"), "CONFLICT", ""},
		{"9.99 open", orig("invoice", "posted", "119", "100", "9.01"), "CONFLICT", "CONFLICT"},
		{"cancelled", orig("invoice", "posted", "119", "0", "119"), "CONFLICT", "CONFLICT"},
	} {
		if got := code(receivables.CheckCancel(c.o)); got != c.cancel {
			t.Errorf("%s: cancel %q, want %q", c.name, got, c.cancel)
		}
		if got := code(receivables.CheckCredit(d("10.00"))(c.o)); got != c.credit {
			t.Errorf("%s: credit %q, want %q", c.name, got, c.credit)
		}
	}
}

func TestCreditLines(t *testing.T) {
	doc := einvoice.Document{Lines: []einvoice.Line{
		{ID: "1", Description: "Beratung", Quantity: d("3"), UnitCode: "HUR", UnitPrice: d("100"), Discount: d("10"), TaxCategory: "S", TaxRate: d("19"), NetAmount: d("290")},
		{ID: "2", Description: "Buch", Quantity: d("1"), UnitCode: "C62", UnitPrice: d("50"), TaxCategory: "S", TaxRate: d("7"), NetAmount: d("50")},
	}}
	type line struct{ ID, Desc, Qty, Unit, Price, Discount string }
	show := func(ls []einvoice.Line) []line {
		var out []line
		for _, l := range ls {
			out = append(out, line{l.ID, l.Description, l.Quantity.String(), l.UnitCode, l.UnitPrice.String(), l.Discount.String()})
		}
		return out
	}
	got, err := receivables.CreditLines(doc, []receivablesv1.CreditLineInput{{Line: 2}, {Line: 1, Quantity: pamt("1")}})
	if err != nil {
		t.Fatal(err)
	}
	// A third of the line: a third of its discount, 3.33.
	want := []line{{"1", "Buch", "1", "C62", "50", "0"}, {"2", "Beratung", "1", "HUR", "100", "3.33"}}
	if diff := cmp.Diff(want, show(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, err = receivables.CreditLines(doc, []receivablesv1.CreditLineInput{{Line: 1, Amount: pamt("290")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]line{{"1", "Preisnachlass: Beratung", "1", "C62", "290", "0"}}, show(got)); diff != "" {
		t.Errorf("price reduction (-want +got):\n%s", diff)
	}
	_, err = receivables.CreditLines(doc, []receivablesv1.CreditLineInput{{Line: 1, Amount: pamt("290.01")}, {Line: 2, Quantity: pamt("1.5")}})
	if e := errs.As(err); e == nil || len(e.Details) != 2 || e.Details[0].Field != "line_items[0].amount" || e.Details[1].Field != "line_items[1].quantity" {
		t.Errorf("too much: %v", err)
	}
}

func TestCreditPostingLines(t *testing.T) {
	doc := einvoice.Document{Currency: "EUR", TaxBreakdown: []einvoice.TaxSubtotal{
		{Category: "S", Rate: d("19"), Basis: d("100"), Tax: d("19")},
		{Category: "S", Rate: d("7"), Basis: d("10"), Tax: d("0.70")},
		{Category: "K", Rate: d("0"), Basis: d("20"), Tax: d("0")},
	}}
	got := receivables.CreditPostingLines(doc, nil, "1210", "RE-2026-00009")
	var s []string
	for _, l := range got {
		s = append(s, l.AccountDebit+">"+l.AccountCredit+" "+l.Amount.StringFixed(2)+" "+l.TaxCode+" "+l.ExternalReference)
	}
	// The gross of each group with the invoice's code: the ledger splits
	// the VAT off the debit side (services/ledger TestTaxSide).
	want := []string{"4400>1210 119.00 USt19 RE-2026-00009", "4300>1210 10.70 USt7 RE-2026-00009", "4125>1210 20.00 IGL0 RE-2026-00009"}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// fakeCredits is a CreditStore in memory: one invoice and the credit
// notes issued for it.
type fakeCredits struct {
	mu    sync.Mutex
	inv   receivables.InvoiceRecord
	notes map[string]receivables.InvoiceRecord
	voids int
}

func (f *fakeCredits) Invoice(_ context.Context, _, id string) (receivables.InvoiceRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id == f.inv.ID {
		return f.inv, nil
	}
	if n, ok := f.notes[id]; ok {
		return n, nil
	}
	return receivables.InvoiceRecord{}, errs.NotFoundf("no %s", id)
}

func (f *fakeCredits) IssueCreditNote(_ context.Context, _ string, dr receivables.CreditNoteDraft, check func(receivables.Original) error,
	render func(receivables.InvoiceRecord, string) (receivables.Issued, error)) (receivables.InvoiceRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.notes[dr.ID]; ok {
		return n, nil
	}
	if err := check(receivables.Original{Type: "invoice", State: f.inv.State, Number: f.inv.Number, TotalGross: f.inv.TotalGross,
		PaidAmount: f.inv.PaidAmount, CreditedAmount: f.inv.CreditedAmount}); err != nil {
		return receivables.InvoiceRecord{}, err
	}
	is, err := render(f.inv, "RE-2026-00002")
	if err != nil {
		return receivables.InvoiceRecord{}, err
	}
	n := receivables.InvoiceRecord{ID: dr.ID, DebtorID: f.inv.DebtorID, State: "pending", Number: "RE-2026-00002", InvoiceDate: dr.Date,
		Currency: "EUR", Document: &is.Document, TotalGross: is.Document.Totals.Grand}
	f.notes[dr.ID] = n
	f.inv.CreditedAmount = f.inv.CreditedAmount.Add(n.TotalGross)
	return n, nil
}

func (f *fakeCredits) ConfirmCreditNote(_ context.Context, _, id, intent, doc string, _ receivablesv1.CreditNoteIssued) (receivables.InvoiceRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notes[id]
	n.State, n.BookingIntentID, n.DocumentID = "posted", intent, doc
	f.notes[id] = n
	return n, nil
}

func (f *fakeCredits) VoidCreditNote(_ context.Context, _, id, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notes[id]
	n.State, n.VoidReason = "void", reason
	f.notes[id] = n
	f.inv.CreditedAmount = f.inv.CreditedAmount.Sub(n.TotalGross)
	f.voids++
	return nil
}

func (f *fakeCredits) InvoiceFile(context.Context, string, string, bool) (string, []byte, error) {
	return "RE-2026-00002", []byte("%PDF"), nil
}

func (f *fakeCredits) Debtor(context.Context, string, string) (receivables.Debtor, error) {
	return receivables.Debtor{ReceivableAccount: "1200"}, nil
}

// fakeCreditLedger reverses once per key and fails as told.
type fakeCreditLedger struct {
	fail      error
	reversals map[string]string // idempotency key → reversal
	// reversedBy is each reversed intent's reversal, which a second key
	// cannot reverse again.
	reversedBy map[string]string
}

func (l *fakeCreditLedger) UploadPDF(context.Context, string, string, []byte) (string, error) {
	return "8a6e0804-2bd0-4672-b79d-d97027f90710", nil
}
func (l *fakeCreditLedger) TaxCodes(context.Context, string) ([]ledgerv1.TaxCode, error) {
	return nil, nil
}
func (l *fakeCreditLedger) Post(context.Context, ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	return ledgerv1.Posted{}, l.fail
}
func (l *fakeCreditLedger) Reverse(_ context.Context, _, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	if l.fail != nil {
		return ledgerv1.Reversed{}, l.fail
	}
	if l.reversedBy == nil {
		l.reversedBy = map[string]string{}
	}
	if _, ok := l.reversals[key]; !ok {
		if by, done := l.reversedBy[r.IntentID]; done {
			return ledgerv1.Reversed{}, errs.E(errs.AlreadyReversed, "intent %s has already been reversed by %s", r.IntentID, by)
		}
		l.reversals[key] = "rev-" + key + "-" + r.IntentID
		l.reversedBy[r.IntentID] = l.reversals[key]
	}
	return ledgerv1.Reversed{ReversalIntentID: l.reversals[key], OriginalIntentID: r.IntentID}, nil
}

func (l *fakeCreditLedger) ReversedBy(_ context.Context, _, intentID string) (string, error) {
	return l.reversedBy[intentID], nil
}

// TestCancelResumes: an outage of the ledger leaves the credit note
// pending and a retry finishes it with the same number and one reversal;
// a refusal voids it and gives the credited amount back.
func TestCancelResumes(t *testing.T) {
	const tenant, id = "8a6e0804-2bd0-4672-b79d-d97027f9071b", "9a6e0804-2bd0-4672-b79d-d97027f9071b"
	doc := einvoice.Document{Profile: einvoice.ProfileEN16931, TypeCode: einvoice.TypeInvoice, Number: "RE-2026-00001", IssueDate: "2026-03-02",
		DueDate: "2026-04-01", Currency: "EUR", DeliveryDate: "2026-03-01", PaymentTerms: "30 Tage",
		Seller: einvoice.Seller{Name: "Muster GmbH", Street: "Lindenstr. 5", Zip: "10969", City: "Berlin", Country: "DE", VATID: "DE123456789",
			Email: "r@muster.example", Phone: "+49 30 1", ContactName: "Erika"},
		Buyer: einvoice.Buyer{Name: "Kunde AG", Street: "Hauptstr. 1", Zip: "10115", City: "Berlin", Country: "DE"},
		Lines: []einvoice.Line{{ID: "1", Description: "Beratung", Quantity: d("1"), UnitCode: "HUR", UnitPrice: d("100"), TaxCategory: "S", TaxRate: d("19")}}}
	if err := doc.Compute(); err != nil {
		t.Fatal(err)
	}
	newStore := func() *fakeCredits {
		return &fakeCredits{inv: receivables.InvoiceRecord{ID: id, State: "posted", Number: "RE-2026-00001", InvoiceDate: "2026-03-02",
			TotalGross: d("119"), BookingIntentID: "intent-1", Document: &doc}, notes: map[string]receivables.InvoiceRecord{}}
	}
	now := func() time.Time { return time.Date(2026, 4, 10, 23, 30, 0, 0, time.UTC) } // 11 April in Germany
	store, ledger := newStore(), &fakeCreditLedger{fail: errs.E(errs.Unavailable, "down"), reversals: map[string]string{}}
	svc := receivables.NewCreditNotes(store, ledger, now)
	if _, err := svc.Cancel(context.Background(), tenant, id); code(err) != errs.Unavailable {
		t.Fatalf("outage: %v", err)
	}
	cn := store.notes[receivables.CancelCreditNoteID(tenant, id)]
	if cn.State != "pending" || !store.inv.CreditedAmount.Equal(d("119")) || cn.InvoiceDate != "2026-04-11" {
		t.Fatalf("after the outage: %+v, credited %s", cn, store.inv.CreditedAmount)
	}
	if cn.Document.TypeCode != "381" || cn.Document.PrecedingInvoice == nil || cn.Document.PrecedingInvoice.Number != "RE-2026-00001" {
		t.Fatalf("credit note document: %+v", cn.Document)
	}
	ledger.fail = nil
	got, err := svc.Cancel(context.Background(), tenant, id)
	want := receivablesv1.Cancelled{OK: true, ReversalIntentID: "rev-" + receivables.CancelKey(id) + "-intent-1", CreditNoteID: cn.ID, CreditNoteNumber: "RE-2026-00002"}
	if err != nil || got != want {
		t.Fatalf("resumed: %+v, %v", got, err)
	}
	if _, err := svc.Cancel(context.Background(), tenant, id); code(err) != errs.Conflict {
		t.Fatalf("again: %v", err)
	}

	// Reversed meanwhile under another key (the cancellation's own key
	// expired in the ledger, or a person reversed the booking): the
	// retry confirms the credit note with that reversal, never voids it.
	store, ledger = newStore(), &fakeCreditLedger{fail: errs.E(errs.Unavailable, "down"), reversals: map[string]string{}}
	svc = receivables.NewCreditNotes(store, ledger, now)
	if _, err := svc.Cancel(context.Background(), tenant, id); code(err) != errs.Unavailable {
		t.Fatalf("outage: %v", err)
	}
	ledger.fail = nil
	if _, err := ledger.Reverse(context.Background(), tenant, "by-hand", ledgerv1.ReverseRequest{IntentID: "intent-1"}); err != nil {
		t.Fatal(err)
	}
	got, err = svc.Cancel(context.Background(), tenant, id)
	if err != nil || got.ReversalIntentID != "rev-by-hand-intent-1" || store.voids != 0 {
		t.Fatalf("resumed after a reversal elsewhere: %+v, %v, %d voids", got, err, store.voids)
	}

	store, ledger = newStore(), &fakeCreditLedger{fail: errs.E(errs.PeriodLocked, "locked"), reversals: map[string]string{}}
	svc = receivables.NewCreditNotes(store, ledger, now)
	if _, err := svc.Cancel(context.Background(), tenant, id); !errors.Is(err, ledger.fail) && code(err) != errs.PeriodLocked {
		t.Fatalf("refused: %v", err)
	}
	if store.voids != 1 || !store.inv.CreditedAmount.IsZero() {
		t.Fatalf("after the refusal: %d voids, credited %s", store.voids, store.inv.CreditedAmount)
	}
}
