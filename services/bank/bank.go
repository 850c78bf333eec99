// Package bank is the bank service: bank accounts linked to SKR04 asset
// accounts, statement import, matching suggestions and reconciliation.
package bank

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
)

// Account is a bank account as the API shows it.
type Account = bankv1.Account

// Store keeps the service's state; postgres.Store implements it.
type Store interface {
	Accounts(ctx context.Context, tenantID string) ([]Account, error)
}

// Service holds the bank's rules.
type Service struct{ store Store }

// New returns a Service on store.
func New(store Store) *Service { return &Service{store: store} }

// Accounts lists the tenant's bank accounts by name.
func (s *Service) Accounts(ctx context.Context, tenantID string) (bankv1.AccountList, error) {
	as, err := s.store.Accounts(ctx, tenantID)
	if err != nil {
		return bankv1.AccountList{}, err
	}
	if as == nil {
		as = []Account{}
	}
	return bankv1.AccountList{BankAccounts: as}, nil
}
