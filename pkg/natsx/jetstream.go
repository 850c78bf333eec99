package natsx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream is a JetStream stream a service owns: only its owner creates or
// updates it, consumers of other services only attach to it.
type Stream struct {
	Name     string
	Subjects []string
	// WorkQueue streams keep a message until one consumer acknowledged it.
	WorkQueue bool
	// MaxAge drops older messages, default 30 days (none for a work
	// queue); Duplicates is the window in which a repeated Nats-Msg-Id is
	// dropped, default 10 minutes.
	MaxAge, Duplicates time.Duration
	// Replicas is how many servers of the cluster hold the stream, default
	// 1. The deployment sets it (daemon.Config.StreamReplicas): with 3, a
	// publish is acknowledged only once a quorum stored it, so the loss of
	// one server loses no acknowledged event.
	Replicas int
}

// ParseReplicas reads NATS_STREAM_REPLICAS: empty is 1 (one server, as
// embedded); JetStream allows at most 5.
func ParseReplicas(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 5 {
		return 0, fmt.Errorf("NATS_STREAM_REPLICAS must be an integer from 1 to 5, not %q", s)
	}
	return n, nil
}

// Ensure creates or updates the stream, file-backed. An existing stream
// with other settings (fewer replicas) is updated to these.
func (s Stream) Ensure(ctx context.Context, js jetstream.JetStream) error {
	cfg := jetstream.StreamConfig{
		Name:       s.Name,
		Subjects:   s.Subjects,
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		MaxAge:     30 * 24 * time.Hour,
		Duplicates: 10 * time.Minute,
		Replicas:   max(s.Replicas, 1),
	}
	if s.WorkQueue {
		cfg.Retention = jetstream.WorkQueuePolicy
		cfg.MaxAge = 0
	}
	if s.MaxAge > 0 {
		cfg.MaxAge = s.MaxAge
	}
	if s.Duplicates > 0 {
		cfg.Duplicates = s.Duplicates
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("natsx.Stream.Ensure %s (replicas %d): %w", s.Name, cfg.Replicas, err)
	}
	return nil
}

// ErrPoison marks an event that can never be handled (undecodable,
// invalid). A batch failing with it is retried one message at a time, and
// a single poisoned message is terminated instead of redelivered for ever.
var ErrPoison = errors.New("poisoned event")

// Later is a handler's answer for a message that cannot be handled yet
// (work another instance holds): it comes back after the delay, without
// counting as a failure.
func Later(d time.Duration) error { return later(d) }

type later time.Duration

func (l later) Error() string { return "not yet: again in " + time.Duration(l).String() }

// BatchHandler handles a batch of messages. Returning nil acknowledges them
// all; an error asks for the redelivery of all of them. Handlers must be
// idempotent: a message can arrive more than once (see EventID).
type BatchHandler func(ctx context.Context, msgs []jetstream.Msg) error

// MsgHandler handles one message; see Each.
type MsgHandler func(ctx context.Context, msg jetstream.Msg) error

