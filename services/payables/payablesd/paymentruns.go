package payablesd

import (
	"context"
	"slices"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/payables"
)

// RunRoutes are the routes of the payment runs.
func RunRoutes(runs *payables.PaymentRuns) []natsx.Route {
	tenant := func(ctx context.Context) string { return natsx.Claims(ctx).TenantID }
	// A change of state answers a retry under its Idempotency-Key with the
	// first answer, where the state alone would refuse it (409).
	change := func(subject string, idempotent bool, f func(context.Context, string, string) (payables.PaymentRun, error)) natsx.Route {
		return natsx.Route{Subject: subject, Idempotent: idempotent, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (payables.PaymentRun, error) {
			return f(ctx, tenant(ctx), id)
		})}
	}
	return []natsx.Route{
		{Subject: payablesv1.SubjectPaymentRunsList, Decode: runFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.PaymentRunFilter) (payablesv1.PaymentRunList, error) {
			return runs.List(ctx, tenant(ctx), f)
		})},
		{Subject: payablesv1.SubjectPaymentRunsCreate, Idempotent: true, Decode: natsx.JSON[payablesv1.PaymentRunInput], Endpoint: natsx.Typed(func(ctx context.Context, in payablesv1.PaymentRunInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			r, err := runs.Create(ctx, tenant(ctx), actor(ctx), in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(r), nil
		})},
		change(payablesv1.SubjectPaymentRunsGet, false, runs.Get),
		change(payablesv1.SubjectPaymentRunsApprove, true, func(ctx context.Context, tenantID, id string) (payables.PaymentRun, error) {
			return runs.Approve(ctx, tenantID, id, actor(ctx))
		}),
		change(payablesv1.SubjectPaymentRunsComplete, true, runs.Complete),
		change(payablesv1.SubjectPaymentRunsCancel, true, runs.Cancel),
		{Subject: payablesv1.SubjectPaymentRunsReturn, Idempotent: true, Decode: natsx.DecodeWithID[payablesv1.PaymentRunReturn],
			Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[payablesv1.PaymentRunReturn]) (payables.PaymentRun, error) {
				return runs.Return(ctx, tenant(ctx), in.ID, in.Body)
			})},
		{Subject: payablesv1.SubjectPaymentRunsExport, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*natsx.Response, error) {
			doc, _, err := runs.Export(ctx, tenant(ctx), id)
			if err != nil {
				return nil, err
			}
			return &natsx.Response{Raw: doc, ContentType: "application/xml",
				Disposition: `attachment; filename="payment-run-` + strings.ReplaceAll(id, `"`, "") + `.xml"`}, nil
		})},
	}
}

// actor is who calls: their key or user, and whether they are the
// tenant's owner (the admin scope).
func actor(ctx context.Context) payables.Actor {
	c := natsx.Claims(ctx)
	return payables.Actor{ID: c.Actor(), Owner: slices.Contains(c.Scopes, auth.Admin)}
}

// runFilter reads the query of GET /v1/payment-runs.
func runFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := payablesv1.PaymentRunFilter{Status: r.Query.Get("status")}
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", payables.DefaultRunsLimit, 1, payables.MaxRunsLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	if f.Status != "" && !slices.Contains(payablesv1.RunStatuses, f.Status) {
		return nil, errs.Invalid("invalid query parameter status", errs.Field("status", "one of "+strings.Join(payablesv1.RunStatuses, ", ")))
	}
	return f, nil
}

// tenants is payables.Tenants over identity.
type tenants struct{ c rpc.Caller }

func (t tenants) Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error) {
	return identityv1.Client{C: t.c}.Tenant(rpc.ForTenant(ctx, tenantID))
}
