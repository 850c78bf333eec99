package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/inbox"
	"github.com/ledgerplatform/ledger/services/periods"
)

// List implements periods.Store.
func (s *Store) List(ctx context.Context, tenant string, ensure []string) ([]periodsv1.Period, error) {
	var out []periodsv1.Period
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) (err error) {
		if len(ensure) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO periods.periods (tenant_id, period)
				SELECT $1::uuid, p FROM unnest($2::text[]) AS p
				WHERE NOT EXISTS (SELECT 1 FROM periods.periods x WHERE x.tenant_id = $1::uuid AND x.period = p)
				ON CONFLICT DO NOTHING`, tenant, ensure); err != nil {
				return err
			}
		}
		out, err = queryRows(ctx, tx, scanPeriod, "SELECT "+periodCols+" FROM periods.periods WHERE tenant_id = $1 ORDER BY period DESC", tenant)
		return err
	})
	if out == nil {
		out = []periodsv1.Period{}
	}
	return out, err
}

// Period implements periods.Store.
func (s *Store) Period(ctx context.Context, tenant, period string) (periodsv1.Period, error) {
	var p periodsv1.Period
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) (err error) {
		p, err = scanPeriod(tx.QueryRow(ctx, "SELECT "+periodCols+" FROM periods.periods WHERE tenant_id = $1 AND period = $2", tenant, period))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return p, errs.NotFoundf("period %s not found", period)
	}
	return p, err
}

// LatestBooked implements periods.Store.
func (s *Store) LatestBooked(ctx context.Context, tenant string) (string, error) {
	var p string
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT coalesce(max(period), '') FROM periods.periods
			WHERE tenant_id = $1 AND booking_count > 0 AND period NOT LIKE '%-13'`, tenant).Scan(&p)
	})
	return p, err
}

// Statuses implements periods.Store.
func (s *Store) Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error) {
	out := map[string]string{}
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT period, status FROM periods.periods
			WHERE tenant_id = $1 AND ($2 = '' OR period >= $2) AND ($3 = '' OR period <= $3)`, tenant, from, to)
		if err != nil {
			return err
		}
		var p, st string
		_, err = pgx.ForEachRow(rows, []any{&p, &st}, func() error { out[p] = st; return nil })
		return err
	})
	return out, err
}

// setStatus stores a new status; locked_by and locked_at are cleared when
// the period opens.
const setStatus = `UPDATE periods.periods SET status = $3,
	locked_by = CASE WHEN $3 = 'open' THEN NULL ELSE NULLIF($4, '') END,
	locked_at = CASE WHEN $3 = 'open' THEN NULL ELSE clock_timestamp() END,
	unconfirmed = unconfirmed + $5, updated_at = now()
	WHERE tenant_id = $1 AND period = $2 RETURNING ` + periodCols

// ChangeStatus implements periods.Store.
func (s *Store) ChangeStatus(ctx context.Context, c periods.StatusChange, apply func(context.Context, periodsv1.Period) error) (periodsv1.Period, error) {
	var out periodsv1.Period
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if c.Create {
			if _, err := tx.Exec(ctx, "INSERT INTO periods.periods (tenant_id, period) VALUES ($1, $2) ON CONFLICT DO NOTHING", c.TenantID, c.Period); err != nil {
				return err
			}
		}
		cur, err := scanPeriod(tx.QueryRow(ctx, "SELECT "+periodCols+" FROM periods.periods WHERE tenant_id = $1 AND period = $2 FOR UPDATE", c.TenantID, c.Period))
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.NotFoundf("period %s not found", c.Period)
		}
		if err != nil {
			return err
		}
		if err := apply(ctx, cur); err != nil {
			return err
		}
		if out, err = scanPeriod(tx.QueryRow(ctx, setStatus, c.TenantID, c.Period, c.To, c.By, 1)); err != nil {
			return err
		}
		return emitChange(ctx, tx, out, c.FiscalStart, cur.Status, "api")
	})
	return out, err
}

// CreateAdjustment implements periods.Store.
func (s *Store) CreateAdjustment(ctx context.Context, c periods.StatusChange, apply func(context.Context) error) (periodsv1.Period, error) {
	var out periodsv1.Period
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		// The ledger's period_lock_set event of this change is still to come.
		tag, err := tx.Exec(ctx, "INSERT INTO periods.periods (tenant_id, period, unconfirmed) VALUES ($1, $2, 1) ON CONFLICT DO NOTHING", c.TenantID, c.Period)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errs.E(errs.Conflict, "adjustment period %s exists already", c.Period)
		}
		if err := apply(ctx); err != nil {
			return err
		}
		if out, err = scanPeriod(tx.QueryRow(ctx, "SELECT "+periodCols+" FROM periods.periods WHERE tenant_id = $1 AND period = $2", c.TenantID, c.Period)); err != nil {
			return err
		}
		return emitChange(ctx, tx, out, c.FiscalStart, "", "api")
	})
	return out, err
}

// CountBookings implements periods.Store. One transaction takes the whole
// batch, whatever its tenants; rows are touched in key order so that
// concurrent batches cannot deadlock.
func (s *Store) CountBookings(ctx context.Context, bs []periods.Booking) (int, error) {
	byID := make(map[string]periods.Booking, len(bs))
	var events []inbox.Event
	for _, b := range bs {
		if _, dup := byID[b.EventID]; dup {
			continue
		}
		byID[b.EventID] = b
		events = append(events, inbox.Event{ID: b.EventID, TenantID: b.TenantID})
	}
	var counted int
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		fresh, err := inbox.Claim(ctx, tx, Schema, consumerBookings, events...)
		if err != nil {
			return err
		}
		type key struct{ tenant, period string }
		counts := map[key]int64{}
		for _, id := range fresh {
			b := byID[id]
			counts[key{b.TenantID, b.Period}]++
		}
		keys := make([]key, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b key) int {
			if c := strings.Compare(a.tenant, b.tenant); c != 0 {
				return c
			}
			return strings.Compare(a.period, b.period)
		})
		ts, ps, ns := make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			ts[i], ps[i], ns[i] = k.tenant, k.period, counts[k]
		}
		counted = len(fresh)
		if len(keys) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO periods.periods (tenant_id, period, booking_count)
			SELECT t, p, n FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS u(t, p, n)
			ON CONFLICT (tenant_id, period) DO UPDATE SET booking_count = periods.booking_count + EXCLUDED.booking_count, updated_at = now()`,
			ts, ps, ns)
		return err
	})
	if err != nil {
		return 0, err
	}
	return counted, nil
}

