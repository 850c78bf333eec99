package postgres_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/payables"
)

// TestExtractionStates: an extraction and its inbox item through their
// states: queued with its work-queue message, running (again after a
// lost worker), done or failed once, never back; the item processing
// while it runs and pending after, unless it was decided meanwhile.
func TestExtractionStates(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	item := func(status string) string {
		t.Helper()
		id := uuid.NewString()
		hash := uuid.NewString() + uuid.NewString()
		if _, err := owner.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source, status)
			VALUES ($1, $2, $3, substr(replace($4, '-', ''), 1, 64), 'application/pdf', 'r.pdf', 'upload', $5)`, id, tenant, uuid.NewString(), hash, status); err != nil {
			t.Fatal(err)
		}
		return id
	}
	itemStatus := func(id string) string {
		t.Helper()
		var st string
		if err := owner.QueryRow(ctx, `SELECT status FROM payables.inbox_items WHERE id = $1`, id).Scan(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	type row struct {
		State     string
		Attempts  int
		Code, Why string
		Number    string
	}
	rowOf := func(id string) row {
		t.Helper()
		e, err := s.Extraction(ctx, tenant, id)
		if err != nil {
			t.Fatal(err)
		}
		r := row{State: e.State, Attempts: e.Attempts, Code: e.ErrorCode, Why: e.Error}
		if e.Result != nil {
			r.Number = e.Result.InvoiceNumber
		}
		return r
	}

	it := item(payablesv1.InboxPending)
	doc := uuid.NewString()
	id, err := s.EnqueueExtraction(ctx, tenant, doc, &it)
	if err != nil {
		t.Fatal(err)
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM payables.outbox WHERE subject = $1 AND convert_from(payload, 'UTF8')::jsonb->>'extraction_id' = $2`,
		payablesv1.SubjectExtractCommand, id); n != 1 {
		t.Fatalf("%d work-queue messages for the extraction", n)
	}
	if diff := cmp.Diff(row{State: "queued"}, rowOf(id)); diff != "" {
		t.Fatalf("queued (-want +got):\n%s", diff)
	}
	for attempt := 1; attempt <= 2; attempt++ { // the second: its worker was lost
		e, ok, err := s.StartExtraction(ctx, tenant, id)
		if err != nil || !ok || e.Attempts != attempt || e.DocumentID != doc || *e.InboxItemID != it || e.TenantID != tenant {
			t.Fatalf("start %d: %+v %v %v", attempt, e, ok, err)
		}
		if st := itemStatus(it); st != payablesv1.InboxProcessing {
			t.Fatalf("item %s while running", st)
		}
	}
	gross := money.MustParse("119.00")
	r := payablesv1.OCRResult{InvoiceNumber: "RE-1", TotalGross: &gross}
	c := payablesv1.ComplianceCheck{DocumentType: "invoice", IsInvoice: true}
	vid, method := uuid.NewString(), payablesv1.MatchByIBAN
	m := payablesv1.VendorMatch{Status: payablesv1.MatchMatched, VendorID: &vid, Confidence: money.MustParse("0.95"), MatchMethod: &method}
	if err := s.FinishExtraction(ctx, tenant, id, r, c, m); err != nil {
		t.Fatal(err)
	}
	done := row{State: "done", Attempts: 2, Number: "RE-1"}
	if diff := cmp.Diff(done, rowOf(id)); diff != "" {
		t.Fatalf("done (-want +got):\n%s", diff)
	}
	e, err := s.Extraction(ctx, tenant, id)
	if err != nil || e.Result.TotalGross.String() != "119" || *e.VendorMatch.VendorID != vid || e.VendorMatch.Confidence.String() != "0.95" || !e.Compliance.IsInvoice {
		t.Fatalf("stored %+v %v", e, err)
	}
	if st := itemStatus(it); st != payablesv1.InboxPending {
		t.Fatalf("item %s after extraction", st)
	}
	// Done is final: no start, no second result, no failure.
	if _, ok, err := s.StartExtraction(ctx, tenant, id); ok || err != nil {
		t.Fatalf("start after done: %v %v", ok, err)
	}
	r.InvoiceNumber = "OTHER"
	if err := s.FinishExtraction(ctx, tenant, id, r, c, m); err != nil {
		t.Fatal(err)
	}
	if err := s.FailExtraction(ctx, tenant, id, errs.OCRFailed, "x"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(done, rowOf(id)); diff != "" {
		t.Fatalf("after done (-want +got):\n%s", diff)
	}
	if st := itemStatus(it); st != payablesv1.InboxPending {
		t.Fatalf("item %s", st)
	}

	// Failed; an item confirmed meanwhile keeps its status.
	decided := item(payablesv1.InboxConfirmed)
	failing, err := s.EnqueueExtraction(ctx, tenant, uuid.NewString(), &decided)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.StartExtraction(ctx, tenant, failing); !ok || err != nil {
		t.Fatalf("start: %v %v", ok, err)
	}
	if err := s.FailExtraction(ctx, tenant, failing, errs.InvalidInput, "not an invoice"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(row{State: "failed", Attempts: 1, Code: errs.InvalidInput, Why: "not an invoice"}, rowOf(failing)); diff != "" {
		t.Fatalf("failed (-want +got):\n%s", diff)
	}
	if _, ok, err := s.StartExtraction(ctx, tenant, failing); ok || err != nil {
		t.Fatalf("start after failed: %v %v", ok, err)
	}
	if st := itemStatus(decided); st != payablesv1.InboxConfirmed {
		t.Fatalf("decided item %s", st)
	}

	// Without an inbox item (POST /v1/ocr/extract); other tenants see none.
	plain, err := s.EnqueueExtraction(ctx, tenant, uuid.NewString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.StartExtraction(ctx, tenant, plain); !ok || err != nil {
		t.Fatalf("start: %v %v", ok, err)
	}
	other := uuid.NewString()
	for _, x := range []string{id, plain, uuid.NewString()} {
		if _, err := s.Extraction(ctx, other, x); !errs.Is(err, errs.NotFound) {
			t.Fatalf("other tenant reads %s: %v", x, err)
		}
		if _, _, err := s.StartExtraction(ctx, other, x); !errs.Is(err, errs.NotFound) {
			t.Fatalf("other tenant starts %s: %v", x, err)
		}
	}
}

// TestMatchVendors: the candidates of vendor matching are the tenant's
// active vendors, by name.
func TestMatchVendors(t *testing.T) {
	s, _ := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	for _, v := range []payables.Vendor{vendor("Zeta KG"), vendor("alpha GmbH"), {ID: uuid.NewString(), Name: "Beta AG"}} {
		if _, err := s.CreateVendor(ctx, tenant, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateVendor(ctx, uuid.NewString(), vendor("Fremd GmbH")); err != nil {
		t.Fatal(err)
	}
	vs, err := s.MatchVendors(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha GmbH", "Zeta KG"}, names(vs)); diff != "" {
		t.Fatalf("candidates (-want +got):\n%s", diff)
	}
}