// Each handles a batch one message at a time with h.
func Each(h MsgHandler) BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) error {
		for _, m := range msgs {
			if err := h(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
}

// Consumer is a durable consumer of a stream, handled in batches.
type Consumer struct {
	Stream, Durable, Filter string
	// Batch bounds the messages handed to Handle at once: whatever has
	// arrived when the previous batch is done, so a quiet stream is handled
	// message by message without delay and a busy one in large
	// transactions. Default 1, which also keeps stream order.
	Batch int
	// Workers handle batches in parallel, default 1. With Key set, the
	// messages of one key always go to the same worker, in stream order.
	Workers int
	Key     func(jetstream.Msg) string
	// AckWait bounds how long a message delivered to an instance that
	// stopped waits before another gets it; a long batch is kept alive
	// with progress signals. Default 30s.
	AckWait       time.Duration
	MaxAckPending int           // default 4 × Batch × Workers
	RetryDelay    time.Duration // before a failed batch is redelivered; default 1s
	Handle        BatchHandler
}

// Consume runs c until ctx ends; the returned channel is closed once the
// consumer has stopped and every message it held went back to the stream.
func Consume(ctx context.Context, js jetstream.JetStream, c Consumer, log *slog.Logger) (<-chan struct{}, error) {
	c.Batch, c.Workers = max(c.Batch, 1), max(c.Workers, 1)
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxAckPending <= 0 {
		c.MaxAckPending = 4 * c.Batch * c.Workers
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		FilterSubject: c.Filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: c.MaxAckPending,
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cfg)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		// The stream's owner has not started yet: services start in any
		// order, so wait for it rather than create another's stream.
		done := make(chan struct{})
		go func() {
			defer close(done)
			log.Info("waiting for the stream's owner", "stream", c.Stream, "consumer", c.Durable)
			for errors.Is(err, jetstream.ErrStreamNotFound) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				_, err = js.CreateOrUpdateConsumer(ctx, c.Stream, cfg)
			}
			if err != nil {
				if ctx.Err() == nil {
					log.Error("consumer not started", "stream", c.Stream, "consumer", c.Durable, "err", err)
				}
				return
			}
			if inner, err := Consume(ctx, js, c, log); err == nil {
				<-inner
			}
		}()
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("natsx.Consume %s/%s: %w", c.Stream, c.Durable, err)
	}
	queues := make([]chan jetstream.Msg, c.Workers)
	for i := range queues {
		queues[i] = make(chan jetstream.Msg, c.Batch)
	}
	// A message that arrives while the consumer stops goes back at once
	// rather than after AckWait, so a restarted service gets it promptly.
	cc, err := cons.Consume(func(m jetstream.Msg) {
		q := queues[0]
		if c.Key != nil && len(queues) > 1 {
			h := fnv.New32a()
			h.Write([]byte(c.Key(m)))
			q = queues[h.Sum32()%uint32(len(queues))]
		}
		select {
		case q <- m:
		case <-ctx.Done():
			_ = m.Nak()
		}
	}, jetstream.PullMaxMessages(max(c.Batch*c.Workers, 2)), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("natsx.Consume %s/%s: %w", c.Stream, c.Durable, err)
	}
	w := &worker{c: c, log: log}
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(ctx, q) }()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		cc.Stop()
		wg.Wait()
		for _, q := range queues {
			for len(q) > 0 {
				_ = (<-q).Nak()
			}
		}
	}()
	return done, nil
}

type worker struct {
	c   Consumer
	log *slog.Logger
}

func (w *worker) run(ctx context.Context, q chan jetstream.Msg) {
	for {
		var first jetstream.Msg
		select {
		case <-ctx.Done():
			return
		case first = <-q:
		}
		msgs := []jetstream.Msg{first}
	fill:
		for len(msgs) < w.c.Batch {
			select {
			case m := <-q:
				msgs = append(msgs, m)
			default:
				break fill
			}
		}
		w.handle(ctx, msgs)
	}
}

// handle runs one batch and settles its messages.
func (w *worker) handle(ctx context.Context, msgs []jetstream.Msg) {
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(w.c.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				for _, m := range msgs {
					_ = m.InProgress()
				}
			case <-stop:
				return
			}
		}
	}()
	err := w.c.Handle(ctx, msgs)
	close(stop)
	switch {
	case err == nil:
		for _, m := range msgs {
			if err := m.Ack(); err != nil {
				w.log.Warn("ack failed", "consumer", w.c.Durable, "err", err)
			}
		}
	case errors.Is(err, ErrPoison) && len(msgs) > 1:
		// One bad event must not hold the others back.
		for _, m := range msgs {
			w.handle(ctx, []jetstream.Msg{m})
		}
	case errors.As(err, new(later)):
		var l later
		errors.As(err, &l)
		for _, m := range msgs {
			_ = m.NakWithDelay(time.Duration(l))
		}
	case errors.Is(err, ErrPoison):
		w.log.Error("dropping an event that cannot be handled", "stream", w.c.Stream, "consumer", w.c.Durable, "event", EventID(msgs[0]), "err", err)
		_ = msgs[0].Term()
	default:
		if !errors.Is(err, context.Canceled) {
			w.log.Error("event handling failed; will retry", "stream", w.c.Stream, "consumer", w.c.Durable, "messages", len(msgs), "err", err)
		}
		for _, m := range msgs {
			_ = m.NakWithDelay(w.c.RetryDelay)
		}
	}
}

// TenantKey is a Consumer.Key for events whose JSON carries tenant_id: the
// events of one tenant stay in order on one worker.
func TenantKey(m jetstream.Msg) string {
	var ev struct {
		TenantID string `json:"tenant_id"`
	}
	_ = json.Unmarshal(m.Data(), &ev)
	return ev.TenantID
}

// EventID is the message's Nats-Msg-Id (the producer's event id), or its
// stream position when it has none; both stay the same on redelivery, so a
// consumer records it to handle each event once.
func EventID(m jetstream.Msg) string {
	if id := m.Headers().Get(jetstream.MsgIDHeader); id != "" {
		return id
	}
	if md, err := m.Metadata(); err == nil {
		return "seq:" + md.Stream + ":" + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	return ""
}
