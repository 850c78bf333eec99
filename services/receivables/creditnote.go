package receivables

import (
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// Partial credit notes. A credit note for part of an invoice (some lines,
// part of a line's quantity, or a price reduction on a line) is issued in
// the same crash-safe steps as a cancellation, but posted as its own
// booking: the revenue of each VAT group and its VAT are debited, the
// debtor's receivable credited, under an intent id derived from the
// credit note's id. It never credits more than is still open of the
// invoice (its gross less payments and earlier credit notes).

// MaxCreditReason bounds a credit note's reason.
const MaxCreditReason = 1000

// CreditNoteIDFor is the id of a credit note created under an
// Idempotency-Key, so that a retry after an outage resumes it.
func CreditNoteIDFor(tenantID, actor, key string) string {
	return uuid.NewSHA1(creditSpace, []byte(tenantID+"/"+actor+"/"+key+"/credit")).String()
}

// CheckCreditNoteInput returns the request's errors as one INVALID_INPUT
// against the invoice's lines.
func CheckCreditNoteInput(in receivablesv1.CreditNoteInput, lines int) error {
	var ds []errs.Detail
	if n := utf8.RuneCountInString(in.Reason); n == 0 || n > MaxCreditReason {
		ds = append(ds, errs.Field("reason", "required, at most 1000 characters"))
	}
	if len(in.LineItems) == 0 || len(in.LineItems) > MaxInvoiceLines {
		ds = append(ds, errs.Field("line_items", "1 to 500 items"))
	}
	seen := map[int]bool{}
	for i, li := range in.LineItems {
		f := "line_items[" + strconv.Itoa(i) + "]"
		switch {
		case li.Line < 1 || li.Line > lines:
			ds = append(ds, errs.Field(f+".line", fmt.Sprintf("a line of the invoice, 1 to %d", lines)))
		case seen[li.Line]:
			ds = append(ds, errs.Field(f+".line", "named twice"))
		}
		seen[li.Line] = true
		if li.Quantity != nil && li.Amount != nil {
			ds = append(ds, errs.Field(f, "quantity or amount, not both"))
		}
		if li.Quantity != nil && (!li.Quantity.IsPositive() || li.Quantity.Places() > 4) {
			ds = append(ds, errs.Field(f+".quantity", "positive, at most 4 decimals"))
		}
		if li.Amount != nil && (!li.Amount.IsPositive() || li.Amount.Places() > 2) {
			ds = append(ds, errs.Field(f+".amount", "positive, at most 2 decimals"))
		}
	}
	if len(ds) > 0 {
		return errs.Invalid("invalid credit note", ds...)
	}
	return nil
}

// CreditLines are the credit note's lines for in from the invoice's
// document lines: a whole line as it was; a quantity at the line's unit
// price with its share of the line's discount; an amount as one unit at
// that price. None may credit more of a line than the line's net.
func CreditLines(doc einvoice.Document, in []receivablesv1.CreditLineInput) ([]einvoice.Line, error) {
	var out []einvoice.Line
	var ds []errs.Detail
	for i, li := range in {
		f := "line_items[" + strconv.Itoa(i) + "]"
		ol := doc.Lines[li.Line-1]
		l := ol
		switch {
		case li.Quantity != nil:
			if li.Quantity.GreaterThan(ol.Quantity) {
				ds = append(ds, errs.Field(f+".quantity", "more than the line's quantity "+ol.Quantity.String()))
				continue
			}
			l.Quantity = li.Quantity.Decimal
			if !ol.Discount.IsZero() {
				l.Discount = ol.Discount.Mul(li.Quantity.Decimal).Div(ol.Quantity).Round(2)
			}
		case li.Amount != nil:
			if li.Amount.GreaterThan(ol.NetAmount) {
				ds = append(ds, errs.Field(f+".amount", "more than the line's net amount "+ol.NetAmount.StringFixed(2)))
				continue
			}
			l.Description = "Preisnachlass: " + ol.Description
			l.Quantity, l.UnitCode, l.UnitPrice, l.Discount = decimal.NewFromInt(1), DefaultUnitCode, li.Amount.Decimal, decimal.Zero
		}
		l.ID, l.NetAmount = strconv.Itoa(len(out)+1), decimal.Zero
		out = append(out, l)
	}
	if len(ds) > 0 {
		return nil, errs.Invalid("the credit note credits more than the invoice's lines", ds...)
	}
	return out, nil
}

// CheckCredit says whether an invoice can take a credit note of gross: a
// posted invoice with at least that much still open.
func CheckCredit(gross decimal.Decimal) func(Original) error {
	return func(o Original) error {
		switch {
		case o.Type != receivablesv1.TypeInvoice:
			return conflict("%s is a credit note; credit notes correct invoices", o.Number)
		case o.State == "draft":
			return conflict("the invoice is a draft: nothing was issued, so there is nothing to credit (change the draft instead)")
		case o.State != "posted":
			return conflict("invoice %s is %s: only an issued invoice can be credited", o.Number, o.State)
		}
		open := o.TotalGross.Sub(o.PaidAmount).Sub(o.CreditedAmount)
		if gross.GreaterThan(open) {
			return conflict("the credit note's gross %s exceeds the %s still open of invoice %s (gross %s, paid %s, credited %s)",
				gross.StringFixed(2), open.StringFixed(2), o.Number, o.TotalGross.StringFixed(2), o.PaidAmount.StringFixed(2), o.CreditedAmount.StringFixed(2))
		}
		return nil
	}
}

// CreditPostingLines are the ledger lines of a partial credit note: the
// invoice's lines the other way round, one per VAT group debiting the
// group's revenue account with the group's gross against the receivable,
// with the group's output code. The ledger puts the VAT of a line that
// debits revenue on the debit side, so the credit note takes back both
// the revenue and the VAT under the invoice's code (the code's tax base
// shrinks with it). A foreign-currency credit note posts the EUR value.
func CreditPostingLines(doc einvoice.Document, lines []Line, receivable, number string) []ledgerv1.Line {
	out := PostingLines(doc, lines, receivable, number)
	for i := range out {
		out[i].AccountDebit, out[i].AccountCredit = out[i].AccountCredit, out[i].AccountDebit
	}
	return out
}

// CreditNote issues a partial credit note for an issued invoice and posts
// it.
func (c *CreditNotes) CreditNote(ctx context.Context, tenantID, id string, req Request, in receivablesv1.CreditNoteInput) (receivablesv1.CreditNoteCreated, error) {
	if !ValidID(id) {
		return receivablesv1.CreditNoteCreated{}, invoiceNotFound(id)
	}
	orig, err := c.store.Invoice(ctx, tenantID, id)
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	if err := CheckCreditNoteInput(in, len(orig.Lines)); err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	if orig.Document == nil || orig.State != "posted" {
		// Refused with the state's reason before anything is built.
		if err := CheckCredit(decimal.Zero)(Original{Type: receivablesv1.TypeInvoice, State: orig.State, Number: orig.Number}); err != nil {
			return receivablesv1.CreditNoteCreated{}, err
		}
	}
	lines, err := CreditLines(*orig.Document, in.LineItems)
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	date := c.today()
	reason := "Gutschrift zur Rechnung " + orig.Number + " vom " + orig.InvoiceDate + ": " + in.Reason
	build := func(orig InvoiceRecord, number string) (einvoice.Document, error) {
		return CreditNoteDocument(orig, number, date, reason, lines)
	}
	draft, err := build(orig, placeholderNumber)
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, documentFields(err)
	}
	cnID := uuid.NewString()
	if req.IdempotencyKey != "" {
		cnID = CreditNoteIDFor(tenantID, req.Actor, req.IdempotencyKey)
	}
	cn, err := c.store.IssueCreditNote(ctx, tenantID, CreditNoteDraft{ID: cnID, CorrectsID: id, Date: date}, CheckCredit(draft.Totals.Grand),
		func(orig InvoiceRecord, number string) (Issued, error) {
			doc, err := build(orig, number)
			if err != nil {
				return Issued{}, err
			}
			return renderCreditNote(doc)
		})
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	switch cn.State {
	case "posted":
		return creditNoteCreated(cn, id), nil
	case "void":
		return receivablesv1.CreditNoteCreated{}, conflict("credit note %s was refused by the ledger: %s", cn.Number, cn.VoidReason)
	}
	d, err := c.store.Debtor(ctx, tenantID, cn.DebtorID)
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	intent := BookingIntentID(tenantID, cn.ID)
	desc := truncate("Gutschrift "+cn.Number+" zu Rechnung "+orig.Number+" "+d.Name, maxBookingDescription)
	cn, err = c.book(ctx, tenantID, orig, cn, "posting the credit note", func(docID string) (string, error) {
		_, err := c.ledger.Post(ctx, ledgerv1.PostRequest{TenantID: tenantID, IntentID: intent, Source: invoiceSource, DocumentID: docID,
			Booking: ledgerv1.Booking{BookingDate: cn.InvoiceDate, Description: desc, SkipDuplicateCheck: true,
				Lines: CreditPostingLines(*cn.Document, orig.Lines, d.ReceivableAccount, cn.Number)}})
		return intent, err
	})
	if err != nil {
		return receivablesv1.CreditNoteCreated{}, err
	}
	return creditNoteCreated(cn, id), nil
}

func creditNoteCreated(cn InvoiceRecord, corrects string) receivablesv1.CreditNoteCreated {
	return receivablesv1.CreditNoteCreated{CreditNoteID: cn.ID, CreditNoteNumber: cn.Number, CorrectsID: corrects, BookingIntentID: cn.BookingIntentID,
		DocumentID: cn.DocumentID, TotalNet: money.New(cn.TotalNet), TotalTax: money.New(cn.TotalTax), TotalGross: money.New(cn.TotalGross)}
}
