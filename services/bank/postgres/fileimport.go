package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
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
