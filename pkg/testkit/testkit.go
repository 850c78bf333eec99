// Package testkit gives tests real dependencies: a fresh Postgres database
// cloned from a migrated template, an embedded NATS server with JetStream,
// and Redis. It uses TEST_DATABASE_URL / REDIS_URL or the local servers and
// falls back to Docker (dockertest) where an engine runs. A missing
// dependency fails the test; it never skips.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ory/dockertest/v3"
	"github.com/redis/go-redis/v9"

	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsembed"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// ClosedAddr is a local TCP address (127.0.0.1:port) nothing listens on
// right now.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Count runs a count query on pool and fails the test if it cannot.
func Count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// RandomID returns a short random hex string for names.
func RandomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var (
	pgOnce    sync.Once
	pgBaseURL string
	pgErr     error
)

// baseURL finds a Postgres server to use: TEST_DATABASE_URL, the local
// server, or a container when Docker is available.
func baseURL() (string, error) {
	pgOnce.Do(func() {
		candidates := []string{os.Getenv("TEST_DATABASE_URL"), os.Getenv("DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"}
		for _, u := range candidates {
			if u != "" && ping(u) == nil {
				pgBaseURL = u
				return
			}
		}
		pgBaseURL, pgErr = dockerPostgres()
	})
	return pgBaseURL, pgErr
}

func ping(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return c.Ping(ctx)
}

func dockerPostgres() (string, error) {
	return docker("postgres", "16", []string{"POSTGRES_HOST_AUTH_METHOD=trust"}, "5432/tcp",
		func(port string) string { return "postgres://postgres@localhost:" + port + "/postgres?sslmode=disable" }, ping)
}

// docker runs a container of repo:tag for at most 30 minutes when a Docker
// engine answers, and returns the URL of its port once ready accepts it.
func docker(repo, tag string, env []string, port string, url func(port string) string, ready func(url string) error) (string, error) {
	pool, err := dockertest.NewPool("")
	if err == nil {
		err = pool.Client.Ping()
	}
	if err != nil {
		return "", fmt.Errorf("no %s: set its URL, start the local server, or run a Docker engine (%v)", repo, err)
	}
	res, err := pool.Run(repo, tag, env)
	if err != nil {
		return "", err
	}
	_ = res.Expire(1800)
	u := url(res.GetPort(port))
	return u, pool.Retry(func() error { return ready(u) })
}

// withDB replaces the database name of url.
func withDB(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

// Postgres returns the URL of a new, empty-but-migrated database made from
// a template that is migrated once per set of migrations and shared by every
// test package. The database is dropped when the test ends.
func Postgres(t testing.TB, sets ...migrate.Set) string {
	t.Helper()
	base, err := baseURL()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	ctx := context.Background()
	tmpl, err := template(ctx, base, sets)
	if err != nil {
		t.Fatalf("testkit: template: %v", err)
	}
	name := "t_" + RandomID()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("testkit: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDB(base, name)
}

// template returns the name of a database holding every migration of sets,
// building it under an advisory lock if no test package has done so yet.
func template(ctx context.Context, base string, sets []migrate.Set) (string, error) {
	fp, err := migrate.Fingerprint(sets...)
	if err != nil {
		return "", err
	}
	name := "tmpl_" + fp
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", name); err != nil {
		return "", err
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", name)
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_build"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, withDB(base, building))
	if err != nil {
		return "", err
	}
	err = migrate.Up(ctx, pool, sets...)
	pool.Close()
	if err != nil {
		return "", err
	}
	// Renaming last means a half-built template is never used.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		return "", err
	}
	return name, nil
}

// Bus is an embedded NATS server with JetStream that admits the
// platform's users (natsauth.Table) with fresh keys, plus the test harness.
type Bus struct {
	URL string
	// NC is the harness's connection: it may publish and subscribe
	// anywhere (to play peers that do not exist yet) but signs nothing.
	NC   *nats.Conn
	Keys natsauth.Keys
	// Signers is PLATFORM_SIGNERS for Keys; Trust is it parsed.
	Signers string
	Trust   *natsauth.Trust
	// Server is the embedded server, for tests that take NATS away.
	Server  *server.Server
	harness []byte
}

// NewBus starts a Bus for the test.
func NewBus(t testing.TB) *Bus {
	t.Helper()
	keys, err := natsauth.Generate()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	harness, err := natsauth.NewKey("harness")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	b := &Bus{Keys: keys, Signers: keys.Signers()}
	if b.harness, err = harness.Seed(); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if b.Trust, err = natsauth.ParseTrust(b.Signers); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	s, err := natsembed.Start(t.TempDir(), "127.0.0.1", -1, append(natsembed.Users(keys), natsembed.User{PublicKey: harness.Public()}))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(s.Shutdown)
	b.URL, b.Server = s.ClientURL(), s
	if b.NC, err = harness.Connect(b.URL); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(b.NC.Close)
	return b
}

// Key returns the key of name: its own for a user of natsauth.Table, the
// harness's (which may do anything) under name for a service only a test
// declares.
func (b *Bus) Key(t testing.TB, name string) *natsauth.Key {
	t.Helper()
	if k := b.Keys[name]; k != nil {
		return k
	}
	k, err := natsauth.ParseKey(name, b.harness)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return k
}

// Connect opens a connection as name (see Key), closed when the test ends.
func (b *Bus) Connect(t testing.TB, name string) *nats.Conn {
	t.Helper()
	nc, err := b.Key(t, name).Connect(b.URL)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Client is a request client on the harness's connection that signs as
// name: "gateway" sends the caller's claims as the gateway does.
func (b *Bus) Client(t testing.TB, name string) *natsx.Client {
	return &natsx.Client{NC: b.NC, Signer: b.Key(t, name), Timeout: 30 * time.Second}
}

// Env is the NATS part of the environment of a process called name.
func (b *Bus) Env(t testing.TB, name string) map[string]string {
	t.Helper()
	seed, err := b.Key(t, name).Seed()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return map[string]string{"NATS_URL": b.URL, "NATS_NKEY_SEED": string(seed), "PLATFORM_SIGNERS": b.Signers}
}

// NATS starts a Bus and returns its client URL and the harness's
// connection.
func NATS(t testing.TB) (string, *nats.Conn) {
	t.Helper()
	b := NewBus(t)
	return b.URL, b.NC
}

var (
	redisOnce sync.Once
	redisURL  string
	redisErr  error
)

// Redis returns a client and a key prefix private to the test.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	redisOnce.Do(func() {
		for _, u := range []string{os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0"} {
			if u == "" {
				continue
			}
			opt, err := redis.ParseURL(u)
			if err != nil {
				continue
			}
			c := redis.NewClient(opt)
			err = c.Ping(context.Background()).Err()
			c.Close()
			if err == nil {
				redisURL = u
				return
			}
		}
		redisURL, redisErr = dockerRedis()
	})
	if redisErr != nil {
		t.Fatalf("testkit: %v", redisErr)
	}
	opt, _ := redis.ParseURL(redisURL)
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c, "test:" + RandomID() + ":"
}

func dockerRedis() (string, error) {
	return docker("redis", "7", nil, "6379/tcp", func(port string) string { return "redis://localhost:" + port + "/0" },
		func(u string) error {
			opt, _ := redis.ParseURL(u)
			c := redis.NewClient(opt)
			defer c.Close()
			return c.Ping(context.Background()).Err()
		})
}
