package payablesd_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/payablesd"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// document is one of the fake ledger's documents; nil data is a document
// whose file is gone.
type document struct {
	mime string
	data []byte
}

// fakeDocuments answers ledger.v1.documents.file for the payables
// service's own principal, as the ledger does, from its documents; script
// lists the answers of the next calls ("" the document, else that error
// code), for a ledger that fails now and then.
type fakeDocuments struct {
	mu     sync.Mutex
	docs   map[string]document // tenant/id -> document
	script []string
	calls  int
}

func (f *fakeDocuments) service() daemon.Service {
	file := func(ctx context.Context, id string) (*natsx.Response, error) {
		tenant := natsx.Claims(ctx).TenantID
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls++
		if len(f.script) > 0 {
			code := f.script[0]
			f.script = f.script[1:]
			if code != "" {
				return nil, errs.E(code, "the ledger failed")
			}
		}
		d, ok := f.docs[tenant+"/"+id]
		if !ok {
			return nil, errs.NotFoundf("document %s not found", id)
		}
		if d.data == nil {
			return &natsx.Response{Raw: []byte{}, ContentType: d.mime}, nil
		}
		return &natsx.Response{Raw: d.data, ContentType: d.mime}, nil
	}
	return daemon.Service{Name: "ledger", Build: func(context.Context, daemon.Env) (daemon.Parts, error) {
		return daemon.Parts{Routes: []natsx.Route{{Subject: ledgerv1.SubjectDocumentsFile, Callers: []string{payablesv1.ServiceName},
			Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(file)}}}, nil
	}}
}

func (f *fakeDocuments) add(tenant string, d document) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := uuid.NewString()
	f.docs[tenant+"/"+id] = d
	return id
}

