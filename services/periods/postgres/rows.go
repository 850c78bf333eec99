package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// The columns the store reads of a period and of a manual task, and their
// scanners.

const periodCols = "tenant_id::text, period, status, booking_count, locked_by, locked_at"

func scanPeriod(row pgx.Row) (periodsv1.Period, error) {
	var p periodsv1.Period
	var at *time.Time
	if err := row.Scan(&p.TenantID, &p.Period, &p.Status, &p.BookingCount, &p.LockedBy, &at); err != nil {
		return periodsv1.Period{}, err
	}
	p.LockedAt = timestamp(at)
	return p, nil
}

const taskCols = "id::text, period, title, status, assignee, note, to_char(due_date, 'YYYY-MM-DD'), updated_at"

func scanTask(row pgx.Row) (periodsv1.Task, error) {
	t := periodsv1.Task{Kind: periodsv1.TaskManual}
	var at time.Time
	if err := row.Scan(&t.ID, &t.Period, &t.Title, &t.Status, &t.Assignee, &t.Note, &t.DueDate, &at); err != nil {
		return periodsv1.Task{}, err
	}
	t.UpdatedAt = timestamp(&at)
	return t, nil
}

// queryRows runs a query in tx and scans every row with scan.
func queryRows[T any](ctx context.Context, tx pgx.Tx, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// timestamp formats a stored time for the API.
func timestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}
