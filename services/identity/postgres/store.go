// Package postgres is the identity Store on PostgreSQL: the identity schema,
// its embedded migrations and the transactional outbox of identity events.
package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Schema is the Postgres schema identity owns.
const Schema = "identity"

// Store implements identity.Store. Every transaction goes through
// db.InTenant: read-committed for writes, read-only for reads.
type Store struct {
	pool *pgxpool.Pool
}

var _ identity.Store = (*Store)(nil)

// New returns a Store on pool, which runs as Migrations.Role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// emit records an event in tx's outbox.
func emit(ctx context.Context, tx pgx.Tx, subject string, payload any) error {
	_, err := outbox.Put(ctx, tx, Schema, subject, payload)
	return err
}

// constraints maps unique constraints to the client errors they mean.
var constraints = map[string]*errs.Error{
	"users_email_key":       errs.E(errs.DuplicateEmail, "a user with this email already exists"),
	"api_keys_key_hash_key": errs.E(errs.Conflict, "this API key exists already"),
	"tenants_one_operator":  errs.E(errs.Conflict, "an operator tenant exists already"),
}

// list reads every row of a query in a read-only transaction of tenantID.
func list[T any](ctx context.Context, s *Store, tenantID string, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	var out []T
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
		return err
	})
	return out, err
}

// one reads the row of a query in a read-only transaction of tenantID; no
// row is a 404 saying notFound.
func one[T any](ctx context.Context, s *Store, tenantID string, scan func(pgx.Row) (T, error), notFound, sql string, args ...any) (T, error) {
	var v T
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		v, err = scan(tx.QueryRow(ctx, sql, args...))
		return db.NotFound(err, "%s", notFound)
	})
	return v, err
}

// update runs an UPDATE in tx; one that changes no row fails with none.
func update(ctx context.Context, tx pgx.Tx, none error, sql string, args ...any) error {
	tag, err := tx.Exec(ctx, sql, args...)
	if err == nil && tag.RowsAffected() == 0 {
		return none
	}
	return err
}
