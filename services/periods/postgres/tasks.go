package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Tasks implements periods.Store: the period's manual tasks, those due
// first first, then in the order they were created.
func (s *Store) Tasks(ctx context.Context, tenant, period string) ([]periodsv1.Task, error) {
	var out []periodsv1.Task
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) (err error) {
		out, err = queryRows(ctx, tx, scanTask, "SELECT "+taskCols+` FROM periods.closing_tasks
			WHERE tenant_id = $1 AND period = $2 ORDER BY due_date NULLS LAST, created_at, id`, tenant, period)
		return err
	})
	return out, err
}

// CreateTask implements periods.Store.
func (s *Store) CreateTask(ctx context.Context, t periods.NewTask) (periodsv1.Task, error) {
	var out periodsv1.Task
	err := db.InTenant(ctx, s.pool, t.TenantID, db.ReadCommitted, func(tx pgx.Tx) (err error) {
		if err := idem.Claim(ctx, tx, Schema); err != nil {
			return err
		}
		out, err = scanTask(tx.QueryRow(ctx, `INSERT INTO periods.closing_tasks (id, tenant_id, period, title, status, assignee, note, due_date, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::date, $9) RETURNING `+taskCols,
			uuid.NewString(), t.TenantID, t.Period, t.Title, t.Status, t.Assignee, t.Note, t.DueDate, t.CreatedBy))
		if err != nil {
			return err
		}
		return idem.Save(ctx, tx, Schema, out)
	})
	return out, err
}

// UpdateTask implements periods.Store.
func (s *Store) UpdateTask(ctx context.Context, tenant, id string, p periods.TaskPatch) (periodsv1.Task, error) {
	sets := []string{"updated_at = now()"}
	args := []any{tenant, id}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, col+" = $"+strconv.Itoa(len(args)))
	}
	if p.Status != nil {
		set("status", *p.Status)
	}
	if p.Title != nil {
		set("title", *p.Title)
	}
	if p.Assignee.Set {
		set("assignee", p.Assignee.Value)
	}
	if p.Note.Set {
		set("note", p.Note.Value)
	}
	if p.DueDate.Set {
		args = append(args, p.DueDate.Value)
		sets = append(sets, "due_date = $"+strconv.Itoa(len(args))+"::text::date")
	}
	var out periodsv1.Task
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) (err error) {
		if err := idem.Claim(ctx, tx, Schema); err != nil {
			return err
		}
		out, err = scanTask(tx.QueryRow(ctx, "UPDATE periods.closing_tasks SET "+strings.Join(sets, ", ")+
			" WHERE tenant_id = $1 AND id = $2 RETURNING "+taskCols, args...))
		if err != nil {
			return err
		}
		return idem.Save(ctx, tx, Schema, out)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return out, errs.NotFoundf("closing task %s not found", id)
	}
	return out, err
}
