package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
