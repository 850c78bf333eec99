// Package migrate applies a service's embedded SQL migrations to its own
// schema. Files are named NNNN_description.sql and applied in order, each in
// its own transaction, under an advisory lock so replicas can start together.
//
// What every service schema holds the same way is written once, in
// shared/, and applied before the service's own files (recorded with
// negative versions): the service role and the row-level-security function
// enable_tenant_rls, and on request the outbox, idempotency_keys and
// processed_events tables. Shared files read the schema and role from the
// settings migrate.schema and migrate.role.
package migrate

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
)

// Set is one service's migrations.
type Set struct {
	Schema string // e.g. "identity"
	// Role is the database role the service runs as; the shared base
	// creates it. Empty for a set without the shared files.
	Role string
	// FS holds the service's NNNN_*.sql files in Dir ("" for its root):
	// with //go:embed migrations/*.sql, FS is that embed.FS and Dir is
	// "migrations".
	FS  fs.FS
	Dir string
	// Shared tables the schema holds, from shared/.
	Outbox, Idempotency, Inbox bool
}

//go:embed shared/*.sql
var sharedFS embed.FS

// shared returns the shared files the set uses, with versions from -99 up,
// so they sort before the service's own in the order of their names.
func (s Set) shared() ([]file, error) {
	if s.Role == "" {
		return nil, nil
	}
	use := map[string]bool{"1_base.sql": true, "2_outbox.sql": s.Outbox, "3_idempotency.sql": s.Idempotency, "4_inbox.sql": s.Inbox, "5_idempotency_claim.sql": s.Idempotency}
	entries, err := fs.ReadDir(sharedFS, "shared")
	if err != nil {
		return nil, err
	}
	var out []file
	for _, e := range entries {
		if !use[e.Name()] {
			continue
		}
		n, _, _ := strings.Cut(e.Name(), "_")
		v, _ := strconv.Atoi(n)
		b, err := fs.ReadFile(sharedFS, "shared/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, file{v - 100, "shared/" + e.Name(), string(b)})
	}
	return out, nil
}

type file struct {
	version int
	name    string
	sql     string
}

func (s Set) files() ([]file, error) {
	out, err := s.shared()
	if err != nil || s.FS == nil {
		return out, err
	}
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(s.FS, dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and '_'", e.Name())
		}
		b, err := fs.ReadFile(s.FS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, file{v, e.Name(), string(b)})
	}
	slices.SortFunc(out, func(a, b file) int { return a.version - b.version })
	// A version is applied once, so a second file with it would be skipped
	// silently; two branches adding the same number must be caught here.
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}

// Up applies the pending migrations of every set in order.
func Up(ctx context.Context, pool *pgxpool.Pool, sets ...Set) error {
	for _, s := range sets {
		if err := up(ctx, pool, s); err != nil {
			return fmt.Errorf("migrate %s: %w", s.Schema, err)
		}
	}
	return nil
}

func up(ctx context.Context, pool *pgxpool.Pool, s Set) error {
	files, err := s.files()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	h := fnv.New64a()
	h.Write([]byte("migrate:" + s.Schema))
	lock := int64(h.Sum64())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lock)

	schema := pgx.Identifier{s.Schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema+
		"; CREATE TABLE IF NOT EXISTS "+schema+".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return err
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM "+schema+".schema_migrations")
	if err != nil {
		return err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return err
	}
	for _, v := range vs {
		applied[v] = true
	}
	for _, f := range files {
		if applied[f.version] {
			continue
		}
		err := db.WithTx(ctx, conn, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+schema+", public"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "SELECT set_config('migrate.schema', $1, true), set_config('migrate.role', $2, true)", s.Schema, s.Role); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, f.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+schema+".schema_migrations (version, name) VALUES ($1, $2)", f.version, f.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// Fingerprint hashes the content of every set, so a test template database
// built from one version of the migrations is never reused for another.
func Fingerprint(sets ...Set) (string, error) {
	h := fnv.New64a()
	for _, s := range sets {
		files, err := s.files()
		if err != nil {
			return "", err
		}
		h.Write([]byte(s.Schema))
		for _, f := range files {
			h.Write([]byte(f.name))
			h.Write([]byte(f.sql))
		}
	}
	return strconv.FormatUint(h.Sum64(), 36), nil
}

// ServicePool applies sets as the schema owner and returns a pool of the
// same database that runs as role, so at run time a service has only the
// privileges its migrations granted. owner may be nil; then a short-lived
// owner pool is opened from url.
func ServicePool(ctx context.Context, owner *pgxpool.Pool, url, role string, maxConns int32, sets ...Set) (*pgxpool.Pool, error) {
	if owner == nil {
		p, err := db.Open(ctx, url, "", 2)
		if err != nil {
			return nil, fmt.Errorf("migrate.ServicePool: %w", err)
		}
		defer p.Close()
		owner = p
	} else {
		url = owner.Config().ConnString()
	}
	if err := Up(ctx, owner, sets...); err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, url, role, maxConns)
	if err != nil {
		return nil, fmt.Errorf("migrate.ServicePool %s: %w", role, err)
	}
	return pool, nil
}
