// Package postgres stores the reporting service's data in its own schema:
// the balance projection fed by the ledger's intent_posted events and what
// the exports keep while they are streamed.
package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations of the reporting schema.
var Migrations = migrate.Set{Schema: "reporting", FS: mustSub(migrationFiles, "migrations")}

// Role is the database role the service runs as; the migrations grant it
// what it needs and nothing more.
const Role = "reporting_svc"

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
