// Package postgres keeps the bank service's state in its own schema.
package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/bank"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Schema is the bank service's database: its own migrations plus the
// shared outbox and idempotency tables.
var Schema = migrate.Set{Schema: "bank", Role: "bank_svc", FS: migrations, Dir: "migrations", Outbox: true, Idempotency: true}

// Store implements bank.Store.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store on a pool running as the service's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Accounts implements bank.Store.
func (s *Store) Accounts(ctx context.Context, tenantID string) ([]bank.Account, error) {
	var out []bank.Account
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, name, iban, bic, account_number, currency, created_at
			FROM bank.accounts WHERE tenant_id = $1 ORDER BY name, id`, tenantID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[bank.Account])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.Accounts: %w", err)
	}
	return out, nil
}
