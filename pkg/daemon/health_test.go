package daemon_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// HEALTH_ADDR serves readiness and the outbox backlog for probes and
// scrapers; the relay's failure path is pkg/outbox's TestRelayOutlivesJetStream.
func TestHealthListener(t *testing.T) {
	t.Parallel()
	addr := testkit.ClosedAddr(t)
	var handled atomic.Int64
	h := testkit.NewRPC(t, notesDB)
	h.Start(notesService(&handled), map[string]string{"HEALTH_ADDR": addr})
	var n note
	h.OK("notes.v1.create", testkit.Rq{As: &auth.Claims{TenantID: uuid.NewString(), KeyID: "k1", Scopes: []string{"admin"}}, Body: note{Text: "x"}}, 201, &n)
	testkit.Eventually(t, "the event to be handled", func() bool { return handled.Load() == 1 })

	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"ready"`) {
		t.Errorf("/readyz: %d %s", code, body)
	}
	_, metrics := get("/metrics")
	for _, series := range []string{`outbox_pending_events{service="notes"} 0`, `outbox_oldest_pending_seconds{service="notes"} 0`, `outbox_publish_failing_seconds{service="notes"} 0`} {
		if !strings.Contains(metrics, series+"\n") {
			t.Errorf("metrics lack %s:\n%s", series, metrics)
		}
	}
}
