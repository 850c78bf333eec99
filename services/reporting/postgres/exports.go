package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/reporting"
)

var _ reporting.ExportStore = (*Store)(nil)

// PutExportBlob stores piece seq of an export.
func (s *Store) PutExportBlob(ctx context.Context, tenant, exportID string, seq int, data []byte) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO reporting.export_blobs (tenant_id, export_id, seq, data) VALUES ($1, $2, $3, $4)`,
			tenant, exportID, seq, data)
		return err
	})
	return errs.Wrap("reporting/postgres.PutExportBlob", err)
}

// ExportBlob returns piece seq of an export and whether no later piece is
// stored; NOT_FOUND when the piece is not there.
func (s *Store) ExportBlob(ctx context.Context, tenant, exportID string, seq int) (data []byte, last bool, err error) {
	err = db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT data, NOT EXISTS (SELECT 1 FROM reporting.export_blobs
				WHERE tenant_id = $1 AND export_id = $2 AND seq > $3)
			FROM reporting.export_blobs WHERE tenant_id = $1 AND export_id = $2 AND seq = $3`,
			tenant, exportID, seq).Scan(&data, &last)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, errs.NotFoundf("export piece not found")
	}
	return data, last, errs.Wrap("reporting/postgres.ExportBlob", err)
}

// DeleteExport drops every piece of an export.
func (s *Store) DeleteExport(ctx context.Context, tenant, exportID string) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM reporting.export_blobs WHERE tenant_id = $1 AND export_id = $2`, tenant, exportID)
		return err
	})
	return errs.Wrap("reporting/postgres.DeleteExport", err)
}

// DeleteExportsBefore drops the pieces of every tenant's exports created
// before t; the files of export jobs stay until their job expires.
func (s *Store) DeleteExportsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM reporting.export_blobs b WHERE created_at < $1
			AND NOT EXISTS (SELECT 1 FROM reporting.export_jobs j WHERE j.tenant_id = b.tenant_id AND j.id = b.export_id)`, t)
		n = tag.RowsAffected()
		return err
	})
	return n, errs.Wrap("reporting/postgres.DeleteExportsBefore", err)
}
