package natsx_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// The shared consumer: batches are acknowledged together, a poisoned
// message is retried alone and terminated without holding the others back,
// a message that cannot be handled yet comes back after its delay, and a
// failed batch is redelivered.
func TestConsume(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := (natsx.Stream{Name: "T", Subjects: []string{"t.>"}}).Ensure(ctx, h.JS); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handled := map[string]int{} // payload → times handled successfully
	attempts := map[string]int{}
	done, err := natsx.Consume(ctx, h.JS, natsx.Consumer{Stream: "T", Durable: "d", Filter: "t.>", Batch: 8, RetryDelay: 50 * time.Millisecond,
		Handle: func(ctx context.Context, msgs []jetstream.Msg) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				p := string(m.Data())
				attempts[p]++
				switch {
				case p == "poison":
					return fmt.Errorf("bad: %w", natsx.ErrPoison)
				case p == "later" && attempts[p] == 1:
					return natsx.Later(100 * time.Millisecond)
				case p == "flaky" && attempts[p] < 3:
					return fmt.Errorf("database away")
				}
			}
			for _, m := range msgs {
				handled[string(m.Data())]++
			}
			return nil
		}}, h.Log)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "poison", "b", "later", "flaky", "c"} {
		if _, err := h.JS.Publish(ctx, "t.x", []byte(p), jetstream.WithMsgID(p)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "every good message handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == 5
	})
	time.Sleep(300 * time.Millisecond) // nothing more may arrive
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// A batch counts only when it succeeds as a whole: every good message
	// once, the poisoned one never.
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1, "c": 1, "later": 1, "flaky": 1}, handled); diff != "" {
		t.Errorf("handled (-want +got):\n%s", diff)
	}
	info, err := h.JS.Consumer(context.Background(), "T", "d")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := info.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]uint64{0, 0}, [2]uint64{ci.NumPending, uint64(ci.NumAckPending)}); diff != "" {
		t.Errorf("pending, ack pending (-want +got):\n%s", diff)
	}
	// A message also comes back when a batch it shares fails.
	if attempts["later"] < 2 || attempts["flaky"] < 3 {
		t.Errorf("attempts: later %d (want ≥ 2), flaky %d (want ≥ 3)", attempts["later"], attempts["flaky"])
	}
}
