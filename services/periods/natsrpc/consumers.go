package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Durable consumers on the ledger's stream.
const (
	// BookingsConsumer counts intent_posted events into their periods.
	BookingsConsumer = "periods-bookings"
	// LocksConsumer applies period_lock_set events, one at a time in
	// stream order.
	LocksConsumer = "periods-locks"
)

// bookingBatch bounds the events counted in one transaction.
const bookingBatch = 256

// ConsumeBookings counts the ledger's intent_posted events into their
// periods until ctx ends. Events are taken in batches, one transaction per
// batch; every event counts once however often it is delivered.
func ConsumeBookings(ctx context.Context, js jetstream.JetStream, svc *periods.Service, log *slog.Logger) error {
	return consume(ctx, js, consumerSpec{stream: ledgerv1.StreamEvents, durable: BookingsConsumer, filter: ledgerv1.EventIntentPosted,
		batch: bookingBatch, maxAckPending: 4 * bookingBatch}, log, BookingsHandler(svc, log))
}

// ConsumeLocks reconciles the local lock states with the ledger's
// period_lock_set events until ctx ends. Reconciliation depends on the
// order of the events, so one event at a time is in flight.
func ConsumeLocks(ctx context.Context, js jetstream.JetStream, svc *periods.Service, log *slog.Logger) error {
	return consume(ctx, js, consumerSpec{stream: ledgerv1.StreamEvents, durable: LocksConsumer, filter: ledgerv1.EventPeriodLockSet,
		batch: 1, maxAckPending: 1}, log, LocksHandler(svc, log))
}

// BatchHandler processes a batch of messages. Returning nil acknowledges
// them all; an error asks for the redelivery of all of them.
type BatchHandler func(ctx context.Context, msgs []jetstream.Msg) error

// BookingsHandler counts a batch of intent_posted events. An event that can
// never be counted (undecodable, no tenant or period) is logged and
// acknowledged rather than redelivered for ever.
func BookingsHandler(svc *periods.Service, log *slog.Logger) BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) error {
		bs := make([]periods.Booking, 0, len(msgs))
		for _, m := range msgs {
			var ev ledgerv1.IntentPosted
			if err := json.Unmarshal(m.Data(), &ev); err != nil {
				log.Error("dropping undecodable intent_posted event", "event", eventID(m), "err", err)
				continue
			}
			b := periods.Booking{EventID: eventID(m), TenantID: ev.TenantID, Period: ev.Period}
			if !periods.ValidBooking(b) {
				log.Error("dropping intent_posted event without tenant or period", "event", b.EventID, "tenant_id", ev.TenantID, "period", ev.Period)
				continue
			}
			bs = append(bs, b)
		}
		_, err := svc.CountBookings(ctx, bs)
		return err
	}
}

// LocksHandler applies period_lock_set events; a malformed one is logged
// and acknowledged.
func LocksHandler(svc *periods.Service, log *slog.Logger) BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) error {
		for _, m := range msgs {
			var ev periods.LockSet
			if err := json.Unmarshal(m.Data(), &ev.SetPeriodLock); err != nil {
				log.Error("dropping undecodable period_lock_set event", "event", eventID(m), "err", err)
				continue
			}
			ev.EventID = eventID(m)
			if !periods.ValidLockSet(ev) {
				log.Error("dropping malformed period_lock_set event", "event", ev.EventID, "tenant_id", ev.TenantID, "period", ev.Period, "status", ev.Status)
				continue
			}
			changed, err := svc.ApplyLockSet(ctx, ev)
			if err != nil {
				return err
			}
			if changed {
				log.Warn("period state taken over from the ledger", "tenant_id", ev.TenantID, "period", ev.Period, "status", ev.Status)
			}
		}
		return nil
	}
}

// eventID is the message's Nats-Msg-Id (the producer's event id), or its
// stream position when it has none; both stay the same on redelivery.
func eventID(m jetstream.Msg) string {
	if id := m.Headers().Get(jetstream.MsgIDHeader); id != "" {
		return id
	}
	if md, err := m.Metadata(); err == nil {
		return "seq:" + md.Stream + ":" + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	return ""
}

type consumerSpec struct {
	stream, durable, filter string
	batch, maxAckPending    int
}

// consume runs a durable consumer until ctx ends, handing h up to
// spec.batch messages at a time: whatever has arrived when the previous
// batch is done, so a quiet stream is handled message by message without
// delay and a busy one in large transactions.
func consume(ctx context.Context, js jetstream.JetStream, spec consumerSpec, log *slog.Logger, h BatchHandler) error {
	cons, err := js.CreateOrUpdateConsumer(ctx, spec.stream, jetstream.ConsumerConfig{
		Durable:       spec.durable,
		FilterSubject: spec.filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		// A batch is one short transaction, so a short AckWait is safe. It
		// bounds how long an event delivered to a pull request of an
		// instance that just stopped waits before another instance gets it.
		AckWait:       5 * time.Second,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: spec.maxAckPending,
	})
	if err != nil {
		return fmt.Errorf("natsrpc.consume %s/%s: %w", spec.stream, spec.durable, err)
	}
	queue := make(chan jetstream.Msg, spec.batch)
	// A message that arrives while the consumer stops goes back at once
	// rather than after AckWait, so a restarted service gets it promptly.
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case queue <- m:
		case <-ctx.Done():
			_ = m.Nak()
		}
	}, jetstream.PullMaxMessages(max(spec.batch, 2)), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return fmt.Errorf("natsrpc.consume %s/%s: %w", spec.stream, spec.durable, err)
	}
	go func() {
		defer func() {
			cc.Stop()
			for {
				select {
				case m := <-queue:
					_ = m.Nak()
				default:
					return
				}
			}
		}()
		for {
			var first jetstream.Msg
			select {
			case <-ctx.Done():
				return
			case first = <-queue:
			}
			msgs := []jetstream.Msg{first}
		fill:
			for len(msgs) < spec.batch {
				select {
				case m := <-queue:
					msgs = append(msgs, m)
				default:
					break fill
				}
			}
			if err := h(ctx, msgs); err != nil {
				if !errors.Is(err, context.Canceled) {
					log.Error("event handling failed; will retry", "stream", spec.stream, "consumer", spec.durable, "messages", len(msgs), "err", err)
				}
				for _, m := range msgs {
					_ = m.NakWithDelay(time.Second)
				}
				continue
			}
			for _, m := range msgs {
				if err := m.Ack(); err != nil {
					log.Warn("ack failed", "consumer", spec.durable, "err", err)
				}
			}
		}
	}()
	return nil
}
