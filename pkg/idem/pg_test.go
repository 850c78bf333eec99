package idem

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

var testSet = migrate.Set{Schema: "idemtest", FS: fstest.MapFS{"0001_keys.sql": {Data: []byte(`
CREATE TABLE idempotency_keys (
    tenant_id uuid NOT NULL, scope text NOT NULL, key text NOT NULL, request_hash text NOT NULL,
    status int NOT NULL, response json NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, scope, key));`)}}}

func TestPG(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testkit.Postgres(t, testSet))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := PG{Pool: pool, Schema: "idemtest"}
	a, b := uuid.NewString(), uuid.NewString()
	if rec, err := s.Lookup(ctx, a, "key:1", "k"); err != nil || rec != nil {
		t.Fatalf("empty lookup: %v %v", rec, err)
	}
	want := Record{Hash: "h", Status: 201, Body: []byte(`{"z":1,"a":2}`)}
	if err := s.Save(ctx, a, "key:1", "k", want); err != nil {
		t.Fatal(err)
	}
	// A second save keeps the first answer.
	if err := s.Save(ctx, a, "key:1", "k", Record{Hash: "other", Status: 200, Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lookup(ctx, a, "key:1", "k")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Fatalf("record (-want +got):\n%s", diff)
	}
	if rec, _ := s.Lookup(ctx, b, "key:1", "k"); rec != nil {
		t.Fatal("another tenant sees the key")
	}
	if _, err := pool.Exec(ctx, "UPDATE idemtest.idempotency_keys SET created_at = now() - interval '31 days'"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, time.Now().Add(-30*24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
}
