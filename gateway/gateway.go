// Package gateway is the only HTTP listener for clients. It authenticates,
// checks the route's scope, rate-limits, forwards the call to the owning
// service over NATS, maps errors to HTTP once, and audits every call.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Config holds the gateway's tunables.
type Config struct {
	RateLimitPerMinute int // per API key or user; default 300
	// AuthRateLimitPerMinute counts every call of the auth routes per client
	// address; default 60. It is generous because many people may share one
	// address (an office, a NAT): guessing one account's password is bounded
	// by LoginRateLimitPerMinute, guessing tokens by
	// AuthFailureLimitPerMinute.
	AuthRateLimitPerMinute int
	// LoginRateLimitPerMinute counts login attempts per account (e-mail),
	// from any address; default 10.
	LoginRateLimitPerMinute int
	// AuthFailureLimitPerMinute counts failed bearer authentications per
	// client address; once spent, the address is refused before its
	// credentials are looked up. Default 20.
	AuthFailureLimitPerMinute int
	CredentialTTL             time.Duration // default 5s
	MaxBodyBytes              int64         // default 1 MiB
	MaxUploadBytes            int64         // multipart uploads; default 11 MiB (10 MB file plus form)
	// MaxLargeUploadBytes bounds the file of a LargeUpload route; default
	// 50 MiB (a statement file). UploadReplicas is the uploads bucket's
	// replica count (NATS_STREAM_REPLICAS), default 1.
	MaxLargeUploadBytes int64
	UploadReplicas      int
	// MaxMailBytes bounds the message of a MailUpload route; default 32
	// MiB (an e-mail of some 25 MB of attachments, base64 grown a third).
	MaxMailBytes int64
	// WebhookRateLimitPerMinute counts the calls of WebhookLimited routes
	// per client address; default 600.
	WebhookRateLimitPerMinute int
	RequestTimeout            time.Duration // default 30s
	// WriteTimeout is the deadline to write one chunk of a streamed
	// response, renewed per chunk; default 120s, the server's own.
	WriteTimeout time.Duration
	// TrustedProxies are the proxies in front of the gateway; the client
	// address is the rightmost X-Forwarded-For hop that is not one of them.
	// Empty: the peer address, X-Forwarded-For ignored.
	TrustedProxies []netip.Prefix
	// AuditBuffer is how many audit records may wait for JetStream before
	// calls are refused with 503; default 50000 (some 15 MB).
	AuditBuffer int
}

func (c *Config) defaults() {
	if c.RateLimitPerMinute <= 0 {
		c.RateLimitPerMinute = 300
	}
	if c.AuthRateLimitPerMinute <= 0 {
		c.AuthRateLimitPerMinute = 60
	}
	if c.LoginRateLimitPerMinute <= 0 {
		c.LoginRateLimitPerMinute = 10
	}
	if c.AuthFailureLimitPerMinute <= 0 {
		c.AuthFailureLimitPerMinute = 20
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
	if c.MaxMailBytes <= 0 {
		c.MaxMailBytes = 32 << 20
	}
	if c.WebhookRateLimitPerMinute <= 0 {
		c.WebhookRateLimitPerMinute = 600
	}
	if c.MaxLargeUploadBytes <= 0 {
		c.MaxLargeUploadBytes = 50 << 20
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 120 * time.Second
	}
	if c.AuditBuffer <= 0 {
		c.AuditBuffer = 50000
	}
}

// Deps are the gateway's connections.
type Deps struct {
	NC *nats.Conn
	// Signer is the gateway's NKEY: it signs the principal of every
	// request it forwards.
	Signer  *natsauth.Key
	Limiter Limiter // RedisLimiter in production, MemoryLimiter without Redis
	Log     *slog.Logger
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
	uploads uploadBucket
	// limiterWarned is when the last limiter outage was logged (UnixNano).
	limiterWarned atomic.Int64
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
	deps.Limiter = &failFast{Limiter: deps.Limiter, timeout: 250 * time.Millisecond, pause: time.Second}
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
	if g.audit, err = newAuditor(deps.NC, deps.Log, g.metrics, cfg.AuditBuffer); err != nil {
		return nil, errs.Wrap("gateway.New: jetstream", err)
	}
	if g.openapi, err = openAPIJSON(contracts.OpenAPI); err != nil {
		return nil, errs.Wrap("gateway.New: openapi", err)
	}

	g.router = newRouter(Routes, g.serveRoute, http.HandlerFunc(g.unrouted))
	doc, err := loadContract()
	if err != nil {
		return nil, errs.Wrap("gateway.New", err)
	}
	for _, rt := range g.router.routes {
		if rt.op = doc.Operation(rt.Method, rt.Pattern); rt.op == nil {
			return nil, errs.Wrap("gateway.New", fmt.Errorf("route %s is not in contracts/openapi.yaml", rt.name))
		}
	}
	if g.tools, err = newTools(g.router); err != nil {
		return nil, errs.Wrap("gateway.New", err)
	}
	mux := g.router.mux
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", g.readyz)
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

// Close stops listening for identity events and delivers the audit records
// (for at most 10s; what JetStream then still refuses goes to the log);
// call it after the HTTP server has stopped.
func (g *Gateway) Close() {
	if g.sub != nil {
		_ = g.sub.Unsubscribe()
	}
	g.audit.close(10 * time.Second)
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.handler.ServeHTTP(w, r) }

// Metrics serves the Prometheus metrics. It belongs on a listener of its
// own, apart from the clients' port: the series describe every route's
// traffic and errors, nothing a client needs to see.
func (g *Gateway) Metrics() http.Handler {
	return promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{})
}

// readyz reports whether the gateway can serve: what fails closed must
// answer. NATS carries every call and identity authenticates every
// credential; Redis is left out because limiting fails open without it (a
// metric and a warning say so), and taking every replica out of its Service
// for it would turn a degraded limiter into an outage. The answer names the
// failing dependency only; why it fails goes to the log.
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	failing := ""
	if !g.deps.NC.IsConnected() {
		failing = "nats"
	} else if _, err := g.deps.NC.RequestWithContext(ctx, identityPing, nil); err != nil {
		g.deps.Log.Warn("not ready: identity does not answer", "subject", identityPing, "err", err)
		failing = "identity"
	}
	if failing != "" {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "failing": []string{failing}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// identityPing is answered by any running identity replica (NATS micro).
var identityPing = "$SRV.PING." + identityv1.ServiceName

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
