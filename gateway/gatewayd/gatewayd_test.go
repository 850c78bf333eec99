package gatewayd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestReadiness runs the gateway process against a NATS server it connects
// to itself and a Redis URL pointing at a closed port. Readiness follows
// what fails closed: Redis down keeps it ready (limits fail open, counted in
// a metric); identity not answering or NATS gone makes it unready, naming
// the dependency and nothing about it. /metrics is served only on the
// metrics listener.
func TestReadiness(t *testing.T) {
	bus := testkit.NewBus(t)
	srv, natsURL := bus.Server, bus.URL
	// identity, played by a NATS micro service of its name and a verifier
	// that knows no credential.
	nc := bus.Connect(t, identityv1.ServiceName)
	identity, err := micro.AddService(nc, micro.Config{Name: identityv1.ServiceName, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe(identityv1.SubjectVerify, func(m *nats.Msg) {
		reply := &nats.Msg{Header: nats.Header{}, Data: []byte(`{"error":"invalid credential","code":"UNAUTHENTICATED"}`)}
		reply.Header.Set(natsx.HdrErrorCode, errs.Unauthenticated)
		_ = m.RespondMsg(reply)
	}); err != nil {
		t.Fatal(err)
	}

	redisAddr := testkit.ClosedAddr(t)
	env := bus.Env(t, "gateway")
	env["REDIS_URL"], env["GATEWAY_ADDR"], env["METRICS_ADDR"] = "redis://"+redisAddr, "127.0.0.1:0", "127.0.0.1:0"
	cfg, err := gatewayd.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, metricsAddr, done := make(chan string, 1), make(chan string, 1), make(chan error, 1)
	go func() {
		done <- gatewayd.Run(ctx, cfg, gatewayd.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready: func(a string) { addr <- a }, MetricsReady: func(a string) { metricsAddr <- a }})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("gateway did not stop")
		}
	}()
	var base, metrics string
	select {
	case a := <-addr:
		base, metrics = "http://"+a, "http://"+<-metricsAddr
	case err := <-done:
		t.Fatalf("gateway failed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("gateway not listening within 30s")
	}

	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz with Redis unreachable: %d %s", code, body)
	}
	// Limiting fails open: an unknown credential is still answered by
	// identity, and the outage is counted.
	req, _ := http.NewRequest("GET", base+"/v1/auth/me", nil)
	req.Header.Set("Authorization", "Bearer not-a-key")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("call with Redis down: %d, want 401 from identity", res.StatusCode)
	}
	// The limiter is bounded and then left alone for a while: the outage
	// does not slow calls down by the Redis client's dial retries.
	if d := time.Since(start); d > time.Second {
		t.Fatalf("call with Redis down took %v", d)
	}
	if code, body := get(t, metrics+"/metrics"); code != 200 || !strings.Contains(body, "gateway_rate_limiter_errors_total") ||
		strings.Contains(body, "gateway_rate_limiter_errors_total 0") {
		t.Fatalf("metrics listener: %d, limiter errors not counted", code)
	}
	if code, body := get(t, base+"/metrics"); code != http.StatusNotFound || strings.Contains(body, "gateway_http_requests_total") {
		t.Fatalf("/metrics on the client port: %d", code)
	}

	unready := func(want string) {
		t.Helper()
		code, body := get(t, base+"/readyz")
		var b struct {
			Status  string   `json:"status"`
			Failing []string `json:"failing"`
		}
		if err := json.Unmarshal([]byte(body), &b); err != nil || code != http.StatusServiceUnavailable || len(b.Failing) != 1 || b.Failing[0] != want {
			t.Fatalf("readyz: %d %s, want 503 naming %s", code, body, want)
		}
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(natsURL, "nats://"))
		for _, secret := range []string{host, port, redisAddr, "nats:", "timeout", "no responders"} {
			if strings.Contains(body, secret) {
				t.Fatalf("readyz reveals %q: %s", secret, body)
			}
		}
	}
	if err := identity.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	unready("identity")
	if _, err := micro.AddService(nc, micro.Config{Name: identityv1.ServiceName, Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server has the subscriptions
		t.Fatal(err)
	}
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz with identity back: %d %s", code, body)
	}
	srv.Shutdown()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if code, _ := get(t, base+"/readyz"); code == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	unready("nats")
}

func TestLoadConfigEdge(t *testing.T) {
	load := func(env map[string]string) (gatewayd.Config, error) {
		return gatewayd.LoadConfig(func(k string) string { return env[k] })
	}
	c, err := load(map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7", "LOGIN_RATE_LIMIT_PER_MINUTE": "5", "AUTH_FAILURE_LIMIT_PER_MINUTE": "7", "WRITE_TIMEOUT": "3s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.Gateway.TrustedProxies); got != "[10.0.0.0/8 192.0.2.7/32]" {
		t.Errorf("trusted proxies %s", got)
	}
	if c.Gateway.LoginRateLimitPerMinute != 5 || c.Gateway.AuthFailureLimitPerMinute != 7 || c.Gateway.WriteTimeout != 3*time.Second || c.WriteTimeout != 3*time.Second {
		t.Errorf("limits and timeouts not read: %+v", c)
	}
	if c.MetricsAddr != "127.0.0.1:9090" {
		t.Errorf("metrics address %q, want the loopback default", c.MetricsAddr)
	}
	for _, bad := range []map[string]string{
		{"TRUST_PROXY": "true"},
		{"TRUSTED_PROXIES": "10.0.0.0/8,proxy.example.com"},
		{"AUTH_FAILURE_LIMIT_PER_MINUTE": "0"},
	} {
		if _, err := load(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
