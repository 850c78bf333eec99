package postgres

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
)

// Store is the reporting service's Postgres store. Each feature adds its
// methods in its own file (projection.go, exports.go).
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

// New returns a store on pool, which should run as role reporting_svc.
func New(pool *pgxpool.Pool, log *slog.Logger) *Store {
	if log == nil {
		log = slog.Default()
	}
	return &Store{pool: pool, log: log}
}

// tx runs fn in a read-committed transaction scoped to tenant for RLS.
func (s *Store) tx(ctx context.Context, tenant string, fn func(pgx.Tx) error) error {
	return db.WithTx(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := db.SetTenant(ctx, tx, tenant); err != nil {
			return err
		}
		return fn(tx)
	})
}

// readTx is tx for reads that must see one snapshot.
func (s *Store) readTx(ctx context.Context, tenant string, fn func(pgx.Tx) error) error {
	return db.WithTx(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := db.SetTenant(ctx, tx, tenant); err != nil {
			return err
		}
		return fn(tx)
	})
}
