// Package allinone runs the whole platform in one process for `make run`:
// it finds or starts the dependencies (Postgres, Redis) and wires every
// service and the gateway to an embedded NATS server.
package allinone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
)

const (
	// localPostgresURL is the conventional local server, reached as the
	// superuser without a password (trust auth).
	localPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	// localRedisURL is the conventional local Redis.
	localRedisURL = "redis://127.0.0.1:6379/0"
	// privatePort is where the private cluster under dataDir listens; it is
	// not 5432 so it never collides with a system server.
	privatePort = 55432
	// databaseName is the database the platform uses on a server it found
	// or started itself.
	databaseName = "ledger"
	// clusterOSUser runs the private cluster when this process is root,
	// since PostgreSQL refuses to run as root.
	clusterOSUser = "postgres"
)

// EnsurePostgres returns the URL of a Postgres database for the platform
// and a stop function (never nil; a no-op unless a private cluster was
// started). In order:
//
//  1. DATABASE_URL when set; an error if it does not answer.
//  2. The local server at 127.0.0.1:5432 (user postgres, trust auth); the
//     database "ledger" is created on it if missing.
//  3. A private cluster under <dataDir>/postgres, made with the installed
//     PostgreSQL binaries on first use and reused afterwards, listening on
//     127.0.0.1:55432. stop shuts it down (pg_ctl stop -m fast).
func EnsurePostgres(ctx context.Context, dataDir string, log *slog.Logger) (string, func(), error) {
	if log == nil {
		log = slog.Default()
	}
	noop := func() {}
	if u := os.Getenv("DATABASE_URL"); u != "" {
		if err := pingPostgres(ctx, u); err != nil {
			return "", noop, fmt.Errorf("allinone: DATABASE_URL does not answer: %w", err)
		}
		log.Info("postgres: using DATABASE_URL", "url", redactURL(u))
		return u, noop, nil
	}
	err := pingPostgres(ctx, localPostgresURL)
	if err == nil {
		u, err := ensureDatabase(ctx, localPostgresURL, databaseName)
		if err != nil {
			return "", noop, fmt.Errorf("allinone: local postgres: %w", err)
		}
		log.Info("postgres: using the local server", "url", redactURL(u))
		return u, noop, nil
	}
	log.Info("postgres: no server at 127.0.0.1:5432, using a private cluster", "dir", filepath.Join(dataDir, "postgres"), "reason", err)
	return startPrivateCluster(ctx, filepath.Join(dataDir, "postgres"), privatePort, log)
}

// RedisURL returns REDIS_URL when set (an error if it does not answer),
// else the local Redis at 127.0.0.1:6379 when it answers, else "" with a nil
// error: the caller then uses an in-process rate limiter and warns.
func RedisURL(ctx context.Context) (string, error) {
	if u := os.Getenv("REDIS_URL"); u != "" {
		if err := pingRedis(ctx, u); err != nil {
			return "", fmt.Errorf("allinone: REDIS_URL does not answer: %w", err)
		}
		return u, nil
	}
	if pingRedis(ctx, localRedisURL) == nil {
		return localRedisURL, nil
	}
	return "", nil
}

func pingRedis(ctx context.Context, u string) error {
	opt, err := redis.ParseURL(u)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := redis.NewClient(opt)
	defer c.Close()
	return c.Ping(ctx).Err()
}

func pingPostgres(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	return c.Ping(ctx)
}

// ensureDatabase creates database name on the server of adminURL unless it
// exists and returns adminURL pointed at it.
func ensureDatabase(ctx context.Context, adminURL, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look up database %s: %w", name, err)
	}
	if !exists {
		_, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		var pe *pgconn.PgError
		if err != nil && !(errors.As(err, &pe) && pe.Code == "42P04") { // duplicate_database: a concurrent start made it
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return withDatabase(adminURL, name)
}

func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}

// cluster is a private PostgreSQL cluster under root:
//
//	root/data     PGDATA
//	root/run      unix socket directory
//	root/log      server log (postgres.log)
type cluster struct {
	root   string
	port   int
	bindir string
	cred   *syscall.Credential // set when running as root
	log    *slog.Logger
}

