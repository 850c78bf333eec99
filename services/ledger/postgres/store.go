package postgres

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
)

const schema = "ledger"

// Store is the ledger's Postgres store. Postings of one tenant go through a
// single writer that commits them in groups (see writer.go).
type Store struct {
	pool     *pgxpool.Pool
	log      *slog.Logger
	maxBatch int

	mu      sync.Mutex
	writers map[string]*writer
}

// New returns a store on pool, which should run as role ledger_svc.
func New(pool *pgxpool.Pool, log *slog.Logger) *Store {
	return &Store{pool: pool, log: log, maxBatch: 256, writers: map[string]*writer{}}
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
