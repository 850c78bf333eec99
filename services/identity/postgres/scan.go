package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Column lists and scan destinations of the records read in several places.
// pgx returns times in the local zone; the platform speaks UTC, hence utc.

const userCols = "u.id, u.tenant_id, u.email, u.role, u.is_active, u.invited_at, u.last_login, u.created_at"

func userDest(u *identity.User) []any {
	return []any{&u.ID, &u.TenantID, &u.Email, &u.Role, &u.IsActive, &u.InvitedAt, &u.LastLogin, &u.CreatedAt}
}

func scanUser(r pgx.Row) (identity.User, error) {
	var u identity.User
	err := r.Scan(userDest(&u)...)
	fixUser(&u)
	return u, err
}

func fixUser(u *identity.User) {
	u.CreatedAt = u.CreatedAt.UTC()
	u.InvitedAt, u.LastLogin = utc(u.InvitedAt), utc(u.LastLogin)
}

const keyCols = "k.id, k.tenant_id, k.label, COALESCE(k.role, ''), k.scopes, k.key_prefix, k.key_hash, k.created_by, k.created_at, k.revoked_at, k.last_used_at, k.call_count, k.rate_limit_per_minute"

func keyDest(k *identity.APIKey) []any {
	return []any{&k.ID, &k.TenantID, &k.Label, &k.Role, &k.Scopes, &k.Prefix, &k.Hash, &k.CreatedBy, &k.CreatedAt, &k.RevokedAt, &k.LastUsedAt, &k.CallCount, &k.RateLimit}
}

func fixKey(k *identity.APIKey) {
	k.CreatedAt = k.CreatedAt.UTC()
	k.RevokedAt, k.LastUsedAt = utc(k.RevokedAt), utc(k.LastUsedAt)
}

func scanKey(r pgx.Row) (identity.APIKey, error) {
	var k identity.APIKey
	err := r.Scan(keyDest(&k)...)
	fixKey(&k)
	return k, err
}

const tenantCols = "t.id, t.company_name, t.legal_form, t.tax_id, t.vat_id, t.address, t.fiscal_year_start_month, t.datev_consultant_number, t.datev_client_number, t.is_operator, t.is_active, t.created_at"

func scanTenant(r pgx.Row) (identityv1.Tenant, error) {
	var t identityv1.Tenant
	err := r.Scan(&t.ID, &t.CompanyName, &t.LegalForm, &t.TaxID, &t.VATID, &t.Address, &t.FiscalYearStartMonth,
		&t.DATEVConsultantNumber, &t.DATEVClientNumber, &t.IsOperator, &t.IsActive, &t.CreatedAt)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, err
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
