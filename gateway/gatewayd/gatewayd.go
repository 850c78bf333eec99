// Package gatewayd runs the gateway as a process: config from the
// environment, connections, the HTTP server and a clean shutdown.
package gatewayd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/gateway"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Config is read from the environment by LoadConfig.
type Config struct {
	Addr string // GATEWAY_ADDR, default :8080
	// MetricsAddr (METRICS_ADDR, default 127.0.0.1:9090) serves /metrics,
	// apart from the clients' port.
	MetricsAddr string
	// WriteTimeout (WRITE_TIMEOUT, default 120s) bounds writing a response,
	// and each chunk of a streamed one.
	WriteTimeout time.Duration
	NATSURL      string // NATS_URL, default nats://127.0.0.1:4222
	RedisURL     string // REDIS_URL; empty means an in-process limiter
	KeyPrefix    string // REDIS_KEY_PREFIX for rate-limit and revocation keys, default "ledger:rl:"
	// StreamReplicas is the audit stream's replica count,
	// NATS_STREAM_REPLICAS, default 1.
	StreamReplicas int
	// Key is the gateway's NKEY (NATS_NKEY_SEED or NATS_NKEY_SEED_FILE):
	// its NATS login and the key it signs principals with.
	Key     *natsauth.Key
	Gateway gateway.Config
}

// LoadConfig reads RATE_LIMIT_PER_MINUTE, AUTH_RATE_LIMIT_PER_MINUTE,
// LOGIN_RATE_LIMIT_PER_MINUTE, AUTH_FAILURE_LIMIT_PER_MINUTE,
// AUDIT_BUFFER_RECORDS, NATS_STREAM_REPLICAS, CREDENTIAL_CACHE_TTL, MAX_BODY_BYTES, REQUEST_TIMEOUT and TRUSTED_PROXIES
// too.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:        or(getenv("GATEWAY_ADDR"), ":8080"),
		MetricsAddr: or(getenv("METRICS_ADDR"), "127.0.0.1:9090"),
		NATSURL:     or(getenv("NATS_URL"), nats.DefaultURL),
		RedisURL:    getenv("REDIS_URL"),
		KeyPrefix:   or(getenv("REDIS_KEY_PREFIX"), "ledger:rl:"),
	}
	var err error
	if c.StreamReplicas, err = natsx.ParseReplicas(getenv("NATS_STREAM_REPLICAS")); err != nil {
		return c, fmt.Errorf("gatewayd: %w", err)
	}
	c.Gateway.UploadReplicas = c.StreamReplicas
	ints := []struct {
		name string
		dst  *int
	}{
		{"RATE_LIMIT_PER_MINUTE", &c.Gateway.RateLimitPerMinute},
		{"AUTH_RATE_LIMIT_PER_MINUTE", &c.Gateway.AuthRateLimitPerMinute},
		{"LOGIN_RATE_LIMIT_PER_MINUTE", &c.Gateway.LoginRateLimitPerMinute},
		{"AUTH_FAILURE_LIMIT_PER_MINUTE", &c.Gateway.AuthFailureLimitPerMinute},
		{"WEBHOOK_RATE_LIMIT_PER_MINUTE", &c.Gateway.WebhookRateLimitPerMinute},
		{"AUDIT_BUFFER_RECORDS", &c.Gateway.AuditBuffer},
	}
	for _, v := range ints {
		if s := getenv(v.name); s != "" {
			if *v.dst, err = strconv.Atoi(s); err != nil || *v.dst <= 0 {
				return c, fmt.Errorf("gatewayd: %s must be a positive integer", v.name)
			}
		}
	}
	durs := []struct {
		name string
		dst  *time.Duration
	}{{"CREDENTIAL_CACHE_TTL", &c.Gateway.CredentialTTL}, {"REQUEST_TIMEOUT", &c.Gateway.RequestTimeout}, {"WRITE_TIMEOUT", &c.WriteTimeout}}
	for _, v := range durs {
		if s := getenv(v.name); s != "" {
			if *v.dst, err = time.ParseDuration(s); err != nil {
				return c, fmt.Errorf("gatewayd: %s: %w", v.name, err)
			}
		}
	}
	if s := getenv("MAX_BODY_BYTES"); s != "" {
		if c.Gateway.MaxBodyBytes, err = strconv.ParseInt(s, 10, 64); err != nil {
			return c, fmt.Errorf("gatewayd: MAX_BODY_BYTES: %w", err)
		}
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 120 * time.Second
	}
	c.Gateway.WriteTimeout = c.WriteTimeout
	// TRUST_PROXY believed any peer's X-Forwarded-For; which proxies to
	// believe must now be said, so the old switch is refused, not guessed at.
	if getenv("TRUST_PROXY") != "" {
		return c, fmt.Errorf("gatewayd: TRUST_PROXY is replaced by TRUSTED_PROXIES, the proxies' CIDRs (e.g. 10.0.0.0/8)")
	}
	if c.Gateway.TrustedProxies, err = gateway.ParseTrustedProxies(getenv("TRUSTED_PROXIES")); err != nil {
		return c, fmt.Errorf("gatewayd: TRUSTED_PROXIES: %w", err)
	}
	// Run checks it is set: the all-in-one process sets it itself.
	if getenv("NATS_NKEY_SEED") != "" || getenv("NATS_NKEY_SEED_FILE") != "" {
		if c.Key, err = natsauth.KeyFromEnv(natsauth.Gateway, getenv); err != nil {
			return c, fmt.Errorf("gatewayd: %w", err)
		}
	}
	return c, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Deps may carry ready connections; missing ones are opened from Config.
