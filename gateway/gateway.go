// Package gateway is the only HTTP listener for clients. It authenticates,
// checks the route's scope, rate-limits, forwards the call to the owning
// service over NATS, maps errors to HTTP once, and audits every call.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Config holds the gateway's tunables.
type Config struct {
	RateLimitPerMinute     int           // per API key or user; default 300
	AuthRateLimitPerMinute int           // per client address on auth routes; default 10
	CredentialTTL          time.Duration // default 5s
	MaxBodyBytes           int64         // default 1 MiB
	MaxUploadBytes         int64         // multipart uploads; default 11 MiB (10 MB file plus form)
	RequestTimeout         time.Duration // default 30s
	TrustProxy             bool          // take the client address from X-Forwarded-For
}

func (c *Config) defaults() {
	if c.RateLimitPerMinute <= 0 {
		c.RateLimitPerMinute = 300
	}
	if c.AuthRateLimitPerMinute <= 0 {
		c.AuthRateLimitPerMinute = 10
	}
	if c.CredentialTTL <= 0 {
		c.CredentialTTL = 5 * time.Second
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxUploadBytes <= 0 {
		c.MaxUploadBytes = 11 << 20
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
}

// Deps are the gateway's connections.
type Deps struct {
	NC *nats.Conn
	// Signer is the gateway's NKEY: it signs the principal of every
	// request it forwards.
	Signer  *natsauth.Key
	Limiter Limiter // RedisLimiter in production, MemoryLimiter without Redis
	// Ready reports whether dependencies answer, for /readyz.
	Ready func(ctx context.Context) error
	Log   *slog.Logger
}

// Gateway is an http.Handler.
type Gateway struct {
	cfg     Config
	deps    Deps
	client  *natsx.Client
	router  *router
	creds   *credentialCache
	audit   *auditor
	metrics *metrics
	openapi []byte
	tools   map[string]*mcpTool
	handler http.Handler
	sub     *nats.Subscription
}

// New builds a gateway serving Routes.
func New(cfg Config, deps Deps) (*Gateway, error) {
	cfg.defaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Limiter == nil {
		deps.Limiter = NewMemoryLimiter()
	}
	g := &Gateway{cfg: cfg, deps: deps, metrics: newMetrics()}
	if deps.Signer == nil || deps.Signer.Name != natsauth.Gateway {
		return nil, errs.Wrap("gateway.New", errors.New("the gateway's NKEY is required to sign what it forwards"))
	}
	g.client = &natsx.Client{NC: deps.NC, Signer: deps.Signer, Timeout: cfg.RequestTimeout}
	g.creds = newCredentialCache(natsVerifier{g.client}, cfg.CredentialTTL)
	var err error
	if g.sub, err = g.creds.subscribe(deps.NC, deps.Log); err != nil {
		return nil, errs.Wrap("gateway.New: subscribe", err)
	}
	if g.audit, err = newAuditor(deps.NC, deps.Log, g.metrics); err != nil {
		return nil, errs.Wrap("gateway.New: jetstream", err)
	}
	if g.openapi, err = openAPIJSON(contracts.OpenAPI); err != nil {
		return nil, errs.Wrap("gateway.New: openapi", err)
	}

	g.router = newRouter(Routes, g.serveRoute, http.HandlerFunc(g.unrouted))
	if g.tools, err = newTools(g.router); err != nil {
		return nil, errs.Wrap("gateway.New", err)
	}
	mux := g.router.mux
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", g.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(g.openapi)
	})
	mux.HandleFunc("/mcp", g.serveMCP)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errs.NotFoundf("no route for %s %s", r.Method, r.URL.Path))
	})
	g.handler = chain(mux, requestID, recoverer(deps.Log), accessLog(deps.Log))
	return g, nil
}

// Close stops listening for identity events and flushes the audit records;
// call it after the HTTP server has stopped.
func (g *Gateway) Close() {
	if g.sub != nil {
		_ = g.sub.Unsubscribe()
	}
	g.audit.close()
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.handler.ServeHTTP(w, r) }

func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var problems []string
	if !g.deps.NC.IsConnected() {
		problems = append(problems, "nats: not connected")
	}
	if g.deps.Ready != nil {
		if err := g.deps.Ready(ctx); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "problems": problems})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// clientIP is the caller's address; X-Forwarded-For only behind a trusted proxy.
func (g *Gateway) clientIP(r *http.Request) string {
	if g.cfg.TrustProxy {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			return strings.TrimSpace(first)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// publicError is the one error shape, for REST and MCP alike; internals
// never reach the client.
func publicError(err error, requestID string) (int, errs.Body) {
	code, msg, details := errs.Public(err)
	return errs.Status(code), errs.Body{Error: msg, Code: code, Details: details, RequestID: requestID}
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := publicError(err, requestIDOf(r))
	writeJSON(w, status, body)
}
