package natsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// EnsureStream creates or updates a file-backed stream.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subjects ...string) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   subjects,
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		MaxAge:     30 * 24 * time.Hour,
		Duplicates: 10 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("natsx.EnsureStream %s: %w", name, err)
	}
	return nil
}

// MsgHandler processes one JetStream message. Returning nil acknowledges it;
// an error asks for redelivery after a delay. Handlers must be idempotent.
type MsgHandler func(ctx context.Context, msg jetstream.Msg) error

// Consume runs a durable consumer until ctx ends.
func Consume(ctx context.Context, js jetstream.JetStream, stream, durable, filter string, log *slog.Logger, h MsgHandler) error {
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       durable,
		FilterSubject: filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("natsx.Consume %s/%s: %w", stream, durable, err)
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		if err := h(ctx, msg); err != nil {
			if !errors.Is(err, context.Canceled) {
				log.Error("event handling failed; will retry", "stream", stream, "consumer", durable, "subject", msg.Subject(), "err", err)
			}
			_ = msg.NakWithDelay(time.Second)
			return
		}
		if err := msg.Ack(); err != nil {
			log.Warn("ack failed", "consumer", durable, "err", err)
		}
	})
	if err != nil {
		return fmt.Errorf("natsx.Consume %s/%s: %w", stream, durable, err)
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
	}()
	return nil
}
