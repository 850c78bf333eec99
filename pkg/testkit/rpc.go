package testkit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// RPC is the one harness of service tests: services run as their daemons
// do, against a fresh database and an embedded NATS server, and the test
// talks to them over NATS as the gateway and other services do.
type RPC struct {
	t testing.TB
	// Bus is the NATS server; NC and JS are the harness's connection.
	Bus *Bus
	NC  *nats.Conn
	JS  jetstream.JetStream
	// Client signs as the gateway.
	Client *natsx.Client
	// DBURL and Pool (the schema owner) reach the database the services
	// run on, for checks behind their back.
	DBURL string
	Pool  *pgxpool.Pool
	Log   *slog.Logger
}

// NewRPC starts an embedded NATS server and a database migrated with sets
// (the schemas of the services the test will start, and any it fakes).
func NewRPC(t testing.TB, sets ...migrate.Set) *RPC {
	t.Helper()
	bus := NewBus(t)
	js, err := jetstream.New(bus.NC)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	client := bus.Client(t, natsauth.Gateway)
	client.Timeout = 10 * time.Second
	h := &RPC{t: t, Bus: bus, NC: bus.NC, JS: js, Client: client, Log: QuietLog()}
	if len(sets) > 0 {
		h.DBURL = Postgres(t, sets...)
		if h.Pool, err = pgxpool.New(context.Background(), h.DBURL); err != nil {
			t.Fatalf("testkit: %v", err)
		}
		t.Cleanup(h.Pool.Close)
	}
	return h
}

// QuietLog logs warnings and errors only, so test output stays readable.
func QuietLog() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Start runs svc's daemon until the test ends (or stop is called) and
// returns once it serves, on its own NATS connection with its own key.
// env is the service's environment (its own settings). stop shuts the daemon down as a signal would and reports how
// it stopped; calling it again does nothing.
func (h *RPC) Start(svc daemon.Service, env map[string]string) (stop func() error) {
	h.t.Helper()
	cfg, err := daemon.LoadConfig(svc.Name, func(k string) string { return env[k] })
	if err != nil {
		h.t.Fatalf("testkit: %v", err)
	}
	cfg.NATSURL, cfg.Key, cfg.Trust = h.Bus.URL, h.Bus.Key(h.t, svc.Name), h.Bus.Trust
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, svc, cfg, daemon.Deps{Pool: h.Pool, Log: h.Log, Ready: func() { close(ready) }})
	}()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	h.t.Cleanup(func() {
		if err := stop(); err != nil {
			h.t.Errorf("testkit: %s stopped: %v", svc.Name, err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		done <- err
		h.t.Fatalf("testkit: %s did not start: %v", svc.Name, err)
	case <-time.After(30 * time.Second):
		h.t.Fatalf("testkit: %s did not start within 30s", svc.Name)
	}
	return stop
}

// Rq is one request: who sends it and what it carries. Body is sent as is
// when it is a string or []byte, and as JSON otherwise.
type Rq struct {
	// As is the caller's principal, signed as the gateway signs it.
	As *auth.Claims
	// Service, when set, sends the request as that service does on its
	// own: under its signed principal for As's tenant.
	Service string
	Params  map[string]string
	Query   url.Values
	Body    any
	// IdempotencyKey, when set, travels as the gateway sends it.
	IdempotencyKey string
	ContentType    string
}

// Reply is what came back, decoded far enough to check.
type Reply struct {
	Status int
	Code   string
	Body   []byte
	Err    errs.Body
	Raw    *natsx.Reply
}

// Decode unmarshals the body into v or fails the test.
func (r Reply) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Call sends r to subject and returns the reply; transport failures fail
// the test.
func (h *RPC) Call(subject string, r Rq) Reply {
	h.t.Helper()
	ctx := context.Background()
	if r.As != nil {
		ctx = auth.WithClaims(ctx, r.As)
	}
	if r.IdempotencyKey != "" {
		ctx = natsx.WithIdempotencyKey(ctx, r.IdempotencyKey)
	}
	req := &natsx.Request{Query: r.Query, Params: url.Values{}, ContentType: r.ContentType}
	for k, v := range r.Params {
		req.Params.Set(k, v)
	}
	switch b := r.Body.(type) {
	case nil:
	case string:
		req.Body = []byte(b)
	case []byte:
		req.Body = b
	default:
		var err error
		if req.Body, err = json.Marshal(b); err != nil {
			h.t.Fatal(err)
		}
	}
	client := h.Client
	if r.Service != "" {
		client = h.Bus.Client(h.t, r.Service)
	}
	resp, err := client.Do(ctx, subject, req)
	if err != nil {
		h.t.Fatalf("%s: %v", subject, err)
	}
	out := Reply{Status: resp.Status, Code: resp.ErrCode, Body: resp.Body, Raw: resp}
	if out.Code != "" {
		_ = json.Unmarshal(resp.Body, &out.Err)
	}
	return out
}

// OK calls subject, wants the status and decodes the body into out (when
// not nil).
func (h *RPC) OK(subject string, r Rq, status int, out any) Reply {
	h.t.Helper()
	got := h.Call(subject, r)
	if got.Status != status || got.Code != "" {
		h.t.Fatalf("%s: status %d %s %s, want %d", subject, got.Status, got.Code, got.Body, status)
	}
	if out != nil {
		got.Decode(h.t, out)
	}
	return got
}

// Fails calls subject and wants the error code and status.
func (h *RPC) Fails(subject string, r Rq, status int, code string) Reply {
	h.t.Helper()
	got := h.Call(subject, r)
	if got.Status != status || got.Code != code {
		h.t.Fatalf("%s: status %d %s %s, want %d %s", subject, got.Status, got.Code, got.Body, status, code)
	}
	return got
}

// Eventually polls cond until it holds or ten seconds pass.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, 10*time.Second, what, cond)
}

// AfterRestart is how long a test waits for an event published while its
// consumer was down: it may reach the stopped instance's last pull
// request, which the server can still hold as the new instance starts,
// and come back only after the consumer's AckWait (30 s).
const AfterRestart = 45 * time.Second

// EventuallyWithin is Eventually with its own deadline.
func EventuallyWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
