package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the periods schema's migrations, applied by an owner role.
var Migrations = migrate.Set{Schema: Schema, FS: mustSub(migrationFiles, "migrations")}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // only if the embed directive and dir disagree
	}
	return sub
}
