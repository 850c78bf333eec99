package receivablesd

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// InvoiceRoutes are the routes of sales invoices and the invoicing
// settings.
func InvoiceRoutes(inv *receivables.Invoicing) []natsx.Route {
	return []natsx.Route{
		// Not Idempotent in the middleware's sense alone: the key derives
		// the invoice id, so a retry after an outage resumes the invoice
		// instead of being told the key is in progress; the middleware
		// stores the final answer.
		{Subject: receivablesv1.SubjectInvoicesCreate, Idempotent: true, Decode: natsx.JSON[receivablesv1.InvoiceInput], Endpoint: natsx.Typed(func(ctx context.Context, in receivablesv1.InvoiceInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			c := natsx.Claims(ctx)
			req := receivables.Request{Actor: c.Actor(), IdempotencyKey: natsx.IdempotencyKey(ctx)}
			if r := natsx.RequestFrom(ctx); r != nil {
				req.Body = r.Body
			}
			out, err := inv.CreateInvoice(ctx, c.TenantID, req, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(out), nil
		})},
		{Subject: receivablesv1.SubjectInvoicesFinalize, Idempotent: true, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			out, err := inv.FinalizeInvoice(ctx, natsx.Claims(ctx).TenantID, id)
			if err != nil {
				return nil, err
			}
			return natsx.Created(out), nil
		})},
		{Subject: receivablesv1.SubjectInvoicesList, Decode: invoiceFilter, Endpoint: natsx.Typed(func(ctx context.Context, f receivablesv1.InvoiceFilter) (receivablesv1.InvoiceList, error) {
			return inv.Invoices(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: receivablesv1.SubjectInvoicesGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (receivablesv1.Invoice, error) {
			return inv.Invoice(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: receivablesv1.SubjectInvoicesPDF, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*natsx.Response, error) {
			number, content, err := inv.InvoiceFile(ctx, natsx.Claims(ctx).TenantID, id, true)
			if err != nil {
				return nil, err
			}
			return &natsx.Response{Raw: content, ContentType: "application/pdf", Disposition: disposition(number + ".pdf")}, nil
		})},
		{Subject: receivablesv1.SubjectInvoicesXML, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*natsx.Response, error) {
			number, content, err := inv.InvoiceFile(ctx, natsx.Claims(ctx).TenantID, id, false)
			if err != nil {
				return nil, err
			}
			return &natsx.Response{Raw: content, ContentType: "application/xml", Disposition: disposition(number + ".xml")}, nil
		})},
		{Subject: receivablesv1.SubjectSettingsGet, Decode: natsx.Nothing, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (receivablesv1.Settings, error) {
			return inv.Settings(ctx, natsx.Claims(ctx).TenantID)
		})},
		{Subject: receivablesv1.SubjectSettingsPut, Idempotent: true, Decode: natsx.JSON[receivablesv1.SettingsInput], Endpoint: natsx.Typed(func(ctx context.Context, in receivablesv1.SettingsInput) (receivablesv1.Settings, error) {
			return inv.PutSettings(ctx, natsx.Claims(ctx).TenantID, in)
		})},
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_./-]`)

// disposition offers the file for download under its invoice number (the
// number's characters are all safe in a quoted filename; anything else is
// replaced to be sure).
func disposition(name string) string {
	return `attachment; filename="` + unsafeName.ReplaceAllString(name, "_") + `"`
}

// invoiceFilter reads the query of GET /v1/sales-invoices.
func invoiceFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := receivablesv1.InvoiceFilter{DebtorID: r.Query.Get("debtor_id"), Status: r.Query.Get("status"), From: r.Query.Get("from"), To: r.Query.Get("to")}
	var details []errs.Detail
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", receivables.DefaultInvoicesLimit, 1, receivables.MaxInvoicesLimit); err != nil {
		details = append(details, errs.As(err).Details...)
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		details = append(details, errs.As(err).Details...)
	}
	if f.DebtorID != "" && !receivables.ValidID(f.DebtorID) {
		details = append(details, errs.Field("debtor_id", "must be a UUID"))
	}
	switch f.Status {
	case "", receivablesv1.StatusDraft, receivablesv1.StatusPending, receivablesv1.StatusOpen, receivablesv1.StatusPartiallyPaid,
		receivablesv1.StatusPaid, receivablesv1.StatusOverdue, receivablesv1.StatusVoid:
	default:
		details = append(details, errs.Field("status", "draft, pending, open, partially_paid, paid, overdue or void"))
	}
	for _, p := range []struct{ name, v string }{{"from", f.From}, {"to", f.To}} {
		if p.v != "" && !validDate(p.v) {
			details = append(details, errs.Field(p.name, "must be a date YYYY-MM-DD"))
		}
	}
	if len(details) == 0 && f.From != "" && f.To != "" && f.To < f.From {
		details = append(details, errs.Field("to", "before from"))
	}
	if len(details) > 0 {
		return nil, errs.Invalid("invalid query", details...)
	}
	return f, nil
}

var dateRe = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`)

func validDate(s string) bool { return dateRe.MatchString(s) }

// invoiceLedger is receivables.InvoiceLedger over NATS: the receivables
// service's own signed principal for the tenant, so the ledger's
// service-only subjects (ledger.v1.post) accept it whoever the caller is.
type invoiceLedger struct{ c *natsx.Client }

func (l invoiceLedger) TaxCodes(ctx context.Context, tenantID string) ([]ledgerv1.TaxCode, error) {
	return ledgerv1.Client{C: l.c}.TaxCodes(rpc.ForTenant(ctx, tenantID), false)
}

func (l invoiceLedger) Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	return ledgerv1.Client{C: l.c}.Post(ctx, r)
}

// UploadPDF sends the PDF as the gateway sends an upload. No
// Idempotency-Key travels along: the ledger deduplicates documents by
// their SHA-256, which is what a retry needs.
func (l invoiceLedger) UploadPDF(ctx context.Context, tenantID, filename string, pdf []byte) (string, error) {
	var doc struct {
		ID string `json:"id"`
	}
	ctx = natsx.WithIdempotencyKey(rpc.ForTenant(ctx, tenantID), "")
	if err := l.c.CallFile(ctx, ledgerv1.SubjectDocumentsUpload, "file", unsafeName.ReplaceAllString(filename, "_"), "application/pdf", pdf, &doc); err != nil {
		return "", err
	}
	if strings.TrimSpace(doc.ID) == "" {
		return "", fmt.Errorf("receivablesd.UploadPDF: the ledger answered no document id")
	}
	return doc.ID, nil
}

// tenantProfile is receivables.TenantProfile over identity.
type tenantProfile struct{ c *natsx.Client }

func (t tenantProfile) Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error) {
	return identityv1.Client{C: t.c}.Tenant(rpc.ForTenant(ctx, tenantID))
}
