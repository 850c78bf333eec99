package postgres

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
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

// list runs q in a snapshot of tenant's rows and collects every row with
// scan; op names the caller in errors. The list is never nil.
func list[T any](ctx context.Context, s *Store, tenant, op string, scan pgx.RowToFunc[T], q string, args ...any) ([]T, error) {
	var out []T
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scan)
		return err
	})
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	return out, nil
}

// New returns a store on pool, which should run as role ledger_svc.
func New(pool *pgxpool.Pool, log *slog.Logger) *Store {
	return &Store{pool: pool, log: log, maxBatch: 256, writers: map[string]*writer{}}
}