type Deps struct {
	NC    *nats.Conn
	Redis *redis.Client
	Log   *slog.Logger
	// Ready is called with the listening address once the server accepts.
	Ready func(addr string)
	// MetricsReady is called with the metrics listener's address.
	MetricsReady func(addr string)
}

// Run serves until ctx ends, then drains in-flight requests.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	log := cmp.Or(deps.Log, slog.Default())
	if cfg.Key == nil {
		return errors.New("gatewayd: the gateway's NKEY is required (NATS_NKEY_SEED or NATS_NKEY_SEED_FILE)")
	}
	nc := deps.NC
	if nc == nil {
		var err error
		if nc, err = cfg.Key.Connect(cfg.NATSURL, nats.MaxReconnects(-1), natsauth.LogErrors(log)); err != nil {
			return fmt.Errorf("gatewayd: %w", err)
		}
		defer nc.Drain()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("gatewayd: jetstream: %w", err)
	}
	calls := natsx.Stream{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.CallsFilter}, Replicas: cfg.StreamReplicas}
	if err := calls.Ensure(ctx, js); err != nil {
		return err
	}
	rdb := deps.Redis
	if rdb == nil && cfg.RedisURL != "" {
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("gatewayd: REDIS_URL: %w", err)
		}
		rdb = redis.NewClient(opt)
		defer rdb.Close()
	}
	gd := gateway.Deps{NC: nc, Signer: cfg.Key, Log: log}
	if rdb != nil {
		gd.Limiter = gateway.NewRedisLimiter(rdb, cfg.KeyPrefix)
	} else {
		log.Warn("no Redis configured: rate limits are kept per process only")
	}
	g, err := gateway.New(cfg.Gateway, gd)
	if err != nil {
		return err
	}
	defer g.Close()

	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("gatewayd: listen %s (METRICS_ADDR): %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.Metrics())
	msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	defer msrv.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("gatewayd: listen %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           g,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- msrv.Serve(mln) }()
	log.Info("gateway listening", "addr", ln.Addr().String(), "metrics", mln.Addr().String())
	if deps.MetricsReady != nil {
		deps.MetricsReady(mln.Addr().String())
	}
	if deps.Ready != nil {
		deps.Ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("gatewayd: serve: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("gatewayd: shutdown: %w", err)
	}
	return nil
}
