package receivables

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

// Cancellation (Storno) of a sales invoice. An issued invoice is never
// changed or deleted (GoBD): it is cancelled by a credit note (EN 16931
// type code 381) over its full gross that names it as the preceding
// invoice, and its receivable is taken back by the ledger's reversal of
// its booking. Like issuing, it runs in crash-safe steps:
//
//  1. one transaction locks the invoice, checks it can be cancelled,
//     takes the credit note's gapless number, stores the rendered credit
//     note as pending and raises the invoice's credited amount (so a
//     concurrent cancellation finds it cancelled);
//  2. the PDF is stored as a ledger document and the invoice's intent is
//     reversed under an idempotency key derived from the invoice;
//  3. one transaction moves the credit note to posted with the reversal
//     as its booking and writes the event.
//
// The credit note's id is derived from the invoice's, so a retry finds the
// pending credit note and resumes at step 2; once it is posted, another
// cancellation is a CONFLICT. A reversal the ledger refuses
// for good voids the credit note (its number stays accounted for) and
// gives the credited amount back.

// CreditNoteDraft is what step 1 stores.
type CreditNoteDraft struct {
	ID, CorrectsID string
	Date           string // issue date, YYYY-MM-DD
}

// Original is the state of the invoice a credit note corrects, as the
// locking transaction reads it.
type Original struct {
	Type, State, Number                    string
	TotalGross, PaidAmount, CreditedAmount decimal.Decimal
}

// CreditStore keeps credit notes; postgres.Store implements it.
type CreditStore interface {
	// Invoice reads one sales document; NOT_FOUND when unknown.
	Invoice(ctx context.Context, tenantID, id string) (InvoiceRecord, error)
	// IssueCreditNote returns the credit note d.ID as it is when it
	// exists. Else, in one transaction, it locks the original, calls
	// check with its state, takes the next number of d.Date's year,
	// stores render's document, XML and PDF as a pending credit note
	// of the original's debtor and currency, and raises the original's
	// credited amount by the credit note's gross; an error of check or
	// render writes nothing.
	IssueCreditNote(ctx context.Context, tenantID string, d CreditNoteDraft, check func(Original) error,
		render func(orig InvoiceRecord, number string) (Issued, error)) (InvoiceRecord, error)
	// ConfirmCreditNote moves a pending credit note to posted with its
	// booking and document and writes ev to the outbox; a posted one is
	// returned as it is.
	ConfirmCreditNote(ctx context.Context, tenantID, id, intentID, documentID string, ev receivablesv1.CreditNoteIssued) (InvoiceRecord, error)
	// VoidCreditNote moves a pending credit note to void with the reason
	// and takes its gross off the original's credited amount.
	VoidCreditNote(ctx context.Context, tenantID, id, reason string) error
	// InvoiceFile returns a document's number and PDF (pdf true) or XML.
	InvoiceFile(ctx context.Context, tenantID, id string, pdf bool) (number string, content []byte, err error)
	// Debtor reads one debtor (its receivable account).
	Debtor(ctx context.Context, tenantID, id string) (Debtor, error)
}

// CreditLedger is what cancelling and crediting ask of the ledger.
type CreditLedger interface {
	UploadPDF(ctx context.Context, tenantID, filename string, pdf []byte) (string, error)
	TaxCodes(ctx context.Context, tenantID string) ([]ledgerv1.TaxCode, error)
	Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error)
	// Reverse reverses an intent under the idempotency key, so that a
	// retry answers the reversal made the first time.
	Reverse(ctx context.Context, tenantID, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error)
	// ReversedBy answers the intent that reversed intentID, "" when none.
	ReversedBy(ctx context.Context, tenantID, intentID string) (string, error)
}

// CreditNotes cancels sales invoices.
type CreditNotes struct {
	store  CreditStore
	ledger CreditLedger
	now    func() time.Time
}

// NewCreditNotes returns the service; now gives the issue date of a
// credit note (German time), time.Now when nil.
func NewCreditNotes(store CreditStore, ledger CreditLedger, now func() time.Time) *CreditNotes {
	if now == nil {
		now = time.Now
	}
	return &CreditNotes{store: store, ledger: ledger, now: now}
}

var creditSpace = uuid.MustParse("6b0f3c2e-5a8d-4e71-9c43-2f1d7a9e0b58")

// CancelCreditNoteID is the id of the credit note that cancels an
// invoice: one per invoice, whoever asks how often.
func CancelCreditNoteID(tenantID, invoiceID string) string {
	return uuid.NewSHA1(creditSpace, []byte(tenantID+"/"+invoiceID+"/cancel")).String()
}

