package allinone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/ledgerplatform/ledger/deploy/allinone"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	identitypg "github.com/ledgerplatform/ledger/services/identity/postgres"
	ledgerpg "github.com/ledgerplatform/ledger/services/ledger/postgres"
	periodspg "github.com/ledgerplatform/ledger/services/periods/postgres"
	reportingpg "github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// platform is the whole system started in-process against real Postgres,
// NATS (embedded) and Redis, driven over real HTTP.
type platform struct {
	t       testing.TB
	base    string
	metrics string // the gateway's metrics listener, http://host:port
	key     string // bootstrap admin key of the operator tenant
	owner   *pgxpool.Pool
	nc      *nats.Conn // the harness's connection to the platform's NATS, for commands of services not built yet
	bus     *testkit.Bus
	// gateway and redis are what the platform's gateway runs with, for
	// replicas beside it (replica).
	gateway gatewayd.Config
	redis   *redis.Client
	dbURL   string // the database owner's URL, for services run as processes
}

type env map[string]string

func startPlatform(t testing.TB, overrides env) *platform {
	t.Helper()
	return startPlatformWithout(t, overrides)
}

// startPlatformWithout is startPlatform without the services named, which
// a test runs as processes of their own (the crash tests).
func startPlatformWithout(t testing.TB, overrides env, without ...string) *platform {
	t.Helper()
	dbURL := testkit.Postgres(t, identitypg.Migrations, ledgerpg.Migrations, periodspg.Migrations, reportingpg.Migrations)
	bus := testkit.NewBus(t)
	rdb, prefix := testkit.Redis(t)
	key := "bootstrap-" + testkit.RandomID() + testkit.RandomID() + testkit.RandomID()
	vars := env{
		"BOOTSTRAP_API_KEY":    key,
		"GATEWAY_ADDR":         "127.0.0.1:0",
		"METRICS_ADDR":         "127.0.0.1:0",
		"REDIS_KEY_PREFIX":     prefix,
		"CREDENTIAL_CACHE_TTL": "30s",       // revocation must work through events, not expiry
		"DATA_DIR":             t.TempDir(), // the ledger's checkpoint key
	}
	cfg := platformConfig(t, vars, overrides)
	cfg.Services = slices.DeleteFunc(cfg.Services, func(s allinone.Service) bool { return slices.Contains(without, s.Name) })
	addr, metricsAddr := make(chan string, 1), make(chan string, 1)
	done := runUntilCleanup(t, cfg, allinone.Deps{DatabaseURL: dbURL, NATSURL: bus.URL, Keys: bus.Keys, Deps: gatewayd.Deps{Redis: rdb, Log: testLogger(t),
		Ready: func(a string) { addr <- a }, MetricsReady: func(a string) { metricsAddr <- a }}}, 20*time.Second)
	var p platform
	select {
	case a := <-addr:
		p = platform{t: t, base: "http://" + a, metrics: "http://" + <-metricsAddr, key: key, nc: bus.NC, bus: bus, gateway: cfg.Gateway, redis: rdb, dbURL: dbURL}
	case err := <-done:
		t.Fatalf("platform failed to start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("platform not ready within 60s")
	}
	owner, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	p.owner = owner
	return &p
}

// platformConfig is the platform's configuration from vars with overrides
// laid over them.
func platformConfig(t testing.TB, vars, overrides env) allinone.Config {
	t.Helper()
	// Tests run platforms side by side on one Postgres (max_connections
	// 100 by default): each service's pool is kept small unless a test
	// asks for more.
	for _, name := range []string{"IDENTITY", "LEDGER", "PERIODS", "REPORTING", "BANK", "RECEIVABLES", "PAYABLES"} {
		if _, ok := vars[name+"_DB_MAX_CONNS"]; !ok {
			vars[name+"_DB_MAX_CONNS"] = "8"
		}
	}
	maps.Copy(vars, overrides)
	cfg, err := allinone.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runUntilCleanup runs the platform until the test's cleanup, which wants
// it stopped without error within stopWithin; the returned channel has
// Run's error.
func runUntilCleanup(t testing.TB, cfg allinone.Config, deps allinone.Deps, stopWithin time.Duration) <-chan error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- allinone.Run(ctx, cfg, deps) }()
	t.Cleanup(func() {
		cancel()
		if err, stopped := receiveWithin(done, stopWithin); !stopped {
			t.Errorf("platform did not stop within %v", stopWithin)
		} else if err != nil {
			t.Errorf("platform stopped with error: %v", err)
		}
	})
	return done
}

// receiveWithin waits at most d for a value from ch.
func receiveWithin[T any](ch <-chan T, d time.Duration) (v T, ok bool) {
	select {
	case v = <-ch:
		return v, true
	case <-time.After(d):
		return v, false
	}
}

// resp is a decoded HTTP response.
type resp struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func (r resp) code() string { s, _ := r.Body["code"].(string); return s }

func (r resp) str(path ...string) string {
	var v any = r.Body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

func (r resp) list(field string) []map[string]any {
	items, _ := r.Body[field].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// call sends body (marshalled unless it is a string or []byte) with the
// bearer token when token is not empty.
func (p *platform) call(method, path, token string, body any, headers ...string) resp {
	p.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			p.t.Fatalf("%s %s: response is not JSON: %s", method, path, raw)
		}
	}
	return r
}

// must asserts the status and returns the response.
func (p *platform) must(status int, method, path, token string, body any, headers ...string) resp {
	p.t.Helper()
	r := p.call(method, path, token, body, headers...)
	if r.Status != status {
		p.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, status, r.Raw)
	}
	return r
}

// expectError asserts an error status and machine code with the full error shape.
func (p *platform) expectError(status int, code, method, path, token string, body any, headers ...string) resp {
	p.t.Helper()
	r := p.must(status, method, path, token, body, headers...)
	if r.code() != code {
		p.t.Fatalf("%s %s: code %q, want %q; body %s", method, path, r.code(), code, r.Raw)
	}
	if r.str("error") == "" || r.str("request_id") == "" || r.str("request_id") != r.Header.Get("X-Request-Id") {
		p.t.Fatalf("%s %s: error body lacks error/request_id: %s", method, path, r.Raw)
	}
	return r
}

// newKey creates an API key in the caller's tenant and returns raw key and id.
func (p *platform) newKey(token string, scopes ...string) (raw, id string) {
	p.t.Helper()
	r := p.must(201, "POST", "/v1/api-keys", token, map[string]any{"label": "test " + strings.Join(scopes, ","), "scopes": scopes})
	return r.str("raw_key"), r.str("id")
}

// newTenant creates a tenant through the operator and returns its admin key and id.
func (p *platform) newTenant(name string) (key, id string) {
	p.t.Helper()
	r := p.must(201, "POST", "/v1/admin/tenants", p.key, map[string]any{"company_name": name})
	return r.str("raw_key"), r.str("tenant", "id")
}

// eventually retries f until it returns nil or the deadline passes.
func eventually(t testing.TB, within time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %v", within, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

var _ = fmt.Sprint
