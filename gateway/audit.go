package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// auditor sends the record of every call to JetStream off the request path.
// Records wait in memory until the stream acknowledged them: while one batch
// is on its way the next calls queue up, so under load many travel as one
// CallBatch (one stored, fsynced message and one identity transaction). A
// batch that is not acknowledged is sent again, unchanged and with the same
// Nats-Msg-Id, after a backoff, so JetStream drops what it already stored
// and identity's audit log (keyed by request id) stores each call once.
//
// Memory is the bound: once limit records wait, admit refuses new calls,
// since serving a call that cannot be audited is worse than not serving it.
// A refusal is itself recorded; only past twice the limit does a record
// go to the log instead.
type auditor struct {
	js    jetstream.JetStream
	log   *slog.Logger
	m     *metrics
	limit int
	// ackTimeout bounds one attempt; backoffMax the pause between attempts.
	ackTimeout, backoffMax time.Duration

	mu     sync.Mutex
	queue  []gatewayv1.Call // oldest first; the head is the batch in flight
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

const (
	auditBatchMax   = 256
	auditAckTimeout = 5 * time.Second
)

func newAuditor(nc *nats.Conn, log *slog.Logger, m *metrics, limit int) (*auditor, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	a := &auditor{js: js, log: log, m: m, limit: limit, ackTimeout: auditAckTimeout, backoffMax: 5 * time.Second,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	m.auditPending.Set(0)
	go a.run()
	return a, nil
}

// admit refuses a call while the records waiting for JetStream fill the
// bound.
func (a *auditor) admit() error {
	a.mu.Lock()
	n := len(a.queue)
	a.mu.Unlock()
	if n >= a.limit {
		return errs.E(errs.Unavailable, "the audit log cannot be written at the moment; try again shortly")
	}
	return nil
}

func (a *auditor) record(c *gatewayv1.Call) {
	a.mu.Lock()
	if a.closed || len(a.queue) >= 2*a.limit {
		a.mu.Unlock()
		a.m.auditFailures.Inc()
		b, _ := json.Marshal(c)
		a.log.Error("audit record not kept in the buffer (full or closed); logged instead", "record", string(b))
		return
	}
	a.queue = append(a.queue, *c)
	a.m.auditPending.Set(float64(len(a.queue)))
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// close delivers what is queued, for at most wait; what JetStream still has
// not acknowledged then is logged. record must not be called afterwards.
func (a *auditor) close(wait time.Duration) {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	select {
	case <-a.done:
		return
	case <-time.After(wait):
	}
	a.mu.Lock()
	left := a.queue
	a.queue = nil
	a.mu.Unlock()
	<-a.done
	if len(left) > 0 {
		b, _ := json.Marshal(left)
		a.log.Error("audit records not delivered before shutdown", "count", len(left), "records", string(b))
	}
}

// next is the batch at the head of the queue, waiting for one; nil once
// closed and empty.
func (a *auditor) next() []gatewayv1.Call {
	for {
		a.mu.Lock()
		n, closed := min(len(a.queue), auditBatchMax), a.closed
		batch := a.queue[:n:n]
		a.mu.Unlock()
		if n > 0 {
			return batch
		}
		if closed {
			return nil
		}
		<-a.wake
	}
}

// delivered drops the acknowledged head of the queue; close may have
// emptied it meanwhile.
func (a *auditor) delivered(n int) {
	a.mu.Lock()
	a.queue = a.queue[min(n, len(a.queue)):]
	a.m.auditPending.Set(float64(len(a.queue)))
	a.mu.Unlock()
}

func (a *auditor) run() {
	defer close(a.done)
	for {
		batch := a.next()
		if batch == nil {
			return
		}
		b, err := json.Marshal(gatewayv1.CallBatch{Calls: batch})
		if err != nil { // cannot happen with these types; keep the record in the log
			a.log.Error("audit encode failed", "records", len(batch), "err", err)
			a.delivered(len(batch))
			continue
		}
		msg := &nats.Msg{Subject: gatewayv1.SubjectCalls, Data: b, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
		a.send(msg, len(batch))
		a.delivered(len(batch))
	}
}

// send publishes msg until JetStream acknowledges it, or close gave up.
func (a *auditor) send(msg *nats.Msg, records int) {
	backoff := 50 * time.Millisecond
	var failingSince, lastLog time.Time
	for {
		ctx, cancel := context.WithTimeout(context.Background(), a.ackTimeout)
		_, err := a.js.PublishMsg(ctx, msg)
		cancel()
		if err == nil {
			if !failingSince.IsZero() {
				a.log.Info("audit records reach JetStream again", "failed_for", time.Since(failingSince).Round(time.Millisecond).String())
			}
			return
		}
		a.m.auditFailures.Inc()
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			a.log.Error("audit publish not acknowledged; keeping the records and retrying", "records", records, "pending", a.pending(), "err", err)
		}
		if a.abandoned() {
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, a.backoffMax)
	}
}

func (a *auditor) pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

// abandoned: close gave up waiting and took the queue.
func (a *auditor) abandoned() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed && len(a.queue) == 0
}
