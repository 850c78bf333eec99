// Package outbox implements the transactional outbox: a state change and the
// event announcing it commit together, and a relay publishes committed events
// to JetStream with Nats-Msg-Id set to the event id, so a crash between
// publishing and marking can only cause a duplicate that JetStream drops.
//
// Each service's schema holds its own outbox table:
//
//	CREATE TABLE outbox (
//	    seq          bigserial PRIMARY KEY,
//	    id           uuid NOT NULL UNIQUE,
//	    subject      text NOT NULL,
//	    payload      bytea NOT NULL,
//	    created_at   timestamptz NOT NULL DEFAULT now()
//	);
//
// Rows are deleted once JetStream acknowledged them, so the table holds
// only what is still to be published.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/db"
)

// Put records an event in the transaction tx. The event is published only if
// tx commits. It returns the event id.
func Put(ctx context.Context, tx pgx.Tx, schema, subject string, payload any) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("outbox.Put %s: %w", subject, err)
	}
	id := uuid.NewString()
	t := pgx.Identifier{schema, "outbox"}.Sanitize()
	if _, err := tx.Exec(ctx, "INSERT INTO "+t+" (id, subject, payload) VALUES ($1, $2, $3)", id, subject, b); err != nil {
		return "", fmt.Errorf("outbox.Put %s: %w", subject, err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", channel(schema)); err != nil {
		return "", fmt.Errorf("outbox.Put notify: %w", err)
	}
	return id, nil
}

// Queue adds the insert of an event to a pgx batch, for writers that send a
// whole transaction in one round trip. Call Notify once in the same batch.
func Queue(b *pgx.Batch, schema, subject string, payload any) error {
	p, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("outbox.Queue %s: %w", subject, err)
	}
	t := pgx.Identifier{schema, "outbox"}.Sanitize()
	b.Queue("INSERT INTO "+t+" (id, subject, payload) VALUES ($1, $2, $3)", uuid.NewString(), subject, p)
	return nil
}

// QueueMany adds one multi-row insert of events on subject to a pgx batch.
func QueueMany[T any](b *pgx.Batch, schema, subject string, payloads []T) error {
	ids := make([]string, len(payloads))
	data := make([][]byte, len(payloads))
	for i, p := range payloads {
		d, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("outbox.QueueMany %s: %w", subject, err)
		}
		ids[i], data[i] = uuid.NewString(), d
	}
	t := pgx.Identifier{schema, "outbox"}.Sanitize()
	b.Queue("INSERT INTO "+t+" (id, subject, payload) SELECT id, $1, p FROM unnest($2::uuid[], $3::bytea[]) AS u(id, p)", subject, ids, data)
	return nil
}

// Notify wakes the relay of schema once the batch's transaction commits.
func Notify(b *pgx.Batch, schema string) {
	b.Queue("SELECT pg_notify($1, '')", channel(schema))
}

func channel(schema string) string { return "outbox_" + schema }

// AckTimeout bounds the wait for JetStream's acknowledgement of a batch. A
// stream whose leader died acknowledges nothing until a new one is elected;
// the batch is then published again, with the same Nats-Msg-Id, so what the
// old leader did store is dropped as a duplicate.
const AckTimeout = 5 * time.Second

// Relay publishes one schema's outbox.
type Relay struct {
	Pool   *pgxpool.Pool
	Schema string
	// JS should be made with jetstream.WithPublishAsyncTimeout(AckTimeout),
	// so the context forgets acknowledgements that never come as well.
	JS  jetstream.JetStream
	Log *slog.Logger
	// Poll bounds the delay when a notification is missed; default 1s.
	Poll time.Duration
	// AckTimeout and StuckAfter override the package's defaults (tests).
	AckTimeout, StuckAfter time.Duration

	mu     sync.Mutex
	status Status
	// lookedAt is when Run last counted the backlog (Run's goroutine only).
	lookedAt time.Time
}

// Status is what the relay knows of its backlog, for metrics and readiness.
type Status struct {
	Pending int       // rows not yet acknowledged, as of the last look
	Oldest  time.Time // created_at of the oldest of them; zero when none
	Err     error     // the last publish failure, nil once one succeeds
	Since   time.Time // when publishing started failing
}

// Status reports the relay's backlog.
func (r *Relay) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// StuckAfter is how long a relay may fail to publish before Healthy says
// so: longer than a leader election, shorter than anyone waits for an
// event.
const StuckAfter = 30 * time.Second

// Healthy is nil unless the relay has failed to publish for StuckAfter.
func (r *Relay) Healthy() error {
	st := r.Status()
	stuck := r.StuckAfter
	if stuck <= 0 {
		stuck = StuckAfter
	}
	if st.Err != nil && time.Since(st.Since) > stuck {
		return fmt.Errorf("outbox %s: %d events not published for %s: %w", r.Schema, st.Pending, time.Since(st.Since).Round(time.Second), st.Err)
	}
	return nil
}

