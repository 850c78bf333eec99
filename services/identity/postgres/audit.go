package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// AuditEntries implements identity.Store. Unset filters are NULL
// parameters, so the statement stays static.
func (s *Store) AuditEntries(ctx context.Context, tenantID string, f identity.AuditFilter) ([]identity.AuditEntry, error) {
	var out []identity.AuditEntry
	err := s.read(ctx, tenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, request_id, COALESCE(tenant_id::text, ''), COALESCE(key_id::text, ''), COALESCE(user_id::text, ''),
				actor, surface, method, route, scope, target_id, status, error_code, client_ip, duration_ms, at, recorded_at
			FROM identity.audit_log
			WHERE tenant_id = $1
				AND ($2::timestamptz IS NULL OR at >= $2)
				AND ($3::timestamptz IS NULL OR at < $3)
				AND ($4::int IS NULL OR status = $4)
				AND ($5 = '' OR actor = $5)
			ORDER BY at DESC, id DESC
			LIMIT $6 OFFSET $7`,
			tenantID, f.From, f.To, f.Status, f.Actor, f.Limit, f.Offset)
		if err != nil {
			return err
		}
		out, err = collect(rows, func(r pgx.Row) (identity.AuditEntry, error) {
			var e identity.AuditEntry
			c := &e.Call
			err := r.Scan(&e.ID, &c.RequestID, &c.TenantID, &c.KeyID, &c.UserID, &c.Actor, &c.Surface, &c.Method, &c.Route, &c.Scope,
				&c.TargetID, &c.Status, &c.ErrorCode, &c.ClientIP, &c.DurationMS, &c.At, &e.RecordedAt)
			c.At, e.RecordedAt = c.At.UTC(), e.RecordedAt.UTC()
			return e, err
		})
		return err
	})
	return out, errs.Wrap("postgres.AuditEntries", err)
}

// RecordCall implements identity.Store. The key's counter moves only when
// the record is new, so a redelivered record counts once.
func (s *Store) RecordCall(ctx context.Context, c gatewayv1.Call) (bool, error) {
	var inserted bool
	err := s.write(ctx, allTenants, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO identity.audit_log (request_id, tenant_id, key_id, user_id, actor, surface, method, route,
				scope, target_id, status, error_code, client_ip, duration_ms, at)
			VALUES ($1, NULLIF($2, '')::uuid, NULLIF($3, '')::uuid, NULLIF($4, '')::uuid, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT (request_id) DO NOTHING`,
			c.RequestID, c.TenantID, c.KeyID, c.UserID, c.Actor, c.Surface, c.Method, c.Route,
			c.Scope, c.TargetID, c.Status, c.ErrorCode, c.ClientIP, c.DurationMS, c.At)
		if err != nil {
			return err
		}
		inserted = tag.RowsAffected() == 1
		if !inserted || c.KeyID == "" {
			return nil
		}
		// Records may arrive out of order; last_used_at only moves forward.
		_, err = tx.Exec(ctx, `UPDATE identity.api_keys
			SET call_count = call_count + 1, last_used_at = GREATEST(last_used_at, $2)
			WHERE id = $1::uuid AND tenant_id = NULLIF($3, '')::uuid`, c.KeyID, c.At, c.TenantID)
		return err
	})
	return inserted, errs.Wrap("postgres.RecordCall", err)
}
