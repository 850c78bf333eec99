package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
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

// BeginChange implements periods.Store.
func (s *Store) BeginChange(ctx context.Context, c periods.StatusChange, check func(periodsv1.Period) error) (periods.Pending, error) {
	var pend periods.Pending
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema); err != nil {
			return err
		}
		created := false
		if c.Create || c.New {
			tag, err := tx.Exec(ctx, "INSERT INTO periods.periods (tenant_id, period) VALUES ($1, $2) ON CONFLICT DO NOTHING", c.TenantID, c.Period)
			if err != nil {
				return err
			}
			created = tag.RowsAffected() == 1
		}
		var (
			cur        periodsv1.Period
			at         *time.Time
			pendingID  *string
			pendingNew bool
			stale      *bool
		)
		err := tx.QueryRow(ctx, "SELECT "+periodCols+`, pending_id::text, pending_new, pending_since < now() - make_interval(secs => $3)
			FROM periods.periods WHERE tenant_id = $1 AND period = $2 FOR UPDATE`, c.TenantID, c.Period, periods.PendingTimeout.Seconds()).
			Scan(&cur.TenantID, &cur.Period, &cur.Status, &cur.BookingCount, &cur.LockedBy, &at, &pendingID, &pendingNew, &stale)
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.NotFoundf("period %s not found", c.Period)
		}
		if err != nil {
			return err
		}
		takeOver := pendingID != nil
		switch {
		case takeOver && !*stale:
			return periods.ErrBusy
		case c.New && !created && !(takeOver && pendingNew):
			return errs.E(errs.Conflict, "adjustment period %s exists already", c.Period)
		}
		if check != nil {
			if err := check(cur); err != nil {
				return err
			}
		}
		// A change taken over was counted when it began.
		awaited := 1
		if takeOver {
			awaited = 0
		}
		pend.ID = uuid.NewString()
		_, err = tx.Exec(ctx, `UPDATE periods.periods SET pending_id = $3, pending_status = $4, pending_by = $5, pending_since = now(),
			pending_new = pending_new OR $6, unconfirmed = unconfirmed + $7 WHERE tenant_id = $1 AND period = $2`,
			c.TenantID, c.Period, pend.ID, c.To, c.By, created, awaited)
		return err
	})
	return pend, err
}

// applyPending makes a period's pending change its status; locked_at stays
// when the status does (an adjustment period created open).
const applyPending = `UPDATE periods.periods SET status = pending_status,
	locked_by = CASE WHEN pending_status = 'open' THEN NULL ELSE NULLIF(pending_by, '') END,
	locked_at = CASE WHEN pending_status = 'open' THEN NULL WHEN status = pending_status THEN locked_at ELSE clock_timestamp() END,
	pending_id = NULL, pending_status = NULL, pending_by = NULL, pending_since = NULL, pending_new = false, updated_at = now()
	WHERE tenant_id = $1 AND period = $2 AND pending_id = $3 RETURNING ` + periodCols

// finish applies the pending change id of a period, if it is still
// pending, and records EventPeriodChanged; ok reports whether it was.
func finish(ctx context.Context, tx pgx.Tx, tenant, period, id string, start int) (out periodsv1.Period, ok bool, err error) {
	var previous string
	var created bool
	err = tx.QueryRow(ctx, "SELECT status, pending_new FROM periods.periods WHERE tenant_id = $1 AND period = $2 AND pending_id = $3 FOR UPDATE",
		tenant, period, id).Scan(&previous, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return out, false, nil
	}
	if err != nil {
		return out, false, err
	}
	if out, err = scanPeriod(tx.QueryRow(ctx, applyPending, tenant, period, id)); err != nil {
		return out, false, err
	}
	if created && periods.IsAdjustment(period) {
		previous = ""
	}
	return out, true, emitChange(ctx, tx, out, start, previous, "api")
}

// FinishChange implements periods.Store.
func (s *Store) FinishChange(ctx context.Context, c periods.StatusChange, p periods.Pending) (periodsv1.Period, error) {
	var out periodsv1.Period
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var ok bool
		var err error
		if out, ok, err = finish(ctx, tx, c.TenantID, c.Period, p.ID, c.FiscalStart); err != nil {
			return err
		}
		if !ok {
			// The ledger's event applied the change first, or a later change
			// took it over.
			if out, err = scanPeriod(tx.QueryRow(ctx, "SELECT "+periodCols+" FROM periods.periods WHERE tenant_id = $1 AND period = $2", c.TenantID, c.Period)); err != nil {
				return err
			}
			if out.Status != c.To {
				return errs.E(errs.Conflict, "another lock change of period %s overtook this one; check GET /v1/periods", c.Period)
			}
		}
		out.PeriodNumber, out.IsAdjustment = periods.Number(out.Period, c.FiscalStart), periods.IsAdjustment(out.Period)
		return idem.Save(ctx, tx, Schema, out)
	})
	return out, err
}

// AbandonChange implements periods.Store.
func (s *Store) AbandonChange(ctx context.Context, c periods.StatusChange, p periods.Pending) error {
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM periods.periods WHERE tenant_id = $1 AND period = $2 AND pending_id = $3
			AND pending_new AND status = 'open' AND booking_count = 0`, c.TenantID, c.Period, p.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			if _, err := tx.Exec(ctx, `UPDATE periods.periods SET pending_id = NULL, pending_status = NULL, pending_by = NULL, pending_since = NULL,
				pending_new = false, unconfirmed = greatest(unconfirmed - 1, 0) WHERE tenant_id = $1 AND period = $2 AND pending_id = $3`,
				c.TenantID, c.Period, p.ID); err != nil {
				return err
			}
		}
		return idem.Release(ctx, tx, Schema)
	})
	return errs.Wrap("periods.AbandonChange", err)
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
			cur           periodsv1.Period
			at            *time.Time
			unconfirmed   int
			pendingID     *string
			pendingStatus *string
		)
		if err := tx.QueryRow(ctx, "SELECT "+periodCols+", unconfirmed, pending_id::text, pending_status FROM periods.periods WHERE tenant_id = $1 AND period = $2 FOR UPDATE",
			ev.TenantID, ev.Period).Scan(&cur.TenantID, &cur.Period, &cur.Status, &cur.BookingCount, &cur.LockedBy, &at, &unconfirmed, &pendingID, &pendingStatus); err != nil {
			return err
		}
		// The event of the change pending here (its process died, or has
		// not finished yet): the change is made.
		ours := pendingStatus != nil && *pendingStatus == ev.Status && unconfirmed <= 1
		if unconfirmed > 0 {
			// The echo of a change made here, or one the local state has
			// moved past.
			if _, err := tx.Exec(ctx, "UPDATE periods.periods SET unconfirmed = unconfirmed - 1 WHERE tenant_id = $1 AND period = $2", ev.TenantID, ev.Period); err != nil {
				return err
			}
			if !ours {
				return nil
			}
		}
		if ours {
			_, ok, err := finish(ctx, tx, ev.TenantID, ev.Period, *pendingID, start)
			changed = ok
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
