// Package postgres stores the reporting service's data in its own schema:
// the balance projection fed by the ledger's intent_posted events, what the
// exports keep while they are streamed and the export jobs.
package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations of the reporting schema, run as role reporting_svc; the
// shared idempotency_keys table keeps the first answers of export job
// requests.
var Migrations = migrate.Set{Schema: "reporting", Role: "reporting_svc", FS: mustSub(migrationFiles, "migrations"), Idempotency: true}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
