// Package bankd declares the bank service for the daemon: its schema, the
// stream it owns and its route table.
package bankd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
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
			return daemon.Parts{Routes: Routes(bank.New(postgres.New(env.Pool)))}, nil
		},
	}, nil
}

// Routes is the bank's route table.
func Routes(svc *bank.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: bankv1.SubjectAccountsList, Decode: natsx.Nothing, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (bankv1.AccountList, error) {
			return svc.Accounts(ctx, natsx.Claims(ctx).TenantID)
		})},
	}
}
