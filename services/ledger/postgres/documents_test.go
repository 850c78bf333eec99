package postgres_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

// drStore is a store on a fresh database, run as ledger_svc, with two
// seeded tenants.
type drStore struct {
	*postgres.Store
	pool, owner *pgxpool.Pool
	a, b        string
}

func newDRStore(t *testing.T) *drStore {
	t.Helper()
	pool, owner := ledgertest.DB(t, 4)
	ctx := context.Background()
	s := &drStore{Store: ledgertest.Store(pool), pool: pool, owner: owner, a: uuid.NewString(), b: uuid.NewString()}
	for _, tenant := range []string{s.a, s.b} {
		if err := s.EnsureTenant(ctx, tenant, []ledger.Account{{Number: "1800", Name: "Bank", Type: ledger.Asset}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// asRole runs q in a transaction as role with app.tenant_id set to tenant.
func (s *drStore) asRole(ctx context.Context, role, tenant, q string, args ...any) (pgx.Rows, func(), error) {
	tx, err := s.owner.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	done := func() { tx.Rollback(ctx) }
	if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+role); err != nil {
		done()
		return nil, nil, err
	}
	if err := db.SetTenant(ctx, tx, tenant); err != nil {
		done()
		return nil, nil, err
	}
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		done()
		return nil, nil, err
	}
	return rows, done, nil
}

// exec runs a statement as role and reports its error.
func (s *drStore) exec(ctx context.Context, role, tenant, q string) error {
	rows, done, err := s.asRole(ctx, role, tenant, q)
	if err != nil {
		return err
	}
	defer done()
	rows.Close()
	return rows.Err()
}

func drNewDoc(content []byte, name, mime string) ledger.Document {
	return ledger.Document{ID: uuid.NewString(), MimeType: mime, OriginalName: name, SizeBytes: int64(len(content)), SHA256: ledgertest.SHA(content)}
}

func TestPutDocument(t *testing.T) {
	t.Parallel()
	s := newDRStore(t)
	ctx := context.Background()
	content := []byte("%PDF-1.4 test")
	d := drNewDoc(content, "a.pdf", ledger.MimePDF)
	got, created, err := s.PutDocument(ctx, s.a, d, content, "key:1")
	if err != nil || !created {
		t.Fatalf("put: %v %v", created, err)
	}
	d.CreatedAt = got.CreatedAt
	if diff := cmp.Diff(d, got); diff != "" {
		t.Fatalf("stored (-want +got):\n%s", diff)
	}

	// Concurrent uploads of the same new bytes store it once.
	other := []byte("%PDF-1.4 concurrent")
	const n = 10
	ids := make([]string, n)
	createdCount := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got, created, err := s.PutDocument(ctx, s.a, drNewDoc(other, "c.pdf", ledger.MimePDF), other, "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[i] = got.ID
			if created {
				createdCount++
			}
		}(i)
	}
	wg.Wait()
	if createdCount != 1 {
		t.Fatalf("%d concurrent uploads created a document, want 1", createdCount)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent uploads got ids %v, want one", ids)
		}
	}

	// Tenant b stores its own copy and cannot read a's.
	theirs, created, err := s.PutDocument(ctx, s.b, drNewDoc(content, "b.pdf", ledger.MimePDF), content, "")
	if err != nil || !created || theirs.ID == d.ID {
		t.Fatalf("tenant b: %+v %v %v", theirs, created, err)
	}
	_, err = s.Document(ctx, s.b, d.ID)
	if !errs.Is(err, errs.NotFound) {
		t.Fatalf("b reads a's document: %v", err)
	}
	_, _, err = s.DocumentFile(ctx, s.b, d.ID)
	if !errs.Is(err, errs.NotFound) {
		t.Fatalf("b reads a's file: %v", err)
	}
	meta, file, err := s.DocumentFile(ctx, s.a, d.ID)
	if err != nil || !bytes.Equal(file, content) || meta != got {
		t.Fatalf("a's file: %+v %q %v", meta, file, err)
	}

	// Row-level security: without the tenant filter, b still sees only b.
	rows, done, err := s.asRole(ctx, "ledger_svc", s.b, "SELECT id::text FROM ledger.documents")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	done()
	if err != nil || len(seen) != 1 || seen[0] != theirs.ID {
		t.Fatalf("ledger_svc as b sees %v %v, want only %s", seen, err, theirs.ID)
	}

	// The database refuses what validation would: a wrong size or type.
	bad := drNewDoc([]byte("x"), "x.gif", "image/gif")
	if _, _, err := s.PutDocument(ctx, s.a, bad, []byte("x"), ""); err == nil {
		t.Fatal("gif stored")
	}
	bad = drNewDoc([]byte("xy"), "x.pdf", ledger.MimePDF)
	bad.SizeBytes = 1
	if _, _, err := s.PutDocument(ctx, s.a, bad, []byte("xy"), ""); err == nil {
		t.Fatal("wrong size stored")
	}
}

// TestDocumentsAppendOnly: the service role cannot change or remove
// documents, and the triggers refuse even the owner.
func TestDocumentsAppendOnly(t *testing.T) {
	t.Parallel()
	s := newDRStore(t)
	ctx := context.Background()
	content := []byte("%PDF-1.4 keep")
	if _, _, err := s.PutDocument(ctx, s.a, drNewDoc(content, "a.pdf", ledger.MimePDF), content, ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE ledger.documents SET original_name = 'x.pdf'",
		"UPDATE ledger.documents SET content = 'x', size_bytes = 1",
		"DELETE FROM ledger.documents",
		"TRUNCATE ledger.documents CASCADE",
	} {
		for _, role := range []string{"ledger_svc", "postgres"} {
			if err := s.exec(ctx, role, s.a, q); err == nil {
				t.Errorf("%s as %s succeeded", q, role)
			}
		}
	}
	var n int
	if err := s.owner.QueryRow(ctx, "SELECT count(*) FROM ledger.documents WHERE original_name = 'a.pdf' AND content = $1", content).Scan(&n); err != nil || n != 1 {
		t.Fatalf("document changed: %d %v", n, err)
	}
}