// CancelKey is the idempotency key of the reversal that cancels an
// invoice's receivable.
func CancelKey(invoiceID string) string { return "receivables-cancel-" + invoiceID }

func conflict(format string, args ...any) error { return errs.E(errs.Conflict, format, args...) }

// CheckCancel says whether an invoice can be cancelled: a posted invoice
// with nothing paid or credited yet. The reversal takes back the whole
// receivable, so a partly settled invoice is refused: the rest is for a
// credit note, money received for a refund.
func CheckCancel(o Original) error {
	switch {
	case o.Type != receivablesv1.TypeInvoice:
		return conflict("%s is a credit note; a credit note is not cancelled", o.Number)
	case o.State == "draft":
		return conflict("the invoice is a draft: nothing was issued or posted, so there is nothing to cancel (a draft is simply not finalised)")
	case o.State == "pending":
		return conflict("invoice %s is still being issued; finalise it first", o.Number)
	case o.State == "void":
		return conflict("invoice %s is void: the ledger refused it, there is nothing to cancel", o.Number)
	case o.TotalGross.IsPositive() && o.CreditedAmount.GreaterThanOrEqual(o.TotalGross):
		return conflict("invoice %s is already cancelled (credited in full)", o.Number)
	case o.PaidAmount.IsPositive():
		return conflict("invoice %s has payments (%s): cancelling it would need a refund (a credit note with a payment out), which is not supported; unmatch the payment first", o.Number, o.PaidAmount.StringFixed(2))
	case o.CreditedAmount.IsPositive():
		return conflict("invoice %s is partly credited (%s): credit the rest with a credit note instead", o.Number, o.CreditedAmount.StringFixed(2))
	}
	return nil
}

// CreditNoteDocument is the e-invoice of a credit note for orig: the
// original's document (seller and buyer as issued, lines, VAT) as type
// 381 with its own number and date, naming the original as the preceding
// invoice (BT-25, BT-26). Amounts stay positive: the type code says that
// they are credited. lines, when not nil, replace the original's.
func CreditNoteDocument(orig InvoiceRecord, number, date, reason string, lines []einvoice.Line) (einvoice.Document, error) {
	if orig.Document == nil {
		return einvoice.Document{}, fmt.Errorf("receivables.CreditNoteDocument: invoice %s has no document", orig.ID)
	}
	doc := *orig.Document
	doc.Lines = slices.Clone(doc.Lines)
	if lines != nil {
		doc.Lines = lines
	}
	doc.TypeCode, doc.Number, doc.IssueDate, doc.DueDate = einvoice.TypeCreditNote, number, date, date
	doc.PrecedingInvoice = &einvoice.DocumentRef{Number: orig.Number, IssueDate: orig.InvoiceDate}
	doc.Notes = append([]string{reason}, doc.Notes...)
	doc.PaymentTerms = "Der Betrag wird mit der Rechnung " + orig.Number + " verrechnet."
	doc.TaxBreakdown, doc.Totals = nil, einvoice.Totals{}
	if err := doc.Compute(); err != nil {
		return einvoice.Document{}, err
	}
	return doc, nil
}

// renderCreditNote renders a credit note's XML and PDF.
func renderCreditNote(doc einvoice.Document) (Issued, error) {
	xml, err := einvoice.CII(doc)
	if err != nil {
		return Issued{}, fmt.Errorf("render XML: %w", err)
	}
	pdf, err := invoicepdf.Render(doc, xml)
	if err != nil {
		return Issued{}, fmt.Errorf("render PDF: %w", err)
	}
	return Issued{Document: doc, XML: xml, PDF: pdf}, nil
}

func (c *CreditNotes) today() string { return c.now().In(berlin).Format(time.DateOnly) }

