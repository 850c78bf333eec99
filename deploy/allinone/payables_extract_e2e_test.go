package allinone_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// einvoiceSample reads one of the e-invoice reader's sample files.
func einvoiceSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "services", "payables", "einvoicein", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var pdfcpuConfig sync.Once

// pdfWith is a one-page PDF with an e-invoice XML attached as name: how a
// CII or UBL invoice becomes a document, which the ledger keeps as PDF,
// JPEG or PNG only. seq is the attachment's modification time in seconds
// after a fixed one, for distinct PDFs of the same invoice.
func pdfWith(t testing.TB, name string, xmlData []byte, seq int) []byte {
	t.Helper()
	pdfcpuConfig.Do(api.DisableConfigDir)
	ctx, err := pdfcpu.CreateContextWithXRefTable(model.NewDefaultConfiguration(), types.PaperSize["A4"])
	if err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(seq) * time.Second)
	if err := ctx.AddAttachment(model.Attachment{Reader: bytes.NewReader(xmlData), ID: name, Desc: "invoice", ModTime: &mod}, false); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := api.WriteContext(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ocrTotals is the invoice number, totals and source of an OCR result as
// the API wrote it.
func ocrTotals(r resp) []any {
	return []any{r.Body["invoice_number"], r.Body["total_net"], r.Body["total_tax"], r.Body["total_gross"], r.Body["currency"], r.Body["source"]}
}

// TestOCRExtractRoute: POST /v1/ocr/extract through the gateway reads
// uploaded documents (a CII and a UBL invoice attached to a PDF, a
// ZUGFeRD PDF) on the extraction worker and answers their data, stored
// with the extraction; bad input, unknown and other tenants' documents,
// and a document that is no invoice are refused; kreditoren:write only.
func TestOCRExtractRoute(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Eingangsrechnungen GmbH")
	other, _ := p.newTenant("Fremde GmbH")
	w, reader := p.apiKey(admin, "kreditoren:write", "journal:write"), p.apiKey(admin, "kreditoren:read")
	upload := func(token, name string, data []byte) string {
		t.Helper()
		return p.upload(201, "/v1/documents", token, fileField(name, "application/pdf", data)).str("id")
	}
	cii := upload(w, "rechnung-cii.pdf", pdfWith(t, "xrechnung.xml", einvoiceSample(t, "kosit-01.05a-INVOICE_uncefact.xml"), 0))
	ubl := upload(w, "rechnung-ubl.pdf", pdfWith(t, "xrechnung.xml", einvoiceSample(t, "kosit-01.01a-INVOICE_ubl.xml"), 0))
	zugferd := upload(w, "zugferd.pdf", einvoiceSample(t, "mustang-EN16931_Einfach.pdf"))

	// An invoice attached to a PDF is read from the attachment, whatever
	// its syntax: the source is the container.
	for _, tt := range []struct {
		name, doc string
		want      []any
	}{
		{"CII", cii, []any{"PRG1502112", 8870.0, 1685.3, 10555.3, "EUR", "zugferd_pdf"}},
		{"UBL", ubl, []any{"123456XX", 314.86, 22.04, 336.9, "EUR", "zugferd_pdf"}},
		{"ZUGFeRD", zugferd, []any{"471102", 473.0, 56.87, 529.87, "EUR", "zugferd_pdf"}},
	} {
		r := p.must(200, "POST", "/v1/ocr/extract", w, map[string]any{"document_id": tt.doc})
		if diff := cmp.Diff(tt.want, ocrTotals(r)); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", tt.name, diff)
		}
		p.wantCount(1, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND document_id = $2 AND state = 'done'
			AND ocr_result->>'invoice_number' = $3 AND vendor_match->>'status' = 'unmatched'`, tenant, tt.doc, tt.want[0])
	}
	zr := p.must(200, "POST", "/v1/ocr/extract", w, map[string]any{"document_id": zugferd})
	if zr.str("vendor_name") != "Lieferant GmbH" || zr.str("vendor_vat_id") != "DE123456789" || len(zr.Body["line_items"].([]any)) != 2 {
		t.Fatalf("ZUGFeRD result %s", zr.Raw)
	}

	// Refusals: nothing is queued for them.
	before := count(t, p.owner, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1`, tenant)
	for _, body := range []any{map[string]any{}, map[string]any{"document_id": "nope"}, map[string]any{"document_id": 7},
		map[string]any{"document_id": cii, "tenant_id": uuid.NewString()}, "[]"} {
		p.expectError(400, "INVALID_INPUT", "POST", "/v1/ocr/extract", w, body)
	}
	p.expectError(404, "NOT_FOUND", "POST", "/v1/ocr/extract", w, map[string]any{"document_id": uuid.NewString()})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/ocr/extract", p.apiKey(other, "kreditoren:write"), map[string]any{"document_id": cii})
	p.expectError(403, "FORBIDDEN", "POST", "/v1/ocr/extract", reader, map[string]any{"document_id": cii})
	p.wantCount(before, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1`, tenant)

	// A PDF with no invoice in it: read and refused, with the reason.
	plain := upload(w, "brief.pdf", tinyPDF)
	r := p.expectError(400, "INVALID_INPUT", "POST", "/v1/ocr/extract", w, map[string]any{"document_id": plain})
	if r.str("error") == "" || len(r.Body["details"].([]any)) != 1 {
		t.Fatalf("no reason for the refusal: %s", r.Raw)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND document_id = $2 AND state = 'failed'
		AND error_code = 'INVALID_INPUT' AND attempts = 1`, tenant, plain)
}

// TestInboxItemExtraction: an inbox item's extraction, queued as the
// intake queues it, runs on the worker: the item is pending (awaiting
// review) again afterwards, and the extraction is done with the
// invoice's totals, checks and the vendor found by its VAT ID.
func TestInboxItemExtraction(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Posteingang GmbH")
	w := p.apiKey(admin, "kreditoren:write", "journal:write")
	vendor := p.must(201, "POST", "/v1/vendors", w, map[string]any{"name": "Lieferant", "vat_id": "DE123456789"}).str("id")
	data := einvoiceSample(t, "mustang-EN16931_Einfach.pdf")
	doc := p.upload(201, "/v1/documents", w, fileField("rechnung.pdf", "application/pdf", data)).str("id")

	ctx := context.Background()
	pool, err := migrate.ServicePool(ctx, p.owner, "", postgres.Schema.Role, 2, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := postgres.New(pool)
	item := uuid.NewString()
	if _, err := p.owner.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source)
		VALUES ($1, $2, $3, $4, 'application/pdf', 'rechnung.pdf', 'upload')`, item, tenant, doc, sha(data)); err != nil {
		t.Fatal(err)
	}
	id, err := store.EnqueueExtraction(ctx, tenant, doc, &item)
	if err != nil {
		t.Fatal(err)
	}
	var e payables.Extraction
	deadline := time.Now().Add(30 * time.Second)
	for e.State != payables.ExtractionDone {
		if time.Now().After(deadline) {
			t.Fatalf("extraction %s: %+v after 30s", id, e)
		}
		time.Sleep(50 * time.Millisecond)
		if e, err = store.Extraction(ctx, tenant, id); err != nil {
			t.Fatal(err)
		}
	}
	got := []string{e.Result.InvoiceNumber, e.Result.TotalNet.StringFixed(2), e.Result.TotalTax.StringFixed(2), e.Result.TotalGross.StringFixed(2)}
	if diff := cmp.Diff([]string{"471102", "473.00", "56.87", "529.87"}, got); diff != "" {
		t.Fatalf("totals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(payablesv1.VendorMatch{Status: "matched", VendorID: &vendor, Confidence: e.VendorMatch.Confidence, MatchMethod: ptrTo("vat_id")}, *e.VendorMatch); diff != "" || e.VendorMatch.Confidence.String() != "1" {
		t.Fatalf("vendor match (-want +got):\n%s %s", diff, e.VendorMatch.Confidence)
	}
	if e.Compliance == nil || !e.Compliance.IsInvoice || e.Compliance.Total == 0 || e.Attempts != 1 {
		t.Fatalf("extraction %+v", e)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'pending'`, item)
}

func ptrTo[T any](v T) *T { return &v }
