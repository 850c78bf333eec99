package identity

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Tenant list limits.
const (
	defaultTenantLimit = 100
	maxTenantLimit     = 500
)

// NewTenant answers a tenant creation with the first admin key of the tenant.
type NewTenant struct {
	Tenant identityv1.Tenant `json:"tenant"`
	RawKey string            `json:"raw_key"`
}

// TenantList is a page of tenants.
type TenantList struct {
	Tenants []identityv1.Tenant `json:"tenants"`
	Page
}

// operator lets only the operator tenant's admins administer tenants. The
// gateway already demands the admin scope, but every tenant's own admin key
// has that, so the operator flag is what actually guards these routes.
func operator(c *auth.Claims) error {
	if !c.Operator || !c.Has(auth.Admin) {
		return errs.E(errs.Forbidden, "only the operator's administrators may manage tenants")
	}
	return nil
}

// ListTenants lists every tenant.
func (s *Service) ListTenants(ctx context.Context, c *auth.Claims, q PageQuery) (TenantList, error) {
	if err := operator(c); err != nil {
		return TenantList{}, err
	}
	var p problems
	page := q.parse(&p, defaultTenantLimit, maxTenantLimit)
	if err := p.err("invalid query"); err != nil {
		return TenantList{}, err
	}
	ts, err := s.store.Tenants(ctx, page.Limit, page.Offset)
	if err != nil {
		return TenantList{}, errs.Wrap("identity.ListTenants", err)
	}
	return TenantList{Tenants: nonNil(ts), Page: page}, nil
}

// CreateTenant creates a tenant with an admin key, returned once.
func (s *Service) CreateTenant(ctx context.Context, c *auth.Claims, in TenantPatch) (NewTenant, error) {
	if err := operator(c); err != nil {
		return NewTenant{}, err
	}
	in.normalize()
	var p problems
	if in.CompanyName == nil {
		p.add("company_name", "required")
	}
	in.check(&p)
	if err := p.err("invalid tenant"); err != nil {
		return NewTenant{}, err
	}
	t := s.newTenant(in, false)
	k := s.newKey(t.ID, "admin", "admin", auth.RoleScopes("admin"), c.Actor())
	if err := s.store.CreateTenant(ctx, t, k.APIKey); err != nil {
		return NewTenant{}, errs.Wrap("identity.CreateTenant", err)
	}
	return NewTenant{Tenant: t, RawKey: k.RawKey}, nil
}

func (s *Service) newTenant(in TenantPatch, isOperator bool) identityv1.Tenant {
	t := identityv1.Tenant{
		ID:                   uuid.NewString(),
		FiscalYearStartMonth: 1,
		IsOperator:           isOperator,
		IsActive:             true,
		CreatedAt:            s.now().UTC(),
	}
	in.apply(&t)
	return t
}

// DeactivateTenant deactivates a tenant and voids all its credentials. Its
// data stays: bookkeeping records must be retained for ten years.
func (s *Service) DeactivateTenant(ctx context.Context, c *auth.Claims, id string) error {
	if err := operator(c); err != nil {
		return err
	}
	id, err := parseID(id, "tenant")
	if err != nil {
		return err
	}
	return errs.Wrap("identity.DeactivateTenant", s.store.DeactivateTenant(ctx, id, s.now().UTC()))
}
