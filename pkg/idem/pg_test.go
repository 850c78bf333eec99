package idem_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// The table comes from the shared migration every service schema uses.
var testSet = migrate.Set{Schema: "idemtest", Role: "idemtest_svc", Idempotency: true}

func TestPG(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testkit.Postgres(t, testSet))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := idem.PG{Pool: pool, Schema: "idemtest"}
	a, b := uuid.NewString(), uuid.NewString()
	if rec, err := s.Lookup(ctx, a, "key:1", "k"); err != nil || rec != nil {
		t.Fatalf("empty lookup: %v %v", rec, err)
	}
	want := idem.Record{Hash: "h", Status: 201, Body: []byte(`{"z":1,"a":2}`)}
	if err := s.Save(ctx, a, "key:1", "k", want); err != nil {
		t.Fatal(err)
	}
	// A second save keeps the first answer.
	if err := s.Save(ctx, a, "key:1", "k", idem.Record{Hash: "other", Status: 200, Body: []byte(`{}`)}); err != nil {
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
