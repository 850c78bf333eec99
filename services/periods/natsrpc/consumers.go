package natsrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
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

// ackWait: a batch is one short transaction, so a short AckWait is safe. It
// bounds how long an event delivered to an instance that just stopped
// waits before another instance gets it.
const ackWait = 5 * time.Second

// Consumers are the consumers of the ledger's events: bookings are counted
// in batches of up to 256, one transaction each; lock events are applied
// one at a time, since reconciliation depends on their order. Every event
// counts once however often it is delivered (see postgres, inbox.Claim).
func Consumers(svc *periods.Service, log *slog.Logger) []natsx.Consumer {
	return []natsx.Consumer{
		{Stream: ledgerv1.StreamEvents, Durable: BookingsConsumer, Filter: ledgerv1.EventIntentPosted,
			Batch: 256, MaxAckPending: 1024, AckWait: ackWait, Handle: countBookings(svc, log)},
		{Stream: ledgerv1.StreamEvents, Durable: LocksConsumer, Filter: ledgerv1.EventPeriodLockSet,
			Batch: 1, MaxAckPending: 1, AckWait: ackWait, Handle: natsx.Each(applyLockSet(svc, log))},
	}
}

// countBookings counts a batch of intent_posted events. An event that can
// never be counted (undecodable, no tenant or period) is logged and left
// out rather than redelivered for ever, without holding the batch back.
func countBookings(svc *periods.Service, log *slog.Logger) natsx.BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) error {
		bs := make([]periods.Booking, 0, len(msgs))
		for _, m := range msgs {
			var ev ledgerv1.IntentPosted
			if err := json.Unmarshal(m.Data(), &ev); err != nil {
				log.Error("dropping undecodable intent_posted event", "event", natsx.EventID(m), "err", err)
				continue
			}
			b := periods.Booking{EventID: natsx.EventID(m), TenantID: ev.TenantID, Period: ev.Period}
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

// applyLockSet applies a period_lock_set event; a malformed one is
// poisoned: logged and terminated rather than redelivered for ever.
func applyLockSet(svc *periods.Service, log *slog.Logger) natsx.MsgHandler {
	return func(ctx context.Context, m jetstream.Msg) error {
		ev := periods.LockSet{EventID: natsx.EventID(m)}
		if err := json.Unmarshal(m.Data(), &ev.SetPeriodLock); err != nil {
			return fmt.Errorf("undecodable period_lock_set event: %v: %w", err, natsx.ErrPoison)
		}
		if !periods.ValidLockSet(ev) {
			return fmt.Errorf("malformed period_lock_set event (tenant %q, period %q, status %q): %w", ev.TenantID, ev.Period, ev.Status, natsx.ErrPoison)
		}
		changed, err := svc.ApplyLockSet(ctx, ev)
		if changed {
			log.Warn("period state taken over from the ledger", "tenant_id", ev.TenantID, "period", ev.Period, "status", ev.Status)
		}
		return err
	}
}
