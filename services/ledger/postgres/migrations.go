// Package postgres stores the ledger in its own schema: accounts, tax codes,
// documents, journal intents and events with their hash chain, period
// locks and the review queue; the outbox and idempotency keys are the
// shared tables.
package postgres

import (
	"embed"
	"io/fs"

	"github.com/ledgerplatform/ledger/pkg/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations of the ledger schema.
var Migrations = migrate.Set{Schema: schema, Role: "ledger_svc", FS: mustSub(migrationFiles, "migrations"), Outbox: true, Idempotency: true}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
