package receivablesd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// OutgoingRoutes are the routes of the outgoing-invoice and open-item
// views.
func OutgoingRoutes(out *receivables.Outgoing) []natsx.Route {
	return []natsx.Route{
		{Subject: receivablesv1.SubjectOutgoingInvoicesList, Decode: outgoingFilter, Endpoint: natsx.Typed(func(ctx context.Context, f receivablesv1.OutgoingFilter) (receivablesv1.OutgoingInvoiceList, error) {
			return out.OutgoingInvoices(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: receivablesv1.SubjectOutgoingOpenItems, Decode: none, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (receivablesv1.OutgoingOpenItems, error) {
			return out.OpenItemsByCustomer(ctx, natsx.Claims(ctx).TenantID)
		})},
		{Subject: receivablesv1.SubjectSalesInvoiceOpenItems, Decode: openItemsFilter, Endpoint: natsx.Typed(func(ctx context.Context, f receivablesv1.OpenItemsFilter) (receivablesv1.OpenItemList, error) {
			return out.OpenItems(ctx, natsx.Claims(ctx).TenantID, f)
		})},
	}
}

func none(context.Context, *natsx.Request) (any, error) { return struct{}{}, nil }

// outgoingFilter reads the query of GET /v1/outgoing-invoices; the
// values are checked by the service, the numbers here.
func outgoingFilter(_ context.Context, r *natsx.Request) (any, error) {
	q := r.Query
	f := receivablesv1.OutgoingFilter{CustomerID: q.Get("customer_id"), Status: q.Get("status"), Type: q.Get("type"),
		StartDate: q.Get("start_date"), EndDate: q.Get("end_date")}
	var err error
	if f.Limit, err = natsx.IntQuery(q, "limit", receivablesv1.DefaultOutgoingLimit, 1, receivablesv1.MaxOutgoingLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(q, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	return f, receivables.CheckOutgoingFilter(f)
}

// openItemsFilter reads the query of GET /v1/sales-invoices/open-items.
func openItemsFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := receivablesv1.OpenItemsFilter{DebtorID: r.Query.Get("debtor_id"), Period: r.Query.Get("period")}
	return f, receivables.CheckOpenItemsFilter(f)
}
