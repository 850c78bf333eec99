// Package receivablesd declares the receivables service for the daemon: its
// schema, the stream it owns and its route table.
package receivablesd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/postgres"
)

// Service declares the receivables service.
func Service(func(string) string) (daemon.Service, error) {
	return daemon.Service{
		Name: receivablesv1.ServiceName,
		DB:   postgres.Schema,
		// The stream its invoice events will go to; created now, so that
		// consumers written against it find it.
		Streams: []natsx.Stream{{Name: receivablesv1.StreamEvents, Subjects: []string{receivablesv1.EventsFilter}}},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			store := postgres.New(env.Pool)
			svc := receivables.New(store, ledgerv1.Client{C: env.Client})
			inv := receivables.NewInvoicing(store, store, invoiceLedger{env.Client}, tenantProfile{env.Client})
			routes := append(append(Routes(svc), InvoiceRoutes(inv)...), OutgoingRoutes(receivables.NewOutgoing(store, nil))...)
			routes = append(routes, CancelRoutes(receivables.NewCreditNotes(store, creditLedger{invoiceLedger{env.Client}}, nil))...)
			return daemon.Parts{Routes: routes, Consumers: []natsx.Consumer{Payments(store)}}, nil
		},
	}, nil
}

// Routes is the receivables service's route table.
func Routes(svc *receivables.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: receivablesv1.SubjectDebtorsList, Decode: debtorFilter, Endpoint: natsx.Typed(func(ctx context.Context, f receivablesv1.DebtorFilter) (receivablesv1.DebtorList, error) {
			return svc.Debtors(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: receivablesv1.SubjectDebtorsCreate, Idempotent: true, Decode: natsx.JSON[receivablesv1.DebtorInput], Endpoint: natsx.Typed(func(ctx context.Context, in receivablesv1.DebtorInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			d, err := svc.CreateDebtor(ctx, natsx.Claims(ctx).TenantID, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(d), nil
		})},
		{Subject: receivablesv1.SubjectDebtorsGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (receivables.Debtor, error) {
			return svc.Debtor(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: receivablesv1.SubjectDebtorsUpdate, Idempotent: true, Decode: natsx.DecodeWithID[receivablesv1.DebtorUpdate], Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[receivablesv1.DebtorUpdate]) (receivables.Debtor, error) {
			return svc.UpdateDebtor(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
		})},
	}
}

// debtorFilter reads the query of GET /v1/debtors.
func debtorFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := receivablesv1.DebtorFilter{Search: r.Query.Get("search")}
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", receivables.DefaultDebtorsLimit, 1, receivables.MaxDebtorsLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	if f.IsActive, err = natsx.BoolQuery(r.Query, "is_active"); err != nil {
		return nil, err
	}
	if len([]rune(f.Search)) > receivables.MaxSearchLength {
		return nil, errs.Invalid("invalid query parameter search", errs.Field("search", "at most 100 characters"))
	}
	return f, nil
}
