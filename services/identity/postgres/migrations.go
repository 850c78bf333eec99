package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the identity schema's migrations, applied by an owner role;
// the service runs as Role and publishes its events through the shared
// outbox.
var Migrations = migrate.Set{Schema: Schema, Role: "identity_svc", FS: mustSub(migrationFiles, "migrations"), Outbox: true}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // only if the embed directive and dir disagree
	}
	return sub
}
