package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func TestClientAddr(t *testing.T) {
	trusted, err := ParseTrustedProxies("192.0.2.0/24, 2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies: the peer", nil, "198.51.100.1:5000", nil, "198.51.100.1"},
		{"no proxies: forwarded-for ignored", nil, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"untrusted peer: forwarded-for ignored", trusted, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"trusted peer: its hop", trusted, "192.0.2.10:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"rightmost untrusted hop, not the client's claim", trusted, "192.0.2.10:5000", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9"},
		{"trusted hops skipped", trusted, "192.0.2.10:5000", []string{"1.2.3.4, 203.0.113.9, 192.0.2.55"}, "203.0.113.9"},
		{"several headers read as one list", trusted, "192.0.2.10:5000", []string{"1.2.3.4", "203.0.113.9"}, "203.0.113.9"},
		{"only trusted hops: the leftmost", trusted, "192.0.2.10:5000", []string{"192.0.2.3, 192.0.2.4"}, "192.0.2.3"},
		{"trusted peer without header", trusted, "192.0.2.10:5000", nil, "192.0.2.10"},
		{"garbage hop stops the walk", trusted, "192.0.2.10:5000", []string{"203.0.113.9, not-an-ip"}, "192.0.2.10"},
		{"IPv6 proxy", trusted, "[2001:db8::1]:443", []string{"2001:db8::99"}, "2001:db8::99"},
		{"IPv4-mapped peer", trusted, "[::ffff:192.0.2.10]:5000", []string{"203.0.113.9"}, "203.0.113.9"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/v1/auth/me", nil)
		r.RemoteAddr = tt.peer
		for _, h := range tt.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := clientAddr(r, tt.trusted); got != tt.want {
			t.Errorf("%s: client %q, want %q", tt.name, got, tt.want)
		}
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,nonsense"); err == nil {
		t.Error("a malformed trusted proxy was accepted")
	}
}

// edgeGateway is a gateway on real NATS and the Redis limiter, with identity
// played by fakes that count what they are asked.
type edgeGateway struct {
	*Gateway
	nc       *nats.Conn
	verifies atomic.Int64
}

func newEdgeGateway(t *testing.T, cfg Config) *edgeGateway {
	t.Helper()
	bus := testkit.NewBus(t)
	nc := bus.NC
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.CallsFilter}}); err != nil {
		t.Fatal(err)
	}
	rdb, prefix := testkit.Redis(t)
	e := &edgeGateway{nc: nc}
	respond(t, nc, identityv1.SubjectVerify, func(m *nats.Msg) *nats.Msg {
		e.verifies.Add(1)
		var req identityv1.VerifyRequest
		_ = json.Unmarshal(m.Data, &req)
		if req.Token == "good-token" {
			b, _ := json.Marshal(auth.Claims{TenantID: "t1", KeyID: "k1", Scopes: []string{"admin"}})
			return &nats.Msg{Data: b}
		}
		return errorMsg(errs.Unauthenticated, "invalid credential")
	})
	g, err := New(cfg, Deps{NC: nc, Signer: bus.Keys[natsauth.Gateway], Limiter: NewRedisLimiter(rdb, prefix), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	e.Gateway = g
	return e
}

func errorMsg(code, text string) *nats.Msg {
	b, _ := json.Marshal(errs.Body{Error: text, Code: code})
	m := &nats.Msg{Header: nats.Header{}, Data: b}
	m.Header.Set(natsx.HdrErrorCode, code)
	return m
}

// get sends GET path from peer with the bearer token and extra headers.
func (e *edgeGateway) get(path, peer, token string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.RemoteAddr = peer
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// TestFailedAuthenticationLimitedPerAddress: random bearer tokens from one
// address are refused with 429 once the address's failure budget is spent,
// and refused calls never reach identity. Other addresses, and a forged
// X-Forwarded-For from an untrusted peer, are judged on their own address;
// behind a trusted proxy the rightmost untrusted hop is the address.
func TestFailedAuthenticationLimitedPerAddress(t *testing.T) {
	e := newEdgeGateway(t, Config{AuthFailureLimitPerMinute: 20, CredentialTTL: time.Minute, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	respond(t, e.nc, identityv1.SubjectMe, func(*nats.Msg) *nats.Msg { return &nats.Msg{Data: []byte(`{}`)} })
	const attacker = "198.51.100.1:40000"
	// The second call confirms the revocation epoch the first one's
	// verification recorded; from then on the cache alone answers.
	for range 2 {
		if w := e.get("/v1/auth/me", attacker, "good-token"); w.Code != http.StatusOK {
			t.Fatalf("good token: %d %s", w.Code, w.Body)
		}
	}
	e.verifies.Store(0)
	var unauthorized, limited int
	for i := range 200 {
		w := e.get("/v1/auth/me", attacker, "random-"+testkit.RandomID())
		switch w.Code {
		case http.StatusUnauthorized:
			unauthorized++
			if limited > 0 {
				t.Fatalf("token %d: 401 after a 429", i)
			}
		case http.StatusTooManyRequests:
			limited++
			var b errs.Body
			if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || b.Code != errs.RateLimited || w.Header().Get("Retry-After") == "" {
				t.Fatalf("token %d: 429 body %s, headers %v", i, w.Body, w.Header())
			}
		default:
			t.Fatalf("token %d: %d %s", i, w.Code, w.Body)
		}
	}
	// GCRA refills one failure every 3 s while the loop runs; it runs far
	// shorter than a minute.
	if limited == 0 || unauthorized < 20 || unauthorized > 25 {
		t.Fatalf("%d answered 401, %d answered 429; want about 20 and the rest", unauthorized, limited)
	}
	if n := e.verifies.Load(); n != int64(unauthorized) {
		t.Fatalf("identity was asked %d times for %d unauthenticated answers; refused calls must not be looked up", n, unauthorized)
	}

	before := e.verifies.Load()
	// The same address over MCP is refused too, before any lookup.
	mcp := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	mcp.RemoteAddr = attacker
	mcp.Header.Set("Authorization", "Bearer random-mcp")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, mcp)
	if w.Code != http.StatusTooManyRequests {
		t.Errorf("MCP from the limited address: %d %s", w.Code, w.Body)
	}
	// A trusted proxy forwarding for the limited address: refused.
	if w := e.get("/v1/auth/me", "192.0.2.10:443", "random-x", "X-Forwarded-For", "198.51.100.1"); w.Code != http.StatusTooManyRequests {
		t.Errorf("trusted proxy forwarding the limited address: %d", w.Code)
	}
	// The client's own claim left of the proxy's entry counts for nothing.
	if w := e.get("/v1/auth/me", "192.0.2.10:443", "random-x", "X-Forwarded-For", "198.51.100.1, 203.0.113.7"); w.Code != http.StatusUnauthorized {
		t.Errorf("another client behind the trusted proxy: %d %s", w.Code, w.Body)
	}
	if n := e.verifies.Load() - before; n != 1 {
		t.Errorf("identity asked %d times for the calls after the limit, want 1 (the other client's)", n)
	}
	// Another address is unaffected, and so is an untrusted peer claiming
	// to forward for a fresh address.
	if w := e.get("/v1/auth/me", "198.51.100.2:40000", "random-y"); w.Code != http.StatusUnauthorized {
		t.Errorf("another address: %d %s", w.Code, w.Body)
	}
	if w := e.get("/v1/auth/me", "198.51.100.3:40000", "random-z", "X-Forwarded-For", "198.51.100.1"); w.Code != http.StatusUnauthorized {
		t.Errorf("untrusted peer with a forged X-Forwarded-For: %d %s", w.Code, w.Body)
	}
	// A credential verified before the flood still works from the limited
	// address while it is cached: the check is skipped, nothing is looked up.
	before = e.verifies.Load()
	if w := e.get("/v1/auth/me", attacker, "good-token"); w.Code != http.StatusOK {
		t.Errorf("cached credential from the limited address: %d %s", w.Code, w.Body)
	}
	if n := e.verifies.Load() - before; n != 0 {
		t.Errorf("the cached credential was looked up %d times", n)
	}
}

// TestStreamOutlivesWriteTimeout: an export whose chunks take far longer in
// total than the server's WriteTimeout arrives whole, each chunk written
// under a deadline of its own.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	const (
		chunks       = 8
		chunkDelay   = 100 * time.Millisecond
		writeTimeout = 250 * time.Millisecond
	)
	e := newEdgeGateway(t, Config{WriteTimeout: writeTimeout})
	chunk := strings.Repeat("x", 32<<10) + "\n" // past any buffer, so each chunk reaches the connection
	respond(t, e.nc, reportingv1.SubjectDATEVExport, func(m *nats.Msg) *nats.Msg {
		n := 0
		if c := m.Header.Get(natsx.HdrCursor); c != "" {
			n = int(c[0] - '0')
		}
		time.Sleep(chunkDelay)
		reply := &nats.Msg{Header: nats.Header{}, Data: []byte(chunk)}
		reply.Header.Set(natsx.HdrContentType, "text/csv")
		if n+1 < chunks {
			reply.Header.Set(natsx.HdrNextCursor, string(rune('0'+n+1)))
		}
		return reply
	})
	srv := httptest.NewUnstartedServer(e)
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/v1/reports/datev-export?from=2025-01-01&to=2025-12-31", nil)
	req.Header.Set("Authorization", "Bearer good-token")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("export cut after %v and %d bytes: %v", time.Since(start), len(body), err)
	}
	if res.StatusCode != 200 || string(body) != strings.Repeat(chunk, chunks) {
		t.Fatalf("export: %d, %d bytes, want %d", res.StatusCode, len(body), chunks*len(chunk))
	}
	if d := time.Since(start); d < 2*writeTimeout {
		t.Fatalf("the export took %v, not longer than the write timeout; the test proves nothing", d)
	}
}
