package natsrpc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
	"github.com/ledgerplatform/ledger/services/identity/natsrpc"
)

// harness serves one test's identity service on its own NATS server.
type harness struct {
	*identitytest.Env
	nc     *nats.Conn
	js     jetstream.JetStream
	client *natsx.Client
	log    *slog.Logger
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	e := identitytest.New(t)
	_, nc := testkit.NATS(t)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "identity", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if err := natsrpc.Register(srv, e.Svc); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{Env: e, nc: nc, js: js, client: &natsx.Client{NC: nc, Timeout: 10 * time.Second}, log: log}
}

// rq is one request: who sends it and what it carries. body is sent as is
// when it is a string and as JSON otherwise.
type rq struct {
	as     *auth.Claims
	params map[string]string
	query  url.Values
	body   any
}

// reply is what came back, decoded far enough to check.
type reply struct {
	status int
	code   string
	body   []byte
	err    errs.Body
}

func (h *harness) call(t *testing.T, subject string, r rq) reply {
	t.Helper()
	ctx := context.Background()
	if r.as != nil {
		ctx = auth.WithClaims(ctx, r.as)
	}
	req := &natsx.Request{Query: r.query, Params: url.Values{}}
	for k, v := range r.params {
		req.Params.Set(k, v)
	}
	switch b := r.body.(type) {
	case nil:
	case string:
		req.Body = []byte(b)
	default:
		var err error
		if req.Body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := h.client.Do(ctx, subject, req)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	out := reply{status: resp.Status, code: resp.ErrCode, body: resp.Body}
	if out.code != "" {
		_ = json.Unmarshal(resp.Body, &out.err)
	}
	return out
}

// ok calls subject, wants the status and decodes the body into out.
func (h *harness) ok(t *testing.T, subject string, r rq, status int, out any) {
	t.Helper()
	got := h.call(t, subject, r)
	if got.status != status || got.code != "" {
		t.Fatalf("%s: status %d %s %s, want %d", subject, got.status, got.code, got.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(got.body, out); err != nil {
			t.Fatalf("%s: decode %s: %v", subject, got.body, err)
		}
	}
}

// fails calls subject and wants the error code and status.
func (h *harness) fails(t *testing.T, subject string, r rq, status int, code string) reply {
	t.Helper()
	got := h.call(t, subject, r)
	if got.status != status || got.code != code {
		t.Fatalf("%s: status %d %s %s, want %d %s", subject, got.status, got.code, got.body, status, code)
	}
	return got
}

// eventually polls cond until it holds or ten seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type okBody struct {
	OK bool `json:"ok"`
}