// Cancel cancels an issued invoice with a credit note over its full gross
// and the reversal of its receivable.
func (c *CreditNotes) Cancel(ctx context.Context, tenantID, id string) (receivablesv1.Cancelled, error) {
	if !ValidID(id) {
		return receivablesv1.Cancelled{}, invoiceNotFound(id)
	}
	orig, err := c.store.Invoice(ctx, tenantID, id)
	if err != nil {
		return receivablesv1.Cancelled{}, err
	}
	date := c.today()
	reason := "Stornorechnung zur Rechnung " + orig.Number + " vom " + orig.InvoiceDate
	cn, err := c.store.IssueCreditNote(ctx, tenantID, CreditNoteDraft{ID: CancelCreditNoteID(tenantID, id), CorrectsID: id, Date: date}, CheckCancel,
		func(orig InvoiceRecord, number string) (Issued, error) {
			doc, err := CreditNoteDocument(orig, number, date, reason, nil)
			if err != nil {
				return Issued{}, err
			}
			if !doc.Totals.Grand.Equal(orig.TotalGross) {
				return Issued{}, fmt.Errorf("the credit note's gross %s is not the invoice's %s", doc.Totals.Grand, orig.TotalGross)
			}
			return renderCreditNote(doc)
		})
	if err != nil {
		return receivablesv1.Cancelled{}, err
	}
	switch cn.State {
	case "posted":
		// Cancelled before (a repeat with the same Idempotency-Key got
		// the first answer from the middleware already).
		return receivablesv1.Cancelled{}, conflict("invoice %s is already cancelled by credit note %s", orig.Number, cn.Number)
	case "void":
		return receivablesv1.Cancelled{}, conflict("the cancellation of invoice %s was refused by the ledger: %s", orig.Number, cn.VoidReason)
	}
	// Step 2: the document, then the reversal; step 3 confirms.
	cn, err = c.book(ctx, tenantID, orig, cn, "reversing the receivable", func(string) (string, error) {
		rv, err := c.ledger.Reverse(ctx, tenantID, CancelKey(id), ledgerv1.ReverseRequest{IntentID: orig.BookingIntentID,
			Reason: truncate(reason+" ("+cn.Number+")", maxBookingDescription), BookingDate: cn.InvoiceDate})
		if !errs.Is(err, errs.AlreadyReversed) {
			return rv.ReversalIntentID, err
		}
		// Reversed already: by this cancellation's first attempt, whose
		// key the ledger no longer holds, or by hand in the journal.
		// Either way the receivable is taken back, which is what the
		// credit note documents: it is confirmed with that reversal
		// rather than voided.
		by, err := c.ledger.ReversedBy(ctx, tenantID, orig.BookingIntentID)
		if err == nil && by == "" {
			err = errs.E(errs.Internal, "intent %s refused as already reversed but names no reversal", orig.BookingIntentID)
		}
		return by, err
	})
	if err != nil {
		return receivablesv1.Cancelled{}, err
	}
	return cancelled(cn), nil
}

// book stores a pending credit note's PDF with the ledger, books it with
// post (given the document's id, answering the booking's intent) and
// confirms it with its event; a refusal of the ledger voids it (refused).
func (c *CreditNotes) book(ctx context.Context, tenantID string, orig, cn InvoiceRecord, step string, post func(docID string) (string, error)) (InvoiceRecord, error) {
	_, pdf, err := c.store.InvoiceFile(ctx, tenantID, cn.ID, true)
	if err != nil {
		return cn, err
	}
	docID, err := c.ledger.UploadPDF(ctx, tenantID, cn.Number+".pdf", pdf)
	if err != nil {
		return cn, c.refused(ctx, tenantID, cn, "storing the PDF", err)
	}
	intent, err := post(docID)
	if err != nil {
		return cn, c.refused(ctx, tenantID, cn, step, err)
	}
	ev := receivablesv1.CreditNoteIssued{TenantID: tenantID, CreditNoteID: cn.ID, Number: cn.Number, CorrectsID: orig.ID, DebtorID: cn.DebtorID,
		IntentID: intent, Gross: money.New(cn.TotalGross), Currency: cn.Currency}
	return c.store.ConfirmCreditNote(ctx, tenantID, cn.ID, intent, docID, ev)
}

func cancelled(cn InvoiceRecord) receivablesv1.Cancelled {
	return receivablesv1.Cancelled{OK: true, ReversalIntentID: cn.BookingIntentID, CreditNoteID: cn.ID, CreditNoteNumber: cn.Number}
}

// refused voids the credit note when the ledger refused for good and
// answers its error; an outage leaves it pending for a retry.
func (c *CreditNotes) refused(ctx context.Context, tenantID string, cn InvoiceRecord, step string, err error) error {
	return voidOnRefusal(step, err, func(reason string) error { return c.store.VoidCreditNote(ctx, tenantID, cn.ID, reason) })
}

// voidOnRefusal calls void with the reason when err is the ledger's
// refusal for good (anything but an outage, a timeout or an internal
// error) and answers err; an outage is wrapped and leaves the document
// pending for a retry.
func voidOnRefusal(step string, err error, void func(reason string) error) error {
	e := errs.As(err)
	if e == nil || e.Code == errs.Unavailable || e.Code == errs.Timeout || e.Code == errs.Internal {
		return errs.Wrap("receivables: "+step, err)
	}
	if verr := void(truncate(step+": "+e.Code+": "+e.Message, 1000)); verr != nil {
		return errors.Join(err, verr)
	}
	return err
}
