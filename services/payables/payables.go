// Package payables is the payables service: the tenant's vendors (the
// suppliers whose invoices it receives) and, next, their incoming invoices
// and payment runs.
package payables

import (
	"context"
	"regexp"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Vendor is a vendor as the API shows it.
type Vendor = payablesv1.Vendor

// Store keeps the service's state; postgres.Store implements it.
type Store interface {
	// Vendors lists the tenant's vendors matching f, by name, each with
	// its open amount.
	Vendors(ctx context.Context, tenantID string, f payablesv1.VendorFilter) ([]Vendor, error)
	// Vendor reads one; an unknown id is NOT_FOUND.
	Vendor(ctx context.Context, tenantID, id string) (Vendor, error)
	// CreateVendor inserts v, claiming and saving the request's
	// Idempotency-Key in the same transaction (pkg/idem). A name, tax
	// number or VAT ID another vendor of the tenant has is DUPLICATE_NAME,
	// DUPLICATE_TAX_ID or DUPLICATE_VAT_ID, decided by the unique indexes.
	CreateVendor(ctx context.Context, tenantID string, v Vendor) (Vendor, error)
	// UpdateVendor applies change to the locked row of one vendor and
	// stores the result, claiming and saving the request's Idempotency-Key
	// in the same transaction; an unknown id is NOT_FOUND and an error of
	// change is returned unchanged, with nothing written.
	UpdateVendor(ctx context.Context, tenantID, id string, change func(Vendor) (Vendor, error)) (Vendor, error)
}

// Chart is what the payables service asks the ledger about the chart of
// accounts; ledgerv1.Client implements it. An account the chart lacks is
// NOT_FOUND.
type Chart interface {
	Account(ctx context.Context, tenantID, number string) (ledgerv1.Account, error)
}

// Service holds the payables service's rules.
type Service struct {
	store  Store
	chart  Chart
	intake *Intake
}

// New returns a Service on store that checks default accounts in chart.
func New(store Store, chart Chart) *Service { return &Service{store: store, chart: chart} }

// Vendors lists the tenant's vendors matching f, by name.
func (s *Service) Vendors(ctx context.Context, tenantID string, f payablesv1.VendorFilter) (payablesv1.VendorList, error) {
	if f.Limit == 0 {
		f.Limit = DefaultVendorsLimit
	}
	vs, err := s.store.Vendors(ctx, tenantID, f)
	if err != nil {
		return payablesv1.VendorList{}, err
	}
	if vs == nil {
		vs = []Vendor{}
	}
	return payablesv1.VendorList{Vendors: vs}, nil
}

// Vendor reads one of the tenant's vendors; an id that is no UUID is as
// unknown as one of another tenant.
func (s *Service) Vendor(ctx context.Context, tenantID, id string) (Vendor, error) {
	if !ValidID(id) {
		return Vendor{}, notFound(id)
	}
	return s.store.Vendor(ctx, tenantID, id)
}

// CreateVendor checks in a new vendor.
func (s *Service) CreateVendor(ctx context.Context, tenantID string, in payablesv1.VendorInput) (Vendor, error) {
	v, err := CheckVendorInput(in)
	if err != nil {
		return Vendor{}, err
	}
	if v.DefaultAccount != nil {
		if err := s.checkAccount(ctx, tenantID, *v.DefaultAccount); err != nil {
			return Vendor{}, err
		}
	}
	v.ID = uuid.NewString()
	return s.store.CreateVendor(ctx, tenantID, v)
}

// UpdateVendor changes the given fields of one of the tenant's vendors.
func (s *Service) UpdateVendor(ctx context.Context, tenantID, id string, in payablesv1.VendorUpdate) (Vendor, error) {
	if !ValidID(id) {
		return Vendor{}, notFound(id)
	}
	p, err := CheckVendorUpdate(in)
	if err != nil {
		return Vendor{}, err
	}
	// The ledger is asked before the row is locked: no lock waits on
	// another service.
	if p.DefaultAccount != nil && *p.DefaultAccount != "" {
		if err := s.checkAccount(ctx, tenantID, *p.DefaultAccount); err != nil {
			return Vendor{}, err
		}
	}
	return s.store.UpdateVendor(ctx, tenantID, id, p.Apply)
}

// checkAccount asks the ledger whether number is in the tenant's chart.
// Its type is not restricted: a vendor's invoices may be posted to an
// expense account as well as to an asset (a machine) or a cost-of-goods
// account.
func (s *Service) checkAccount(ctx context.Context, tenantID, number string) error {
	_, err := s.chart.Account(ctx, tenantID, number)
	if e := errs.As(err); e != nil && e.Code == errs.NotFound {
		return &errs.Error{Code: errs.AccountNotFound, Message: "account " + number + " does not exist in the chart of accounts",
			Details: []errs.Detail{errs.Field("default_account", "not in the chart of accounts")}, Err: err}
	}
	if err != nil {
		return errs.Wrap("payables.checkAccount: ledger", err)
	}
	return nil
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidID reports whether s is a UUID, the form of every payables id.
func ValidID(s string) bool { return uuidRe.MatchString(s) }

func notFound(id string) error { return errs.NotFoundf("vendor %s not found", id) }
