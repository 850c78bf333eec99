package allinone_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/payablesd"
)

// brokenOCR is an extractor whose tools fail on every document, as a
// crashing OCR engine does.
type brokenOCR struct{}

func (brokenOCR) Extract(context.Context, []byte, string) (payablesv1.OCRResult, payablesv1.ComplianceCheck, error) {
	return payablesv1.OCRResult{}, payablesv1.ComplianceCheck{}, errors.New("tesseract: signal: segmentation fault")
}

// startOCRWorker runs an extraction worker process (PAYABLES_API=off) on
// the platform's NATS and database, as the payables-ocr deployment does,
// with the given extractor.
func startOCRWorker(t *testing.T, p *platform, svc func(func(string) string) (daemon.Service, error)) {
	t.Helper()
	vars := map[string]string{"PAYABLES_API": "off", "PAYABLES_EXTRACT_WORKERS": "1", "PAYABLES_DB_MAX_CONNS": "3"}
	getenv := func(k string) string { return vars[k] }
	s, err := svc(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(s.Name, getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Key, cfg.Trust, cfg.DatabaseURL = p.bus.URL, p.bus.Key(t, s.Name), p.bus.Trust, p.dbURL
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, s, cfg, daemon.Deps{Pool: p.owner, Log: testLogger(t), Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err, ok := receiveWithin(done, 20*time.Second); !ok || err != nil {
			t.Errorf("OCR worker stopped: %v (in time: %v)", err, ok)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("OCR worker did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("OCR worker not ready within 30s")
	}
}

// TestOCRExtractFailed: when reading a document fails inside on every
// attempt (the OCR tools of the payables-ocr workers crash), POST
// /v1/ocr/extract answers 500 OCR_FAILED after the worker's retries, with
// nothing of the internal error; the extraction is failed for good.
func TestOCRExtractFailed(t *testing.T) {
	p, admin, tenant := setup(t, env{"PAYABLES_EXTRACT_WORKERS": "0"}, "Kaputte OCR GmbH")
	startOCRWorker(t, p, payablesd.ServiceWith(brokenOCR{}))
	w := p.apiKey(admin, "kreditoren:write", "journal:write")
	doc := p.upload(201, "/v1/documents", w, fileField("zugferd.pdf", "application/pdf", einvoiceSample(t, "mustang-EN16931_Einfach.pdf"))).str("id")
	r := p.expectError(500, "OCR_FAILED", "POST", "/v1/ocr/extract", w, map[string]any{"document_id": doc})
	if r.str("error") != "the document could not be read" {
		t.Fatalf("error %s", r.Raw)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND document_id = $2 AND state = 'failed'
		AND error_code = 'OCR_FAILED' AND attempts = $3`, tenant, doc, payables.MaxExtractAttempts)
}