func (f *fakeDocuments) fail(codes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = codes
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "einvoicein", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startExtract runs the payables service (API and one worker) on a fake
// ledger's documents, and returns a store on the service's role for what
// the intake will do (inbox items).
func startExtract(t *testing.T) (*testkit.RPC, *fakeDocuments, *postgres.Store) {
	t.Helper()
	h := testkit.NewRPC(t, postgres.Schema)
	docs := &fakeDocuments{docs: map[string]document{}}
	h.Start(docs.service(), nil)
	svc, err := payablesd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, nil)
	pool, err := migrate.ServicePool(context.Background(), h.Pool, "", postgres.Schema.Role, 4, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return h, docs, postgres.New(pool)
}

// totals are the invoice number, the totals with two decimals and the
// source of a result.
type totals struct{ Number, Net, Tax, Gross, Source string }

func totalsOf(r payablesv1.OCRResult) totals {
	out := totals{Number: r.InvoiceNumber, Source: r.Source}
	if r.TotalNet != nil && r.TotalTax != nil && r.TotalGross != nil {
		out.Net, out.Tax, out.Gross = r.TotalNet.StringFixed(2), r.TotalTax.StringFixed(2), r.TotalGross.StringFixed(2)
	}
	return out
}

// TestOCRExtract: POST /v1/ocr/extract reads the tenant's document on a
// worker and answers (and stores) the result; an unknown document, one
// whose file is gone and bad input are refused before anything is queued;
// an unreadable document fails at once; a ledger failing inside is
// retried, and failing every attempt is OCR_FAILED.
func TestOCRExtract(t *testing.T) {
	t.Parallel()
	h, docs, _ := startExtract(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	as := &auth.Claims{TenantID: alice, KeyID: "k", Scopes: []string{"kreditoren:write"}}
	extract := func(id string) testkit.Rq {
		return testkit.Rq{As: as, Body: payablesv1.ExtractInput{DocumentID: id}}
	}
	queued := func() int {
		return testkit.Count(t, h.Pool, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1`, alice)
	}

	cii := docs.add(alice, document{"application/xml", sample(t, "kosit-01.05a-INVOICE_uncefact.xml")})
	var r payablesv1.OCRResult
	h.OK(payablesv1.SubjectOCRExtract, extract(cii), 200, &r)
	if diff := cmp.Diff(totals{"PRG1502112", "8870.00", "1685.30", "10555.30", "einvoice_cii"}, totalsOf(r)); diff != "" {
		t.Fatalf("CII (-want +got):\n%s", diff)
	}
	if r.VendorIBAN != "DE79000000001234567890" || r.VendorVATID != "DE123456789" || len(r.LineItems) != 4 {
		t.Fatalf("CII: %+v", r)
	}
	var stored string
	if err := h.Pool.QueryRow(context.Background(), `SELECT ocr_result->>'invoice_number' FROM payables.extractions
		WHERE tenant_id = $1 AND document_id = $2 AND state = 'done' AND attempts = 1 AND finished_at IS NOT NULL`, alice, cii).Scan(&stored); err != nil || stored != "PRG1502112" {
		t.Fatalf("stored result %q, %v", stored, err)
	}

	// Refused before anything is queued.
	n := queued()
	h.Fails(payablesv1.SubjectOCRExtract, extract(uuid.NewString()), 404, errs.NotFound)
	h.Fails(payablesv1.SubjectOCRExtract, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}, Body: payablesv1.ExtractInput{DocumentID: cii}}, 404, errs.NotFound)
	gone := docs.add(alice, document{"application/pdf", nil})
	h.Fails(payablesv1.SubjectOCRExtract, extract(gone), 404, errs.FileNotFound)
	for _, body := range []string{`{}`, `{"document_id":""}`, `{"document_id":"x"}`, `{"document_id":42}`, `{"document_id":"` + cii + `","x":1}`, `not json`} {
		h.Fails(payablesv1.SubjectOCRExtract, testkit.Rq{As: as, Body: body}, 400, errs.InvalidInput)
	}
	if queued() != n {
		t.Fatalf("refused requests queued %d extractions", queued()-n)
	}

	// A document that is no invoice fails at the first attempt, with
	// the reader's reason.
	junk := docs.add(alice, document{"application/pdf", []byte("%PDF-1.7\nnot really a PDF")})
	rep := h.Fails(payablesv1.SubjectOCRExtract, extract(junk), 400, errs.InvalidInput)
	if rep.Err.Error == "" {
		t.Fatal("no reason for the refused document")
	}
	wantRow(t, h, alice, junk, "failed", 1, errs.InvalidInput)

	// The ledger fails inside twice while the worker reads: retried.
	ubl := docs.add(alice, document{"application/xml", sample(t, "kosit-01.01a-INVOICE_ubl.xml")})
	docs.fail("", errs.Unavailable, errs.Timeout)
	h.OK(payablesv1.SubjectOCRExtract, extract(ubl), 200, &r)
	if diff := cmp.Diff(totals{"123456XX", "314.86", "22.04", "336.90", "einvoice_ubl"}, totalsOf(r)); diff != "" {
		t.Fatalf("UBL (-want +got):\n%s", diff)
	}
	wantRow(t, h, alice, ubl, "done", 3, "")

	// ... and on every attempt: OCR_FAILED after the last.
	pdf := docs.add(alice, document{"application/pdf", sample(t, "mustang-EN16931_Einfach.pdf")})
	fails := []string{""}
	for range payables.MaxExtractAttempts {
		fails = append(fails, errs.Unavailable)
	}
	docs.fail(fails...)
	h.Fails(payablesv1.SubjectOCRExtract, extract(pdf), 500, errs.OCRFailed)
	wantRow(t, h, alice, pdf, "failed", payables.MaxExtractAttempts, errs.OCRFailed)
	h.OK(payablesv1.SubjectOCRExtract, extract(pdf), 200, &r)
	if diff := cmp.Diff(totals{"471102", "473.00", "56.87", "529.87", "zugferd_pdf"}, totalsOf(r)); diff != "" {
		t.Fatalf("ZUGFeRD PDF (-want +got):\n%s", diff)
	}
	// Every job was acknowledged: none is left in the queue.
	wantQueueEmpty(t, h)
}

// wantRow asserts the state, attempts and error code of the latest
// extraction of a document.
func wantRow(t *testing.T, h *testkit.RPC, tenant, doc, state string, attempts int, code string) {
	t.Helper()
	var gotState, gotCode string
	var gotAttempts int
	if err := h.Pool.QueryRow(context.Background(), `SELECT state, attempts, coalesce(error_code, '') FROM payables.extractions
		WHERE tenant_id = $1 AND document_id = $2 ORDER BY created_at DESC LIMIT 1`, tenant, doc).Scan(&gotState, &gotAttempts, &gotCode); err != nil {
		t.Fatal(err)
	}
	if gotState != state || gotAttempts != attempts || gotCode != code {
		t.Fatalf("extraction of %s: %s after %d attempts %q, want %s after %d %q", doc, gotState, gotAttempts, gotCode, state, attempts, code)
	}
}

func wantQueueEmpty(t *testing.T, h *testkit.RPC) {
	t.Helper()
	testkit.Eventually(t, "the extraction queue to drain", func() bool {
		c, err := h.JS.Consumer(context.Background(), payablesv1.StreamExtract, payablesd.ExtractWorker)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(context.Background())
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})
}

// TestInboxExtraction: the extraction of an inbox item (queued as the
// intake queues it) moves the item to processing while it runs and back
// to pending when done, stores result, checks and vendor match, and a
// redelivered job changes nothing.
func TestInboxExtraction(t *testing.T) {
	t.Parallel()
	h, docs, store := startExtract(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	vendor, err := store.CreateVendor(ctx, tenant, payables.Vendor{ID: uuid.NewString(), Name: "Lieferant GmbH", IsActive: true})
	if err != nil {
		t.Fatal(err)
	}
	doc := docs.add(tenant, document{"application/pdf", sample(t, "mustang-EN16931_Einfach.pdf")})
	item := uuid.NewString()
	if _, err := h.Pool.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source)
		VALUES ($1, $2, $3, $4, 'application/pdf', 'rechnung.pdf', 'upload')`, item, tenant, doc, fmtHash(doc)); err != nil {
		t.Fatal(err)
	}
	id, err := store.EnqueueExtraction(ctx, tenant, doc, &item)
	if err != nil {
		t.Fatal(err)
	}
	var e payables.Extraction
	testkit.Eventually(t, "the extraction", func() bool {
		e, err = store.Extraction(ctx, tenant, id)
		return err == nil && e.State == payables.ExtractionDone
	})
	if diff := cmp.Diff(totals{"471102", "473.00", "56.87", "529.87", "zugferd_pdf"}, totalsOf(*e.Result)); diff != "" {
		t.Fatalf("result (-want +got):\n%s", diff)
	}
	if m := e.VendorMatch; m == nil || m.Status != payablesv1.MatchMatched || *m.VendorID != vendor.ID || *m.MatchMethod != payablesv1.MatchByName {
		t.Fatalf("vendor match %+v", m)
	}
	if c := e.Compliance; c == nil || !c.IsInvoice || c.Total == 0 {
		t.Fatalf("compliance %+v", c)
	}
	if n := testkit.Count(t, h.Pool, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'pending'`, item); n != 1 {
		t.Fatal("the inbox item is not pending (awaiting review) after its extraction")
	}
	// The same job again (a redelivery): done stays done.
	if _, err := h.JS.Publish(ctx, payablesv1.SubjectExtractCommand, []byte(`{"tenant_id":"`+tenant+`","extraction_id":"`+id+`"}`)); err != nil {
		t.Fatal(err)
	}
	// A malformed command is poison: acknowledged, not retried.
	if _, err := h.JS.Publish(ctx, payablesv1.SubjectExtractCommand, []byte(`{"tenant_id":""}`)); err != nil {
		t.Fatal(err)
	}
	wantQueueEmpty(t, h)
	if again, err := store.Extraction(ctx, tenant, id); err != nil || again.Attempts != 1 || again.State != payables.ExtractionDone {
		t.Fatalf("after a redelivery: %+v, %v", again, err)
	}
}

// TestInboxItemProcessing: while its extraction runs (here: waits for a
// ledger that fails), the inbox item is processing.
func TestInboxItemProcessing(t *testing.T) {
	t.Parallel()
	h, docs, store := startExtract(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	doc := docs.add(tenant, document{"application/xml", sample(t, "kosit-01.01a-INVOICE_ubl.xml")})
	docs.fail(errs.Unavailable, errs.Unavailable)
	item := uuid.NewString()
	if _, err := h.Pool.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source)
		VALUES ($1, $2, $3, $4, 'application/xml', 'rechnung.xml', 'email')`, item, tenant, doc, fmtHash(doc)); err != nil {
		t.Fatal(err)
	}
	id, err := store.EnqueueExtraction(ctx, tenant, doc, &item)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the inbox item processing", func() bool {
		return testkit.Count(t, h.Pool, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'processing'`, item) == 1
	})
	testkit.Eventually(t, "the extraction", func() bool {
		e, err := store.Extraction(ctx, tenant, id)
		return err == nil && e.State == payables.ExtractionDone && e.Attempts == 3
	})
	if n := testkit.Count(t, h.Pool, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'pending'`, item); n != 1 {
		t.Fatal("the inbox item is not pending after its extraction")
	}
}

// fmtHash is a stand-in SHA-256 for an inbox item: unique per document.
func fmtHash(doc string) string {
	h := []byte{}
	for _, c := range []byte(doc + doc) {
		if c != '-' {
			h = append(h, c)
		}
	}
	return string(h[:64])
}

// TestOCRWorkerProcess: with PAYABLES_API=off a payables process is an
// extraction worker only: the API process (without workers) gets its
// results from it, and once the API process is gone nothing answers.
func TestOCRWorkerProcess(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Schema)
	docs := &fakeDocuments{docs: map[string]document{}}
	h.Start(docs.service(), nil)
	svc, err := payablesd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	stopAPI := h.Start(svc, map[string]string{"PAYABLES_EXTRACT_WORKERS": "0"})
	h.Start(svc, map[string]string{"PAYABLES_API": "off", "PAYABLES_EXTRACT_WORKERS": "2"})
	tenant := uuid.NewString()
	as := &auth.Claims{TenantID: tenant, KeyID: "k", Scopes: []string{"kreditoren:write"}}
	doc := docs.add(tenant, document{"application/xml", sample(t, "kosit-01.18a-INVOICE_ubl.xml")})
	var r payablesv1.OCRResult
	h.OK(payablesv1.SubjectOCRExtract, testkit.Rq{As: as, Body: payablesv1.ExtractInput{DocumentID: doc}}, 200, &r)
	if r.Source != "einvoice_ubl" || r.TotalGross == nil {
		t.Fatalf("result %+v", r)
	}
	if err := stopAPI(); err != nil {
		t.Fatal(err)
	}
	// The worker still runs (and answers pings), but serves no route.
	_, err = h.Client.Do(auth.WithClaims(context.Background(), as), payablesv1.SubjectOCRExtract, &natsx.Request{Body: []byte(`{"document_id":"` + doc + `"}`)})
	if !errs.Is(err, errs.Unavailable) {
		t.Fatalf("without the API process: %v, want UNAVAILABLE", err)
	}
}