func (c *cluster) dataDir() string { return filepath.Join(c.root, "data") }
func (c *cluster) runDir() string  { return filepath.Join(c.root, "run") }
func (c *cluster) logFile() string { return filepath.Join(c.root, "log", "postgres.log") }

func (c *cluster) adminURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// startPrivateCluster makes (first time) and starts (unless running) the
// cluster under root on port, creates the database "ledger" and returns its
// URL and a stop function.
func startPrivateCluster(ctx context.Context, root string, port int, log *slog.Logger) (string, func(), error) {
	noop := func() {}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", noop, err
	}
	bindir, err := findPostgresBinaries()
	if err != nil {
		return "", noop, err
	}
	c := &cluster{root: root, port: port, bindir: bindir, log: log}
	for _, d := range []string{c.root, c.runDir(), filepath.Dir(c.logFile())} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", noop, fmt.Errorf("allinone: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		if err := c.dropRoot(); err != nil {
			return "", noop, err
		}
	}

	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx); err != nil {
			return "", noop, err
		}
	} else if err != nil {
		return "", noop, fmt.Errorf("allinone: %w", err)
	} else {
		log.Info("postgres: reusing private cluster", "dir", c.dataDir())
	}

	if c.running(ctx) {
		log.Info("postgres: private cluster already running", "port", c.port)
	} else if err := c.start(ctx); err != nil {
		return "", noop, err
	}
	stop := func() { c.stop() }

	if err := pingPostgres(ctx, c.adminURL()); err != nil {
		stop()
		return "", noop, fmt.Errorf("allinone: private cluster on port %d does not answer (another server on that port, or a cluster from another directory?): %w", c.port, err)
	}
	u, err := ensureDatabase(ctx, c.adminURL(), databaseName)
	if err != nil {
		stop()
		return "", noop, fmt.Errorf("allinone: private cluster: %w", err)
	}
	log.Info("postgres: private cluster ready", "url", u)
	return u, stop, nil
}

