package allinone_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	payablespg "github.com/ledgerplatform/ledger/services/payables/postgres"
)

// openReviewCase stands in for the extraction worker: it inserts an inbox
// item and its done extraction for tenant and opens the review case in
// one transaction, as the worker will. It returns the case and the inbox
// item.
func openReviewCase(t testing.TB, p *platform, tenant string, ocr payablesv1.OCRResult, cc payablesv1.ComplianceCheck, match payablesv1.VendorMatch) (caseID, item string) {
	t.Helper()
	ctx := context.Background()
	item, doc, ext := uuid.NewString(), uuid.NewString(), uuid.NewString()
	o, _ := json.Marshal(ocr)
	c, _ := json.Marshal(cc)
	m, _ := json.Marshal(match)
	err := db.InTenant(ctx, p.owner, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source)
			VALUES ($1, $2, $3, $4, 'application/pdf', 'rechnung.pdf', 'upload')`, item, tenant, doc, fmt.Sprintf("%x", sha256.Sum256([]byte(item)))); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO payables.extractions (id, tenant_id, document_id, inbox_item_id, state, ocr_result, compliance_check, vendor_match, finished_at)
			VALUES ($1, $2, $3, $4, 'done', $5, $6, $7, now())`, ext, tenant, doc, item, o, c, m); err != nil {
			return err
		}
		var err error
		caseID, err = payablespg.OpenReviewCase(ctx, tx, tenant, ext)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return caseID, item
}

func amountPtr(s string) *money.Amount { a := money.MustParse(s); return &a }
func strPtr(s string) *string          { return &s }

// ocrInvoice is an extracted invoice of vendor name and VAT ID: one line
// of net at rate, the totals stated.
func ocrInvoice(name, vatID, number, date, net, rate string) payablesv1.OCRResult {
	n := money.MustParse(net)
	r := money.MustParse(rate)
	tax := money.New(n.Decimal.Mul(r.Decimal).Div(money.MustParse("100").Decimal).Round(2))
	gross := n.Add(tax)
	return payablesv1.OCRResult{VendorName: name, VendorVATID: vatID, InvoiceNumber: number, InvoiceDate: &date, Currency: "EUR",
		TotalNet: &n, TotalTax: &tax, TotalGross: &gross,
		TaxBreakdown: []payablesv1.TaxLine{{Rate: r, Net: n, Tax: tax}},
		LineItems:    []payablesv1.OCRLine{{Description: "Leistung", TaxRate: &r, LineTotal: &n}}}
}

func compliantCheck() payablesv1.ComplianceCheck {
	return payablesv1.ComplianceCheck{DocumentType: "invoice", IsInvoice: true, Compliant: true, Passed: 10, Total: 10,
		Checks: []payablesv1.CheckEntry{{Rule: "UStG 14(4) Nr. 1", Label: "Name und Anschrift des leistenden Unternehmers", Status: payablesv1.CheckPassed}}}
}

func vendorMatched(id string) payablesv1.VendorMatch {
	return payablesv1.VendorMatch{Status: payablesv1.MatchMatched, VendorID: &id, Confidence: money.MustParse("0.98"), MatchMethod: strPtr("vat_id")}
}

// reviewFixture opens the contract test's review cases: one to approve
// over REST, one over MCP, one to reject each way, one to correct; and
// approves one more, whose incoming invoice the invoice routes read.
func (f *fixture) reviewFixture() {
	t, p := f.p.t, f.p
	open := func(number string) string {
		id, _ := openReviewCase(t, p, f.tenant, ocrInvoice("Fixture Lieferant "+f.label, "DE123456789", number, "2026-01-15", "100.00", "19"),
			compliantCheck(), vendorMatched(f.vendor))
		return id
	}
	f.caseApprove, f.caseApproveMCP = open("FX-1"), open("FX-2")
	f.caseReject, f.caseRejectMCP = open("FX-3"), open("FX-4")
	f.caseCorrect = open("FX-5")
	booked := open("FX-6")
	f.incomingInvoice = p.must(200, "POST", "/v1/invoice-review-cases/"+booked+"/approve", f.admin, nil).str("incoming_invoice_id")
}

