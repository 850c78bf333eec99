package gateway

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
)

// auditor sends the record of every call to JetStream off the request path.
// Records of a few milliseconds travel together as one CallBatch: one stored
// (and, with sync_interval always, fsynced) message and one identity
// transaction per batch instead of per call. Failed acknowledgements reach
// publishFailed through the JetStream context's async error handler, which
// logs the records so a call is never untraceable.
type auditor struct {
	js   jetstream.JetStream
	log  *slog.Logger
	m    *metrics
	in   chan *gatewayv1.Call
	done sync.WaitGroup
}

const (
	auditBatchMax  = 256
	auditBatchWait = 5 * time.Millisecond
)

func newAuditor(nc *nats.Conn, log *slog.Logger, m *metrics) (*auditor, error) {
	a := &auditor{log: log, m: m, in: make(chan *gatewayv1.Call, 8192)}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(a.publishFailed))
	if err != nil {
		return nil, err
	}
	a.js = js
	a.done.Add(1)
	go a.run()
	return a, nil
}

func (a *auditor) record(c *gatewayv1.Call) { a.in <- c }

// close flushes what is queued; record must not be called afterwards.
func (a *auditor) close() {
	close(a.in)
	a.done.Wait()
}

func (a *auditor) run() {
	defer a.done.Done()
	for c := range a.in {
		batch := []gatewayv1.Call{*c}
		timer := time.NewTimer(auditBatchWait)
	fill:
		for len(batch) < auditBatchMax {
			select {
			case c, ok := <-a.in:
				if !ok {
					break fill
				}
				batch = append(batch, *c)
			case <-timer.C:
				break fill
			}
		}
		timer.Stop()
		a.publish(batch)
	}
}

func (a *auditor) publish(batch []gatewayv1.Call) {
	b, err := json.Marshal(gatewayv1.CallBatch{Calls: batch})
	if err != nil {
		a.log.Error("audit encode failed", "records", len(batch), "err", err)
		return
	}
	msg := &nats.Msg{Subject: gatewayv1.SubjectCalls, Data: b, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
	if _, err := a.js.PublishMsgAsync(msg); err != nil {
		a.publishFailed(a.js, msg, err)
	}
}

func (a *auditor) publishFailed(_ jetstream.JetStream, msg *nats.Msg, err error) {
	a.m.auditFailures.Inc()
	a.log.Error("audit publish failed", "records", string(msg.Data), "err", err)
}
