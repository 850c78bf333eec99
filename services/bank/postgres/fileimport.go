package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/bank"
)

// ImportJob implements bank.Store.
func (s *Store) ImportJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, error) {
	var (
		j        bankv1.ImportJob
		errsJSON []byte
		created  time.Time
		finished *time.Time
	)
	var acc, src string
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, bank_account_id, source, state, total_rows, imported, skipped_duplicates, errors, created_at, finished_at
			FROM bank.imports WHERE tenant_id = $1 AND id = $2`, tenantID, id).
			Scan(&j.ID, &acc, &src, &j.State, &j.TotalRows, &j.Imported, &j.SkippedDuplicates, &errsJSON, &created, &finished)
	})
	if err = db.NotFound(err, "import %s not found", id); err != nil {
		return bankv1.ImportJob{}, errs.Wrap("postgres.ImportJob", err)
	}
	j.BankAccountID, j.Source = &acc, &src
	if err := json.Unmarshal(errsJSON, &j.Errors); err != nil || j.Errors == nil {
		j.Errors = []bankv1.RowError{}
	}
	j.RowsDone = j.Imported + j.SkippedDuplicates + len(refusedRows(j.Errors))
	j.CreatedAt = created.UTC().Format(time.RFC3339Nano)
	if finished != nil {
		f := finished.UTC().Format(time.RFC3339Nano)
		j.FinishedAt = &f
	}
	return j, nil
}

// refusedRows are the distinct rows the errors name.
func refusedRows(es []bankv1.RowError) map[int]bool {
	m := map[int]bool{}
	for _, e := range es {
		m[e.Index] = true
	}
	return m
}

// FileImport implements bank.Store.
func (s *Store) FileImport(ctx context.Context, tenantID, accountID, sha string) (string, error) {
	var id string
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM bank.imports WHERE tenant_id = $1 AND bank_account_id = $2 AND file_sha256 = $3`,
			tenantID, accountID, sha).Scan(&id)
	})
	if err = db.NotFound(err, "no import of file %s", sha); err != nil {
		return "", errs.Wrap("postgres.FileImport", err)
	}
	return id, nil
}

// ImportFile implements bank.Store.
func (s *Store) ImportFile(ctx context.Context, tenantID, accountID string, imp bank.ImportMeta, run func(bank.StatementWriter) (bank.FileParse, error)) (bank.ImportResult, error) {
	var res bank.ImportResult
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		res = bank.ImportResult{ImportID: imp.ID}
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, accountID).Scan(&one)
		if err = db.NotFound(err, "bank account %s not found", accountID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO bank.imports (id, tenant_id, bank_account_id, source, file_sha256, state)
			VALUES ($1, $2, $3, $4, $5, 'running') ON CONFLICT (tenant_id, bank_account_id, file_sha256) WHERE file_sha256 IS NOT NULL DO NOTHING`,
			imp.ID, tenantID, accountID, imp.Source, imp.FileSHA256)
		if err != nil {
			return err
		}
		// The same file again: everything in it is stored already, and a
		// twin still running holds the row's lock until it commits.
		res.DuplicateFile = tag.RowsAffected() == 0
		w := &fileWriter{statementWriter: statementWriter{ctx: ctx, tx: tx, tenantID: tenantID, accountID: accountID, importID: imp.ID, skipOnly: res.DuplicateFile}, res: &res}
		fp, err := run(w)
		if err != nil {
			return err
		}
		res.TotalRows += fp.Refused
		res.Errors = fp.Errors
		if res.DuplicateFile {
			return nil
		}
		errsJSON, err := json.Marshal(nonNil(fp.Errors))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE bank.imports SET state = 'done', total_rows = $3, imported = $4, skipped_duplicates = $5, errors = $6, finished_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, imp.ID, res.TotalRows, res.Imported, res.SkippedDuplicates, errsJSON)
		return err
	})
	if err != nil {
		return bank.ImportResult{}, errs.Wrap("postgres.ImportFile", err)
	}
	return res, nil
}

// fileWriter adds each statement's counts to the file's result.
type fileWriter struct {
	statementWriter
	res *bank.ImportResult
}

// End implements bank.StatementWriter.
func (w *fileWriter) End(end bank.StatementEnd) (bank.StatementResult, error) {
	sr, err := w.statementWriter.End(end)
	if err != nil {
		return sr, err
	}
	w.res.TotalRows += sr.Entries
	w.res.Imported += sr.Imported
	w.res.SkippedDuplicates += sr.SkippedDuplicates
	if !w.skipOnly {
		w.res.Statements = append(w.res.Statements, sr)
	}
	return sr, nil
}

// CreateFileJob implements bank.Store.
func (s *Store) CreateFileJob(ctx context.Context, tenantID string, j bank.FileJob) error {
	up, err := json.Marshal(j.Upload)
	if err != nil {
		return err
	}
	var acc *string
	if j.BankAccountID != "" {
		acc = &j.BankAccountID
	}
	err = db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO bank.file_jobs (id, tenant_id, bank_account_id, upload, state) VALUES ($1, $2, $3, $4, 'queued')`,
			j.ID, tenantID, acc, up); err != nil {
			return err
		}
		_, err := outbox.Put(ctx, tx, Schema.Schema, bankv1.SubjectImportCommand, bankv1.ImportCommand{TenantID: tenantID, JobID: j.ID})
		return err
	})
	return errs.Wrap("postgres.CreateFileJob", err)
}