// ApplyLockSet implements periods.Store.
func (s *Store) ApplyLockSet(ctx context.Context, ev periods.LockSet) (bool, error) {
	var changed bool
	err := db.InTenant(ctx, s.pool, ev.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		changed = false
		fresh, err := inbox.Claim(ctx, tx, Schema, consumerLocks, inbox.Event{ID: ev.EventID, TenantID: ev.TenantID})
		if err != nil || len(fresh) == 0 {
			return err
		}
		start, err := fiscalStart(ctx, tx, ev.TenantID)
		if err != nil {
			return err
		}
		// A period this service has never seen takes the ledger's state.
		created, err := scanPeriod(tx.QueryRow(ctx, `INSERT INTO periods.periods (tenant_id, period, status, locked_by, locked_at)
			VALUES ($1, $2, $3, CASE WHEN $3 = 'open' THEN NULL ELSE NULLIF($4, '') END, CASE WHEN $3 = 'open' THEN NULL ELSE clock_timestamp() END)
			ON CONFLICT DO NOTHING RETURNING `+periodCols, ev.TenantID, ev.Period, ev.Status, ev.LockedBy))
		switch {
		case err == nil:
			changed = true
			return emitChange(ctx, tx, created, start, "", "ledger")
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		var (
			cur         periodsv1.Period
			at          *time.Time
			unconfirmed int
		)
		if err := tx.QueryRow(ctx, "SELECT "+periodCols+", unconfirmed FROM periods.periods WHERE tenant_id = $1 AND period = $2 FOR UPDATE",
			ev.TenantID, ev.Period).Scan(&cur.TenantID, &cur.Period, &cur.Status, &cur.BookingCount, &cur.LockedBy, &at, &unconfirmed); err != nil {
			return err
		}
		if unconfirmed > 0 {
			// The echo of a change made here, or one the local state has
			// moved past.
			_, err := tx.Exec(ctx, "UPDATE periods.periods SET unconfirmed = unconfirmed - 1 WHERE tenant_id = $1 AND period = $2", ev.TenantID, ev.Period)
			return err
		}
		if cur.Status == ev.Status {
			return nil
		}
		out, err := scanPeriod(tx.QueryRow(ctx, setStatus, ev.TenantID, ev.Period, ev.Status, ev.LockedBy, 0))
		if err != nil {
			return err
		}
		changed = true
		return emitChange(ctx, tx, out, start, cur.Status, "ledger")
	})
	return changed, err
}
