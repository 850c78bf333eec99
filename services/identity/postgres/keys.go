package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Keys implements identity.Store.
func (s *Store) Keys(ctx context.Context, tenantID string) ([]identity.APIKey, error) {
	out, err := list(ctx, s, tenantID, scanKey, "SELECT "+keyCols+" FROM identity.api_keys k WHERE k.tenant_id = $1 AND k.revoked_at IS NULL ORDER BY k.created_at, k.id", tenantID)
	return out, errs.Wrap("postgres.Keys", err)
}

// Key implements identity.Store.
func (s *Store) Key(ctx context.Context, tenantID, keyID string) (identity.APIKey, error) {
	k, err := one(ctx, s, tenantID, scanKey, "API key not found", "SELECT "+keyCols+" FROM identity.api_keys k WHERE k.id = $1 AND k.tenant_id = $2", keyID, tenantID)
	return k, errs.Wrap("postgres.Key", err)
}

// CreateKey implements identity.Store.
func (s *Store) CreateKey(ctx context.Context, k identity.APIKey) error {
	err := db.InTenant(ctx, s.pool, k.TenantID, db.ReadCommitted, func(tx pgx.Tx) error { return insertKey(ctx, tx, k) })
	return errs.Wrap("postgres.CreateKey", err)
}

func insertKey(ctx context.Context, tx pgx.Tx, k identity.APIKey) error {
	_, err := tx.Exec(ctx, "INSERT INTO identity.api_keys (id, tenant_id, label, role, scopes, key_prefix, key_hash, created_by, created_at, rate_limit_per_minute)"+
		" VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8, $9, $10)",
		k.ID, k.TenantID, k.Label, k.Role, k.Scopes, k.Prefix, k.Hash, k.CreatedBy, k.CreatedAt, k.RateLimit)
	return db.MapConstraint(err, constraints)
}

// RevokeKey implements identity.Store.
func (s *Store) RevokeKey(ctx context.Context, tenantID, keyID string, guard func(identity.APIKey) error) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := lockAdmins(ctx, tx, tenantID); err != nil {
			return err
		}
		k, err := scanKey(tx.QueryRow(ctx, "SELECT "+keyCols+" FROM identity.api_keys k WHERE k.id = $1 AND k.tenant_id = $2 AND k.revoked_at IS NULL FOR UPDATE", keyID, tenantID))
		if err != nil {
			return db.NotFound(err, "API key not found")
		}
		if err := guard(k); err != nil {
			return err
		}
		if err := keepAnAdminKey(ctx, tx, k); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE identity.api_keys SET revoked_at = now() WHERE id = $1", keyID); err != nil {
			return err
		}
		return emit(ctx, tx, identityv1.EventCredentialRevoked, identityv1.CredentialRevoked{TenantID: tenantID, KeyID: keyID})
	})
	return errs.Wrap("postgres.RevokeKey", err)
}

// keepAnAdminKey refuses to revoke the last admin key of a tenant that has
// no active admin user: nobody could administer the tenant any more.
func keepAnAdminKey(ctx context.Context, tx pgx.Tx, k identity.APIKey) error {
	if !slices.Contains(k.Scopes, adminRole) {
		return nil
	}
	var others bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM identity.api_keys WHERE tenant_id = $1 AND id <> $2 AND revoked_at IS NULL AND $3 = ANY (scopes))
		OR EXISTS (SELECT 1 FROM identity.users WHERE tenant_id = $1 AND role = $3 AND is_active AND deleted_at IS NULL)`,
		k.TenantID, k.ID, adminRole).Scan(&others)
	if err != nil {
		return err
	}
	if !others {
		return errs.E(errs.LastAdmin, "the tenant's last admin API key cannot be revoked while it has no active admin user")
	}
	return nil
}
