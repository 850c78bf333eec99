package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// BalancesConsumer is the durable JetStream consumer that feeds the
// projection.
const BalancesConsumer = "reporting-balances"

// ConsumerConfig tunes ConsumeBalances; zero values take the defaults.
type ConsumerConfig struct {
	// Workers process tenants in parallel; the events of one tenant always
	// go to the same worker, in stream order. Default 4.
	Workers int
	// MaxBatch is how many queued events of one tenant a worker folds into
	// one transaction. Default 256.
	MaxBatch int
	// RetryDelay is how long a failed event waits before redelivery.
	// Default 1s.
	RetryDelay time.Duration
}

// ConsumeBalances runs the "reporting-balances" consumer on the ledger's
// intent_posted events until ctx ends; the returned channel is closed when
// it has stopped. Each worker takes the events queued for it, groups them by
// tenant and hands each group to Service.ApplyPosted, which applies them in
// one transaction (or catches up from the journal feed on a gap); the events
// are acknowledged after the commit. A failure is retried after RetryDelay;
// a malformed event is logged and dropped.
func ConsumeBalances(ctx context.Context, js jetstream.JetStream, svc *reporting.Service, log *slog.Logger, cfg ConsumerConfig) (<-chan struct{}, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 256
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, ledgerv1.StreamEvents, jetstream.ConsumerConfig{
		Durable:       BalancesConsumer,
		FilterSubject: ledgerv1.EventIntentPosted,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 8192,
	})
	if err != nil {
		return nil, errs.Wrap("natsrpc.ConsumeBalances", err)
	}
	c := &balanceConsumer{svc: svc, log: log, cfg: cfg, queues: make([]chan posted, cfg.Workers)}
	var wg sync.WaitGroup
	for i := range c.queues {
		c.queues[i] = make(chan posted, 2*cfg.MaxBatch)
		wg.Add(1)
		go func() { defer wg.Done(); c.work(ctx, c.queues[i]) }()
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) { c.dispatch(ctx, msg) }, jetstream.PullMaxMessages(1024))
	if err != nil {
		return nil, errs.Wrap("natsrpc.ConsumeBalances", err)
	}
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		cc.Stop()
		wg.Wait()
		close(done)
	}()
	return done, nil
}

type posted struct {
	msg jetstream.Msg
	ev  ledgerv1.IntentPosted
}

type balanceConsumer struct {
	svc    *reporting.Service
	log    *slog.Logger
	cfg    ConsumerConfig
	queues []chan posted
}

// dispatch decodes an event and queues it for its tenant's worker.
func (c *balanceConsumer) dispatch(ctx context.Context, msg jetstream.Msg) {
	var ev ledgerv1.IntentPosted
	if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.TenantID == "" {
		c.log.Error("dropping malformed intent_posted event", "consumer", BalancesConsumer, "err", err)
		_ = msg.Term()
		return
	}
	h := fnv.New32a()
	h.Write([]byte(ev.TenantID))
	select {
	case c.queues[h.Sum32()%uint32(len(c.queues))] <- posted{msg, ev}:
	case <-ctx.Done():
	}
}

// work applies queued events: it takes what is waiting (up to MaxBatch),
// groups it by tenant in arrival order and applies each group.
func (c *balanceConsumer) work(ctx context.Context, q chan posted) {
	batch := make([]posted, 0, c.cfg.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case p := <-q:
			batch = append(batch, p)
		case <-ctx.Done():
			return
		}
	drain:
		for len(batch) < c.cfg.MaxBatch {
			select {
			case p := <-q:
				batch = append(batch, p)
			default:
				break drain
			}
		}
		var order []string
		groups := map[string][]posted{}
		for _, p := range batch {
			if _, ok := groups[p.ev.TenantID]; !ok {
				order = append(order, p.ev.TenantID)
			}
			groups[p.ev.TenantID] = append(groups[p.ev.TenantID], p)
		}
		for _, t := range order {
			c.apply(ctx, groups[t])
		}
	}
}

// apply applies one tenant's events and acknowledges them.
func (c *balanceConsumer) apply(ctx context.Context, ps []posted) {
	evs := make([]ledgerv1.IntentPosted, len(ps))
	for i, p := range ps {
		evs[i] = p.ev
	}
	// A catch-up from the feed may outlast AckWait: keep the messages ours.
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				for _, p := range ps {
					_ = p.msg.InProgress()
				}
			case <-stop:
				return
			}
		}
	}()
	err := c.svc.ApplyPosted(ctx, evs...)
	close(stop)
	switch {
	case err == nil:
		for _, p := range ps {
			if err := p.msg.Ack(); err != nil {
				c.log.Warn("ack failed", "consumer", BalancesConsumer, "err", err)
			}
		}
	case errors.Is(err, reporting.ErrMalformedEvent) && len(ps) > 1:
		// One bad event must not hold the others back: apply one by one.
		for _, p := range ps {
			c.apply(ctx, []posted{p})
		}
	case errors.Is(err, reporting.ErrMalformedEvent):
		c.log.Error("dropping invalid intent_posted event", "consumer", BalancesConsumer, "tenant", ps[0].ev.TenantID, "err", err)
		_ = ps[0].msg.Term()
	default:
		if !errors.Is(err, context.Canceled) {
			c.log.Error("applying intent_posted events failed; will retry", "consumer", BalancesConsumer,
				"tenant", ps[0].ev.TenantID, "events", len(ps), "err", err)
		}
		for _, p := range ps {
			_ = p.msg.NakWithDelay(c.cfg.RetryDelay)
		}
	}
}
