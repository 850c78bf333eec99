// Package postgres is the periods Store on PostgreSQL: the periods schema,
// its embedded migrations and the transactional outbox of periods events.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Schema is the Postgres schema the periods service owns.
const Schema = "periods"

// Consumers under which handled event ids are recorded (pkg/inbox).
const (
	consumerBookings = "bookings"
	consumerLocks    = "locks"
)

// Store implements periods.Store. Every method is one transaction through
// db.InTenant, its isolation chosen per method.
type Store struct {
	pool *pgxpool.Pool
}

var _ periods.Store = (*Store)(nil)

// New returns a Store on pool, which runs as the role of Migrations.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// emitChange records EventPeriodChanged in tx's outbox.
func emitChange(ctx context.Context, tx pgx.Tx, p periodsv1.Period, start int, previous, source string) error {
	p.PeriodNumber = periods.Number(p.Period, start)
	p.IsAdjustment = periods.IsAdjustment(p.Period)
	_, err := outbox.Put(ctx, tx, Schema, periodsv1.EventPeriodChanged, periodsv1.PeriodChanged{
		TenantID: p.TenantID, Period: p, PreviousStatus: previous, Source: source, ChangedAt: time.Now().UTC(),
	})
	return err
}

// FiscalStart implements periods.Store.
func (s *Store) FiscalStart(ctx context.Context, tenant string) (int, bool, error) {
	var m int
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT fiscal_year_start_month FROM periods.tenants WHERE tenant_id = $1", tenant).Scan(&m)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return m, true, nil
}

// SaveFiscalStart implements periods.Store.
func (s *Store) SaveFiscalStart(ctx context.Context, tenant string, month int) error {
	return db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO periods.tenants (tenant_id, fiscal_year_start_month) VALUES ($1, $2)
			ON CONFLICT (tenant_id) DO UPDATE SET fiscal_year_start_month = EXCLUDED.fiscal_year_start_month, updated_at = now()
			WHERE tenants.fiscal_year_start_month <> EXCLUDED.fiscal_year_start_month`, tenant, month)
		return err
	})
}

// fiscalStart reads the stored start month inside tx; January when none.
func fiscalStart(ctx context.Context, tx pgx.Tx, tenant string) (int, error) {
	var m int
	err := tx.QueryRow(ctx, "SELECT fiscal_year_start_month FROM periods.tenants WHERE tenant_id = $1", tenant).Scan(&m)
	if errors.Is(err, pgx.ErrNoRows) {
		return 1, nil
	}
	return m, err
}
