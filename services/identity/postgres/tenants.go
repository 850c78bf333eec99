package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Tenant implements identity.Store.
func (s *Store) Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error) {
	t, err := one(ctx, s, tenantID, scanTenant, "tenant not found", "SELECT "+tenantCols+" FROM identity.tenants t WHERE t.id = $1", tenantID)
	return t, errs.Wrap("postgres.Tenant", err)
}

// UpdateTenant implements identity.Store. A NULL parameter keeps the column.
func (s *Store) UpdateTenant(ctx context.Context, tenantID string, p identity.TenantPatch) (identityv1.Tenant, error) {
	var t identityv1.Tenant
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		t, err = scanTenant(tx.QueryRow(ctx, `UPDATE identity.tenants t SET
			company_name = COALESCE($2, company_name),
			legal_form = COALESCE($3, legal_form),
			tax_id = COALESCE($4, tax_id),
			vat_id = COALESCE($5, vat_id),
			address = COALESCE($6::jsonb, address),
			fiscal_year_start_month = COALESCE($7, fiscal_year_start_month),
			datev_consultant_number = COALESCE($8, datev_consultant_number),
			datev_client_number = COALESCE($9, datev_client_number)
			WHERE t.id = $1 RETURNING `+tenantCols,
			tenantID, p.CompanyName, p.LegalForm, p.TaxID, p.VATID, p.Address, p.FiscalYearStartMonth,
			p.DATEVConsultantNumber, p.DATEVClientNumber))
		if err != nil {
			return db.NotFound(err, "tenant not found")
		}
		return emit(ctx, tx, identityv1.EventTenantUpdated, tenantEvent(t, time.Now()))
	})
	return t, errs.Wrap("postgres.UpdateTenant", err)
}

// Tenants implements identity.Store.
func (s *Store) Tenants(ctx context.Context, limit, offset int) ([]identityv1.Tenant, error) {
	out, err := list(ctx, s, db.AllTenants, scanTenant, "SELECT "+tenantCols+" FROM identity.tenants t ORDER BY t.created_at, t.id LIMIT $1 OFFSET $2", limit, offset)
	return out, errs.Wrap("postgres.Tenants", err)
}

// CreateTenant implements identity.Store.
func (s *Store) CreateTenant(ctx context.Context, t identityv1.Tenant, k identity.APIKey) error {
	err := db.InTenant(ctx, s.pool, t.ID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := insertTenant(ctx, tx, t); err != nil {
			return err
		}
		return insertKey(ctx, tx, k)
	})
	return errs.Wrap("postgres.CreateTenant", err)
}

func insertTenant(ctx context.Context, tx pgx.Tx, t identityv1.Tenant) error {
	_, err := tx.Exec(ctx, `INSERT INTO identity.tenants (id, company_name, legal_form, tax_id, vat_id, address,
		fiscal_year_start_month, datev_consultant_number, datev_client_number, is_operator, is_active, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		t.ID, t.CompanyName, t.LegalForm, t.TaxID, t.VATID, t.Address, t.FiscalYearStartMonth,
		t.DATEVConsultantNumber, t.DATEVClientNumber, t.IsOperator, t.IsActive, t.CreatedAt)
	if err != nil {
		return db.MapConstraint(err, constraints)
	}
	return emit(ctx, tx, identityv1.EventTenantCreated, tenantEvent(t, t.CreatedAt))
}

// DeactivateTenant implements identity.Store. It spans tenants because the
// operator acts on another tenant.
func (s *Store) DeactivateTenant(ctx context.Context, tenantID string, at time.Time) error {
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		t, err := scanTenant(tx.QueryRow(ctx, "SELECT "+tenantCols+" FROM identity.tenants t WHERE t.id = $1 FOR UPDATE", tenantID))
		if err != nil {
			return db.NotFound(err, "tenant not found")
		}
		if t.IsOperator {
			return errs.E(errs.Conflict, "the operator tenant cannot be deleted")
		}
		if !t.IsActive {
			return nil
		}
		for _, q := range []string{
			"UPDATE identity.tenants SET is_active = false, deactivated_at = $2 WHERE id = $1",
			"UPDATE identity.api_keys SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL",
			"UPDATE identity.sessions SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL",
			"UPDATE identity.password_tokens SET used_at = $2 WHERE tenant_id = $1 AND used_at IS NULL",
			"UPDATE identity.oauth_grants SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL",
		} {
			if _, err := tx.Exec(ctx, q, tenantID, at); err != nil {
				return err
			}
		}
		t.IsActive = false
		return emit(ctx, tx, identityv1.EventTenantDeactivated, tenantEvent(t, at))
	})
	return errs.Wrap("postgres.DeactivateTenant", err)
}

func tenantEvent(t identityv1.Tenant, at time.Time) identityv1.TenantEvent {
	return identityv1.TenantEvent{TenantID: t.ID, CompanyName: t.CompanyName, IsOperator: t.IsOperator, IsActive: t.IsActive, At: at.UTC()}
}
