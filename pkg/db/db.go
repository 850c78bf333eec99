// Package db opens Postgres pools and runs transactions. WithTx is the only
// way code in this repository opens a transaction: it retries serialisation
// failures and deadlocks and checks the commit error.
package db

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Open connects a pool. When role is set every connection switches to it, so
// a service runs with only the privileges its migrations granted that role
// (for example no UPDATE or DELETE on journal tables).
func Open(ctx context.Context, url, role string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("db.Open: parse url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if role != "" {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "SELECT set_config('role', $1, false)", role)
			return err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("db.Open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("db.Open: ping: %w", err)
	}
	return pool, nil
}

// Beginner is what WithTx needs: a pool or a connection.
type Beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

const maxAttempts = 8

// WithTx runs fn in a transaction with the given options, retrying the whole
// function on serialisation failures and deadlocks. fn must not have side
// effects outside the transaction, since it may run more than once.
func WithTx(ctx context.Context, b Beginner, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff := time.Duration(1<<min(attempt, 6)) * time.Millisecond
			backoff += time.Duration(rand.Int64N(int64(backoff)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
		}
		err = runTx(ctx, b, opts, fn)
		if !Retryable(err) {
			return err
		}
	}
	return fmt.Errorf("db.WithTx: gave up after %d attempts: %w", maxAttempts, err)
}

func runTx(ctx context.Context, b Beginner, opts pgx.TxOptions, fn func(pgx.Tx) error) (err error) {
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("db: begin: %w", err)
	}
	defer func() {
		if err != nil {
			// The rollback error is irrelevant next to err.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("db: commit: %w", err)
	}
	return nil
}

// Retryable reports serialisation failures and deadlocks.
func Retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

// Isolation levels services choose per call.
var (
	ReadCommitted  = pgx.TxOptions{}
	RepeatableRead = pgx.TxOptions{IsoLevel: pgx.RepeatableRead}
	Serializable   = pgx.TxOptions{IsoLevel: pgx.Serializable}
	ReadOnly       = pgx.TxOptions{AccessMode: pgx.ReadOnly}
	// Snapshot reads many tables as of one moment without writing.
	Snapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// AllTenants is the tenant of system paths that span tenants (consumers,
// pruning); row-level security lets them see every row.
const AllTenants = "*"

// InTenant is WithTx with the tenant set for row-level security before fn
// runs: the one way a service opens a transaction on its schema.
func InTenant(ctx context.Context, b Beginner, tenantID string, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return WithTx(ctx, b, opts, func(tx pgx.Tx) error {
		if err := SetTenant(ctx, tx, tenantID); err != nil {
			return err
		}
		return fn(tx)
	})
}

// SetTenant makes the tenant visible to row-level security policies for the
// rest of the transaction. "*" is used by system paths that span tenants.
func SetTenant(ctx context.Context, tx pgx.Tx, tenantID string) error {
	_, err := tx.Exec(ctx, "SELECT set_config('app.tenant_id', $1, true)", tenantID)
	if err != nil {
		return fmt.Errorf("db.SetTenant: %w", err)
	}
	return nil
}

// Constraint returns the name of the violated constraint and the SQLSTATE of
// err, or "" when err is not a constraint violation.
func Constraint(err error) (name, sqlState string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.ConstraintName != "" {
		return pe.ConstraintName, pe.Code
	}
	return "", ""
}

// MapConstraint turns a violation of a known constraint into the client error
// registered for it; other errors pass through unchanged.
func MapConstraint(err error, known map[string]*errs.Error) error {
	if name, _ := Constraint(err); name != "" {
		if e, ok := known[name]; ok {
			return &errs.Error{Code: e.Code, Message: e.Message, Details: e.Details, Err: err}
		}
	}
	return err
}

// NotFound maps pgx.ErrNoRows to a 404 with the given message.
func NotFound(err error, format string, args ...any) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return errs.NotFoundf(format, args...)
	}
	return err
}

// LikeEscape makes s match itself in a LIKE pattern (escape character \),
// so a search for "50%" or "a_b" finds those texts only.
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
