package payables

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Review cases (spec: Invoice review case). A case is opened by the
// extraction worker (postgres.OpenReviewCase, in its transaction) and
// waits in the queue until a reviewer corrects, approves or rejects it.
//
// Approving spans two stores, so it runs in steps that each survive a
// crash, like the receivables' invoice issuing:
//
//  1. one transaction checks the case and writes its incoming invoice in
//     state pending, under an id and booking intent derived from the case
//     and its posting attempt (ClaimApproval); a retry finds that row;
//  2. the invoice is posted through ledger.v1.post under that intent: a
//     retry is answered with the posting the ledger already has;
//  3. one transaction moves the invoice to posted, the case to approved
//     and the inbox item to confirmed (ConfirmApproval).
//
// A ledger refusal (a locked period, an account missing) voids the
// pending invoice and puts the case in posting_failed with the reason,
// raising its attempt (FailApproval): approving again tries afresh under
// a new intent. An outage leaves the invoice pending: approving again
// resumes it under the same intent.

// CaseRecord is a review case as the store keeps it.
type CaseRecord struct {
	payablesv1.ReviewCaseDetail
	Corrected    bool
	IsCreditNote bool
	Attempt      int
	// Pending is set while an approval's posting is under way (or was
	// interrupted by an outage): the case's pending incoming invoice.
	Pending bool
}

// Approval is what ClaimApproval hands to the posting step.
type Approval struct {
	Case      CaseRecord
	InvoiceID string
	IntentID  string
	Creditor  string
}

// ReviewStore keeps the review cases and incoming invoices;
// postgres.Store implements it.
type ReviewStore interface {
	ReviewCases(ctx context.Context, tenantID string, f payablesv1.ReviewCaseFilter) ([]payablesv1.ReviewCase, error)
	// ReviewCase reads one with its detail; NOT_FOUND when unknown.
	ReviewCase(ctx context.Context, tenantID, id string) (payablesv1.ReviewCaseDetail, error)
	// CorrectCase applies change to the locked case, recomputes its
	// duplicate hints and queue state and stores it, claiming and saving
	// the request's Idempotency-Key in the same transaction.
	CorrectCase(ctx context.Context, tenantID, id string, change func(CaseRecord) (payablesv1.ReviewInvoice, error)) (payablesv1.ReviewCaseDetail, error)
	// RejectCase moves the locked case to rejected with reason (check
	// says whether it may) and its inbox item to rejected.
	RejectCase(ctx context.Context, tenantID, id, reason string, check func(CaseRecord) error) (payablesv1.ReviewCaseDetail, error)
	// ClaimApproval locks the case, lets check refuse it, and writes (or
	// finds) its pending incoming invoice.
	ClaimApproval(ctx context.Context, tenantID, id string, check func(CaseRecord) error, ids func(CaseRecord) (invoiceID, intentID string)) (Approval, error)
	// ConfirmApproval moves the pending invoice to posted, the case to
	// approved and its inbox item to confirmed; an approved case is
	// returned as it is.
	ConfirmApproval(ctx context.Context, tenantID string, a Approval) (payablesv1.ReviewCaseDetail, error)
	// FailApproval voids the pending invoice and puts the case in
	// posting_failed with pe added to its posting errors.
	FailApproval(ctx context.Context, tenantID string, a Approval, pe payablesv1.PostingError) error

	// Invoices lists the invoices matching q (Status as InvoiceRecord.Status
	// computes it for q.Today), newest invoice date first.
	Invoices(ctx context.Context, tenantID string, q InvoiceQuery) ([]InvoiceRecord, error)
	// Invoice reads one; NOT_FOUND when unknown.
	Invoice(ctx context.Context, tenantID, id string) (InvoiceRecord, error)
	// OpenInvoices lists the posted invoices with something remaining, by
	// vendor name and due date.
	OpenInvoices(ctx context.Context, tenantID string) ([]InvoiceRecord, error)
	Vendor(ctx context.Context, tenantID, id string) (Vendor, error)
}

// Poster posts to the ledger; ledgerv1.Client implements it.
type Poster interface {
	Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error)
}

// Review runs the review queue and the incoming-invoice views.
type Review struct {
	store  ReviewStore
	chart  Chart
	ledger Poster
	now    func() time.Time
}

// NewReview returns the review service; now gives the day invoice
// statuses are computed for (time.Now when nil).
func NewReview(store ReviewStore, chart Chart, ledger Poster, now func() time.Time) *Review {
	if now == nil {
		now = time.Now
	}
	return &Review{store: store, chart: chart, ledger: ledger, now: now}
}

