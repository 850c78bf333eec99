package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Grants implements identity.Store.
func (s *Store) Grants(ctx context.Context, tenantID string) ([]identity.Grant, error) {
	out, err := list(ctx, s, tenantID, func(r pgx.Row) (identity.Grant, error) {
		var g identity.Grant
		err := r.Scan(&g.ClientID, &g.ClientName, &g.Scopes, &g.CreatedAt)
		g.CreatedAt = g.CreatedAt.UTC()
		return g, err
	}, "SELECT client_id, client_name, scopes, created_at FROM identity.oauth_grants WHERE tenant_id = $1 AND revoked_at IS NULL ORDER BY created_at, id", tenantID)
	return out, errs.Wrap("postgres.Grants", err)
}

// RevokeGrants implements identity.Store.
func (s *Store) RevokeGrants(ctx context.Context, tenantID, clientID string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		return update(ctx, tx, errs.NotFoundf("app not found"),
			"UPDATE identity.oauth_grants SET revoked_at = now() WHERE tenant_id = $1 AND client_id = $2 AND revoked_at IS NULL", tenantID, clientID)
	})
	return errs.Wrap("postgres.RevokeGrants", err)
}

const clientCols = "client_id, name, redirect_uris, scopes, created_at, updated_at"

func scanClient(r pgx.Row, extra ...any) (identity.OAuthClient, error) {
	var c identity.OAuthClient
	err := r.Scan(append([]any{&c.ClientID, &c.Name, &c.RedirectURIs, &c.Scopes, &c.CreatedAt, &c.UpdatedAt}, extra...)...)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, err
}

// Clients implements identity.Store.
func (s *Store) Clients(ctx context.Context, tenantID string) ([]identity.OAuthClient, error) {
	out, err := list(ctx, s, tenantID, func(r pgx.Row) (identity.OAuthClient, error) { return scanClient(r) },
		"SELECT "+clientCols+" FROM identity.oauth_clients WHERE tenant_id = $1 ORDER BY client_id", tenantID)
	return out, errs.Wrap("postgres.Clients", err)
}

// PutClient implements identity.Store. An upsert makes concurrent first
// registrations of one client id agree: one creates, the other updates.
// xmax is 0 only on a row version this statement inserted.
func (s *Store) PutClient(ctx context.Context, c identity.OAuthClient) (identity.OAuthClient, bool, error) {
	var saved identity.OAuthClient
	var created bool
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		saved, err = scanClient(tx.QueryRow(ctx, `INSERT INTO identity.oauth_clients AS c
			(tenant_id, client_id, name, redirect_uris, scopes, secret_hash) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (tenant_id, client_id) DO UPDATE SET
				name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris, scopes = EXCLUDED.scopes, updated_at = now()
			RETURNING `+clientCols+`, (c.xmax = 0)`,
			c.TenantID, c.ClientID, c.Name, c.RedirectURIs, c.Scopes, c.SecretHash), &created)
		return err
	})
	saved.TenantID = c.TenantID
	return saved, created, errs.Wrap("postgres.PutClient", err)
}
