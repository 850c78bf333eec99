package receivables

import (
	"context"
	"regexp"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// SalesDocument is a sales invoice or credit note as the views read it:
// its state and amounts, before the status is computed.
type SalesDocument struct {
	ID             string
	DebtorID       string
	DebtorName     string
	Type           string
	State          string
	Number         *string
	InvoiceDate    string // YYYY-MM-DD
	DueDate        string // YYYY-MM-DD
	Currency       string
	TotalGross     decimal.Decimal
	PaidAmount     decimal.Decimal
	CreditedAmount decimal.Decimal
}

// Remaining is what is still open of a posted invoice: its gross less
// what the bank settled and credit notes took off. A credit note is
// applied to the invoice it corrects when it is issued (the invoice's
// credited amount), so nothing of it stays open on its own; drafts,
// pending and void documents owe nothing.
func (d SalesDocument) Remaining() decimal.Decimal {
	if d.State != "posted" || d.Type != receivablesv1.TypeInvoice {
		return decimal.Zero
	}
	return d.TotalGross.Sub(d.PaidAmount).Sub(d.CreditedAmount)
}

// Status is the document's status on the given day (YYYY-MM-DD): draft,
// pending or void by its state; a posted one paid when nothing remains,
// overdue when something remains past its due date (whether or not part
// was paid: the reminder is what an accountant needs to see),
// partially_paid when something was paid or credited, else open. It is
// InvoiceStatus's rule.
func (d SalesDocument) Status(today string) string {
	switch d.State {
	case "draft":
		return receivablesv1.StatusDraft
	case "pending":
		return receivablesv1.StatusPending
	case "void":
		return receivablesv1.StatusVoid
	}
	switch {
	case d.Remaining().Sign() <= 0:
		return receivablesv1.StatusPaid
	case d.DueDate < today:
		return receivablesv1.StatusOverdue
	case d.PaidAmount.Add(d.CreditedAmount).Sign() > 0:
		return receivablesv1.StatusPartiallyPaid
	}
	return receivablesv1.StatusOpen
}

// IsOpen reports whether the document is an open item: a posted invoice
// with something remaining.
func (d SalesDocument) IsOpen() bool { return d.Remaining().Sign() > 0 }

// View is the document as the list shows it on the given day.
func (d SalesDocument) View(today string) receivablesv1.OutgoingInvoice {
	return receivablesv1.OutgoingInvoice{ID: d.ID, CustomerID: d.DebtorID, CustomerName: d.DebtorName, InvoiceNumber: d.Number,
		InvoiceDate: d.InvoiceDate, DueDate: d.DueDate, Currency: d.Currency, TotalGross: money.New(d.TotalGross), Type: d.Type,
		Status: d.Status(today), RemainingAmount: money.New(d.Remaining())}
}

// OutgoingQuery is what the store selects: the filter with the day the
// status is computed for.
type OutgoingQuery struct {
	receivablesv1.OutgoingFilter
	Today string
}

// OutgoingStore reads sales documents for the views; postgres.Store
// implements it.
type OutgoingStore interface {
	// SalesDocuments lists the documents matching q, newest invoice date
	// first; the status filter selects what SalesDocument.Status computes
	// for q.Today.
	SalesDocuments(ctx context.Context, tenantID string, q OutgoingQuery) ([]SalesDocument, error)
	// OpenInvoices lists the posted invoices with something remaining,
	// by debtor name and invoice date; debtorID and period (YYYY-MM) narrow
	// them when not empty.
	OpenInvoices(ctx context.Context, tenantID, debtorID, period string) ([]SalesDocument, error)
	// Debtor reads one debtor; an unknown id is NOT_FOUND.
	Debtor(ctx context.Context, tenantID, id string) (Debtor, error)
}

// checkDebtor answers NOT_FOUND for a debtor filter naming no debtor of
// the tenant (another tenant's included), rather than an empty list that
// would look like a customer without invoices.
func (o *Outgoing) checkDebtor(ctx context.Context, tenantID, id string) error {
	if id == "" {
		return nil
	}
	_, err := o.store.Debtor(ctx, tenantID, id)
	return err
}

// Outgoing answers the views of outgoing invoices and open items.
type Outgoing struct {
	store OutgoingStore
	now   func() time.Time
}

// NewOutgoing returns the views on store; now gives the day statuses are
// computed for (in German time), time.Now when nil.
func NewOutgoing(store OutgoingStore, now func() time.Time) *Outgoing {
	if now == nil {
		now = time.Now
	}
	return &Outgoing{store: store, now: now}
}

var berlin = func() *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		return time.FixedZone("CET", 3600)
	}
	return l
}()

// today is the current day in Germany, where an invoice falls due.
func (o *Outgoing) today() string { return o.now().In(berlin).Format(time.DateOnly) }

var (
	statuses = map[string]bool{receivablesv1.StatusDraft: true, receivablesv1.StatusOpen: true, receivablesv1.StatusPartiallyPaid: true,
		receivablesv1.StatusPaid: true, receivablesv1.StatusOverdue: true}
	periodRe = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)
)

// CheckOutgoingFilter returns the errors of a list query as one
// INVALID_INPUT naming each parameter.
func CheckOutgoingFilter(f receivablesv1.OutgoingFilter) error {
	var ds []errs.Detail
	if f.CustomerID != "" && !ValidID(f.CustomerID) {
		ds = append(ds, errs.Field("customer_id", "must be a UUID"))
	}
	if f.Status != "" && !statuses[f.Status] {
		ds = append(ds, errs.Field("status", "one of draft, open, partially_paid, paid, overdue"))
	}
	if f.Type != "" && f.Type != receivablesv1.TypeInvoice && f.Type != receivablesv1.TypeCreditNote {
		ds = append(ds, errs.Field("type", "invoice or credit_note"))
	}
	ds = natsx.DateRange(ds, f.StartDate, f.EndDate)
	ds = natsx.Page(ds, f.Limit, f.Offset, receivablesv1.MaxOutgoingLimit)
	if len(ds) > 0 {
		return errs.Invalid("invalid query", ds...)
	}
	return nil
}