var (
	queueStates = map[string]bool{payablesv1.QueueApproval: true, payablesv1.QueueCorrection: true, payablesv1.QueueException: true,
		payablesv1.QueueApproved: true, payablesv1.QueueRejected: true, payablesv1.QueuePostingFailed: true}
	reviewSpace = uuid.MustParse("7b0e4c2a-51d3-4f5e-9a1c-3e8d2b6f4a90")
	currencyRe  = regexp.MustCompile(`^[A-Z]{3}$`)
	// postingLimit bounds an amount of a correction (10^12, below what
	// numeric(19, 2) holds).
	postingLimit = money.MustParse("1000000000000")
)

// InvoiceIDFor and IntentIDFor derive the incoming invoice and its
// booking intent of a case's posting attempt.
func InvoiceIDFor(tenantID, caseID string, attempt int) string {
	return uuid.NewSHA1(reviewSpace, []byte(tenantID+"/"+caseID+"/"+strconv.Itoa(attempt)+"/invoice")).String()
}

// IntentIDFor: see InvoiceIDFor.
func IntentIDFor(tenantID, caseID string, attempt int) string {
	return uuid.NewSHA1(reviewSpace, []byte(tenantID+"/"+caseID+"/"+strconv.Itoa(attempt)+"/post")).String()
}

func caseNotFound(id string) error { return errs.NotFoundf("review case %s not found", clip(id, 40)) }

// ReviewCases lists the queue.
func (r *Review) ReviewCases(ctx context.Context, tenantID string, f payablesv1.ReviewCaseFilter) (payablesv1.ReviewCaseList, error) {
	if f.Limit == 0 {
		f.Limit = payablesv1.DefaultReviewCasesLimit
	}
	if err := CheckReviewCaseFilter(f); err != nil {
		return payablesv1.ReviewCaseList{}, err
	}
	cs, err := r.store.ReviewCases(ctx, tenantID, f)
	if err != nil {
		return payablesv1.ReviewCaseList{}, err
	}
	if cs == nil {
		cs = []payablesv1.ReviewCase{}
	}
	return payablesv1.ReviewCaseList{Cases: cs}, nil
}

// CheckReviewCaseFilter names each bad query parameter.
func CheckReviewCaseFilter(f payablesv1.ReviewCaseFilter) error {
	var ds []errs.Detail
	if f.QueueState != "" && !queueStates[f.QueueState] {
		ds = append(ds, errs.Field("queue_state", "one of approval, correction, exception, approved, rejected, posting_failed"))
	}
	ds = natsx.Page(ds, f.Limit, f.Offset, payablesv1.MaxReviewCasesLimit)
	if len(ds) > 0 {
		return errs.Invalid("invalid query", ds...)
	}
	return nil
}

// ReviewCase reads one case with its duplicate hints and vendor
// suggestions.
func (r *Review) ReviewCase(ctx context.Context, tenantID, id string) (payablesv1.ReviewCaseDetail, error) {
	if !ValidID(id) {
		return payablesv1.ReviewCaseDetail{}, caseNotFound(id)
	}
	return r.store.ReviewCase(ctx, tenantID, id)
}

// open reports a case a reviewer may still act on.
func open(c CaseRecord) error {
	switch c.QueueState {
	case payablesv1.QueueApproved:
		return &errs.Error{Code: errs.Conflict, Message: "review case " + c.ID + " is approved: its invoice is booked"}
	case payablesv1.QueueRejected:
		return &errs.Error{Code: errs.Conflict, Message: "review case " + c.ID + " is rejected"}
	}
	return nil
}

// Correct edits a case's invoice; the checks then run again and put it
// in approval, correction or exception.
func (r *Review) Correct(ctx context.Context, tenantID, id string, in payablesv1.ReviewCorrection) (payablesv1.ReviewCaseDetail, error) {
	if !ValidID(id) {
		return payablesv1.ReviewCaseDetail{}, caseNotFound(id)
	}
	if err := CheckCorrection(in); err != nil {
		return payablesv1.ReviewCaseDetail{}, err
	}
	var vendor *Vendor
	if in.VendorID != nil {
		v, err := r.store.Vendor(ctx, tenantID, *in.VendorID)
		if e := errs.As(err); e != nil && e.Code == errs.NotFound {
			return payablesv1.ReviewCaseDetail{}, &errs.Error{Code: errs.NotFound, Message: "vendor " + *in.VendorID + " not found",
				Details: []errs.Detail{errs.Field("vendor_id", "no vendor of the tenant")}, Err: err}
		}
		if err != nil {
			return payablesv1.ReviewCaseDetail{}, err
		}
		vendor = &v
	}
	// The accounts are asked of the ledger before the case is locked.
	seen := map[string]bool{}
	for i, l := range in.Lines {
		if l.Account == nil || seen[*l.Account] {
			continue
		}
		seen[*l.Account] = true
		if _, err := r.chart.Account(ctx, tenantID, *l.Account); err != nil {
			if e := errs.As(err); e != nil && e.Code == errs.NotFound {
				return payablesv1.ReviewCaseDetail{}, &errs.Error{Code: errs.AccountNotFound, Message: "account " + *l.Account + " does not exist in the chart of accounts",
					Details: []errs.Detail{errs.Field("lines["+strconv.Itoa(i)+"].account", "not in the chart of accounts")}, Err: err}
			}
			return payablesv1.ReviewCaseDetail{}, errs.Wrap("payables.Correct: ledger", err)
		}
	}
	return r.store.CorrectCase(ctx, tenantID, id, func(c CaseRecord) (payablesv1.ReviewInvoice, error) {
		if err := open(c); err != nil {
			return payablesv1.ReviewInvoice{}, err
		}
		if c.Pending {
			return payablesv1.ReviewInvoice{}, &errs.Error{Code: errs.Conflict, Message: "review case " + c.ID + " is being posted: approve it again to finish"}
		}
		return ApplyCorrection(c.Invoice, in, vendor), nil
	})
}

