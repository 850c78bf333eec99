package postgres_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

// fakeLedger records what invoicing asks of the ledger; fail, when set,
// answers the next call of that step with its error.
type fakeLedger struct {
	mu         sync.Mutex
	posts      []ledgerv1.PostRequest
	uploads    map[string]string // filename -> document id
	failPost   error
	failUpload error
}

func (f *fakeLedger) TaxCodes(context.Context, string) ([]ledgerv1.TaxCode, error) {
	return []ledgerv1.TaxCode{{Code: "USt19", Kind: ledgerv1.TaxOutput, Rate: money.MustParse("19"), IsActive: true},
		{Code: "USt7", Kind: ledgerv1.TaxOutput, Rate: money.MustParse("7"), IsActive: true}}, nil
}

func (f *fakeLedger) Post(_ context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failPost; err != nil {
		f.failPost = nil
		return ledgerv1.Posted{}, err
	}
	f.posts = append(f.posts, r)
	return ledgerv1.Posted{IntentID: r.IntentID}, nil
}

func (f *fakeLedger) UploadPDF(_ context.Context, _, name string, _ []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failUpload; err != nil {
		f.failUpload = nil
		return "", err
	}
	if f.uploads == nil {
		f.uploads = map[string]string{}
	}
	if _, ok := f.uploads[name]; !ok {
		f.uploads[name] = uuid.NewString()
	}
	return f.uploads[name], nil
}

type fakeTenants struct{}

func (fakeTenants) Tenant(context.Context, string) (identityv1.Tenant, error) {
	return identityv1.Tenant{CompanyName: "Muster", LegalForm: "GmbH", VATID: "DE123456789",
		Address: identityv1.Address{Street: "Lindenstr. 5", Zip: "10969", City: "Berlin", Country: "DE"}}, nil
}

