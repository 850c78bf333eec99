// Package receivables is the receivables service: the tenant's debtors
// (the customers it invoices) and, next, its sales invoices.
package receivables

import (
	"context"
	"regexp"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Debtor is a debtor as the API shows it.
type Debtor = receivablesv1.Debtor

// Store keeps the service's state; postgres.Store implements it.
type Store interface {
	// Debtors lists the tenant's debtors matching f, by name.
	Debtors(ctx context.Context, tenantID string, f receivablesv1.DebtorFilter) ([]Debtor, error)
	// Debtor reads one; an unknown id is NOT_FOUND.
	Debtor(ctx context.Context, tenantID, id string) (Debtor, error)
	// CreateDebtor inserts d, claiming and saving the request's
	// Idempotency-Key in the same transaction (pkg/idem). An empty
	// customer number is assigned from the tenant's gapless counter in that
	// transaction; a number the tenant already has (in any case) is
	// DUPLICATE_CUSTOMER_NUMBER, decided by the unique index.
	CreateDebtor(ctx context.Context, tenantID string, d Debtor) (Debtor, error)
	// UpdateDebtor applies change to the locked row of one debtor and
	// stores the result, claiming and saving the request's Idempotency-Key
	// in the same transaction (a retried change replays its answer instead
	// of answering NO_CHANGES); an unknown id is NOT_FOUND and an error of
	// change is returned unchanged, with nothing written.
	UpdateDebtor(ctx context.Context, tenantID, id string, change func(Debtor) (Debtor, error)) (Debtor, error)
}

// Chart is what the receivables service asks the ledger about the chart of
// accounts; ledgerv1.Client implements it. An account the chart lacks is
// NOT_FOUND.
type Chart interface {
	Account(ctx context.Context, tenantID, number string) (ledgerv1.Account, error)
}

// Service holds the receivables service's rules.
type Service struct {
	store Store
	chart Chart
}

// New returns a Service on store that checks receivable accounts in chart.
func New(store Store, chart Chart) *Service { return &Service{store: store, chart: chart} }

// Debtors lists the tenant's debtors matching f, by name.
func (s *Service) Debtors(ctx context.Context, tenantID string, f receivablesv1.DebtorFilter) (receivablesv1.DebtorList, error) {
	if f.Limit == 0 {
		f.Limit = DefaultDebtorsLimit
	}
	ds, err := s.store.Debtors(ctx, tenantID, f)
	if err != nil {
		return receivablesv1.DebtorList{}, err
	}
	if ds == nil {
		ds = []Debtor{}
	}
	return receivablesv1.DebtorList{Debtors: ds}, nil
}

// Debtor reads one of the tenant's debtors; an id that is no UUID is as
// unknown as one of another tenant.
func (s *Service) Debtor(ctx context.Context, tenantID, id string) (Debtor, error) {
	if !ValidID(id) {
		return Debtor{}, notFound(id)
	}
	return s.store.Debtor(ctx, tenantID, id)
}

// CreateDebtor checks in a new debtor.
func (s *Service) CreateDebtor(ctx context.Context, tenantID string, in receivablesv1.DebtorInput) (Debtor, error) {
	d, err := CheckDebtorInput(in)
	if err != nil {
		return Debtor{}, err
	}
	if in.ReceivableAccount != nil {
		if err := s.checkAccount(ctx, tenantID, d.ReceivableAccount); err != nil {
			return Debtor{}, err
		}
	}
	d.ID = uuid.NewString()
	return s.store.CreateDebtor(ctx, tenantID, d)
}

// UpdateDebtor changes the given fields of one of the tenant's debtors.
func (s *Service) UpdateDebtor(ctx context.Context, tenantID, id string, in receivablesv1.DebtorUpdate) (Debtor, error) {
	if !ValidID(id) {
		return Debtor{}, notFound(id)
	}
	p, err := CheckDebtorUpdate(in)
	if err != nil {
		return Debtor{}, err
	}
	// The ledger is asked before the row is locked: no lock waits on
	// another service.
	if p.ReceivableAccount != nil {
		if err := s.checkAccount(ctx, tenantID, *p.ReceivableAccount); err != nil {
			return Debtor{}, err
		}
	}
	return s.store.UpdateDebtor(ctx, tenantID, id, p.Apply)
}

// checkAccount asks the ledger whether number is an asset account of the
// tenant's chart, where a receivable can be posted.
func (s *Service) checkAccount(ctx context.Context, tenantID, number string) error {
	a, err := s.chart.Account(ctx, tenantID, number)
	if e := errs.As(err); e != nil && e.Code == errs.NotFound {
		return &errs.Error{Code: errs.AccountNotFound, Message: "account " + number + " does not exist in the chart of accounts",
			Details: []errs.Detail{errs.Field("receivable_account", "not in the chart of accounts")}, Err: err}
	}
	if err != nil {
		return errs.Wrap("receivables.checkAccount: ledger", err)
	}
	if a.Type != ledgerv1.AccountAsset {
		return &errs.Error{Code: errs.InvalidAccountType, Message: "account " + number + " is a " + a.Type + " account; receivables post to an asset account",
			Details: []errs.Detail{errs.Field("receivable_account", "must be an asset account")}}
	}
	return nil
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidID reports whether s is a UUID, the form of every receivables id.
func ValidID(s string) bool { return uuidRe.MatchString(s) }

func notFound(id string) error { return errs.NotFoundf("debtor %s not found", id) }