// CheckCorrection validates a correction, naming every field at fault.
func CheckCorrection(in payablesv1.ReviewCorrection) error {
	var c checker
	if in.VendorID != nil && !ValidID(*in.VendorID) {
		c.bad("vendor_id", "must be a UUID")
	}
	if in.InvoiceNumber != nil {
		c.text("invoice_number", strings.TrimSpace(*in.InvoiceNumber), MaxInvoiceNumber, true)
	}
	for _, d := range []struct {
		f string
		v *string
	}{{"invoice_date", in.InvoiceDate}, {"due_date", in.DueDate}} {
		if d.v != nil && !ValidDate(*d.v) {
			c.bad(d.f, "a date YYYY-MM-DD")
		}
	}
	if in.InvoiceDate != nil && in.DueDate != nil && ValidDate(*in.InvoiceDate) && ValidDate(*in.DueDate) && *in.DueDate < *in.InvoiceDate {
		c.bad("due_date", "must not be before invoice_date")
	}
	if in.Currency != nil && !currencyRe.MatchString(*in.Currency) {
		c.bad("currency", "an ISO 4217 code such as EUR")
	}
	if in.Lines != nil && len(in.Lines) == 0 {
		c.bad("lines", "at least one line")
	}
	if len(in.Lines) > MaxReviewLines {
		c.bad("lines", "at most "+strconv.Itoa(MaxReviewLines)+" lines")
	}
	for i, l := range in.Lines {
		f := "lines[" + strconv.Itoa(i) + "]"
		c.text(f+".description", strings.TrimSpace(l.Description), MaxLineDescription, false)
		if l.Account != nil && !accountNumberRe.MatchString(*l.Account) {
			c.bad(f+".account", "an account number of 1 to 8 digits")
		}
		if l.TaxRate == nil {
			c.bad(f+".tax_rate", "required: 19, 7 or 0")
		} else if _, ok := TaxCode(*l.TaxRate, false); !ok {
			c.bad(f+".tax_rate", "19, 7 or 0")
		}
		switch {
		case l.Net == nil:
			c.bad(f+".net", "required")
		case l.Net.IsZero() || l.Net.Abs().GreaterThanOrEqual(postingLimit.Decimal) || l.Net.Places() > 2:
			c.bad(f+".net", "a non-zero amount with at most 2 decimals, less than 10^12")
		}
	}
	if in.TotalGross != nil && (!in.TotalGross.IsPositive() || in.TotalGross.GreaterThanOrEqual(postingLimit.Decimal) || in.TotalGross.Places() > 2) {
		c.bad("total_gross", "a positive amount with at most 2 decimals, less than 10^12")
	}
	if in.VendorID == nil && in.InvoiceNumber == nil && in.InvoiceDate == nil && in.DueDate == nil && in.Currency == nil &&
		in.ReverseCharge == nil && in.Lines == nil && in.TotalGross == nil {
		c.bad("body", "give at least one field to change")
	}
	return c.err("invalid correction; nothing was changed")
}

