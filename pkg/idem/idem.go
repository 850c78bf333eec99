// Package idem makes mutating requests idempotent (DESIGN rule 5): a
// request repeated with the same Idempotency-Key and the same body gets the
// first answer again byte for byte, the same key with another body 422, and
// a concurrent duplicate waits for the first and replays its answer (409
// while the first spans transactions, see Claim).
//
// The key is claimed in Postgres inside the transaction of the effect, and
// the answer is stored in that same transaction: two replicas cannot both
// run the effect (the second INSERT waits on the primary key until the first
// commits), and a crash after the commit replays the stored answer instead of
// running the effect again. A refusal rolls the claim back with the effect,
// so a client may retry it with the same key.
//
// The pieces: Middleware puts the request (tenant, credential, key, hash) in
// ctx; the store calls Claim as the first statement of its write
// transaction and Save before it commits; Middleware answers with what was
// saved, or with the stored answer when Claim found one. Postings keep their
// keys in the same table from the ledger's group commit (Lookup and Record).
//
// Each schema using it holds (pkg/migrate/shared):
//
//	CREATE TABLE idempotency_keys (
//	    tenant_id    uuid NOT NULL,
//	    scope        text NOT NULL,
//	    key          text NOT NULL,
//	    request_hash text NOT NULL,
//	    status       int NOT NULL,  -- 0: claimed, no answer yet
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
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// KeepFor is how long first answers are kept; clients are promised at
// least 7 days (DESIGN rule 5), every service prunes after this.
const KeepFor = 30 * 24 * time.Hour

// ClaimTimeout is how long a claim committed without an answer (an effect
// spanning transactions, such as a periods lock around its call to the
// ledger) holds its key. A claim older than this was left by a crashed
// process; the next request with the same key and body takes it over and
// resumes the effect. It is far longer than any call deadline.
var ClaimTimeout = 2 * time.Minute

// Record is a stored first answer.
type Record struct {
	Hash   string
	Status int
	Body   json.RawMessage
}

// Replay is the error Claim returns when the key already holds the answer
// to the same request; the store returns it as is (wrapped or not) and the
// middleware answers with the record.
type Replay struct{ Record }

func (*Replay) Error() string { return "idem: the request was answered before" }

// request is the idempotent request in flight, put in ctx by Middleware.
type request struct {
	tenant, scope, key, hash string
	reply                    func(any) any
	saved                    *Record
}

type ctxKey struct{}

func from(ctx context.Context) *request {
	r, _ := ctx.Value(ctxKey{}).(*request)
	return r
}

// Reply sets how the route turns the result its store saves into the
// answer (a *natsx.Response for another status than 200). Routes that wrap
// a service result set it before calling the service; an outer wrapper sets
// it first, so the inner shape is applied first.
func Reply(ctx context.Context, f func(result any) any) {
	r := from(ctx)
	if r == nil {
		return
	}
	if outer := r.reply; outer != nil {
		r.reply = func(v any) any { return outer(f(v)) }
		return
	}
	r.reply = f
}

