package identity

import (
	"context"
	"regexp"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// TenantPatch is a partial update of a tenant's master data; nil fields stay
// unchanged and an empty string clears an optional field. It is also the
// body of a tenant creation, where company_name is required.
type TenantPatch struct {
	CompanyName           *string             `json:"company_name"`
	LegalForm             *string             `json:"legal_form"`
	TaxID                 *string             `json:"tax_id"`
	VATID                 *string             `json:"vat_id"`
	Address               *identityv1.Address `json:"address"`
	FiscalYearStartMonth  *int                `json:"fiscal_year_start_month"`
	DATEVConsultantNumber *string             `json:"datev_consultant_number"`
	DATEVClientNumber     *string             `json:"datev_client_number"`
}

func (p TenantPatch) empty() bool { return p == TenantPatch{} }

var (
	germanVATID = regexp.MustCompile(`^DE[0-9]{9}$`)
	digits      = regexp.MustCompile(`^[0-9]+$`)
	countryCode = regexp.MustCompile(`^[A-Z]{2}$`)
)

// normalize trims the strings and writes VAT IDs the canonical way
// ("de 123 456 789" becomes "DE123456789").
func (p *TenantPatch) normalize() {
	for _, s := range []*string{p.CompanyName, p.LegalForm, p.TaxID, p.DATEVConsultantNumber, p.DATEVClientNumber} {
		if s != nil {
			*s = strings.TrimSpace(*s)
		}
	}
	if p.VATID != nil {
		*p.VATID = strings.ToUpper(strings.Join(strings.Fields(*p.VATID), ""))
	}
	if a := p.Address; a != nil {
		a.Street, a.Zip, a.City = strings.TrimSpace(a.Street), strings.TrimSpace(a.Zip), strings.TrimSpace(a.City)
		a.Country = strings.ToUpper(strings.TrimSpace(a.Country))
	}
}

// check validates the fields that are set.
func (p TenantPatch) check(pr *problems) {
	if p.CompanyName != nil {
		pr.length("company_name", *p.CompanyName, 1, 255)
	}
	if p.LegalForm != nil {
		pr.length("legal_form", *p.LegalForm, 0, 50)
	}
	if p.TaxID != nil {
		pr.length("tax_id", *p.TaxID, 0, 20)
	}
	if v := p.VATID; v != nil {
		pr.length("vat_id", *v, 0, 20)
		if strings.HasPrefix(*v, "DE") && !germanVATID.MatchString(*v) {
			pr.add("vat_id", "a German VAT ID is DE followed by 9 digits")
		}
	}
	if a := p.Address; a != nil {
		pr.length("address.street", a.Street, 0, 200)
		pr.length("address.zip", a.Zip, 0, 20)
		pr.length("address.city", a.City, 0, 100)
		if a.Country != "" && !countryCode.MatchString(a.Country) {
			pr.add("address.country", "must be an ISO 3166-1 alpha-2 code such as DE")
		}
	}
	if m := p.FiscalYearStartMonth; m != nil && (*m < 1 || *m > 12) {
		pr.add("fiscal_year_start_month", "must be from 1 to 12")
	}
	if n := p.DATEVConsultantNumber; n != nil && *n != "" && (!digits.MatchString(*n) || len(*n) < 4 || len(*n) > 7) {
		pr.add("datev_consultant_number", "must be 4 to 7 digits")
	}
	if n := p.DATEVClientNumber; n != nil && *n != "" && (!digits.MatchString(*n) || len(*n) > 5) {
		pr.add("datev_client_number", "must be 1 to 5 digits")
	}
}

// apply writes the set fields into t.
func (p TenantPatch) apply(t *identityv1.Tenant) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&t.CompanyName, p.CompanyName)
	set(&t.LegalForm, p.LegalForm)
	set(&t.TaxID, p.TaxID)
	set(&t.VATID, p.VATID)
	set(&t.DATEVConsultantNumber, p.DATEVConsultantNumber)
	set(&t.DATEVClientNumber, p.DATEVClientNumber)
	if p.Address != nil {
		t.Address = *p.Address
	}
	if p.FiscalYearStartMonth != nil {
		t.FiscalYearStartMonth = *p.FiscalYearStartMonth
	}
}

// Tenant returns the caller's tenant.
func (s *Service) Tenant(ctx context.Context, c *auth.Claims) (identityv1.Tenant, error) {
	t, err := s.store.Tenant(ctx, c.TenantID)
	if err != nil {
		return identityv1.Tenant{}, errs.Wrap("identity.Tenant", err)
	}
	return t, nil
}

// UpdateTenant changes the caller's tenant's master data.
func (s *Service) UpdateTenant(ctx context.Context, c *auth.Claims, p TenantPatch) (identityv1.Tenant, error) {
	if p.empty() {
		return identityv1.Tenant{}, errs.E(errs.NoChanges, "nothing to change")
	}
	p.normalize()
	var pr problems
	p.check(&pr)
	if err := pr.err("invalid tenant data"); err != nil {
		return identityv1.Tenant{}, err
	}
	t, err := s.store.UpdateTenant(ctx, c.TenantID, p)
	if err != nil {
		return identityv1.Tenant{}, errs.Wrap("identity.UpdateTenant", err)
	}
	return t, nil
}