// TestInvoiceIssuing: issuing against the real store with a ledger that
// fails on cue: a posted invoice with its event, an outage leaving the
// invoice pending and a retry resuming it under its number, a definitive
// refusal voiding it (the number stays taken), an e-invoice refusal taking
// no number.
func TestInvoiceIssuing(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	d, err := s.CreateDebtor(ctx, tenant, debtor("Muster Handel GmbH", "K-1"))
	if err != nil {
		t.Fatal(err)
	}
	led := &fakeLedger{}
	inv := receivables.NewInvoicing(s, s, led, fakeTenants{})
	input := func(desc string) receivablesv1.InvoiceInput {
		return receivablesv1.InvoiceInput{DebtorID: d.ID, InvoiceDate: "2026-03-01", DueDate: "2099-12-31", LineItems: []receivablesv1.LineItemInput{
			{Description: desc, Quantity: money.MustParse("2"), UnitPrice: money.MustParse("50"), TaxCode: "USt19"}}}
	}
	create := func(desc, key string) (receivablesv1.InvoiceCreated, error) {
		return inv.CreateInvoice(ctx, tenant, receivables.Request{Actor: "user:u", IdempotencyKey: key, Body: []byte(desc)}, input(desc))
	}
	status := func(id string) string {
		t.Helper()
		got, err := inv.Invoice(ctx, tenant, id)
		if err != nil {
			t.Fatal(err)
		}
		n := "-"
		if got.Number != nil {
			n = *got.Number
		}
		return n + " " + got.Status
	}

	// Issued at once: numbered, posted with the document, the event written.
	first, err := create("eins", "")
	if err != nil {
		t.Fatal(err)
	}
	if *first.Number != "RE-2026-00001" || first.Status != "open" || *first.BookingIntentID != receivables.BookingIntentID(tenant, first.InvoiceID) {
		t.Fatalf("first %+v", first)
	}
	p := led.posts[0]
	if p.Source != "receivables" || p.DocumentID != *first.DocumentID || p.Booking.BookingDate != "2026-03-01" || len(p.Booking.Lines) != 1 ||
		p.Booking.Lines[0].Amount.StringFixed(2) != "119.00" || p.Booking.Lines[0].ExternalReference != "RE-2026-00001" {
		t.Fatalf("posting %+v", p)
	}
	if n := count(t, owner, "SELECT count(*) FROM receivables.outbox WHERE subject = $1", receivablesv1.EventInvoiceIssued); n != 1 {
		t.Fatalf("%d events", n)
	}

	// An outage of the ledger: pending under its number; the same key resumes it.
	led.failPost = errs.E(errs.Unavailable, "ledger down")
	if _, err := create("zwei", "k-2"); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("outage: %v", err)
	}
	id2 := receivables.InvoiceIDFor(tenant, "user:u", "k-2")
	if got := status(id2); got != "RE-2026-00002 pending" {
		t.Fatalf("after the outage %s", got)
	}
	again, err := create("zwei", "k-2")
	if err != nil || *again.Number != "RE-2026-00002" || again.Status != "open" || again.InvoiceID != id2 {
		t.Fatalf("resumed %+v %v", again, err)
	}
	// The same key with another body is refused.
	if _, err := create("anders", "k-2"); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body: %v", err)
	}

	// An outage storing the PDF: pending; finalize resumes it.
	led.failUpload = errs.E(errs.Timeout, "slow")
	if _, err := create("drei", "k-3"); !errs.Is(err, errs.Timeout) {
		t.Fatalf("upload outage: %v", err)
	}
	id3 := receivables.InvoiceIDFor(tenant, "user:u", "k-3")
	if fin, err := inv.FinalizeInvoice(ctx, tenant, id3); err != nil || *fin.Number != "RE-2026-00003" || fin.Status != "open" {
		t.Fatalf("finalized %+v %v", fin, err)
	}

	// A definitive refusal voids the invoice; its number is not given again.
	led.failPost = errs.Invalid("the booking is invalid", errs.Field("booking.booking_date", "period 2026-03 is locked"))
	if _, err := create("vier", "k-4"); !errs.Is(err, errs.InvalidInput) {
		t.Fatalf("refusal: %v", err)
	}
	id4 := receivables.InvoiceIDFor(tenant, "user:u", "k-4")
	got4, err := inv.Invoice(ctx, tenant, id4)
	if err != nil || got4.Status != "void" || *got4.Number != "RE-2026-00004" || got4.VoidReason == nil {
		t.Fatalf("void %+v %v", got4, err)
	}
	if _, err := inv.FinalizeInvoice(ctx, tenant, id4); !errs.Is(err, errs.Conflict) {
		t.Fatalf("finalize void: %v", err)
	}

	// A draft: nothing numbered; finalised it takes the next number.
	in := input("fünf")
	in.Draft = true
	draft, err := inv.CreateInvoice(ctx, tenant, receivables.Request{Body: []byte("5")}, in)
	if err != nil || draft.Number != nil || draft.Status != "draft" {
		t.Fatalf("draft %+v %v", draft, err)
	}
	if _, _, err := s.InvoiceFile(ctx, tenant, draft.InvoiceID, true); !errs.Is(err, errs.NotFound) {
		t.Fatalf("draft's PDF: %v", err)
	}

	// An e-invoice refusal (AE without the buyer's VAT ID) takes no number.
	ae := input("sechs")
	ae.LineItems[0].TaxCode, ae.LineItems[0].TaxCategory = "", "AE"
	zero := money.MustParse("0")
	ae.LineItems[0].TaxRate = &zero
	_, err = inv.CreateInvoice(ctx, tenant, receivables.Request{Body: []byte("6")}, ae)
	if e := errs.As(err); e == nil || e.Code != errs.InvalidInput || len(e.Details) != 1 || e.Details[0].Field != "debtor.vatId" {
		t.Fatalf("AE without VAT ID: %v", err)
	}

	fin, err := inv.FinalizeInvoice(ctx, tenant, draft.InvoiceID)
	if err != nil || *fin.Number != "RE-2026-00005" {
		t.Fatalf("finalized draft %+v %v", fin, err)
	}
	if got := status(draft.InvoiceID); got != "RE-2026-00005 open" {
		t.Fatalf("draft after finalize: %s", got)
	}
	if len(led.posts) != 4 {
		t.Fatalf("%d postings, want 4 (one per posted invoice)", len(led.posts))
	}
	if n := count(t, owner, "SELECT count(*) FROM receivables.outbox WHERE subject = $1", receivablesv1.EventInvoiceIssued); n != 4 {
		t.Fatalf("%d events, want 4", n)
	}
	list, err := inv.Invoices(ctx, tenant, receivablesv1.InvoiceFilter{Status: "void", Limit: 10})
	if err != nil || len(list.Invoices) != 1 || list.Invoices[0].ID != id4 {
		t.Fatalf("void invoices %+v %v", list, err)
	}
	var states []string
	all, _ := inv.Invoices(ctx, tenant, receivablesv1.InvoiceFilter{Limit: 10})
	for _, i := range all.Invoices {
		states = append(states, *i.Number)
	}
	if diff := cmp.Diff([]string{"RE-2026-00005", "RE-2026-00004", "RE-2026-00003", "RE-2026-00002", "RE-2026-00001"}, states); diff != "" {
		t.Fatalf("list (-want +got):\n%s", diff)
	}
}