// ClaimFileJob implements bank.Store.
func (s *Store) ClaimFileJob(ctx context.Context, tenantID, id string) (bank.FileJob, bool, error) {
	j := bank.FileJob{ID: id}
	var (
		acc *string
		up  []byte
	)
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `UPDATE bank.file_jobs SET state = 'running', attempts = attempts + 1, rows_done = 0, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND state IN ('queued', 'running') RETURNING bank_account_id, upload`, tenantID, id).Scan(&acc, &up)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return j, false, nil
	}
	if err != nil {
		return j, false, errs.Wrap("postgres.ClaimFileJob", err)
	}
	if acc != nil {
		j.BankAccountID = *acc
	}
	if err := json.Unmarshal(up, &j.Upload); err != nil {
		return j, false, errs.Wrap("postgres.ClaimFileJob: upload", err)
	}
	return j, true, nil
}

// FinishFileJob implements bank.Store.
func (s *Store) FinishFileJob(ctx context.Context, tenantID, id string, res *bankv1.FileImportResult, jerr *bankv1.JobError) error {
	state, result, failure := "done", []byte(nil), []byte(nil)
	var err error
	if res != nil {
		if result, err = json.Marshal(res); err != nil {
			return err
		}
	}
	if jerr != nil {
		state = "failed"
		if failure, err = json.Marshal(jerr); err != nil {
			return err
		}
	}
	err = db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE bank.file_jobs SET state = $3, result = $4, error = $5, updated_at = now(), finished_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, id, state, result, failure)
		return err
	})
	return errs.Wrap("postgres.FinishFileJob", err)
}

// FileJobProgress implements bank.Store.
func (s *Store) FileJobProgress(ctx context.Context, tenantID, id string, rowsDone int) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE bank.file_jobs SET rows_done = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 AND state = 'running'`,
			tenantID, id, rowsDone)
		return err
	})
	return errs.Wrap("postgres.FileJobProgress", err)
}

// FileJob implements bank.Store.
func (s *Store) FileJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, bool, error) {
	j := bankv1.ImportJob{ID: id, Errors: []bankv1.RowError{}}
	var (
		acc              *string
		result, failure  []byte
		created, updated time.Time
		finished         *time.Time
	)
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT bank_account_id, state, result, error, rows_done, created_at, updated_at, finished_at FROM bank.file_jobs WHERE tenant_id = $1 AND id = $2`,
			tenantID, id).Scan(&acc, &j.State, &result, &failure, &j.RowsDone, &created, &updated, &finished)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return j, false, nil
	}
	if err != nil {
		return j, false, errs.Wrap("postgres.FileJob", err)
	}
	j.BankAccountID = acc
	if result != nil {
		var r bankv1.FileImportResult
		if err := json.Unmarshal(result, &r); err != nil {
			return j, false, errs.Wrap("postgres.FileJob: result", err)
		}
		j.Result = &r
		j.BankAccountID = &r.BankAccountID
		src := sourceOfFormat(r.Format)
		j.Source = &src
		j.TotalRows, j.Imported, j.SkippedDuplicates = r.TotalRows, r.Imported, r.SkippedDuplicates
		j.RowsDone = r.TotalRows
		for _, e := range r.Errors {
			j.Errors = append(j.Errors, bankv1.RowError{Index: e.Row, Field: e.Field, Issue: e.Issue})
		}
	}
	if failure != nil {
		var e bankv1.JobError
		if err := json.Unmarshal(failure, &e); err != nil {
			return j, false, errs.Wrap("postgres.FileJob: error", err)
		}
		j.Error = &e
	}
	j.CreatedAt = created.UTC().Format(time.RFC3339Nano)
	if finished != nil {
		f := finished.UTC().Format(time.RFC3339Nano)
		j.FinishedAt = &f
	}
	return j, true, nil
}

// sourceOfFormat: the file formats are the import sources of their name.
func sourceOfFormat(f string) string { return f }

// DropFileJob implements bank.Store.
func (s *Store) DropFileJob(ctx context.Context, tenantID, id string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM bank.file_jobs WHERE tenant_id = $1 AND id = $2 AND state = 'failed'`, tenantID, id)
		return err
	})
	return errs.Wrap("postgres.DropFileJob", err)
}
