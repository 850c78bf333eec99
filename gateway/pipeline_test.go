package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// respond stands in for a service on subject.
func respond(t *testing.T, nc *nats.Conn, subject string, reply func(*nats.Msg) *nats.Msg) {
	t.Helper()
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) { _ = m.RespondMsg(reply(m)) }); err != nil {
		t.Fatal(err)
	}
}

func serve(t *testing.T, g *Gateway, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewBufferString(body))
	r.Header.Set("Authorization", "Bearer k1-secret")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	return w
}

// TestSurfacesShareThePipeline: a REST call and the MCP tool for the same
// route render a service's internal error alike (without its text), and both
// are audited and timed under the route.
func TestSurfacesShareThePipeline(t *testing.T) {
	bus := testkit.NewBus(t)
	nc := bus.NC
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.SubjectCalls}})
	if err != nil {
		t.Fatal(err)
	}
	respond(t, nc, identityv1.SubjectVerify, func(*nats.Msg) *nats.Msg {
		b, _ := json.Marshal(auth.Claims{TenantID: "t1", KeyID: "k1", Scopes: []string{"journal:write"}})
		return &nats.Msg{Data: b}
	})
	respond(t, nc, ledgerv1.SubjectBookingsCreate, func(*nats.Msg) *nats.Msg {
		m := &nats.Msg{Header: nats.Header{}, Data: []byte(`{"error":"pq: relation ledger.secret does not exist","code":"INTERNAL"}`)}
		m.Header.Set(natsx.HdrErrorCode, errs.Internal)
		return m
	})
	g, err := New(Config{}, Deps{NC: nc, Signer: bus.Keys[natsauth.Gateway], Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}

	booking := `{"booking_date":"2025-03-14","description":"x","lines":[{"account_debit":"6815","account_credit":"1800","amount":1}]}`
	rest := serve(t, g, "/v1/bookings", booking)
	if rest.Code != http.StatusInternalServerError {
		t.Fatalf("REST: %d %s", rest.Code, rest.Body)
	}
	var restBody errs.Body
	_ = json.Unmarshal(rest.Body.Bytes(), &restBody)

	mcp := serve(t, g, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_booking","arguments":`+booking+`}}`)
	var rpc struct {
		Result struct {
			IsError           bool      `json:"isError"`
			StructuredContent errs.Body `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(mcp.Body.Bytes(), &rpc); err != nil || !rpc.Result.IsError {
		t.Fatalf("MCP: %d %s", mcp.Code, mcp.Body)
	}
	for surface, b := range map[string]errs.Body{"REST": restBody, "MCP": rpc.Result.StructuredContent} {
		if b.Error != "internal error" || b.Code != errs.Internal || b.RequestID == "" {
			t.Errorf("%s error body %+v, want the public rendering of INTERNAL", surface, b)
		}
	}
	if strings.Contains(rest.Body.String()+mcp.Body.String(), "secret") {
		t.Fatal("a service's internal message reached the client")
	}

	metrics := httptest.NewRecorder()
	g.Metrics().ServeHTTP(metrics, httptest.NewRequest("GET", "/metrics", nil))
	for _, s := range []string{"api", "mcp"} {
		series := `gateway_http_request_duration_seconds_count{method="POST",route="POST /v1/bookings",surface="` + s + `"} 1`
		if !strings.Contains(metrics.Body.String(), series) {
			t.Errorf("metrics lack %s", series)
		}
	}

	g.Close() // flushes the audit records
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]gatewayv1.Call{}
	for len(audited) < 2 {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("audit records: have %v: %v", audited, err)
		}
		var batch gatewayv1.CallBatch
		if err := json.Unmarshal(msg.Data(), &batch); err != nil {
			t.Fatal(err)
		}
		for _, c := range batch.Calls {
			audited[c.Surface] = c
		}
	}
	for s, c := range audited {
		if c.Route != "POST /v1/bookings" || c.Status != 500 || c.ErrorCode != errs.Internal || c.KeyID != "k1" || c.Scope != "journal:write" {
			t.Errorf("%s call audited as %+v", s, c)
		}
	}
}

// fakeIdentity answers identity's verify subject from a table the test
// changes, and counts the verifications. It publishes no revocation events,
// so only the revocation epochs can tell gateways of a revocation.
type fakeIdentity struct {
	mu       sync.Mutex
	valid    map[string]auth.Claims
	verifies atomic.Int64
}

func newFakeIdentity(t *testing.T, nc *nats.Conn, valid map[string]auth.Claims) *fakeIdentity {
	f := &fakeIdentity{valid: valid}
	respond(t, nc, identityv1.SubjectVerify, func(m *nats.Msg) *nats.Msg {
		f.verifies.Add(1)
		var req identityv1.VerifyRequest
		_ = json.Unmarshal(m.Data, &req)
		f.mu.Lock()
		c, ok := f.valid[req.Token]
		f.mu.Unlock()
		if !ok {
			return errorMsg(errs.Unauthenticated, "invalid credential")
		}
		b, _ := json.Marshal(c)
		return &nats.Msg{Data: b}
	})
	return f
}

func (f *fakeIdentity) revoke(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.valid, token)
}

// newTestGateway is a gateway with its own NATS connection on bus, which
// must hold the calls stream.
func newTestGateway(t *testing.T, bus *testkit.Bus, cfg Config, l Limiter) *Gateway {
	t.Helper()
	g, err := New(cfg, Deps{NC: bus.Connect(t, natsauth.Gateway), Signer: bus.Keys[natsauth.Gateway], Limiter: l, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func newTestBus(t *testing.T) *testkit.Bus {
	t.Helper()
	bus := testkit.NewBus(t)
	js, err := jetstream.New(bus.NC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.CallsFilter}}); err != nil {
		t.Fatal(err)
	}
	return bus
}

func do(t *testing.T, g *Gateway, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	return w
}

// TestRevocationHoldsOnEveryReplica: two replicas on one Redis cache a
// credential; once a revoking call has answered through one, both refuse
// the credential with no wait, although identity sends no event. A call
// identity refuses changes no epoch, and a public revoking call (a password
// reset) reaches every tenant's credentials.
func TestRevocationHoldsOnEveryReplica(t *testing.T) {
	bus := newTestBus(t)
	rdb, prefix := testkit.Redis(t)
	session := auth.Claims{TenantID: "t1", UserID: "u1", SessionID: "s1", Scopes: []string{"config:write"}}
	id := newFakeIdentity(t, bus.NC, map[string]auth.Claims{})
	var refuse atomic.Bool
	for _, subject := range []string{identityv1.SubjectLogout, identityv1.SubjectKeysDelete, identityv1.SubjectSetupPassword} {
		respond(t, bus.NC, subject, func(*nats.Msg) *nats.Msg {
			if refuse.Load() {
				return errorMsg(errs.NotFound, "no such key")
			}
			return &nats.Msg{Data: []byte(`{"ok":true}`)}
		})
	}
	respond(t, bus.NC, identityv1.SubjectMe, func(*nats.Msg) *nats.Msg { return &nats.Msg{Data: []byte(`{}`)} })
	cfg := Config{CredentialTTL: time.Hour, AuthFailureLimitPerMinute: 1000}
	replicas := []*Gateway{newTestGateway(t, bus, cfg, NewRedisLimiter(rdb, prefix)), newTestGateway(t, bus, cfg, NewRedisLimiter(rdb, prefix))}
	// warm has both replicas trust token from their caches.
	warm := func(token string) {
		t.Helper()
		for i, g := range replicas {
			for range 2 {
				if w := do(t, g, "GET", "/v1/auth/me", token, ""); w.Code != 200 {
					t.Fatalf("replica %d: %d %s", i, w.Code, w.Body)
				}
			}
		}
		before := id.verifies.Load()
		for _, g := range replicas {
			do(t, g, "GET", "/v1/auth/me", token, "")
		}
		if n := id.verifies.Load() - before; n != 0 {
			t.Fatalf("a warm cache asked identity %d times", n)
		}
	}
	refused := func(token string, via int) {
		t.Helper()
		for _, i := range []int{1 - via, via} {
			if w := do(t, replicas[i], "GET", "/v1/auth/me", token, ""); w.Code != 401 {
				t.Fatalf("revoked through replica %d: replica %d answered %d %s", via, i, w.Code, w.Body)
			}
		}
	}

	for round := range 10 {
		token := fmt.Sprintf("session-%d", round)
		id.mu.Lock()
		id.valid[token] = session
		id.mu.Unlock()
		warm(token)
		via := round % 2
		id.revoke(token) // identity's own check is synchronous
		if w := do(t, replicas[via], "POST", "/v1/auth/logout", token, ""); w.Code != 200 {
			t.Fatalf("logout: %d %s", w.Code, w.Body)
		}
		refused(token, via)
	}

	// Identity refusing the revocation changes nothing: the caches stay.
	id.mu.Lock()
	id.valid["admin"] = session
	id.valid["other-tenant"] = auth.Claims{TenantID: "t2", KeyID: "k2"}
	id.mu.Unlock()
	warm("admin")
	refuse.Store(true)
	if w := do(t, replicas[0], "DELETE", "/v1/api-keys/k9", "admin", ""); w.Code != 404 {
		t.Fatalf("refused key revocation: %d %s", w.Code, w.Body)
	}
	refuse.Store(false)
	before := id.verifies.Load()
	do(t, replicas[1], "GET", "/v1/auth/me", "admin", "")
	if n := id.verifies.Load() - before; n != 0 {
		t.Fatalf("a refused revocation made replica 1 ask identity %d times", n)
	}

	// A password reset names no tenant: every tenant's cached credentials
	// are verified again.
	warm("other-tenant")
	id.revoke("other-tenant")
	if w := do(t, replicas[0], "POST", "/v1/auth/setup-password", "", `{"token":"t","password":"correct horse battery"}`); w.Code != 200 {
		t.Fatalf("setup-password: %d %s", w.Code, w.Body)
	}
	refused("other-tenant", 0)
}

// TestEntryEpochPrecedesVerification: a cache entry records the epoch seen
// before its verification began, never one seen while it ran, which may
// already reflect a revocation the verification did not see.
func TestEntryEpochPrecedesVerification(t *testing.T) {
	claims := &auth.Claims{TenantID: "t1", KeyID: "k1"}
	var during func()
	c := newCredentialCache(verifierFunc(func(context.Context, string) (*auth.Claims, error) {
		if during != nil {
			during()
		}
		return claims, nil
	}), time.Hour)

	cred, err := c.verify(t.Context(), "a", "")
	if err != nil || cred.epoch != "" {
		t.Fatalf("nothing seen yet: epoch %q, %v; want unknown", cred.epoch, err)
	}
	c.observe("t1", "e1")
	if cred, _ := c.verify(t.Context(), "b", ""); cred.epoch != "e1" {
		t.Fatalf("epoch %q, want e1, seen before", cred.epoch)
	}
	during = func() { c.observe("t1", "e2") }
	if cred, _ := c.verify(t.Context(), "c", ""); cred.epoch != "" {
		t.Fatalf("epoch %q, want unknown: e2 was seen while the verification ran", cred.epoch)
	}
	if cred, _ := c.lookup("c"); cred.epoch != "" {
		t.Fatalf("cached with epoch %q, want unknown", cred.epoch)
	}
	during = nil
	if cred, _ := c.verify(t.Context(), "d", "e3"); cred.epoch != "e3" {
		t.Fatalf("epoch %q, want e3, read before the call", cred.epoch)
	}
	// A revocation dropping entries while a verification runs keeps its
	// result out of the cache.
	during = func() { c.dropTenant("t1") }
	if _, err := c.verify(t.Context(), "e", "e3"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.lookup("e"); ok {
		t.Fatal("a verification that raced a revocation was cached")
	}
}

type verifierFunc func(context.Context, string) (*auth.Claims, error)

func (f verifierFunc) Verify(ctx context.Context, token string) (*auth.Claims, error) {
	return f(ctx, token)
}

// TestRevocationWithoutRedis: with the in-process limiter (no Redis) a
// revocation holds at once in the one process. With Redis failing, calls go
// on unlimited as before, the cache trusted; a revoking call still answers,
// its replica refusing the credential at once, and the failed epoch change
// is counted.
func TestRevocationWithoutRedis(t *testing.T) {
	bus := newTestBus(t)
	id := newFakeIdentity(t, bus.NC, map[string]auth.Claims{
		"s1": {TenantID: "t1", UserID: "u1", SessionID: "s1"},
		"s2": {TenantID: "t1", UserID: "u2", SessionID: "s2"},
	})
	respond(t, bus.NC, identityv1.SubjectLogout, func(*nats.Msg) *nats.Msg { return &nats.Msg{Data: []byte(`{"ok":true}`)} })
	respond(t, bus.NC, identityv1.SubjectMe, func(*nats.Msg) *nats.Msg { return &nats.Msg{Data: []byte(`{}`)} })
	cfg := Config{CredentialTTL: time.Hour}

	mem := newTestGateway(t, bus, cfg, nil)
	for range 2 {
		if w := do(t, mem, "GET", "/v1/auth/me", "s1", ""); w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != "300" {
			t.Fatalf("in-process limiter: %d %v", w.Code, w.Header())
		}
	}
	id.revoke("s1")
	if w := do(t, mem, "POST", "/v1/auth/logout", "s1", ""); w.Code != 200 {
		t.Fatalf("logout: %d %s", w.Code, w.Body)
	}
	if w := do(t, mem, "GET", "/v1/auth/me", "s1", ""); w.Code != 401 {
		t.Fatalf("after logout: %d", w.Code)
	}

	down := newTestGateway(t, bus, cfg, NewRedisLimiter(redis.NewClient(&redis.Options{Addr: testkit.ClosedAddr(t)}), "x:"))
	for range 2 {
		if w := do(t, down, "GET", "/v1/auth/me", "s2", ""); w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != "" {
			t.Fatalf("Redis down: %d %v, want 200 unlimited", w.Code, w.Header())
		}
	}
	id.revoke("s2")
	if w := do(t, down, "POST", "/v1/auth/logout", "s2", ""); w.Code != 200 {
		t.Fatalf("logout with Redis down: %d %s", w.Code, w.Body)
	}
	if w := do(t, down, "GET", "/v1/auth/me", "s2", ""); w.Code != 401 {
		t.Fatalf("after logout with Redis down: %d", w.Code)
	}
	metrics := httptest.NewRecorder()
	down.Metrics().ServeHTTP(metrics, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(metrics.Body.String(), "gateway_revocation_epoch_errors_total 1") {
		t.Error("the failed epoch change was not counted")
	}
}

// TestRefusedCallsCarryRateLimit: a call refused for its scope spends the
// caller's budget and carries the rate-limit headers, on REST and in an MCP
// message; once the budget is spent the answer is 429. A 401 carries no
// rate-limit headers.
func TestRefusedCallsCarryRateLimit(t *testing.T) {
	bus := newTestBus(t)
	rdb, prefix := testkit.Redis(t)
	newFakeIdentity(t, bus.NC, map[string]auth.Claims{"reader": {TenantID: "t1", KeyID: "k1", Scopes: []string{"journal:read"}}})
	g := newTestGateway(t, bus, Config{RateLimitPerMinute: 5}, NewRedisLimiter(rdb, prefix))
	for i := range 4 {
		w := do(t, g, "POST", "/v1/bookings", "reader", `{}`)
		if w.Code != 403 || w.Header().Get("X-RateLimit-Limit") != "5" || w.Header().Get("X-RateLimit-Remaining") != strconv.Itoa(4-i) {
			t.Fatalf("403 %d: %d %v", i, w.Code, w.Header())
		}
	}
	w := do(t, g, "POST", "/mcp", "reader", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_booking","arguments":{}}}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "FORBIDDEN") || w.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("MCP tool refused for its scope: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = do(t, g, "POST", "/v1/bookings", "reader", `{}`)
	if w.Code != 429 || w.Header().Get("X-RateLimit-Limit") != "5" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v", w.Code, w.Header())
	}
	w = do(t, g, "POST", "/v1/bookings", "nobody", `{}`)
	if w.Code != 401 || w.Header().Get("X-RateLimit-Limit") != "" || w.Header().Get("X-RateLimit-Remaining") != "" {
		t.Fatalf("401: %d %v", w.Code, w.Header())
	}
}