// TestInvoiceResumePendingWithoutFiles: issuing that stopped after the
// number was taken but before the XML and PDF were stored (a crash while
// rendering, which runs outside the number's lock) resumes by rendering
// them from the stored document model: the same number, posted once,
// files that are the model's deterministic rendering.
func TestInvoiceResumePendingWithoutFiles(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	d, err := s.CreateDebtor(ctx, tenant, debtor("Muster Handel GmbH", "K-1"))
	if err != nil {
		t.Fatal(err)
	}
	led := &fakeLedger{}
	inv := receivables.NewInvoicing(s, s, led, fakeTenants{})
	in := receivablesv1.InvoiceInput{DebtorID: d.ID, InvoiceDate: "2026-03-01", DueDate: "2099-12-31", Draft: true, LineItems: []receivablesv1.LineItemInput{
		{Description: "eins", Quantity: money.MustParse("3"), UnitPrice: money.MustParse("19.99"), TaxCode: "USt19"}}}
	draft, err := inv.CreateInvoice(ctx, tenant, receivables.Request{Body: []byte("1")}, in)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Invoice(ctx, tenant, draft.InvoiceID)
	if err != nil {
		t.Fatal(err)
	}
	ten, _ := fakeTenants{}.Tenant(ctx, tenant)
	set, err := s.InvoiceSettings(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 only, as issuing does it; the process then "crashes".
	pending, err := s.IssueInvoice(ctx, tenant, rec.ID, func(number string) (einvoice.Document, error) {
		doc := receivables.BuildDocument(rec, number, d, ten, set)
		return doc, doc.Compute()
	})
	if err != nil || pending.State != "pending" || pending.Number != "RE-2026-00001" || pending.HasFiles || pending.Document == nil {
		t.Fatalf("pending %+v %v", pending, err)
	}
	for _, pdf := range []bool{true, false} {
		if _, _, err := s.InvoiceFile(ctx, tenant, rec.ID, pdf); !errs.Is(err, errs.NotFound) {
			t.Fatalf("file (pdf %v) of a pending invoice without files: %v", pdf, err)
		}
	}

	fin, err := inv.FinalizeInvoice(ctx, tenant, rec.ID)
	if err != nil || *fin.Number != "RE-2026-00001" || fin.Status != "open" {
		t.Fatalf("resumed %+v %v", fin, err)
	}
	wantXML, err := einvoice.CII(*pending.Document)
	if err != nil {
		t.Fatal(err)
	}
	wantPDF, err := invoicepdf.Render(*pending.Document, wantXML)
	if err != nil {
		t.Fatal(err)
	}
	_, gotXML, err := s.InvoiceFile(ctx, tenant, rec.ID, false)
	if err != nil || !bytes.Equal(gotXML, wantXML) {
		t.Fatalf("stored XML differs from the document model's (%v)", err)
	}
	_, gotPDF, err := s.InvoiceFile(ctx, tenant, rec.ID, true)
	if err != nil || !bytes.Equal(gotPDF, wantPDF) {
		t.Fatalf("stored PDF differs from the document model's (%v)", err)
	}
	// Confirming again (a concurrent retry) changes nothing.
	if _, err := s.ConfirmInvoice(ctx, tenant, rec.ID, *fin.BookingIntentID, *fin.DocumentID, []byte("<x/>"), []byte("%PDF"), receivablesv1.InvoiceIssued{}); err != nil {
		t.Fatal(err)
	}
	if _, again, _ := s.InvoiceFile(ctx, tenant, rec.ID, true); !bytes.Equal(again, wantPDF) {
		t.Fatal("the files of a posted invoice were replaced")
	}
	if len(led.posts) != 1 || len(led.uploads) != 1 {
		t.Fatalf("%d postings, %d uploads, want 1 each", len(led.posts), len(led.uploads))
	}
	if n := count(t, owner, "SELECT count(*) FROM receivables.outbox WHERE subject = $1", receivablesv1.EventInvoiceIssued); n != 1 {
		t.Fatalf("%d events", n)
	}
}

func TestInvoiceSettings(t *testing.T) {
	s, _ := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	inv := receivables.NewInvoicing(s, s, &fakeLedger{}, fakeTenants{})
	iban, bic, empty := "de02 1203 0000 0000 2020 51", "BYLADEM1001", ""
	got, err := inv.PutSettings(ctx, tenant, receivablesv1.SettingsInput{PaymentIBAN: &iban, PaymentBIC: &bic})
	if err != nil || *got.PaymentIBAN != "DE02120300000000202051" || got.InvoiceNumberPrefix != "RE-" {
		t.Fatalf("put %+v %v", got, err)
	}
	if _, err := inv.PutSettings(ctx, tenant, receivablesv1.SettingsInput{PaymentBIC: &bic}); !errs.Is(err, errs.NoChanges) {
		t.Fatalf("no change: %v", err)
	}
	got, err = inv.PutSettings(ctx, tenant, receivablesv1.SettingsInput{PaymentBIC: &empty})
	if err != nil || got.PaymentBIC != nil || got.PaymentIBAN == nil {
		t.Fatalf("removed BIC %+v %v", got, err)
	}
	read, err := inv.Settings(ctx, tenant)
	if err != nil || !cmp.Equal(read, got) {
		t.Fatalf("read %+v, want %+v (%v)", read, got, err)
	}
}

// count runs a counting query as the schema owner.
func count(t *testing.T, owner *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := owner.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
