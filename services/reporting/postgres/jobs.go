package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/reporting"
)

var _ reporting.JobStore = (*Store)(nil)

const jobColumns = `id, tenant_id, type, params, status, rows_done, rows_total, bytes, error, claims,
	filename, content_type, attempt, created_at, updated_at`

func scanJob(row pgx.Row) (reporting.ExportJob, error) {
	var j reporting.ExportJob
	err := row.Scan(&j.ID, &j.TenantID, &j.Type, &j.Params, &j.Status, &j.RowsDone, &j.RowsTotal, &j.Bytes, &j.Error, &j.Claims,
		&j.Filename, &j.ContentType, &j.Attempt, &j.CreatedAt, &j.UpdatedAt)
	return j, err
}

// CreateJob stores a new job; with an idempotent request in ctx it claims
// the key first and saves the job as the answer (pkg/idem).
func (s *Store) CreateJob(ctx context.Context, j reporting.ExportJob) error {
	err := db.InTenant(ctx, s.pool, j.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, "reporting"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO reporting.export_jobs (id, tenant_id, type, params, status, claims, filename, content_type, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
			j.ID, j.TenantID, j.Type, j.Params, j.Status, j.Claims, j.Filename, j.ContentType, j.CreatedAt)
		if err != nil {
			return err
		}
		return idem.Save(ctx, tx, "reporting", j)
	})
	return errs.Wrap("reporting/postgres.CreateJob", err)
}

// Job returns a tenant's job.
func (s *Store) Job(ctx context.Context, tenant, id string) (reporting.ExportJob, error) {
	var j reporting.ExportJob
	err := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) (err error) {
		j, err = scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM reporting.export_jobs WHERE tenant_id = $1 AND id = $2`, tenant, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return j, errs.NotFoundf("export job not found")
	}
	return j, errs.Wrap("reporting/postgres.Job", err)
}

// ClaimJob takes a job for a worker (see reporting.JobStore).
func (s *Store) ClaimJob(ctx context.Context, tenant, id string, lease time.Duration) (reporting.ExportJob, error) {
	var j reporting.ExportJob
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) (err error) {
		j, err = scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+`
			FROM reporting.export_jobs WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenant, id))
		if err != nil {
			return err
		}
		switch j.Status {
		case reportingv1.JobDone, reportingv1.JobFailed:
			return nil
		case reportingv1.JobRunning:
			var fresh bool
			if err := tx.QueryRow(ctx, `SELECT now() - updated_at < make_interval(secs => $2) FROM reporting.export_jobs WHERE id = $1`,
				id, lease.Seconds()).Scan(&fresh); err != nil {
				return err
			}
			if fresh {
				return reporting.ErrJobBusy
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM reporting.export_blobs WHERE tenant_id = $1 AND export_id = $2`, tenant, id); err != nil {
			return err
		}
		j, err = scanJob(tx.QueryRow(ctx, `UPDATE reporting.export_jobs SET status = 'running', attempt = attempt + 1,
				rows_done = 0, rows_total = NULL, bytes = 0, error = NULL, updated_at = now()
			WHERE id = $1 RETURNING `+jobColumns, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return j, errs.NotFoundf("export job not found")
	}
	if errors.Is(err, reporting.ErrJobBusy) {
		return j, err
	}
	return j, errs.Wrap("reporting/postgres.ClaimJob", err)
}

// JobProgress records a running attempt's progress and renews its lease.
func (s *Store) JobProgress(ctx context.Context, tenant, id string, attempt int, rows, bytes int64) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE reporting.export_jobs SET rows_done = $4, bytes = $5, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'running'`, tenant, id, attempt, rows, bytes)
		if err == nil && tag.RowsAffected() == 0 {
			return reporting.ErrJobLost
		}
		return err
	})
	if errors.Is(err, reporting.ErrJobLost) {
		return err
	}
	return errs.Wrap("reporting/postgres.JobProgress", err)
}

// FinishJob marks a running attempt done or failed.
func (s *Store) FinishJob(ctx context.Context, tenant, id string, attempt int, status string, rows, bytes int64, errText string) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var e *string
		if errText != "" {
			e = &errText
		}
		tag, err := tx.Exec(ctx, `UPDATE reporting.export_jobs SET status = $4, rows_done = $5, bytes = $6, error = $7,
				rows_total = CASE WHEN $4 = 'done' THEN $5::bigint END, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'running'`, tenant, id, attempt, status, rows, bytes, e)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return reporting.ErrJobLost
		}
		if status != reportingv1.JobDone {
			_, err = tx.Exec(ctx, `DELETE FROM reporting.export_blobs WHERE tenant_id = $1 AND export_id = $2`, tenant, id)
		}
		return err
	})
	if errors.Is(err, reporting.ErrJobLost) {
		return nil // another attempt owns the job now
	}
	return errs.Wrap("reporting/postgres.FinishJob", err)
}

// StaleJobs returns the jobs queued since before queued and those running
// with a lease renewed last before running, of every tenant.
func (s *Store) StaleJobs(ctx context.Context, queued, running time.Time) ([]reporting.ExportJob, error) {
	var out []reporting.ExportJob
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+jobColumns+` FROM reporting.export_jobs
			WHERE (status = 'queued' AND updated_at < $1) OR (status = 'running' AND updated_at < $2)
			ORDER BY created_at LIMIT 1000`, queued, running)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (reporting.ExportJob, error) { return scanJob(r) })
		return err
	})
	return out, errs.Wrap("reporting/postgres.StaleJobs", err)
}

// DeleteJobsBefore drops every tenant's jobs created before t with their
// pieces.
func (s *Store) DeleteJobsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM reporting.export_blobs b USING reporting.export_jobs j
			WHERE b.tenant_id = j.tenant_id AND b.export_id = j.id AND j.created_at < $1`, t); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM reporting.export_jobs WHERE created_at < $1`, t)
		n = tag.RowsAffected()
		return err
	})
	return n, errs.Wrap("reporting/postgres.DeleteJobsBefore", err)
}