// ApplyCorrection returns inv changed by a checked correction; vendor is
// the vendor it names, if it names one (its default account fills lines
// without an account).
func ApplyCorrection(inv payablesv1.ReviewInvoice, in payablesv1.ReviewCorrection, vendor *Vendor) payablesv1.ReviewInvoice {
	if vendor != nil {
		id := vendor.ID
		inv.VendorID, inv.VendorName = &id, vendor.Name
	}
	if in.InvoiceNumber != nil {
		inv.InvoiceNumber = strings.TrimSpace(*in.InvoiceNumber)
	}
	if in.InvoiceDate != nil {
		d := *in.InvoiceDate
		inv.InvoiceDate = &d
		if in.DueDate == nil && inv.DueDate == nil {
			due := DueDate(d, "")
			inv.DueDate = &due
		}
	}
	if in.DueDate != nil {
		d := *in.DueDate
		inv.DueDate = &d
	}
	if in.Currency != nil {
		inv.Currency = *in.Currency
	}
	if in.ReverseCharge != nil {
		inv.ReverseCharge = *in.ReverseCharge
	}
	if in.Lines != nil {
		account := DefaultExpenseAccount
		if vendor != nil && vendor.DefaultAccount != nil {
			account = *vendor.DefaultAccount
		}
		inv.Lines = make([]payablesv1.ReviewLine, 0, len(in.Lines))
		for _, l := range in.Lines {
			a := account
			if l.Account != nil {
				a = *l.Account
			}
			inv.Lines = append(inv.Lines, payablesv1.ReviewLine{Description: strings.TrimSpace(l.Description), Account: a,
				TaxRate: *l.TaxRate, Net: *l.Net})
		}
	}
	if in.TotalGross != nil {
		g := *in.TotalGross
		inv.StatedGross = &g
	}
	// The stated per-rate taxes were the document's; after a correction
	// the lines' own tax is computed (the stated gross still checks it).
	Compute(&inv, nil)
	return inv
}

// Reject refuses a case with a reason.
func (r *Review) Reject(ctx context.Context, tenantID, id string, in payablesv1.ReviewRejection) (payablesv1.ReviewCaseDetail, error) {
	if !ValidID(id) {
		return payablesv1.ReviewCaseDetail{}, caseNotFound(id)
	}
	reason := strings.TrimSpace(in.Reason)
	var c checker
	c.text("reason", reason, MaxRejectReason, true)
	if err := c.err("invalid rejection; nothing was changed"); err != nil {
		return payablesv1.ReviewCaseDetail{}, err
	}
	return r.store.RejectCase(ctx, tenantID, id, reason, func(c CaseRecord) error {
		if err := open(c); err != nil {
			return err
		}
		if c.Pending {
			return &errs.Error{Code: errs.Conflict, Message: "review case " + c.ID + " is being posted: approve it again to finish"}
		}
		return nil
	})
}

// Approve books a case's invoice: creates the incoming invoice and posts
// it. A ledger refusal is answered as the ledger's error, the case left
// in posting_failed.
func (r *Review) Approve(ctx context.Context, tenantID, id string) (payablesv1.ReviewCaseDetail, error) {
	if !ValidID(id) {
		return payablesv1.ReviewCaseDetail{}, caseNotFound(id)
	}
	a, err := r.store.ClaimApproval(ctx, tenantID, id, func(c CaseRecord) error {
		if c.Pending {
			return nil // an interrupted approval: resume it
		}
		if err := open(c); err != nil {
			return err
		}
		if b := Blocking(c.Issues); len(b) > 0 {
			ds := make([]errs.Detail, len(b))
			for i, is := range b {
				ds[i] = errs.Field(is.Field, is.Issue)
			}
			return errs.Invalid("the case's invoice is incomplete: correct it first; nothing was booked", ds...)
		}
		if len(PostingLines(c.Invoice, CreditorAccount, c.Invoice.InvoiceNumber)) == 0 {
			return errs.Invalid("the case's invoice has nothing to book", errs.Field("lines", "add up to nothing"))
		}
		return nil
	}, func(c CaseRecord) (string, string) {
		return InvoiceIDFor(tenantID, c.ID, c.Attempt), IntentIDFor(tenantID, c.ID, c.Attempt)
	})
	if err != nil {
		return payablesv1.ReviewCaseDetail{}, err
	}
	inv := a.Case.Invoice
	desc := clip("Eingangsrechnung "+inv.InvoiceNumber+" "+inv.VendorName, 200)
	_, err = r.ledger.Post(ctx, ledgerv1.PostRequest{TenantID: tenantID, IntentID: a.IntentID, Source: "payables", DocumentID: a.Case.DocumentID,
		Booking: ledgerv1.Booking{BookingDate: *inv.InvoiceDate, Description: desc, SkipDuplicateCheck: true,
			Lines: PostingLines(inv, a.Creditor, inv.InvoiceNumber)}})
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Code == errs.Unavailable || e.Code == errs.Timeout || e.Code == errs.Internal {
			// Not a refusal: the invoice stays pending; approving again
			// resumes under the same intent.
			return payablesv1.ReviewCaseDetail{}, errs.Wrap("payables.Approve: ledger", err)
		}
		pe := payablesv1.PostingError{Code: e.Code, Message: clip(e.Message, 1000), At: time.Now().UTC()}
		if ferr := r.store.FailApproval(ctx, tenantID, a, pe); ferr != nil {
			return payablesv1.ReviewCaseDetail{}, errors.Join(err, ferr)
		}
		return payablesv1.ReviewCaseDetail{}, err
	}
	return r.store.ConfirmApproval(ctx, tenantID, a)
}
