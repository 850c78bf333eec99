package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// AuditEntries implements identity.Store. Unset filters are NULL
// parameters, so the statement stays static.
func (s *Store) AuditEntries(ctx context.Context, tenantID string, f identity.AuditFilter) ([]identity.AuditEntry, error) {
	out, err := list(ctx, s, tenantID, func(r pgx.Row) (identity.AuditEntry, error) {
		var e identity.AuditEntry
		c := &e.Call
		err := r.Scan(&e.ID, &c.RequestID, &c.ClientRequestID, &c.TenantID, &c.KeyID, &c.UserID, &c.Actor, &c.Surface, &c.Method, &c.Route, &c.Scope,
			&c.TargetID, &c.Status, &c.ErrorCode, &c.ClientIP, &c.DurationMS, &c.At, &e.RecordedAt)
		c.At, e.RecordedAt = c.At.UTC(), e.RecordedAt.UTC()
		return e, err
	}, `SELECT id, request_id, client_request_id, COALESCE(tenant_id::text, ''), COALESCE(key_id::text, ''), COALESCE(user_id::text, ''),
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
	return out, errs.Wrap("postgres.AuditEntries", err)
}

// RecordCall stores one call; see RecordCalls.
func (s *Store) RecordCall(ctx context.Context, c gatewayv1.Call) (bool, error) {
	n, err := s.RecordCalls(ctx, []gatewayv1.Call{c})
	return n == 1, err
}

// RecordCalls implements identity.Store: one transaction for a batch. A
// key's counter moves only for records inserted now, so a redelivered batch
// counts nothing twice.
func (s *Store) RecordCalls(ctx context.Context, calls []gatewayv1.Call) (int, error) {
	n := len(calls)
	var (
		reqID, tenant, key, user, actor, surface, method, route, scope, target, code, ip = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		clientReqID                                                                      = make([]string, n)
		status                                                                           = make([]int32, n)
		duration                                                                         = make([]int64, n)
		at                                                                               = make([]time.Time, n)
	)
	for i, c := range calls {
		reqID[i], tenant[i], key[i], user[i], actor[i], surface[i] = c.RequestID, c.TenantID, c.KeyID, c.UserID, c.Actor, c.Surface
		method[i], route[i], scope[i], target[i], code[i], ip[i] = c.Method, c.Route, c.Scope, c.TargetID, c.ErrorCode, c.ClientIP
		status[i], duration[i], at[i], clientReqID[i] = int32(c.Status), c.DurationMS, c.At, c.ClientRequestID
	}
	var inserted int
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `INSERT INTO identity.audit_log (request_id, tenant_id, key_id, user_id, actor, surface, method, route,
				scope, target_id, status, error_code, client_ip, duration_ms, at, client_request_id)
			SELECT r, NULLIF(t, '')::uuid, NULLIF(k, '')::uuid, NULLIF(u, '')::uuid, a, sf, m, ro, sc, tg, st, ec, ip, d, at, cr
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
				$9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::bigint[], $15::timestamptz[], $16::text[])
				AS x(r, t, k, u, a, sf, m, ro, sc, tg, st, ec, ip, d, at, cr)
			ON CONFLICT (request_id) DO NOTHING
			RETURNING key_id::text, tenant_id::text, at`,
			reqID, tenant, key, user, actor, surface, method, route, scope, target, status, code, ip, duration, at, clientReqID)
		if err != nil {
			return err
		}
		type use struct {
			tenant string
			count  int
			last   time.Time
		}
		uses := map[string]*use{}
		var k, t *string
		var when time.Time
		_, err = pgx.ForEachRow(rows, []any{&k, &t, &when}, func() error {
			inserted++
			if k == nil || t == nil {
				return nil
			}
			u := uses[*k]
			if u == nil {
				u = &use{tenant: *t}
				uses[*k] = u
			}
			u.count++
			if when.After(u.last) {
				u.last = when
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Records may arrive out of order; last_used_at only moves forward.
		for id, u := range uses {
			if _, err := tx.Exec(ctx, `UPDATE identity.api_keys
				SET call_count = call_count + $4, last_used_at = GREATEST(last_used_at, $2)
				WHERE id = $1::uuid AND tenant_id = $3::uuid`, id, u.last, u.tenant, u.count); err != nil {
				return err
			}
		}
		return nil
	})
	return inserted, errs.Wrap("postgres.RecordCalls", err)
}