// Claim claims the request's key in tx; it must be the first write of the
// transaction of the effect. Without an idempotent request in ctx it does
// nothing. A concurrent twin waits here until the first transaction ends:
// after a commit it gets *Replay (or, under REPEATABLE READ, a
// serialisation failure db.WithTx retries), after a rollback the claim.
// The same key with another request is IDEMPOTENCY_KEY_REUSED; a claim
// committed without an answer is IDEMPOTENCY_KEY_IN_PROGRESS until
// ClaimTimeout, then taken over.
func Claim(ctx context.Context, tx pgx.Tx, schema string) error {
	r := from(ctx)
	if r == nil {
		return nil
	}
	tag, err := tx.Exec(ctx, "INSERT INTO "+table(schema)+` (tenant_id, scope, key, request_hash, status, response)
		VALUES ($1, $2, $3, $4, 0, 'null') ON CONFLICT DO NOTHING`, r.tenant, r.scope, r.key, r.hash)
	if err != nil {
		return fmt.Errorf("idem.Claim: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var rec Record
	var stale bool
	err = tx.QueryRow(ctx, "SELECT request_hash, status, response, created_at < now() - make_interval(secs => $4) FROM "+table(schema)+
		" WHERE tenant_id = $1 AND scope = $2 AND key = $3 FOR UPDATE", r.tenant, r.scope, r.key, ClaimTimeout.Seconds()).
		Scan(&rec.Hash, &rec.Status, &rec.Body, &stale)
	if err != nil {
		return fmt.Errorf("idem.Claim: %w", err)
	}
	switch {
	case rec.Hash != r.hash:
		return errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request")
	case rec.Status != 0:
		return &Replay{rec}
	case !stale:
		return errs.E(errs.IdempotencyKeyInProgress, "a request with this Idempotency-Key is in progress")
	}
	_, err = tx.Exec(ctx, "UPDATE "+table(schema)+" SET created_at = now() WHERE tenant_id = $1 AND scope = $2 AND key = $3",
		r.tenant, r.scope, r.key)
	if err != nil {
		return fmt.Errorf("idem.Claim: take over: %w", err)
	}
	return nil
}

// Save stores the answer to the claimed request in tx, before it commits:
// result shaped by Reply, a *natsx.Response carrying its status. Without an
// idempotent request in ctx it does nothing.
func Save(ctx context.Context, tx pgx.Tx, schema string, result any) error {
	r := from(ctx)
	if r == nil {
		return nil
	}
	if r.reply != nil {
		result = r.reply(result)
	}
	status, body := 200, result
	if v, ok := result.(*natsx.Response); ok {
		if v.Status != 0 {
			status = v.Status
		}
		body = v.Body
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("idem.Save: encode answer: %w", err)
	}
	tag, err := tx.Exec(ctx, "UPDATE "+table(schema)+" SET status = $5, response = $6 WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND request_hash = $4 AND status = 0",
		r.tenant, r.scope, r.key, r.hash, status, b)
	if err != nil {
		return fmt.Errorf("idem.Save: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return errors.New("idem.Save: the key is not claimed")
	}
	r.saved = &Record{Hash: r.hash, Status: status, Body: b}
	return nil
}

// Release gives up a claim committed without an answer, when an effect
// spanning transactions is refused after its first one: the client may then
// retry with the same key.
func Release(ctx context.Context, tx pgx.Tx, schema string) error {
	r := from(ctx)
	if r == nil {
		return nil
	}
	_, err := tx.Exec(ctx, "DELETE FROM "+table(schema)+" WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND request_hash = $4 AND status = 0",
		r.tenant, r.scope, r.key, r.hash)
	if err != nil {
		return fmt.Errorf("idem.Release: %w", err)
	}
	return nil
}

// Middleware makes the endpoint of an Idempotent route idempotent; op names
// the operation, so one key reused for another route is refused too. A
// stored answer is replayed at once; otherwise the endpoint's store claims
// and saves in the transaction of its effect. An endpoint whose effect
// opened no transaction here (a forward to another service, which carries
// the Idempotency-Key along and is idempotent there) has its answer stored
// afterwards in a transaction of its own, the first stored answer winning.
func Middleware(b db.Beginner, schema, op string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req any) (any, error) {
			key := natsx.IdempotencyKey(ctx)
			c := auth.FromContext(ctx)
			nr := natsx.RequestFrom(ctx)
			if nr == nil {
				nr, _ = req.(*natsx.Request)
			}
			if key == "" || c == nil || c.TenantID == "" || nr == nil {
				return next(ctx, req)
			}
			r := &request{tenant: c.TenantID, scope: c.Actor(), key: key, hash: Hash(op, nr)}
			// A retry of an answered request is answered before the endpoint
			// reads any state, which may have moved on so far that the request
			// would now be refused. Twins in flight are decided by Claim.
			var rec *Record
			err := db.InTenant(ctx, b, r.tenant, db.ReadOnly, func(tx pgx.Tx) (err error) {
				rec, err = Lookup(ctx, tx, schema, r.tenant, r.scope, r.key)
				return err
			})
			switch {
			case err != nil:
				return nil, err
			case rec != nil && rec.Hash != r.hash:
				return nil, errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request")
			case rec != nil && rec.Status != 0:
				return &natsx.Response{Status: rec.Status, Body: rec.Body}, nil
			}
			ctx = context.WithValue(ctx, ctxKey{}, r)
			resp, err := next(ctx, req)
			if err == nil && r.saved == nil {
				if v, ok := resp.(*natsx.Response); ok && v.Raw != nil {
					return resp, nil // files are not replayed
				}
				r.reply = nil
				err = db.InTenant(ctx, b, r.tenant, db.ReadCommitted, func(tx pgx.Tx) error {
					if err := Claim(ctx, tx, schema); err != nil {
						return err
					}
					return Save(ctx, tx, schema, resp)
				})
			}
			if rp := (*Replay)(nil); errors.As(err, &rp) {
				return &natsx.Response{Status: rp.Status, Body: rp.Body}, nil
			}
			if err != nil {
				return nil, err
			}
			return &natsx.Response{Status: r.saved.Status, Body: r.saved.Body}, nil
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

// Lookup returns the record stored under key in tx, or nil; with
// SaveRecord it serves stores that carry the key themselves (the ledger's
// accounts and postings) instead of taking it from ctx.
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

// SaveRecord stores r under key in tx; an existing record stays as it is.
func SaveRecord(ctx context.Context, tx pgx.Tx, schema, tenant, scope, key string, r Record) error {
	_, err := tx.Exec(ctx, "INSERT INTO "+table(schema)+" (tenant_id, scope, key, request_hash, status, response) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
		tenant, scope, key, r.Hash, r.Status, r.Body)
	if err != nil {
		return fmt.Errorf("idem.SaveRecord: %w", err)
	}
	return nil
}

func table(schema string) string { return pgx.Identifier{schema, "idempotency_keys"}.Sanitize() }

// Prune forgets records stored before the given time, for all tenants.
func Prune(ctx context.Context, b db.Beginner, schema string, before time.Time) (int64, error) {
	var n int64
	err := db.InTenant(ctx, b, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM "+table(schema)+" WHERE created_at < $1", before)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
