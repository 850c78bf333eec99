package postgres

import (
	"context"

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
	_, err := tx.Exec(ctx, "INSERT INTO identity.api_keys (id, tenant_id, label, role, scopes, key_prefix, key_hash, created_by, created_at)"+
		" VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8, $9)",
		k.ID, k.TenantID, k.Label, k.Role, k.Scopes, k.Prefix, k.Hash, k.CreatedBy, k.CreatedAt)
	return db.MapConstraint(err, constraints)
}

// RevokeKey implements identity.Store.
func (s *Store) RevokeKey(ctx context.Context, tenantID, keyID string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		err := update(ctx, tx, errs.NotFoundf("API key not found"),
			"UPDATE identity.api_keys SET revoked_at = now() WHERE id = $1 AND tenant_id = $2 AND revoked_at IS NULL", keyID, tenantID)
		if err != nil {
			return err
		}
		return emit(ctx, tx, identityv1.EventCredentialRevoked, identityv1.CredentialRevoked{TenantID: tenantID, KeyID: keyID})
	})
	return errs.Wrap("postgres.RevokeKey", err)
}
