package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// TestAuditNeverDropsRecords: while JetStream cannot store the audit records
// (here: the stream does not exist yet) they wait in memory; at the bound
// the gateway refuses calls with 503 UNAVAILABLE rather than serve them
// unaudited (and audits the refusal); once the stream takes them every
// record arrives, exactly once, and calls are served again.
func TestAuditNeverDropsRecords(t *testing.T) {
	bus := testkit.NewBus(t)
	nc := bus.NC
	g, err := New(Config{AuditBuffer: 3}, Deps{NC: nc, Signer: bus.Keys[natsauth.Gateway], Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	g.audit.backoffMax = 100 * time.Millisecond
	ctx := t.Context()
	get := func(wantStatus int, wantCode string) string {
		t.Helper()
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest("GET", "/v1/journal", nil))
		var b errs.Body
		if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || w.Code != wantStatus || b.Code != wantCode || b.Error == "" || b.RequestID == "" {
			t.Fatalf("status %d body %s, want %d %s with the error shape", w.Code, w.Body, wantStatus, wantCode)
		}
		return b.RequestID
	}
	within := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within 10s: %s", what)
			}
		}
	}
	metric := func(series string) bool {
		w := httptest.NewRecorder()
		g.Metrics().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		return strings.Contains(w.Body.String(), "\n"+series+"\n")
	}

	var ids []string
	for range 3 {
		ids = append(ids, get(http.StatusUnauthorized, errs.Unauthenticated))
	}
	within("3 records waiting", func() bool { return g.audit.pending() == 3 })
	time.Sleep(300 * time.Millisecond) // several attempts fail meanwhile
	ids = append(ids, get(http.StatusServiceUnavailable, errs.Unavailable))
	within("the refusal's record waiting too", func() bool { return g.audit.pending() == 4 })
	if !metric("gateway_audit_pending_records 4") {
		t.Error("metrics do not show 4 pending audit records")
	}

	if err := (natsx.Stream{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.CallsFilter}}).Ensure(ctx, g.audit.js); err != nil {
		t.Fatal(err)
	}
	within("every record delivered", func() bool { return g.audit.pending() == 0 })
	if !metric("gateway_audit_pending_records 0") {
		t.Error("metrics do not show the buffer empty")
	}
	ids = append(ids, get(http.StatusUnauthorized, errs.Unauthenticated))
	g.Close()

	stream, err := g.audit.js.Stream(ctx, gatewayv1.StreamCalls)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range info.State.Msgs {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var batch gatewayv1.CallBatch
		if err := json.Unmarshal(msg.Data(), &batch); err != nil {
			t.Fatal(err)
		}
		for _, c := range batch.Calls {
			seen[c.RequestID]++
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("call %s audited %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(ids) {
		t.Errorf("%d records in the stream, want %d", len(seen), len(ids))
	}
}