// reviewCaseState is "queue_state issue-fields" of a case.
func reviewCaseState(p *platform, token, id string) resp {
	p.t.Helper()
	return p.must(200, "GET", "/v1/invoice-review-cases/"+id, token, nil)
}

// incomingState is "status remaining" of one incoming invoice.
func incomingState(p *platform, token, id string) string {
	p.t.Helper()
	r := p.must(200, "GET", "/v1/invoices/"+id, token, nil)
	return fmt.Sprintf("%s %.2f", r.str("status"), r.Body["remaining_amount"])
}

// TestInvoiceReviewRoutes: review cases through the gateway: the queue
// states OpenReviewCase sets, correction, rejection and approval with
// every refusal; the posting in the ledger, posting_failed in a locked
// period and success after reopening, one posting however often approve
// is called; the incoming invoices, their open items and their payment by
// a real bank reconciliation.
func TestInvoiceReviewRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Eingangsrechnungen GmbH")
	reader := p.apiKey(admin, "kreditoren:read")
	writer := p.apiKey(admin, "kreditoren:read", "kreditoren:write")
	reviewer := p.apiKey(admin, "kreditoren:read", "kreditoren:review")
	journal := p.apiKey(admin, "journal:read")
	bank := p.apiKey(admin, "bank:read", "bank:write", "journal:read")
	outsider := p.apiKey(admin, "debitoren:read")
	vendor := p.must(201, "POST", "/v1/vendors", writer, map[string]any{"name": "Bürobedarf Nord GmbH", "vat_id": "DE987654321"}).str("id")

	// The cases the extractions open.
	complete, completeItem := openReviewCase(t, p, tenant, ocrInvoice("Bürobedarf Nord GmbH", "DE987654321", "R-100", "2026-03-02", "100.00", "19"),
		compliantCheck(), vendorMatched(vendor))
	incomplete, _ := openReviewCase(t, p, tenant, ocrInvoice("Buerobedarf Nord", "DE 987 654 321", "", "2026-03-05", "50.00", "7"),
		compliantCheck(), payablesv1.VendorMatch{Status: payablesv1.MatchNone})
	duplicate, _ := openReviewCase(t, p, tenant, ocrInvoice("Bürobedarf Nord GmbH", "DE987654321", "r-100", "2026-03-09", "10.00", "19"),
		compliantCheck(), vendorMatched(vendor))
	spam, spamItem := openReviewCase(t, p, tenant, payablesv1.OCRResult{VendorName: "Newsletter"},
		payablesv1.ComplianceCheck{DocumentType: "not_an_invoice"}, payablesv1.VendorMatch{Status: payablesv1.MatchNone})

	got := reviewCaseState(p, reader, complete)
	inv := got.Body["invoice"].(map[string]any)
	if got.str("queue_state") != "approval" || inv["vendor_id"] != vendor || inv["due_date"] != "2026-04-01" || fmt.Sprint(inv["total_gross"]) != "119" ||
		fmt.Sprint(got.Body["duplicate_hints"]) != "[]" || len(got.list("vendor_candidates")) != 1 {
		t.Fatalf("complete case %s", got.Raw)
	}
	if lines := inv["lines"].([]any); len(lines) != 1 || lines[0].(map[string]any)["account"] != "6300" {
		t.Fatalf("lines %v", inv["lines"])
	}
	got = reviewCaseState(p, reader, incomplete)
	if got.str("queue_state") != "correction" || fmt.Sprint(got.list("issues")) != "[map[field:vendor_id issue:no vendor matched: choose one of the vendor candidates or create the vendor] map[field:invoice_number issue:missing]]" ||
		got.list("vendor_candidates")[0]["vendor_id"] != vendor || got.list("vendor_suggestions")[0]["vat_id"] != "DE 987 654 321" {
		t.Fatalf("incomplete case %s", got.Raw)
	}
	got = reviewCaseState(p, reader, duplicate)
	if h := got.list("duplicate_hints"); got.str("queue_state") != "exception" || len(h) != 1 || h[0]["kind"] != "same_vendor_number" || h[0]["review_case_id"] != complete {
		t.Fatalf("duplicate case %s", got.Raw)
	}
	if s := reviewCaseState(p, reader, spam).str("queue_state"); s != "exception" {
		t.Fatalf("not an invoice: %s", s)
	}
	queue := func(q string) []string {
		out := []string{}
		for _, c := range p.must(200, "GET", "/v1/invoice-review-cases"+q, reader, nil).list("cases") {
			out = append(out, c["id"].(string))
			if _, ok := c["duplicate_hints"]; ok {
				t.Fatalf("the list shows duplicate hints: %v", c)
			}
		}
		return out
	}
	if d := cmp.Diff([]string{spam, duplicate, incomplete, complete}, queue("")); d != "" {
		t.Errorf("queue (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{spam, duplicate}, queue("?queue_state=exception")); d != "" {
		t.Errorf("exceptions (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{duplicate}, queue("?queue_state=exception&limit=1&offset=1")); d != "" {
		t.Errorf("a page (-want +got):\n%s", d)
	}

	// Refusals change nothing.
	p.expectInvalid([]string{"queue_state"}, "GET", "/v1/invoice-review-cases?queue_state=pending", reader, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/invoice-review-cases?limit=201", reader, nil)
	p.expectInvalid([]string{"offset"}, "GET", "/v1/invoice-review-cases?offset=-1", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoice-review-cases/"+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoice-review-cases/nope", reader, nil)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/invoice-review-cases/"+complete+"/approve", writer, nil)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/invoice-review-cases/"+complete+"/reject", writer, map[string]any{"reason": "x"})
	p.expectError(403, "FORBIDDEN", "POST", "/v1/invoice-review-cases/"+complete+"/correct", reviewer, map[string]any{"invoice_number": "x"})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/invoice-review-cases/"+uuid.NewString()+"/approve", reviewer, nil)
	p.expectInvalid([]string{"vendor_id", "invoice_number"}, "POST", "/v1/invoice-review-cases/"+incomplete+"/approve", reviewer, nil)
	p.expectInvalid([]string{"invoice_date", "lines[0].tax_rate", "lines[0].net"}, "POST", "/v1/invoice-review-cases/"+incomplete+"/correct", writer,
		map[string]any{"invoice_date": "2026-02-30", "lines": []any{map[string]any{"tax_rate": 5, "net": 0}}})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/invoice-review-cases/"+incomplete+"/correct", writer, map[string]any{"vendor": vendor})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/invoice-review-cases/"+incomplete+"/correct", writer, map[string]any{"vendor_id": uuid.NewString()})
	p.expectError(400, "ACCOUNT_NOT_FOUND", "POST", "/v1/invoice-review-cases/"+incomplete+"/correct", writer,
		map[string]any{"lines": []any{map[string]any{"account": "99999", "tax_rate": 7, "net": 50}}})
	p.expectInvalid([]string{"reason"}, "POST", "/v1/invoice-review-cases/"+spam+"/reject", reviewer, map[string]any{"reason": " "})
	for _, path := range []string{"/v1/invoice-review-cases", "/v1/invoice-review-cases/" + complete, "/v1/invoices", "/v1/invoices/open-items"} {
		p.expectError(403, "FORBIDDEN", "GET", path, outsider, nil)
		p.expectError(401, "UNAUTHENTICATED", "GET", path, "", nil)
	}
	if s := reviewCaseState(p, reader, incomplete); s.str("queue_state") != "correction" || s.Body["updated_at"] != s.Body["created_at"] {
		t.Fatalf("a refusal changed the case: %s", s.Raw)
	}

	// Correction: the vendor, the number, a 7 % line to 6815; then approval.
	corrected := p.must(200, "POST", "/v1/invoice-review-cases/"+incomplete+"/correct", writer, map[string]any{"vendor_id": vendor,
		"invoice_number": "R-200", "lines": []any{map[string]any{"description": "Fachbücher", "account": "6815", "tax_rate": 7, "net": 50}},
		"total_gross": 53.5})
	if ci := corrected.Body["invoice"].(map[string]any); corrected.str("queue_state") != "approval" || fmt.Sprint(ci["total_tax"]) != "3.5" ||
		ci["vendor_name"] != "Bürobedarf Nord GmbH" || len(corrected.list("issues")) != 0 {
		t.Fatalf("corrected %s", corrected.Raw)
	}
	// A stated gross the lines do not reach sends it back to correction.
	if s := p.must(200, "POST", "/v1/invoice-review-cases/"+duplicate+"/correct", writer, map[string]any{"total_gross": 12}); s.str("queue_state") != "exception" {
		t.Fatalf("duplicate corrected %s", s.Raw)
	}
	if s := p.must(200, "POST", "/v1/invoice-review-cases/"+duplicate+"/correct", writer, map[string]any{"invoice_number": "R-101"}); s.str("queue_state") != "correction" ||
		s.list("issues")[0]["field"] != "total_gross" {
		t.Fatalf("duplicate renumbered %s", s.Raw)
	}
	// The complete one falls due far ahead, so that it shows open until paid.
	p.must(200, "POST", "/v1/invoice-review-cases/"+complete+"/correct", writer, map[string]any{"due_date": "2099-12-31"})

	// Rejection.
	rejected := p.must(200, "POST", "/v1/invoice-review-cases/"+spam+"/reject", reviewer, map[string]any{"reason": "Werbung, keine Rechnung"})
	if rejected.str("queue_state") != "rejected" || rejected.str("reject_reason") != "Werbung, keine Rechnung" {
		t.Fatalf("rejected %s", rejected.Raw)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'rejected'`, spamItem)
	p.expectError(409, "CONFLICT", "POST", "/v1/invoice-review-cases/"+spam+"/approve", reviewer, nil)
	p.expectError(409, "CONFLICT", "POST", "/v1/invoice-review-cases/"+spam+"/reject", reviewer, map[string]any{"reason": "nochmal"})
	p.expectError(409, "CONFLICT", "POST", "/v1/invoice-review-cases/"+spam+"/correct", writer, map[string]any{"invoice_number": "x"})

	// A locked period: the posting is refused, the case posting_failed.
	p.must(200, "POST", "/v1/periods/2026-03/soft-lock", admin, nil)
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/invoice-review-cases/"+complete+"/approve", reviewer, nil)
	failed := reviewCaseState(p, reader, complete)
	if pe := failed.list("posting_errors"); failed.str("queue_state") != "posting_failed" || len(pe) != 1 || pe[0]["code"] != "PERIOD_LOCKED" {
		t.Fatalf("after the refusal %s", failed.Raw)
	}
	if d := cmp.Diff([]string{complete}, queue("?queue_state=posting_failed")); d != "" {
		t.Errorf("posting_failed (-want +got):\n%s", d)
	}
	p.wantCount(0, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND source = 'payables'`, tenant)
	if n := len(p.must(200, "GET", "/v1/invoices", reader, nil).list("invoices")); n != 0 {
		t.Fatalf("%d invoices listed after a refused posting", n)
	}
	p.must(200, "POST", "/v1/periods/2026-03/reopen", admin, nil)

	// Approved, concurrently and again: one posting each. The second
	// case's approvals carry one Idempotency-Key, whose retry afterwards
	// is answered with the approval instead of 409.
	var wg sync.WaitGroup
	answers := make([]resp, 4)
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 1 {
				answers[i] = p.call("POST", "/v1/invoice-review-cases/"+incomplete+"/approve", reviewer, nil, "Idempotency-Key", "approve-r200")
				return
			}
			answers[i] = p.call("POST", "/v1/invoice-review-cases/"+complete+"/approve", reviewer, nil)
		}(i)
	}
	wg.Wait()
	for _, a := range answers {
		if a.Status != 200 && !(a.Status == 409 && (a.str("code") == "CONFLICT" || a.str("code") == "IDEMPOTENCY_KEY_IN_PROGRESS")) {
			t.Fatalf("concurrent approvals: %d %s", a.Status, a.Raw)
		}
	}
	p.expectError(409, "CONFLICT", "POST", "/v1/invoice-review-cases/"+complete+"/approve", reviewer, nil)
	retried := p.must(200, "POST", "/v1/invoice-review-cases/"+incomplete+"/approve", reviewer, nil, "Idempotency-Key", "approve-r200")
	if retried.str("queue_state") != "approved" || retried.str("booking_intent_id") == "" {
		t.Fatalf("the approval's retry under its key: %s", retried.Raw)
	}
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/invoice-review-cases/"+complete+"/approve", reviewer, nil, "Idempotency-Key", "approve-r200")
	p.wantCount(2, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND source = 'payables'`, tenant)
	approved := reviewCaseState(p, reader, complete)
	intent, invoice := approved.str("booking_intent_id"), approved.str("incoming_invoice_id")
	if approved.str("queue_state") != "approved" || intent == "" || invoice == "" {
		t.Fatalf("approved %s", approved.Raw)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.inbox_items WHERE id = $1 AND status = 'confirmed'`, completeItem)
	if d := cmp.Diff([]string{"1406 3300 19", "6300 3300 100"}, journalLines(p, journal, intent)); d != "" {
		t.Errorf("the posting (-want +got):\n%s", d)
	}
	other := reviewCaseState(p, reader, incomplete)
	if d := cmp.Diff([]string{"1401 3300 3.5", "6815 3300 50"}, journalLines(p, journal, other.str("booking_intent_id"))); d != "" {
		t.Errorf("the 7 %% posting (-want +got):\n%s", d)
	}

	// The incoming invoices.
	list := func(q string) []string {
		out := []string{}
		for _, i := range p.must(200, "GET", "/v1/invoices"+q, reader, nil).list("invoices") {
			out = append(out, fmt.Sprintf("%s %s %s %v", i["invoice_number"], i["vendor_name"], i["status"], i["remaining_amount"]))
		}
		return out
	}
	if d := cmp.Diff([]string{"R-200 Bürobedarf Nord GmbH overdue 53.5", "R-100 Bürobedarf Nord GmbH open 119"}, list("")); d != "" {
		t.Errorf("invoices (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"R-100 Bürobedarf Nord GmbH open 119"}, list("?status=open&vendor_id="+vendor+"&start_date=2026-03-01&end_date=2026-03-02")); d != "" {
		t.Errorf("filtered (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{}, list("?status=draft")); d != "" {
		t.Errorf("drafts (-want +got):\n%s", d)
	}
	detail := p.must(200, "GET", "/v1/invoices/"+invoice, reader, nil)
	if detail.str("booking_intent_id") != intent || detail.str("review_case_id") != complete || detail.str("creditor_account") != "3300" ||
		fmt.Sprint(detail.Body["total_net"]) != "100" || detail.str("due_date") != "2099-12-31" {
		t.Fatalf("invoice %s", detail.Raw)
	}
	p.expectInvalid([]string{"vendor_id", "status", "start_date"}, "GET", "/v1/invoices?vendor_id=x&status=void&start_date=2026-02-30", reader, nil)
	p.expectInvalid([]string{"end_date"}, "GET", "/v1/invoices?start_date=2026-03-02&end_date=2026-03-01", reader, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/invoices?limit=501", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoices?vendor_id="+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoices/"+uuid.NewString(), reader, nil)

	// Paid through the bank: a part, undone, then the rest.
	giro := p.must(201, "POST", "/v1/bank-accounts", bank, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	var items []any
	for ref, amount := range map[string]string{"Teil R-100": "-50.00", "Rest R-100": "-69.00"} {
		items = append(items, map[string]any{"tx_date": "2026-03-20", "amount": json.Number(amount), "reference": ref, "bank_reference": "B-" + ref})
	}
	p.must(201, "POST", "/v1/bank-transactions", bank, map[string]any{"bank_account_id": giro, "transactions": items})
	tx := map[string]string{}
	for _, b := range p.must(200, "GET", "/v1/bank-transactions?limit=500", bank, nil).list("transactions") {
		tx[b["reference"].(string)] = b["id"].(string)
	}
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1`, tenant); n != 2 {
			return fmt.Errorf("%d open items at the bank", n)
		}
		return nil
	})
	wait := func(want string) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			if got := incomingState(p, reader, invoice); got != want {
				return fmt.Errorf("invoice %s, want %s", got, want)
			}
			return nil
		})
	}
	reconcile := func(ref string) {
		p.must(200, "POST", "/v1/bank-transactions/"+tx[ref]+"/reconcile", bank, map[string]any{"intent_id": intent, "candidate_kind": "open_liability"})
	}
	reconcile("Teil R-100")
	wait("partially_paid 69.00")
	p.must(200, "POST", "/v1/bank-transactions/"+tx["Teil R-100"]+"/unmatch", bank, nil)
	wait("open 119.00")
	reconcile("Teil R-100")
	reconcile("Rest R-100")
	wait("paid 0.00")
	if v := p.must(200, "GET", "/v1/vendors/"+vendor, reader, nil); fmt.Sprint(v.Body["open_amount"]) != "53.5" {
		t.Fatalf("vendor open amount %v", v.Body["open_amount"])
	}
	open := p.must(200, "GET", "/v1/invoices/open-items", reader, nil).list("vendors")
	if len(open) != 1 || open[0]["vendor_id"] != vendor || fmt.Sprint(open[0]["total_open"]) != "53.5" || len(open[0]["invoices"].([]any)) != 1 {
		t.Fatalf("open items %v", open)
	}
	if d := cmp.Diff([]string{"R-100 Bürobedarf Nord GmbH paid 0"}, list("?status=paid")); d != "" {
		t.Errorf("paid (-want +got):\n%s", d)
	}

	// The MCP tools take the same pipeline: scopes, services.
	tool := func(key, name string, args map[string]any) (map[string]any, bool) {
		t.Helper()
		return toolResult(t, p.mcpCall(t, key, 9, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	if sc, isErr := tool(reader, "list_invoice_review_cases", map[string]any{"queue_state": "approved"}); isErr || len(sc["cases"].([]any)) != 2 {
		t.Fatalf("list_invoice_review_cases: %v", sc)
	}
	if sc, isErr := tool(reader, "payables_open_items", map[string]any{}); isErr || len(sc["vendors"].([]any)) != 1 {
		t.Fatalf("payables_open_items: %v", sc)
	}
	if _, isErr := tool(reader, "approve_invoice_review_case", map[string]any{"id": duplicate}); !isErr {
		t.Fatal("a reader approved over MCP")
	}
	if sc, isErr := tool(reviewer, "reject_invoice_review_case", map[string]any{"id": duplicate, "reason": "Doppelt erfasst"}); isErr || sc["queue_state"] != "rejected" {
		t.Fatalf("reject_invoice_review_case: %v", sc)
	}

	// Tenants apart.
	stranger, _ := p.newTenant("Fremde Eingangsrechnungen GmbH")
	if n := len(p.must(200, "GET", "/v1/invoice-review-cases", stranger, nil).list("cases")); n != 0 {
		t.Fatalf("another tenant sees %d cases", n)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoice-review-cases/"+complete, stranger, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/invoices/"+invoice, stranger, nil)
}
