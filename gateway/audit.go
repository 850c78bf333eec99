package gateway

import (
	"encoding/json"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
)

// auditor publishes one record per call to JetStream without waiting for the
// acknowledgement on the request path; failed acknowledgements reach
// publishFailed through the JetStream context's async error handler. The
// request id is the message id, so a retried publish is stored once.
type auditor struct {
	js  jetstream.JetStream
	log *slog.Logger
	m   *metrics
}

func newAuditor(nc *nats.Conn, log *slog.Logger, m *metrics) (*auditor, error) {
	a := &auditor{log: log, m: m}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(a.publishFailed))
	if err != nil {
		return nil, err
	}
	a.js = js
	return a, nil
}

func (a *auditor) record(c *gatewayv1.Call) {
	b, err := json.Marshal(c)
	if err != nil {
		a.log.Error("audit encode failed", "request_id", c.RequestID, "err", err)
		return
	}
	msg := &nats.Msg{Subject: gatewayv1.SubjectCall, Data: b, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, c.RequestID)
	if _, err := a.js.PublishMsgAsync(msg); err != nil {
		a.publishFailed(a.js, msg, err)
	}
}

func (a *auditor) publishFailed(_ jetstream.JetStream, msg *nats.Msg, err error) {
	a.m.auditFailures.Inc()
	// The record itself goes to the log so the call is never untraceable.
	a.log.Error("audit publish failed", "record", string(msg.Data), "err", err)
}
