// Package migrate applies a service's embedded SQL migrations to its own
// schema. Files are named NNNN_description.sql and applied in order, each in
// its own transaction, under an advisory lock so replicas can start together.
package migrate

import (
	"context"
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
	FS     fs.FS  // holds *.sql at its root
}

type file struct {
	version int
	name    string
	sql     string
}

func (s Set) files() ([]file, error) {
	entries, err := fs.ReadDir(s.FS, ".")
	if err != nil {
		return nil, err
	}
	var out []file
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and '_'", e.Name())
		}
		b, err := fs.ReadFile(s.FS, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, file{v, e.Name(), string(b)})
	}
	slices.SortFunc(out, func(a, b file) int { return a.version - b.version })
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
