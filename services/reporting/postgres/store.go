package postgres

import "github.com/jackc/pgx/v5/pgxpool"

// Store is the reporting service's Postgres store. Each feature adds its
// methods in its own file (projection.go, exports.go, jobs.go); every
// transaction goes through db.InTenant with the isolation the call needs.
type Store struct{ pool *pgxpool.Pool }

// New returns a store on pool, which runs as the role of Migrations.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }
