package outbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsembed"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

var obxDB = migrate.Set{Schema: "obx", Role: "obx_svc", Outbox: true,
	FS: fstest.MapFS{"0001_obx.sql": {Data: []byte(`CREATE TABLE obx.marker (id int);`)}}}

// syncBuffer is a log sink the relay writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRelayOutlivesJetStream: while the NATS server is gone, no
// acknowledgement comes; the relay does not wait for it for ever but keeps
// the rows, says so (log, status, health) and retries, and once the server
// is back (same store) publishes every event exactly once.
func TestRelayOutlivesJetStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := pgxpool.New(ctx, testkit.Postgres(t, obxDB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // after cancel, which stops the relay holding a connection
	store := t.TempDir()
	harness, err := natsauth.NewKey("harness")
	if err != nil {
		t.Fatal(err)
	}
	users := []natsembed.User{{PublicKey: harness.Public()}}
	srv, err := natsembed.Start(store, "127.0.0.1", -1, users)
	if err != nil {
		t.Fatal(err)
	}
	url := srv.ClientURL()
	port, err := strconv.Atoi(url[strings.LastIndex(url, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown() })
	nc, err := harness.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Without WithPublishAsyncTimeout, as a relay handed any JetStream
	// context: the relay's own deadline must end the wait.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := (natsx.Stream{Name: "OBX", Subjects: []string{"evt.obx.>"}}).Ensure(ctx, js); err != nil {
		t.Fatal(err)
	}
	put := func(n int) {
		t.Helper()
		err := db.WithTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			for i := range n {
				if _, err := outbox.Put(ctx, tx, "obx", "evt.obx.made", map[string]int{"i": i}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rows := func() int { return testkit.Count(t, pool, "SELECT count(*) FROM obx.outbox") }
	within := func(d time.Duration, what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within %s: %s", d, what)
			}
		}
	}
	streamMsgs := func() uint64 {
		s, err := js.Stream(ctx, "OBX")
		if err != nil {
			return 0
		}
		info, err := s.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}

	logs := &syncBuffer{}
	relay := &outbox.Relay{Pool: pool, Schema: "obx", JS: js, Log: slog.New(slog.NewTextHandler(logs, nil)),
		Poll: 50 * time.Millisecond, AckTimeout: 300 * time.Millisecond, StuckAfter: 500 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()

	put(3)
	within(5*time.Second, "3 events published", func() bool { return rows() == 0 && streamMsgs() == 3 })

	srv.Shutdown()
	srv.WaitForShutdown()
	put(5)
	within(5*time.Second, "the relay reports 5 unpublished events", func() bool {
		st := relay.Status()
		return st.Err != nil && st.Pending == 5 && !st.Oldest.IsZero()
	})
	if !strings.Contains(logs.String(), "outbox relay cannot publish") || !strings.Contains(logs.String(), "pending=5") {
		t.Errorf("no log line about the failing relay:\n%s", logs)
	}
	within(5*time.Second, "the relay reports itself unhealthy", func() bool { return relay.Healthy() != nil })
	time.Sleep(time.Second) // several attempts, each ending at its deadline
	if n := rows(); n != 5 {
		t.Fatalf("outbox holds %d rows while JetStream is away, want 5", n)
	}

	if srv, err = natsembed.Start(store, "127.0.0.1", port, users); err != nil {
		t.Fatal(err)
	}
	within(15*time.Second, "the 5 events published after the restart", func() bool { return rows() == 0 && streamMsgs() == 8 })
	within(2*time.Second, "the relay reports itself healthy", func() bool { return relay.Status().Err == nil && relay.Healthy() == nil })
	time.Sleep(500 * time.Millisecond)
	if n := streamMsgs(); n != 8 {
		t.Errorf("stream holds %d events, want 8: a retried publish was not de-duplicated", n)
	}
	if !strings.Contains(logs.String(), "outbox relay publishes again") {
		t.Errorf("no log line about the relay recovering:\n%s", logs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
