package natsrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

// AuditConsumer is the durable JetStream consumer storing gateway calls.
const AuditConsumer = "identity-audit"

func (h handlers) listAudit(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	q := r.Query
	return h.svc.ListAudit(ctx, c, identity.AuditQuery{
		From:      q.Get("from"),
		To:        q.Get("to"),
		Status:    q.Get("status"),
		Actor:     q.Get("actor"),
		PageQuery: identity.PageQuery{Limit: q.Get("limit"), Offset: q.Get("offset")},
	})
}

// ConsumeAudit stores the gateway's call records until ctx ends.
func ConsumeAudit(ctx context.Context, js jetstream.JetStream, svc *identity.Service, log *slog.Logger) error {
	_, err := natsx.Consume(ctx, js, natsx.Consumer{Stream: gatewayv1.StreamCalls, Durable: AuditConsumer, Filter: gatewayv1.CallsFilter,
		Handle: natsx.Each(AuditHandler(svc, log))}, log)
	return err
}

// AuditHandler stores a call record, or a batch of them, in one
// transaction. A record that does not decode can never be stored, so it is
// logged and acknowledged rather than redelivered for ever. A single record
// without a request id is keyed by its message id, or its stream position,
// which stay the same on redelivery.
func AuditHandler(svc *identity.Service, log *slog.Logger) natsx.MsgHandler {
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

func messageKey(msg jetstream.Msg) string {
	if id := msg.Headers().Get(jetstream.MsgIDHeader); id != "" {
		return "msg:" + id
	}
	if md, err := msg.Metadata(); err == nil {
		return "seq:" + md.Stream + ":" + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	return ""
}
