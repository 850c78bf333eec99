package payables

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// InvoiceRecord is an incoming invoice as the store keeps it.
type InvoiceRecord struct {
	payablesv1.IncomingInvoiceDetail
	State string // draft, pending, posted, void
}

// Remaining is what is still open of a posted invoice: its gross less
// what the bank settled; a draft or pending invoice owes nothing yet.
func (r InvoiceRecord) Remaining() decimal.Decimal {
	if r.State != "posted" {
		return decimal.Zero
	}
	return r.TotalGross.Decimal.Sub(r.PaidAmount.Decimal)
}

// Status is the invoice's status on the given day (spec: Invoice status):
// draft until it is posted; then paid when nothing remains, overdue when
// something remains past the due date, partially_paid when something was
// paid, else open.
func (r InvoiceRecord) Status(today string) string {
	if r.State != "posted" {
		return payablesv1.StatusDraft
	}
	switch {
	case r.Remaining().Sign() <= 0:
		return payablesv1.StatusPaid
	case r.DueDate < today:
		return payablesv1.StatusOverdue
	case r.PaidAmount.Sign() > 0:
		return payablesv1.StatusPartiallyPaid
	}
	return payablesv1.StatusOpen
}

// View is the invoice as the list shows it on the given day.
func (r InvoiceRecord) View(today string) payablesv1.IncomingInvoice {
	v := r.IncomingInvoice
	v.Status, v.RemainingAmount = r.Status(today), money.New(r.Remaining())
	return v
}

// InvoiceQuery is what the store selects: the filter with the day the
// status is computed for.
type InvoiceQuery struct {
	payablesv1.InvoiceFilter
	Today string
}

var (
	invoiceStatuses = map[string]bool{payablesv1.StatusDraft: true, payablesv1.StatusOpen: true, payablesv1.StatusPartiallyPaid: true,
		payablesv1.StatusPaid: true, payablesv1.StatusOverdue: true}
	berlin = func() *time.Location {
		l, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			return time.FixedZone("CET", 3600)
		}
		return l
	}()
)

// today is the current day in Germany, where an invoice falls due.
func (r *Review) today() string { return r.now().In(berlin).Format(time.DateOnly) }

// CheckInvoiceFilter names each bad query parameter of GET /v1/invoices.
func CheckInvoiceFilter(f payablesv1.InvoiceFilter) error {
	var ds []errs.Detail
	if f.VendorID != "" && !ValidID(f.VendorID) {
		ds = append(ds, errs.Field("vendor_id", "must be a UUID"))
	}
	if f.Status != "" && !invoiceStatuses[f.Status] {
		ds = append(ds, errs.Field("status", "one of draft, open, partially_paid, paid, overdue"))
	}
	ds = natsx.DateRange(ds, f.StartDate, f.EndDate)
	ds = natsx.Page(ds, f.Limit, f.Offset, payablesv1.MaxInvoicesLimit)
	if len(ds) > 0 {
		return errs.Invalid("invalid query", ds...)
	}
	return nil
}

// Invoices lists the tenant's incoming invoices.
func (r *Review) Invoices(ctx context.Context, tenantID string, f payablesv1.InvoiceFilter) (payablesv1.IncomingInvoiceList, error) {
	if f.Limit == 0 {
		f.Limit = payablesv1.DefaultInvoicesLimit
	}
	if err := CheckInvoiceFilter(f); err != nil {
		return payablesv1.IncomingInvoiceList{}, err
	}
	if f.VendorID != "" {
		// An unknown vendor is NOT_FOUND rather than an empty list that
		// would look like a vendor without invoices.
		if _, err := r.store.Vendor(ctx, tenantID, f.VendorID); err != nil {
			return payablesv1.IncomingInvoiceList{}, err
		}
	}
	today := r.today()
	rs, err := r.store.Invoices(ctx, tenantID, InvoiceQuery{InvoiceFilter: f, Today: today})
	if err != nil {
		return payablesv1.IncomingInvoiceList{}, err
	}
	out := payablesv1.IncomingInvoiceList{Invoices: make([]payablesv1.IncomingInvoice, 0, len(rs))}
	for _, rec := range rs {
		out.Invoices = append(out.Invoices, rec.View(today))
	}
	return out, nil
}

// Invoice reads one incoming invoice with its lines and payments.
func (r *Review) Invoice(ctx context.Context, tenantID, id string) (payablesv1.IncomingInvoiceDetail, error) {
	if !ValidID(id) {
		return payablesv1.IncomingInvoiceDetail{}, errs.NotFoundf("invoice %s not found", clip(id, 40))
	}
	rec, err := r.store.Invoice(ctx, tenantID, id)
	if err != nil {
		return payablesv1.IncomingInvoiceDetail{}, err
	}
	out := rec.IncomingInvoiceDetail
	out.IncomingInvoice = rec.View(r.today())
	return out, nil
}

// GroupOpenItems groups open invoices by vendor in the order the vendors
// first appear.
func GroupOpenItems(rs []InvoiceRecord, today string) []payablesv1.VendorOpenItems {
	out := []payablesv1.VendorOpenItems{}
	at := map[string]int{}
	for _, r := range rs {
		if r.Remaining().Sign() <= 0 {
			continue
		}
		i, ok := at[r.VendorID]
		if !ok {
			i = len(out)
			at[r.VendorID] = i
			out = append(out, payablesv1.VendorOpenItems{VendorID: r.VendorID, VendorName: r.VendorName, TotalOpen: money.Zero,
				Invoices: []payablesv1.IncomingInvoice{}})
		}
		out[i].TotalOpen = out[i].TotalOpen.Add(money.New(r.Remaining()))
		out[i].Invoices = append(out[i].Invoices, r.View(today))
	}
	return out
}

// OpenItems answers GET /v1/invoices/open-items.
func (r *Review) OpenItems(ctx context.Context, tenantID string) (payablesv1.OpenItems, error) {
	rs, err := r.store.OpenInvoices(ctx, tenantID)
	if err != nil {
		return payablesv1.OpenItems{}, err
	}
	return payablesv1.OpenItems{Vendors: GroupOpenItems(rs, r.today())}, nil
}
