package natsrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

// AuditDurable is the durable JetStream consumer storing gateway calls.
const AuditDurable = "identity-audit"

// Audit stores the gateway's call records from the gateway's stream (the
// gateway owns it; the consumer waits for it when identity starts first).
func Audit(svc *identity.Service, log *slog.Logger) natsx.Consumer {
	return natsx.Consumer{Stream: gatewayv1.StreamCalls, Durable: AuditDurable, Filter: gatewayv1.CallsFilter,
		Handle: natsx.Each(auditHandler(svc, log))}
}

// auditHandler stores a call record, or a batch of them, in one
// transaction. A record that does not decode or is invalid can never be
// stored, so it is logged and acknowledged rather than redelivered for
// ever. A record without a request id is keyed by its message id, or its
// stream position, which stay the same on redelivery.
func auditHandler(svc *identity.Service, log *slog.Logger) natsx.MsgHandler {
	return func(ctx context.Context, msg jetstream.Msg) error {
		var calls []gatewayv1.Call
		switch msg.Subject() {
		case gatewayv1.SubjectCalls:
			var b gatewayv1.CallBatch
			if err := json.Unmarshal(msg.Data(), &b); err != nil {
				log.Error("dropping undecodable audit batch", "subject", msg.Subject(), "err", err)
				return nil
			}
			calls = b.Calls
			for i := range calls {
				if calls[i].RequestID == "" {
					calls[i].RequestID = messageKey(msg) + ":" + strconv.Itoa(i)
				}
			}
		default:
			var call gatewayv1.Call
			if err := json.Unmarshal(msg.Data(), &call); err != nil {
				log.Error("dropping undecodable audit record", "subject", msg.Subject(), "err", err)
				return nil
			}
			if call.RequestID == "" {
				call.RequestID = messageKey(msg)
			}
			calls = []gatewayv1.Call{call}
		}
		err := svc.RecordCalls(ctx, calls)
		if errs.Is(err, errs.InvalidInput) {
			log.Error("dropping unstorable audit record", "subject", msg.Subject(), "err", err)
			return nil
		}
		return err
	}
}

// messageKey is natsx.EventID, marked "msg:" when it is the message id.
func messageKey(msg jetstream.Msg) string {
	if msg.Headers().Get(jetstream.MsgIDHeader) != "" {
		return "msg:" + natsx.EventID(msg)
	}
	return natsx.EventID(msg)
}
