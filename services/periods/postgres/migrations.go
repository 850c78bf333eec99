package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the periods schema: its own tables, run as periods_svc,
// with the shared outbox, idempotency keys and handled events.
var Migrations = migrate.Set{Schema: Schema, Role: "periods_svc", FS: mustSub(migrationFiles, "migrations"),
	Outbox: true, Idempotency: true, Inbox: true}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // only if the embed directive and dir disagree
	}
	return sub
}
