// Package idem makes mutating endpoints idempotent (DESIGN rule 5): a
// request repeated with the same Idempotency-Key and the same body gets the
// first answer again, the same key with another body 422, and a concurrent
// duplicate 409. Keys are scoped by tenant and credential and kept in the
// owning service's schema. Refusals are not stored, so a client may retry
// them with the same key. Postings keep their keys inside the posting
// transaction instead (the ledger); this middleware is for the rest.
//
// Each schema using it holds:
//
//	CREATE TABLE idempotency_keys (
//	    tenant_id    uuid NOT NULL,
//	    scope        text NOT NULL,
//	    key          text NOT NULL,
//	    request_hash text NOT NULL,
//	    status       int NOT NULL,
//	    response     json NOT NULL,
//	    created_at   timestamptz NOT NULL DEFAULT now(),
//	    PRIMARY KEY (tenant_id, scope, key)
//	);
package idem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// KeepFor is how long first answers are kept; clients are promised at
// least 7 days (DESIGN rule 5), every service prunes after this.
const KeepFor = 30 * 24 * time.Hour

// Record is a stored first answer.
type Record struct {
	Hash   string
	Status int
	Body   json.RawMessage
}

// Store keeps records; Save leaves an existing record as it is.
type Store interface {
	Lookup(ctx context.Context, tenant, scope, key string) (*Record, error)
	Save(ctx context.Context, tenant, scope, key string, r Record) error
}

// Middleware wraps an endpoint taking a *natsx.Request. op names the
// operation, so one key reused for another route is refused too.
func Middleware(s Store, op string) endpoint.Middleware {
	var mu sync.Mutex
	running := map[[3]string]bool{}
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			key := natsx.IdempotencyKey(ctx)
			c := auth.FromContext(ctx)
			r := natsx.RequestFrom(ctx)
			if r == nil {
				r, _ = request.(*natsx.Request)
			}
			if key == "" || c == nil || c.TenantID == "" || r == nil {
				return next(ctx, request)
			}
			scope := c.Actor()
			hash := Hash(op, r)
			id := [3]string{c.TenantID, scope, key}
			mu.Lock()
			if running[id] {
				mu.Unlock()
				return nil, errs.E(errs.IdempotencyKeyInProgress, "a request with this Idempotency-Key is in progress")
			}
			running[id] = true
			mu.Unlock()
			defer func() { mu.Lock(); delete(running, id); mu.Unlock() }()

			rec, err := s.Lookup(ctx, c.TenantID, scope, key)
			if err != nil {
				return nil, errs.Wrap("idem.Lookup", err)
			}
			if rec != nil {
				if rec.Hash != hash {
					return nil, errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request")
				}
				return &natsx.Response{Status: rec.Status, Body: rec.Body}, nil
			}
			resp, err := next(ctx, request)
			if err != nil {
				return nil, err
			}
			status, body := 200, resp
			if v, ok := resp.(*natsx.Response); ok {
				if v.Raw != nil {
					return resp, nil // files are not replayed
				}
				if v.Status != 0 {
					status = v.Status
				}
				body = v.Body
			}
			b, err := json.Marshal(body)
			if err != nil {
				return nil, fmt.Errorf("idem: encode response: %w", err)
			}
			if err := s.Save(ctx, c.TenantID, scope, key, Record{Hash: hash, Status: status, Body: b}); err != nil {
				return nil, errs.Wrap("idem.Save", err)
			}
			return &natsx.Response{Status: status, Body: json.RawMessage(b)}, nil
		}
	}
}

// Hash identifies a request for idempotency: the operation, its
// parameters and its body.
func Hash(op string, r *natsx.Request) string {
	h := sha256.New()
	for _, part := range []string{op, r.Params.Encode(), r.Query.Encode(), string(r.Body)} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Lookup returns the record stored under key in tx, or nil. A caller that
// writes its effect in the same transaction (a posting) uses Lookup and
// Save directly, so the answer and the effect commit together.
func Lookup(ctx context.Context, tx pgx.Tx, schema, tenant, scope, key string) (*Record, error) {
	var rec Record
	err := tx.QueryRow(ctx, "SELECT request_hash, status, response FROM "+table(schema)+" WHERE tenant_id = $1 AND scope = $2 AND key = $3",
		tenant, scope, key).Scan(&rec.Hash, &rec.Status, &rec.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idem.Lookup: %w", err)
	}
	return &rec, nil
}

// Save stores r under key in tx; an existing record stays as it is.
func Save(ctx context.Context, tx pgx.Tx, schema, tenant, scope, key string, r Record) error {
	_, err := tx.Exec(ctx, "INSERT INTO "+table(schema)+" (tenant_id, scope, key, request_hash, status, response) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
		tenant, scope, key, r.Hash, r.Status, r.Body)
	if err != nil {
		return fmt.Errorf("idem.Save: %w", err)
	}
	return nil
}

func table(schema string) string { return pgx.Identifier{schema, "idempotency_keys"}.Sanitize() }

// PG is the Store of a schema's idempotency_keys table for the middleware:
// each call its own transaction.
type PG struct {
	Pool   *pgxpool.Pool
	Schema string
}

// Lookup implements Store.
func (p PG) Lookup(ctx context.Context, tenant, scope, key string) (rec *Record, err error) {
	err = db.InTenant(ctx, p.Pool, tenant, db.ReadOnly, func(tx pgx.Tx) error {
		rec, err = Lookup(ctx, tx, p.Schema, tenant, scope, key)
		return err
	})
	return rec, err
}

// Save implements Store.
func (p PG) Save(ctx context.Context, tenant, scope, key string, r Record) error {
	return db.InTenant(ctx, p.Pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		return Save(ctx, tx, p.Schema, tenant, scope, key, r)
	})
}

// Prune forgets records stored before the given time, for all tenants.
func (p PG) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.InTenant(ctx, p.Pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM "+table(p.Schema)+" WHERE created_at < $1", before)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
