package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
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
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, bank_account_id, source, state, total_rows, imported, skipped_duplicates, errors, created_at, finished_at
			FROM bank.imports WHERE tenant_id = $1 AND id = $2`, tenantID, id).
			Scan(&j.ID, &j.BankAccountID, &j.Source, &j.State, &j.TotalRows, &j.Imported, &j.SkippedDuplicates, &errsJSON, &created, &finished)
	})
	if err = db.NotFound(err, "import %s not found", id); err != nil {
		return bankv1.ImportJob{}, errs.Wrap("postgres.ImportJob", err)
	}
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
func (s *Store) ImportFile(ctx context.Context, tenantID, accountID string, imp bank.ImportMeta, run func(add func(bank.ParsedStatement) error) (bank.FileParse, error)) (bank.ImportResult, error) {
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
		fp, err := run(func(st bank.ParsedStatement) error {
			res.TotalRows += len(st.Entries)
			if res.DuplicateFile {
				res.SkippedDuplicates += len(st.Entries)
				return nil
			}
			sr, err := insertStatement(ctx, tx, tenantID, accountID, imp.ID, st)
			if err != nil {
				return err
			}
			res.Imported += sr.Imported
			res.SkippedDuplicates += sr.SkippedDuplicates
			res.Statements = append(res.Statements, sr)
			return nil
		})
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
