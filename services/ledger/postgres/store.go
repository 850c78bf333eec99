package postgres

import (
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
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