// Run publishes until ctx ends. A failure is retried with backoff up to 5s,
// the rows staying in the table; it is logged once when it starts, every
// 30s while it lasts and when publishing works again.
func (r *Relay) Run(ctx context.Context) error {
	if r.Poll <= 0 {
		r.Poll = time.Second
	}
	if r.AckTimeout <= 0 {
		r.AckTimeout = AckTimeout
	}
	wake := make(chan struct{}, 1)
	go r.listen(ctx, wake)
	backoff := 100 * time.Millisecond
	var lastLog time.Time
	for {
		n, err := r.drain(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			st := r.failed(ctx, err)
			if time.Since(lastLog) >= 30*time.Second {
				lastLog = time.Now()
				r.Log.Error("outbox relay cannot publish; retrying", "schema", r.Schema, "pending", st.Pending,
					"oldest_age", ageOf(st.Oldest).Round(time.Millisecond).String(), "failing_for", time.Since(st.Since).Round(time.Millisecond).String(), "err", err)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		if st := r.Status(); st.Err != nil {
			r.Log.Info("outbox relay publishes again", "schema", r.Schema, "failed_for", time.Since(st.Since).Round(time.Millisecond).String())
			lastLog = time.Time{}
		}
		backoff = 100 * time.Millisecond
		r.succeeded(ctx, n)
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-time.After(r.Poll):
		}
	}
}

func ageOf(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return time.Since(t)
}

// failed records err and looks at the backlog it leaves.
func (r *Relay) failed(ctx context.Context, err error) Status {
	pending, oldest, lookErr := r.backlog(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status.Err == nil {
		r.status.Since = time.Now()
	}
	r.status.Err = err
	if lookErr == nil {
		r.status.Pending, r.status.Oldest = pending, oldest
	}
	return r.status
}

// succeeded clears the failure. After a full batch more rows wait, and it
// looks at how many, at most once a second: counting the backlog after
// every batch would scan it again and again while the relay catches up.
func (r *Relay) succeeded(ctx context.Context, n int) {
	st := Status{}
	if n >= batchSize {
		st = r.Status()
		st.Err = nil
		if time.Since(r.lookedAt) >= time.Second {
			r.lookedAt = time.Now()
			if pending, oldest, err := r.backlog(ctx); err == nil {
				st.Pending, st.Oldest = pending, oldest
			}
		}
	}
	r.mu.Lock()
	r.status = st
	r.mu.Unlock()
}

func (r *Relay) backlog(ctx context.Context) (int, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var n int
	var oldest *time.Time
	t := pgx.Identifier{r.Schema, "outbox"}.Sanitize()
	err := r.Pool.QueryRow(ctx, "SELECT count(*), min(created_at) FROM "+t).Scan(&n, &oldest)
	if err != nil || oldest == nil {
		return n, time.Time{}, err
	}
	return n, *oldest, nil
}

// listen turns Postgres notifications into wake-ups; on failure the relay
// still polls.
func (r *Relay) listen(ctx context.Context, wake chan<- struct{}) {
	for ctx.Err() == nil {
		conn, err := r.Pool.Acquire(ctx)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel(r.Schema)}.Sanitize())
		for err == nil {
			_, err = conn.Conn().WaitForNotification(ctx)
			if err == nil {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
		// A connection that was listening must not go back to the pool.
		conn.Hijack().Close(context.Background())
	}
}

const batchSize = 500

type row struct {
	seq     int64
	id      string
	subject string
	payload []byte
}

// drain publishes one batch in order. A transaction-scoped advisory lock
// keeps a single relay per schema active, so events leave in commit order.
func (r *Relay) drain(ctx context.Context) (int, error) {
	var n int
	t := pgx.Identifier{r.Schema, "outbox"}.Sanitize()
	err := db.WithTx(ctx, r.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var got bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(hashtext($1))", channel(r.Schema)).Scan(&got); err != nil || !got {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT seq, id::text, subject, payload FROM "+t+" ORDER BY seq LIMIT $1", batchSize)
		if err != nil {
			return err
		}
		batch, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (row, error) {
			var x row
			err := cr.Scan(&x.seq, &x.id, &x.subject, &x.payload)
			return x, err
		})
		if err != nil || len(batch) == 0 {
			return err
		}
		futures := make([]jetstream.PubAckFuture, len(batch))
		for i, e := range batch {
			msg := &nats.Msg{Subject: e.subject, Data: e.payload, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, e.id)
			if futures[i], err = r.JS.PublishMsgAsync(msg); err != nil {
				return fmt.Errorf("publish %s: %w", e.subject, err)
			}
		}
		// Rows stay until the stream acknowledged them (with replicas, a
		// quorum stored them); the wait is bounded so a lost leader cannot
		// hold the relay, and the rolled-back batch is simply sent again.
		deadline := time.NewTimer(r.AckTimeout)
		defer deadline.Stop()
		seqs := make([]int64, len(batch))
		for i, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("publish %s: %w", batch[i].subject, err)
			case <-deadline.C:
				return fmt.Errorf("publish %s: no acknowledgement within %s", batch[i].subject, r.AckTimeout)
			case <-ctx.Done():
				return ctx.Err()
			}
			seqs[i] = batch[i].seq
		}
		// A published row carries nothing JetStream does not hold now, and
		// the state change it announced is in its own tables.
		if _, err := tx.Exec(ctx, "DELETE FROM "+t+" WHERE seq = ANY($1)", seqs); err != nil {
			return err
		}
		n = len(batch)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("outbox.drain %s: %w", r.Schema, err)
	}
	return n, nil
}