// findPostgresBinaries returns a directory holding initdb, pg_ctl and
// postgres: $POSTGRES_BINDIR, `pg_config --bindir`, the newest
// /usr/lib/postgresql/*/bin (Debian, Ubuntu), /usr/pgsql-*/bin (RHEL),
// /usr/local/pgsql/bin, or the directory of initdb on PATH.
func findPostgresBinaries() (string, error) {
	var candidates []string
	if d := os.Getenv("POSTGRES_BINDIR"); d != "" {
		candidates = append(candidates, d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"} {
		matches, _ := filepath.Glob(pattern)
		sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
		candidates = append(candidates, matches...)
	}
	candidates = append(candidates, "/usr/local/pgsql/bin")
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, d := range candidates {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("allinone: no Postgres answers and no PostgreSQL server binaries (initdb, pg_ctl, postgres) were found; " +
		"set DATABASE_URL, start a server on 127.0.0.1:5432, install PostgreSQL or set POSTGRES_BINDIR")
}

// versionOf extracts the major version from a path like
// /usr/lib/postgresql/16/bin or /usr/pgsql-16/bin.
func versionOf(p string) int {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '-' }) {
		if n, err := strconv.Atoi(part); err == nil {
			return n
		}
	}
	return 0
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// dropRoot prepares running the cluster as the OS user "postgres" (created
// if missing): the cluster directory is handed to that user, and every
// directory above it must be searchable by it.
func (c *cluster) dropRoot() error {
	u, err := user.Lookup(clusterOSUser)
	if err != nil {
		c.log.Info("postgres: creating OS user to run the private cluster (PostgreSQL refuses to run as root)", "user", clusterOSUser)
		out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", clusterOSUser).CombinedOutput()
		if cerr != nil {
			return fmt.Errorf("allinone: running as root and cannot create OS user %q for Postgres: %v: %s", clusterOSUser, cerr, bytes.TrimSpace(out))
		}
		if u, err = user.Lookup(clusterOSUser); err != nil {
			return fmt.Errorf("allinone: %w", err)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return fmt.Errorf("allinone: uid of %s: %w", clusterOSUser, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return fmt.Errorf("allinone: gid of %s: %w", clusterOSUser, err)
	}
	c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}

	err = filepath.WalkDir(c.root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(uid), int(gid))
	})
	if err != nil {
		return fmt.Errorf("allinone: hand %s to user %s: %w", c.root, clusterOSUser, err)
	}
	// The server needs to reach its directory: every ancestor must be
	// searchable by that user. The data directory itself (the parent of
	// root) is ours, so open it for search; anything above is reported.
	if parent := filepath.Dir(c.root); parent != c.root {
		if fi, err := os.Stat(parent); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Geteuid() {
				c.log.Info("postgres: making the data directory searchable for the cluster user", "dir", parent)
				if err := os.Chmod(parent, fi.Mode().Perm()|0o011); err != nil {
					return fmt.Errorf("allinone: %w", err)
				}
			}
		}
	}
	for d := filepath.Dir(c.root); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("allinone: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		searchable := fi.Mode().Perm()&0o001 != 0 ||
			(ok && st.Uid == uint32(uid) && fi.Mode().Perm()&0o100 != 0) ||
			(ok && st.Gid == uint32(gid) && fi.Mode().Perm()&0o010 != 0)
		if !searchable {
			return fmt.Errorf("allinone: running as root, the private cluster runs as OS user %q, which cannot enter %s (mode %v); "+
				"chmod o+x it, choose another data directory, or set DATABASE_URL", clusterOSUser, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// command builds a command running a PostgreSQL binary as the cluster's OS
// user, in its own process group so a Ctrl-C to `make run` does not reach
// the server before the platform has shut down.
func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bindir, name), args...)
	cmd.Dir = c.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	env := []string{"LC_ALL=C", "LANG=C", "PATH=" + os.Getenv("PATH")}
	if c.cred != nil {
		env = append(env, "HOME="+c.root, "USER="+clusterOSUser)
	} else {
		env = append(env, "HOME="+os.Getenv("HOME"))
	}
	cmd.Env = env
	return cmd
}

func (c *cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := c.command(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("allinone: %s %s: %v\n%s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func (c *cluster) initdb(ctx context.Context) error {
	c.log.Info("postgres: creating private cluster", "dir", c.dataDir(), "bin", c.bindir)
	// initdb refuses a non-empty directory: remove a half-made one.
	if err := os.RemoveAll(c.dataDir()); err != nil {
		return fmt.Errorf("allinone: %w", err)
	}
	err := c.run(ctx, "initdb",
		"-D", c.dataDir(),
		"-U", "postgres",
		"--auth=trust",
		"-E", "UTF8",
		"--no-locale",
	)
	if err != nil {
		_ = os.RemoveAll(c.dataDir())
		return err
	}
	return nil
}

// running reports whether the cluster's server is up (pg_ctl status 0).
func (c *cluster) running(ctx context.Context) bool {
	return c.command(ctx, "pg_ctl", "status", "-D", c.dataDir()).Run() == nil
}

func (c *cluster) start(ctx context.Context) error {
	c.log.Info("postgres: starting private cluster", "port", c.port)
	// pg_ctl hands -o to a shell. A unix socket path is limited to about
	// 107 bytes; with a deep data directory the server goes TCP-only.
	sockets := shellQuote(c.runDir())
	if len(c.runDir())+len("/.s.PGSQL.")+len(strconv.Itoa(c.port))+len(".lock") > 100 {
		sockets = "''"
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", c.port, sockets)
	// -l sends the server's output to a file, so it does not hold this
	// process's pipes open after pg_ctl returns.
	err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-l", c.logFile(), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("%w\n--- %s (tail) ---\n%s", err, c.logFile(), tail(c.logFile(), 20))
	}
	return nil
}

func (c *cluster) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !c.running(ctx) {
		return
	}
	c.log.Info("postgres: stopping private cluster")
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "stop"); err != nil {
		c.log.Warn("postgres: stop private cluster", "err", err)
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
