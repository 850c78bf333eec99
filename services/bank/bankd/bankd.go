// Package bankd declares the bank service for the daemon: its schema, the
// stream it owns and its route table.
package bankd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// Service declares the bank service.
func Service(func(string) string) (daemon.Service, error) {
	return daemon.Service{
		Name:    "bank",
		DB:      postgres.Schema,
		Streams: []natsx.Stream{{Name: bankv1.StreamEvents, Subjects: []string{bankv1.EventsFilter}}},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			store := postgres.New(env.Pool)
			return daemon.Parts{Routes: Routes(bank.New(store, ledgerv1.Client{C: env.Client})),
				Consumers: []natsx.Consumer{OpenItems(bank.NewOpenItems(store))}}, nil
		},
	}, nil
}

// Routes is the bank's route table.
func Routes(svc *bank.Service) []natsx.Route {
	return []natsx.Route{
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
		{Subject: bankv1.SubjectAccountsGet, Decode: param("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (bank.Account, error) {
			return svc.Account(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		{Subject: bankv1.SubjectAccountsUpdate, Decode: withID[bankv1.AccountUpdate], Endpoint: natsx.Typed(func(ctx context.Context, r idBody[bankv1.AccountUpdate]) (bank.Account, error) {
			return svc.UpdateAccount(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
		})},
	}
}

func param(name string) natsx.DecodeFunc {
	return func(_ context.Context, r *natsx.Request) (any, error) { return r.Param(name), nil }
}

// idBody is a request on a resource: its path id and the strictly decoded
// body.
type idBody[T any] struct {
	ID   string
	Body T
}

func withID[T any](_ context.Context, r *natsx.Request) (any, error) {
	var v T
	if err := natsx.Decode(r.Body, &v); err != nil {
		return nil, err
	}
	return idBody[T]{ID: r.Param("id"), Body: v}, nil
}
