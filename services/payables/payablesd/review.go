package payablesd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/payables"
)

// ReviewRoutes are the routes of the review queue and the incoming
// invoices.
func ReviewRoutes(r *payables.Review) []natsx.Route {
	return []natsx.Route{
		{Subject: payablesv1.SubjectReviewCasesList, Decode: reviewCaseFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.ReviewCaseFilter) (payablesv1.ReviewCaseList, error) {
			return r.ReviewCases(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: payablesv1.SubjectReviewCasesGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (payablesv1.ReviewCaseDetail, error) {
			return r.ReviewCase(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		// Approving is safe by the case's state and the derived intent (a
		// second approval is refused, a resumed one posts nothing twice);
		// the Idempotency-Key adds that a retry of an answered approval is
		// answered the same, stored after the effect since that spans the
		// ledger.
		{Subject: payablesv1.SubjectReviewCasesApprove, Idempotent: true, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (payablesv1.ReviewCaseDetail, error) {
			return r.Approve(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: payablesv1.SubjectReviewCasesCorrect, Idempotent: true, Decode: natsx.DecodeWithID[payablesv1.ReviewCorrection], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[payablesv1.ReviewCorrection]) (payablesv1.ReviewCaseDetail, error) {
			return r.Correct(ctx, natsx.Claims(ctx).TenantID, in.ID, in.Body)
		})},
		{Subject: payablesv1.SubjectReviewCasesReject, Idempotent: true, Decode: natsx.DecodeWithID[payablesv1.ReviewRejection], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[payablesv1.ReviewRejection]) (payablesv1.ReviewCaseDetail, error) {
			return r.Reject(ctx, natsx.Claims(ctx).TenantID, in.ID, in.Body)
		})},
		{Subject: payablesv1.SubjectInvoicesList, Decode: invoiceFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.InvoiceFilter) (payablesv1.IncomingInvoiceList, error) {
			return r.Invoices(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: payablesv1.SubjectInvoicesGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (payablesv1.IncomingInvoiceDetail, error) {
			return r.Invoice(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: payablesv1.SubjectInvoicesOpenItems, Decode: natsx.Nothing, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (payablesv1.OpenItems, error) {
			return r.OpenItems(ctx, natsx.Claims(ctx).TenantID)
		})},
	}
}

// reviewCaseFilter reads the query of GET /v1/invoice-review-cases.
func reviewCaseFilter(_ context.Context, req *natsx.Request) (any, error) {
	q := req.Query
	f := payablesv1.ReviewCaseFilter{QueueState: q.Get("queue_state")}
	var err error
	if f.Limit, err = natsx.IntQuery(q, "limit", payablesv1.DefaultReviewCasesLimit, 1, payablesv1.MaxReviewCasesLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(q, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	return f, payables.CheckReviewCaseFilter(f)
}

// invoiceFilter reads the query of GET /v1/invoices.
func invoiceFilter(_ context.Context, req *natsx.Request) (any, error) {
	q := req.Query
	f := payablesv1.InvoiceFilter{VendorID: q.Get("vendor_id"), Status: q.Get("status"), StartDate: q.Get("start_date"), EndDate: q.Get("end_date")}
	var err error
	if f.Limit, err = natsx.IntQuery(q, "limit", payablesv1.DefaultInvoicesLimit, 1, payablesv1.MaxInvoicesLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(q, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	return f, payables.CheckInvoiceFilter(f)
}
