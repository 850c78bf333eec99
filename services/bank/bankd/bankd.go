// Package bankd declares the bank service for the daemon: its schema, the
// stream it owns and its route table.
package bankd

import (
	"context"
	"fmt"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/uploads"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// Service declares the bank service.
func Service(func(string) string) (daemon.Service, error) {
	return daemon.Service{
		Name:    "bank",
		DB:      postgres.Schema,
		Streams: []natsx.Stream{{Name: bankv1.StreamEvents, Subjects: []string{bankv1.EventsFilter}}, ImportStream},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			store := postgres.New(env.Pool)
			svc := bank.New(store, ledgerv1.Client{C: env.Client})
			imports, err := ImportConfig(env.Getenv)
			if err != nil {
				return daemon.Parts{}, err
			}
			svc.WithFiles(&uploads.Bucket{JS: env.JS}, Parsers()).WithJobs(imports.Wait)
			consumers := []natsx.Consumer{OpenItems(bank.NewOpenItems(store))}
			if imports.Workers > 0 {
				consumers = append(consumers, ImportJobs(svc, imports))
			}
			api, err := APIConfig(env.Getenv)
			if err != nil {
				return daemon.Parts{}, err
			}
			if !api {
				// An import worker: the instance still answers pings (its
				// liveness), but no request is routed to it.
				return daemon.Parts{Consumers: consumers}, nil
			}
			routes := append(Routes(svc), FileRoutes(svc)...)
			ledger := ledgerv1.Client{C: env.Client}
			routes = append(routes, ReconcileRoutes(bank.NewReconciler(store, Ledger{C: ledger}).WithAccounts(ledger))...)
			return daemon.Parts{Routes: routes, Consumers: consumers}, nil
		},
	}, nil
}

// APIConfig reads BANK_API: "on" (the default) serves the bank's routes,
// "off" leaves this process to its consumers (the bank-import workers, so
// that a long import never shares a pod with requests).
func APIConfig(getenv func(string) string) (bool, error) {
	switch v := getenv("BANK_API"); v {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("BANK_API must be on or off, not %q", v)
	}
}

// Routes is the bank's route table.
func Routes(svc *bank.Service) []natsx.Route {
	return []natsx.Route{
		reconciliationRoute(svc), balanceHistoryRoute(svc), periodStatusRoute(svc),
		{Subject: bankv1.SubjectAccountsList, Decode: natsx.Nothing, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (bankv1.AccountList, error) {
			return svc.Accounts(ctx, natsx.Claims(ctx).TenantID)
		})},
		{Subject: bankv1.SubjectAccountsCreate, Idempotent: true, Decode: natsx.JSON[bankv1.AccountInput], Endpoint: natsx.Typed(func(ctx context.Context, in bankv1.AccountInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			a, err := svc.CreateAccount(ctx, natsx.Claims(ctx).TenantID, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(a), nil
		})},
		{Subject: bankv1.SubjectAccountsGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (bank.Account, error) {
			return svc.Account(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: bankv1.SubjectAccountsUpdate, Decode: natsx.DecodeWithID[bankv1.AccountUpdate], Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[bankv1.AccountUpdate]) (bank.Account, error) {
			return svc.UpdateAccount(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
		})},
		{Subject: bankv1.SubjectTransactionsImport, Idempotent: true, Decode: natsx.JSON[bankv1.ImportInput], Endpoint: natsx.Typed(func(ctx context.Context, in bankv1.ImportInput) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			r, err := svc.ImportTransactions(ctx, natsx.Claims(ctx).TenantID, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(r), nil
		})},
		{Subject: bankv1.SubjectTransactionsList, Decode: transactionFilter, Endpoint: natsx.Typed(func(ctx context.Context, f bankv1.TransactionFilter) (bankv1.TransactionList, error) {
			return svc.Transactions(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: bankv1.SubjectTransactionsGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (bank.Transaction, error) {
			return svc.Transaction(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		suggestions(svc),
	}
}

func transactionFilter(_ context.Context, r *natsx.Request) (any, error) {
	limit, err := natsx.IntQuery(r.Query, "limit", bank.DefaultTransactionsLimit, 1, bank.MaxTransactionsLimit)
	if err != nil {
		return nil, err
	}
	offset, err := natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	return bank.ParseTransactionFilter(r.Query.Get, limit, offset)
}
