// Package postgres keeps the bank service's state in its own schema.
package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/bank"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Schema is the bank service's database: its own migrations plus the
// shared outbox, idempotency and inbox (processed_events) tables.
var Schema = migrate.Set{Schema: "bank", Role: "bank_svc", FS: migrations, Dir: "migrations", Outbox: true, Idempotency: true, Inbox: true}

// Store implements bank.Store.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store on a pool running as the service's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const accountColumns = "id, name, iban, bic, account_number, currency, created_at, updated_at"

// constraints answer the conflicts the unique indexes decide.
var constraints = map[string]*errs.Error{
	"accounts_iban_unique": {Code: errs.DuplicateIBAN, Message: "the tenant already has a bank account with this IBAN",
		Details: []errs.Detail{errs.Field("iban", "already has a bank account")}},
	"accounts_ledger_account_unique": {Code: errs.AccountAlreadyLinked, Message: "the ledger account is already linked to another bank account",
		Details: []errs.Detail{errs.Field("account_number", "already linked to another bank account")}},
}

// Accounts implements bank.Store.
func (s *Store) Accounts(ctx context.Context, tenantID string) ([]bank.Account, error) {
	var out []bank.Account
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+accountColumns+` FROM bank.accounts WHERE tenant_id = $1 ORDER BY name, id`, tenantID)
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

// Account implements bank.Store.
func (s *Store) Account(ctx context.Context, tenantID, id string) (bank.Account, error) {
	var out bank.Account
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+accountColumns+` FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[bank.Account])
		return err
	})
	if err = db.NotFound(err, "bank account %s not found", id); err != nil {
		return bank.Account{}, errs.Wrap("postgres.Account", err)
	}
	return out, nil
}

// CreateAccount implements bank.Store.
func (s *Store) CreateAccount(ctx context.Context, tenantID string, a bank.Account) (bank.Account, error) {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO bank.accounts (id, tenant_id, name, iban, bic, account_number, currency)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at, updated_at`,
			a.ID, tenantID, a.Name, a.IBAN, a.BIC, a.AccountNumber, a.Currency).Scan(&a.CreatedAt, &a.UpdatedAt)
		if err != nil {
			return db.MapConstraint(err, constraints)
		}
		return idem.Save(ctx, tx, Schema.Schema, a)
	})
	if err != nil {
		return bank.Account{}, errs.Wrap("postgres.CreateAccount", err)
	}
	return a, nil
}

// RenameAccount implements bank.Store.
func (s *Store) RenameAccount(ctx context.Context, tenantID, id, name string) (bank.Account, error) {
	var out bank.Account
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE bank.accounts SET name = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2
			RETURNING `+accountColumns, tenantID, id, name)
		if err != nil {
			return err
		}
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[bank.Account])
		return err
	})
	if err = db.NotFound(err, "bank account %s not found", id); err != nil {
		return bank.Account{}, errs.Wrap("postgres.RenameAccount", err)
	}
	return out, nil
}
