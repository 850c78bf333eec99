package allinone

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgFreePort returns a TCP port that nothing listens on right now.
func pgFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestPrivateCluster makes a real cluster with the installed PostgreSQL
// binaries, then checks that later calls reuse it, running or stopped. It
// fails (never skips) when the binaries are missing.
func TestPrivateCluster(t *testing.T) {
	// Not t.TempDir(): the cluster's files belong to the OS user postgres
	// when the test runs as root, and the directory is handed over.
	dir, err := os.MkdirTemp("", "allinone-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	root := filepath.Join(dir, "postgres")
	port := pgFreePort(t)
	log := slog.New(slog.NewTextHandler(pgTestWriter{t}, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	u1, stop1, err := startPrivateCluster(ctx, root, port, log)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	t.Cleanup(stop1) // runs last; harmless when already stopped
	t.Logf("cluster made and started in %v: %s", time.Since(start), u1)

	c := pgConnect(t, ctx, u1)
	var db string
	if err := c.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if db != "ledger" {
		t.Fatalf("connected to %q, want ledger", db)
	}
	var enc string
	if err := c.QueryRow(ctx, "SHOW server_encoding").Scan(&enc); err != nil || enc != "UTF8" {
		t.Fatalf("server_encoding = %q (%v), want UTF8", enc, err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE marker (v text); INSERT INTO marker VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	// Second call while the server runs: same cluster, nothing re-made.
	u2, stop2, err := startPrivateCluster(ctx, root, port, log)
	if err != nil {
		t.Fatalf("second start (running): %v", err)
	}
	if u2 != u1 {
		t.Fatalf("second URL %q, want %q", u2, u1)
	}
	pgAssertMarker(t, ctx, u2)

	// Stop, then a third call starts the existing cluster again.
	stop2()
	if err := pingPostgres(ctx, u1); err == nil {
		t.Fatal("cluster still answers after stop")
	}
	pgVersion := filepath.Join(root, "data", "PG_VERSION")
	before, err := os.Stat(pgVersion)
	if err != nil {
		t.Fatal(err)
	}
	u3, stop3, err := startPrivateCluster(ctx, root, port, log)
	if err != nil {
		t.Fatalf("third start (stopped): %v", err)
	}
	defer stop3()
	pgAssertMarker(t, ctx, u3)
	after, err := os.Stat(pgVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("PG_VERSION rewritten: the cluster was made again instead of reused")
	}
}

func pgConnect(t *testing.T, ctx context.Context, u string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	return c
}

func pgAssertMarker(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	c := pgConnect(t, ctx, u)
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, "SELECT v FROM marker").Scan(&v); err != nil || v != "kept" {
		t.Fatalf("marker = %q (%v): the cluster was not reused", v, err)
	}
}

// TestConfiguredURLsMustAnswer: a DATABASE_URL or REDIS_URL that is set
// but does not answer is an error, never silently replaced.
func TestConfiguredURLsMustAnswer(t *testing.T) {
	ctx := context.Background()
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2")
	if _, stop, err := EnsurePostgres(ctx, t.TempDir(), slog.New(slog.NewTextHandler(pgTestWriter{t}, nil))); err == nil {
		stop()
		t.Fatal("EnsurePostgres accepted a DATABASE_URL that does not answer")
	}
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1/0")
	if u, err := RedisURL(ctx); err == nil {
		t.Fatalf("RedisURL accepted a REDIS_URL that does not answer: %q", u)
	}
}

func TestVersionOf(t *testing.T) {
	for p, want := range map[string]int{
		"/usr/lib/postgresql/16/bin": 16,
		"/usr/lib/postgresql/9/bin":  9,
		"/usr/pgsql-15/bin":          15,
		"/usr/local/pgsql/bin":       0,
	} {
		if got := versionOf(p); got != want {
			t.Errorf("versionOf(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	if got := shellQuote("/a b/it's"); got != `'/a b/it'\''s'` {
		t.Fatalf("shellQuote = %s", got)
	}
}

type pgTestWriter struct{ t *testing.T }

func (w pgTestWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
