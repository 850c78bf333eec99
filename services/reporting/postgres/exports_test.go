package postgres_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// exportEnv is a migrated database with the store running as reporting_svc
// and an owner pool to look behind its back.
func exportEnv(t *testing.T) (*postgres.Store, *pgxpool.Pool, *pgxpool.Pool) {
	t.Helper()
	url := testkit.Postgres(t, postgres.Migrations)
	owner, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := db.Open(context.Background(), url, postgres.Migrations.Role, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return postgres.New(pool), pool, owner
}

const (
	exportTenantA = "0b7e2f4c-0000-4000-8000-00000000000a"
	exportTenantB = "0b7e2f4c-0000-4000-8000-00000000000b"
	exportID      = "5d0c5a6e-1111-4000-8000-000000000001"
)

func TestExportBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, pool, owner := exportEnv(t)
	piece := func(seq int) []byte { return bytes.Repeat([]byte{byte(seq)}, 1<<20) }
	for seq := 1; seq <= 3; seq++ {
		if err := st.PutExportBlob(ctx, exportTenantA, exportID, seq, piece(seq)); err != nil {
			t.Fatal(err)
		}
	}
	for seq := 1; seq <= 3; seq++ {
		data, last, err := st.ExportBlob(ctx, exportTenantA, exportID, seq)
		if err != nil || !bytes.Equal(data, piece(seq)) || last != (seq == 3) {
			t.Fatalf("piece %d: %d bytes, last %v, %v", seq, len(data), last, err)
		}
	}
	if _, _, err := st.ExportBlob(ctx, exportTenantA, exportID, 4); !errs.Is(err, errs.NotFound) {
		t.Errorf("missing piece: %v", err)
	}
	// Another tenant sees nothing of it, by query and by row-level security.
	if _, _, err := st.ExportBlob(ctx, exportTenantB, exportID, 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("other tenant: %v", err)
	}
	var visible int
	if err := db.WithTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := db.SetTenant(ctx, tx, exportTenantB); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT count(*) FROM reporting.export_blobs").Scan(&visible)
	}); err != nil || visible != 0 {
		t.Errorf("tenant B sees %d pieces (%v)", visible, err)
	}
	// reporting_svc may not change a piece, and a piece is at most 1 MiB.
	err := db.WithTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE reporting.export_blobs SET data = ''")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("update as reporting_svc: %v", err)
	}
	if err := st.PutExportBlob(ctx, exportTenantA, exportID, 9, make([]byte, 1<<20+1)); err == nil {
		t.Error("a piece over 1 MiB was stored")
	}

	if err := st.DeleteExport(ctx, exportTenantA, exportID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.ExportBlob(ctx, exportTenantA, exportID, 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("after delete: %v", err)
	}

	// Expired pieces of every tenant go, fresh ones stay.
	const fresh = "5d0c5a6e-1111-4000-8000-000000000002"
	for _, p := range []struct{ tenant, id string }{{exportTenantA, exportID}, {exportTenantB, exportID}, {exportTenantA, fresh}} {
		if err := st.PutExportBlob(ctx, p.tenant, p.id, 1, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := owner.Exec(ctx, "UPDATE reporting.export_blobs SET created_at = now() - interval '2 hours' WHERE export_id = $1", exportID); err != nil {
		t.Fatal(err)
	}
	n, err := st.DeleteExportsBefore(ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 2 {
		t.Errorf("expired: %d deleted, %v", n, err)
	}
	if _, _, err := st.ExportBlob(ctx, exportTenantA, fresh, 1); err != nil {
		t.Errorf("fresh export: %v", err)
	}
}
