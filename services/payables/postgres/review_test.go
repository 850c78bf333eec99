package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/payables"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// reviewEnv is a fresh database with the store, the service-role pool
// OpenReviewCase's transactions run on, and the owner's pool.
type reviewEnv struct {
	t           *testing.T
	s           *postgres.Store
	pool, owner *pgxpool.Pool
	tenant      string
}

func newReviewEnv(t *testing.T) *reviewEnv {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(t, postgres.Schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 8, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &reviewEnv{t: t, s: postgres.New(pool), pool: pool, owner: owner, tenant: uuid.NewString()}
}

// extraction inserts an inbox item and its done extraction, as the
// extraction worker leaves them, and opens the case in the tenant's
// transaction; it returns the case and inbox item ids.
func (e *reviewEnv) extraction(ocr payablesv1.OCRResult, cc payablesv1.ComplianceCheck, match payablesv1.VendorMatch) (caseID, item string) {
	e.t.Helper()
	ctx := context.Background()
	item, doc, ext := uuid.NewString(), uuid.NewString(), uuid.NewString()
	o, _ := json.Marshal(ocr)
	c, _ := json.Marshal(cc)
	m, _ := json.Marshal(match)
	if _, err := e.owner.Exec(ctx, `INSERT INTO payables.inbox_items (id, tenant_id, document_id, file_hash, mime_type, original_name, source)
		VALUES ($1, $2, $3, $4, 'application/pdf', 'r.pdf', 'upload')`, item, e.tenant, doc, fmt.Sprintf("%x", sha256.Sum256([]byte(item)))); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.owner.Exec(ctx, `INSERT INTO payables.extractions (id, tenant_id, document_id, inbox_item_id, state, ocr_result, compliance_check, vendor_match, finished_at)
		VALUES ($1, $2, $3, $4, 'done', $5, $6, $7, now())`, ext, e.tenant, doc, item, o, c, m); err != nil {
		e.t.Fatal(err)
	}
	caseID = e.open(ext)
	if again := e.open(ext); again != caseID {
		e.t.Fatalf("opened again: %s, first %s", again, caseID)
	}
	return caseID, item
}

func (e *reviewEnv) open(ext string) string {
	e.t.Helper()
	var id string
	err := db.InTenant(context.Background(), e.pool, e.tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		id, err = postgres.OpenReviewCase(context.Background(), tx, e.tenant, ext)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func amt(s string) *money.Amount { a := money.MustParse(s); return &a }

func compliant() payablesv1.ComplianceCheck {
	return payablesv1.ComplianceCheck{DocumentType: "invoice", IsInvoice: true, Compliant: true, Passed: 10, Total: 10}
}

func matched(id string) payablesv1.VendorMatch {
	return payablesv1.VendorMatch{Status: payablesv1.MatchMatched, VendorID: &id, Confidence: money.MustParse("1"), MatchMethod: ptr("vat_id")}
}

// invoice100 is a 100 EUR net, 19 % invoice of number n.
func invoice100(n string) payablesv1.OCRResult {
	return payablesv1.OCRResult{VendorName: "Bürobedarf Nord GmbH", VendorVATID: "DE123456789", InvoiceNumber: n, InvoiceDate: ptr("2026-03-02"),
		TotalNet: amt("100.00"), TotalTax: amt("19.00"), TotalGross: amt("119.00"), Currency: "EUR", PaymentTerms: "zahlbar innerhalb von 14 Tagen",
		TaxBreakdown: []payablesv1.TaxLine{{Rate: money.MustParse("19"), Net: money.MustParse("100.00"), Tax: money.MustParse("19.00")}},
		LineItems:    []payablesv1.OCRLine{{Description: "Papier", Quantity: amt("10"), UnitPrice: amt("10.00"), TaxRate: amt("19"), LineTotal: amt("100.00")}}}
}

// fakeLedger records postings and answers them with err when set.
type fakeLedger struct {
	posts []ledgerv1.PostRequest
	err   error
}

func (f *fakeLedger) Post(_ context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	if f.err != nil {
		return ledgerv1.Posted{}, f.err
	}
	f.posts = append(f.posts, r)
	return ledgerv1.Posted{IntentID: r.IntentID, EventCount: len(r.Booking.Lines)}, nil
}

type fakeChart struct{}

func (fakeChart) Account(_ context.Context, _, number string) (ledgerv1.Account, error) {
	if number == "9999" {
		return ledgerv1.Account{}, errs.NotFoundf("account %s not found", number)
	}
	return ledgerv1.Account{Number: number}, nil
}

// TestOpenReviewCase: the queue state, the normalised invoice, vendor
// candidates and duplicate hints of the cases extractions open.
func TestOpenReviewCase(t *testing.T) {
	e := newReviewEnv(t)
	ctx := context.Background()
	v, err := e.s.CreateVendor(ctx, e.tenant, payables.Vendor{ID: uuid.NewString(), Name: "Bürobedarf Nord GmbH", VATID: ptr("DE123456789"),
		DefaultAccount: ptr("6815"), IsActive: true})
	if err != nil {
		t.Fatal(err)
	}
	r := payables.NewReview(e.s, fakeChart{}, &fakeLedger{}, nil)

	first, item := e.extraction(invoice100("R-1"), compliant(), matched(v.ID))
	c, err := r.ReviewCase(ctx, e.tenant, first)
	if err != nil {
		t.Fatal(err)
	}
	want := payablesv1.ReviewInvoice{VendorID: &v.ID, VendorName: v.Name, InvoiceNumber: "R-1", InvoiceDate: ptr("2026-03-02"),
		DueDate: ptr("2026-03-16"), Currency: "EUR",
		Lines:        []payablesv1.ReviewLine{{Description: "Papier", Account: "6815", TaxRate: money.MustParse("19"), Net: money.MustParse("100.00")}},
		TaxBreakdown: []payablesv1.ReviewTaxGroup{{Rate: money.MustParse("19"), Net: money.MustParse("100.00"), Tax: money.MustParse("19.00"), Gross: money.MustParse("119.00")}},
		TotalNet:     money.MustParse("100.00"), TotalTax: money.MustParse("19.00"), TotalGross: money.MustParse("119.00"), StatedGross: amt("119.00")}
	if d := cmp.Diff(want, c.Invoice, cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })); d != "" {
		t.Errorf("invoice (-want +got):\n%s", d)
	}
	if c.QueueState != payablesv1.QueueApproval || len(c.VendorCandidates) != 1 || !c.VendorCandidates[0].Matched || len(c.Issues) != 0 {
		t.Errorf("case %+v", c)
	}
	var linked string
	if err := e.owner.QueryRow(ctx, `SELECT review_case_id::text FROM payables.inbox_items WHERE id = $1`, item).Scan(&linked); err != nil || linked != first {
		t.Errorf("inbox item links %q (%v), want %s", linked, err, first)
	}

	unmatched := invoice100("R-2")
	unmatched.InvoiceDate = ptr("2026-03-05")
	failed := compliant()
	failed.Compliant = false
	failed.Checks = []payablesv1.CheckEntry{{Rule: "UStG 14(4) Nr. 2", Label: "Steuernummer oder USt-IdNr.", Status: payablesv1.CheckMissing}}
	notInvoice := payablesv1.ComplianceCheck{DocumentType: "not_an_invoice"}
	noNumber := invoice100("")
	noNumber.InvoiceDate = ptr("2026-04-01")
	for _, tc := range []struct {
		name   string
		ocr    payablesv1.OCRResult
		cc     payablesv1.ComplianceCheck
		match  payablesv1.VendorMatch
		state  string
		issues []string
		hints  []string
	}{
		{"the same vendor and number again", invoice100("r-1"), compliant(), matched(v.ID), payablesv1.QueueException, nil,
			[]string{"same_vendor_number case R-1"}},
		{"no vendor matched", unmatched, compliant(), payablesv1.VendorMatch{Status: payablesv1.MatchNone}, payablesv1.QueueCorrection,
			[]string{"vendor_id"}, []string{}},
		{"§14 check failed", invoice100("R-3"), failed, matched(v.ID), payablesv1.QueueCorrection, []string{"compliance_check"},
			[]string{"same_amount_date case R-1", "same_amount_date case r-1"}},
		{"not an invoice", noNumber, notInvoice, payablesv1.VendorMatch{Status: payablesv1.MatchNone}, payablesv1.QueueException,
			[]string{"vendor_id", "invoice_number"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, _ := e.extraction(tc.ocr, tc.cc, tc.match)
			c, err := r.ReviewCase(ctx, e.tenant, id)
			if err != nil {
				t.Fatal(err)
			}
			issues := []string{}
			for _, i := range c.Issues {
				issues = append(issues, i.Field)
			}
			hints := []string{}
			for _, h := range c.DuplicateHints {
				s := h.Kind + " invoice " + h.InvoiceNumber
				if h.ReviewCaseID != nil {
					s = h.Kind + " case " + h.InvoiceNumber
				}
				hints = append(hints, s)
			}
			if tc.issues == nil {
				tc.issues = []string{}
			}
			if c.QueueState != tc.state || !cmp.Equal(tc.issues, issues) || !cmp.Equal(tc.hints, hints) {
				t.Errorf("state %s issues %v hints %v, want %s %v %v", c.QueueState, issues, hints, tc.state, tc.issues, tc.hints)
			}
			if tc.match.Status == payablesv1.MatchNone && (len(c.VendorCandidates) != 1 || c.VendorCandidates[0].Method != "vat_id" ||
				len(c.VendorSuggestions) != 1 || c.VendorSuggestions[0].Name != "Bürobedarf Nord GmbH") {
				t.Errorf("candidates %+v suggestions %+v", c.VendorCandidates, c.VendorSuggestions)
			}
		})
	}
}

// TestApproveCase: a refused posting leaves the case posting_failed and
// its invoice void; approving again posts under a new intent, once; the
// bank's payments then pay the invoice, and an unmatch opens it again.
func TestApproveCase(t *testing.T) {
	e := newReviewEnv(t)
	ctx := context.Background()
	v, err := e.s.CreateVendor(ctx, e.tenant, payables.Vendor{ID: uuid.NewString(), Name: "Nord GmbH", IsActive: true})
	if err != nil {
		t.Fatal(err)
	}
	ledger := &fakeLedger{err: &errs.Error{Code: errs.PeriodLocked, Message: "period 2026-03 is locked"}}
	r := payables.NewReview(e.s, fakeChart{}, ledger, nil)
	id, item := e.extraction(invoice100("R-9"), compliant(), matched(v.ID))

	if _, err := r.Approve(ctx, e.tenant, id); code(err) != errs.PeriodLocked {
		t.Fatalf("approve in a locked period: %v", err)
	}
	c, _ := r.ReviewCase(ctx, e.tenant, id)
	if c.QueueState != payablesv1.QueuePostingFailed || len(c.PostingErrors) != 1 || c.PostingErrors[0].Code != errs.PeriodLocked {
		t.Fatalf("after the refusal: %+v", c)
	}
	if _, err := r.Correct(ctx, e.tenant, id, payablesv1.ReviewCorrection{Lines: []payablesv1.ReviewLineInput{{Account: ptr("9999"), TaxRate: amt("19"), Net: amt("100.00")}}}); code(err) != errs.AccountNotFound+" lines[0].account" {
		t.Fatalf("correct to an unknown account: %v", err)
	}

	ledger.err = nil
	c, err = r.Approve(ctx, e.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.QueueState != payablesv1.QueueApproved || c.IncomingInvoiceID == nil || c.BookingIntentID == nil {
		t.Fatalf("approved: %+v", c)
	}
	if len(ledger.posts) != 1 || ledger.posts[0].IntentID != *c.BookingIntentID || ledger.posts[0].IntentID != payables.IntentIDFor(e.tenant, id, 1) {
		t.Fatalf("posts %+v", ledger.posts)
	}
	wantLines := []ledgerv1.Line{{AccountDebit: "6300", AccountCredit: "3300", Amount: money.MustParse("119.00"), TaxCode: "VSt19", ExternalReference: "R-9"}}
	if d := cmp.Diff(wantLines, ledger.posts[0].Booking.Lines, cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })); d != "" {
		t.Errorf("posting (-want +got):\n%s", d)
	}
	for _, again := range []func() error{
		func() error { _, err := r.Approve(ctx, e.tenant, id); return err },
		func() error {
			_, err := r.Reject(ctx, e.tenant, id, payablesv1.ReviewRejection{Reason: "x"})
			return err
		},
		func() error {
			_, err := r.Correct(ctx, e.tenant, id, payablesv1.ReviewCorrection{InvoiceNumber: ptr("R-10")})
			return err
		},
	} {
		if err := again(); code(err) != errs.Conflict {
			t.Errorf("an approved case acted on: %v", err)
		}
	}
	if len(ledger.posts) != 1 {
		t.Fatalf("%d posts", len(ledger.posts))
	}
	var status string
	var void int
	e.owner.QueryRow(ctx, `SELECT status FROM payables.inbox_items WHERE id = $1`, item).Scan(&status)
	e.owner.QueryRow(ctx, `SELECT count(*) FROM payables.incoming_invoices WHERE review_case_id = $1 AND state = 'void'`, id).Scan(&void)
	if status != payablesv1.InboxConfirmed || void != 1 {
		t.Errorf("inbox item %s, %d void invoices", status, void)
	}

	// Payments: part, undone, then in full; each event applied once.
	intent := *c.BookingIntentID
	rec := uuid.NewString()
	pay := func(ev string, release bool, recID, amount string) {
		t.Helper()
		if err := e.s.ApplyPayments(ctx, e.tenant, []payables.PaymentEvent{{EventID: ev, ReconciliationID: recID, Release: release, PaidOn: "2026-03-20",
			Allocations: []payables.PaymentAllocation{{IntentID: intent, Amount: decimal.RequireFromString(amount), Currency: "EUR"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	state := func() string {
		t.Helper()
		d, err := r.Invoice(ctx, e.tenant, *c.IncomingInvoiceID)
		if err != nil {
			t.Fatal(err)
		}
		return d.Status + " " + d.RemainingAmount.StringFixed(2)
	}
	pay("e1", false, rec, "19.00")
	pay("e1", false, rec, "19.00")
	if got := state(); got != "overdue 100.00" && got != "partially_paid 100.00" {
		t.Errorf("after a part payment: %s", got)
	}
	pay("e2", true, rec, "19.00")
	if got := state(); got != "overdue 119.00" && got != "open 119.00" {
		t.Errorf("after the unmatch: %s", got)
	}
	pay("e3", false, uuid.NewString(), "119.00")
	if got := state(); got != "paid 0.00" {
		t.Errorf("after paying in full: %s", got)
	}
}

// TestApproveResumes: an approval interrupted after its claim (a crash,
// or the ledger unreachable) leaves the invoice pending; the case cannot
// be corrected or rejected meanwhile, and approving again posts under the
// same intent, once.
func TestApproveResumes(t *testing.T) {
	e := newReviewEnv(t)
	ctx := context.Background()
	v, err := e.s.CreateVendor(ctx, e.tenant, payables.Vendor{ID: uuid.NewString(), Name: "Süd GmbH", IsActive: true})
	if err != nil {
		t.Fatal(err)
	}
	ledger := &fakeLedger{err: &errs.Error{Code: errs.Unavailable, Message: "ledger unavailable"}}
	r := payables.NewReview(e.s, fakeChart{}, ledger, nil)
	id, _ := e.extraction(invoice100("S-1"), compliant(), matched(v.ID))

	if _, err := r.Approve(ctx, e.tenant, id); code(err) != errs.Unavailable {
		t.Fatalf("approve without the ledger: %v", err)
	}
	c, _ := r.ReviewCase(ctx, e.tenant, id)
	if c.QueueState != payablesv1.QueueApproval || len(c.PostingErrors) != 0 {
		t.Fatalf("after the outage: %+v", c)
	}
	if _, err := r.Correct(ctx, e.tenant, id, payablesv1.ReviewCorrection{InvoiceNumber: ptr("S-2")}); code(err) != errs.Conflict {
		t.Errorf("corrected while pending: %v", err)
	}
	if _, err := r.Reject(ctx, e.tenant, id, payablesv1.ReviewRejection{Reason: "doch nicht"}); code(err) != errs.Conflict {
		t.Errorf("rejected while pending: %v", err)
	}
	ledger.err = nil
	c, err = r.Approve(ctx, e.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.QueueState != payablesv1.QueueApproved || len(ledger.posts) != 1 || ledger.posts[0].IntentID != payables.IntentIDFor(e.tenant, id, 0) ||
		*c.IncomingInvoiceID != payables.InvoiceIDFor(e.tenant, id, 0) {
		t.Fatalf("resumed: %+v, posts %+v", c, ledger.posts)
	}
	list, err := r.Invoices(ctx, e.tenant, payablesv1.InvoiceFilter{})
	if err != nil || len(list.Invoices) != 1 || list.Invoices[0].InvoiceNumber != "S-1" {
		t.Fatalf("invoices %+v %v", list, err)
	}
}