// OutgoingInvoices lists the tenant's sales invoices and credit notes.
func (o *Outgoing) OutgoingInvoices(ctx context.Context, tenantID string, f receivablesv1.OutgoingFilter) (receivablesv1.OutgoingInvoiceList, error) {
	if f.Limit == 0 {
		f.Limit = receivablesv1.DefaultOutgoingLimit
	}
	if err := CheckOutgoingFilter(f); err != nil {
		return receivablesv1.OutgoingInvoiceList{}, err
	}
	if err := o.checkDebtor(ctx, tenantID, f.CustomerID); err != nil {
		return receivablesv1.OutgoingInvoiceList{}, err
	}
	today := o.today()
	ds, err := o.store.SalesDocuments(ctx, tenantID, OutgoingQuery{OutgoingFilter: f, Today: today})
	if err != nil {
		return receivablesv1.OutgoingInvoiceList{}, errs.Wrap("receivables.OutgoingInvoices", err)
	}
	out := receivablesv1.OutgoingInvoiceList{Invoices: make([]receivablesv1.OutgoingInvoice, 0, len(ds))}
	for _, d := range ds {
		out.Invoices = append(out.Invoices, d.View(today))
	}
	return out, nil
}

// GroupOpenItems groups open invoices (as OpenInvoices lists them) by
// customer, in the order the customers first appear: per customer the
// gross less payments, the credit notes netted against it and what
// remains.
func GroupOpenItems(ds []SalesDocument, today string) []receivablesv1.CustomerOpenItems {
	out := []receivablesv1.CustomerOpenItems{}
	at := map[string]int{}
	for _, d := range ds {
		if !d.IsOpen() {
			continue
		}
		i, ok := at[d.DebtorID]
		if !ok {
			i = len(out)
			at[d.DebtorID] = i
			out = append(out, receivablesv1.CustomerOpenItems{CustomerID: d.DebtorID, CustomerName: d.DebtorName,
				TotalOpen: money.Zero, CreditNoteTotal: money.Zero, NetOpen: money.Zero, Invoices: []receivablesv1.OutgoingInvoice{}})
		}
		c := &out[i]
		c.TotalOpen = money.New(c.TotalOpen.Decimal.Add(d.TotalGross.Sub(d.PaidAmount)))
		c.CreditNoteTotal = money.New(c.CreditNoteTotal.Decimal.Add(d.CreditedAmount))
		c.NetOpen = money.New(c.NetOpen.Decimal.Add(d.Remaining()))
		c.Invoices = append(c.Invoices, d.View(today))
	}
	return out
}

// OpenItemsByCustomer answers GET /v1/outgoing-invoices/open-items.
func (o *Outgoing) OpenItemsByCustomer(ctx context.Context, tenantID string) (receivablesv1.OutgoingOpenItems, error) {
	ds, err := o.store.OpenInvoices(ctx, tenantID, "", "")
	if err != nil {
		return receivablesv1.OutgoingOpenItems{}, errs.Wrap("receivables.OpenItemsByCustomer", err)
	}
	return receivablesv1.OutgoingOpenItems{Customers: GroupOpenItems(ds, o.today())}, nil
}

// CheckOpenItemsFilter returns what is wrong with the query of GET
// /v1/sales-invoices/open-items.
func CheckOpenItemsFilter(f receivablesv1.OpenItemsFilter) error {
	var ds []errs.Detail
	if f.DebtorID != "" && !ValidID(f.DebtorID) {
		ds = append(ds, errs.Field("debtor_id", "must be a UUID"))
	}
	if f.Period != "" && !periodRe.MatchString(f.Period) {
		ds = append(ds, errs.Field("period", "a month YYYY-MM"))
	}
	if len(ds) > 0 {
		return errs.Invalid("invalid query", ds...)
	}
	return nil
}

// OpenItems answers GET /v1/sales-invoices/open-items: the open invoices,
// each with what remains of it.
func (o *Outgoing) OpenItems(ctx context.Context, tenantID string, f receivablesv1.OpenItemsFilter) (receivablesv1.OpenItemList, error) {
	if err := CheckOpenItemsFilter(f); err != nil {
		return receivablesv1.OpenItemList{}, err
	}
	if err := o.checkDebtor(ctx, tenantID, f.DebtorID); err != nil {
		return receivablesv1.OpenItemList{}, err
	}
	ds, err := o.store.OpenInvoices(ctx, tenantID, f.DebtorID, f.Period)
	if err != nil {
		return receivablesv1.OpenItemList{}, errs.Wrap("receivables.OpenItems", err)
	}
	today := o.today()
	out := receivablesv1.OpenItemList{OpenItems: []receivablesv1.OpenItem{}}
	for _, d := range ds {
		if !d.IsOpen() {
			continue
		}
		number := ""
		if d.Number != nil {
			number = *d.Number
		}
		out.OpenItems = append(out.OpenItems, receivablesv1.OpenItem{InvoiceID: d.ID, Number: number, DebtorID: d.DebtorID,
			InvoiceDate: d.InvoiceDate, DueDate: d.DueDate, Currency: d.Currency, Amount: money.New(d.Remaining()),
			TotalGross: money.New(d.TotalGross), Status: d.Status(today)})
	}
	return out, nil
}
