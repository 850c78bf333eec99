// Package periodstest gives the periods tests their real dependencies (a
// fresh migrated database, an embedded NATS server with JetStream) and
// fakes of the peer services, answering on the real subjects over NATS:
// a ledger that takes lock commands, publishes period_lock_set events to
// its stream as the real one does through its outbox, and counts review
// items; and an identity that tells each tenant's fiscal year start month.
package periodstest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// Log is a quiet logger for tests.
func Log() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// silent is the logger of the fake peers, whose refusals tests provoke.
var silent = slog.New(slog.DiscardHandler)

// Peers are the fake ledger and identity.
type Peers struct {
	js        jetstream.JetStream
	ledger    *natsx.Server
	identity  *natsx.Server
	mu        sync.Mutex
	commands  []ledgerv1.SetPeriodLock
	fiscal    map[string]int
	pending   map[string]int
	lockErr   string
	applied   bool
	reviewErr string

	// The ledger publishes its events through an outbox relay, after its
	// answer and in commit order; relay and unpublished mimic that.
	relay       chan ledgerv1.SetPeriodLock
	unpublished atomic.Int64
}

// relayDelay is how long the fake ledger's events take to reach the stream.
const relayDelay = 10 * time.Millisecond

var periodRe = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-3])$`)

// StartPeers serves the fake ledger and identity on nc until the test ends.
func StartPeers(t testing.TB, nc *nats.Conn) *Peers {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := natsx.EnsureStream(context.Background(), js, ledgerv1.StreamEvents, ledgerv1.EventsFilter); err != nil {
		t.Fatal(err)
	}
	p := &Peers{js: js, fiscal: map[string]int{}, pending: map[string]int{}, relay: make(chan ledgerv1.SetPeriodLock, 1024)}
	stop := make(chan struct{})
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case <-stop:
				return
			case cmd := <-p.relay:
				time.Sleep(relayDelay)
				for p.publishLockSet(context.Background(), cmd) != nil {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
				p.unpublished.Add(-1)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-relayDone })
	if p.ledger, err = natsx.NewServer(nc, natsx.ServerConfig{Name: "ledger", Logger: silent}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.ledger.Stop() })
	if err := p.ledger.Handle(ledgerv1.SubjectSetPeriodLock, p.setLock); err != nil {
		t.Fatal(err)
	}
	if err := p.ledger.Handle(ledgerv1.SubjectReviewCount, p.reviewCount); err != nil {
		t.Fatal(err)
	}
	if p.identity, err = natsx.NewServer(nc, natsx.ServerConfig{Name: "identity", Logger: silent}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.identity.Stop() })
	if err := p.identity.Handle(identityv1.SubjectTenantGet, p.tenant); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}

// setLock answers the lock command like the ledger: it validates, records
// the state and has period_lock_set published with a fresh event id.
func (p *Peers) setLock(ctx context.Context, req any) (any, error) {
	var cmd ledgerv1.SetPeriodLock
	if err := natsx.Decode(req.(*natsx.Request).Body, &cmd); err != nil {
		return nil, err
	}
	if !periods.ValidID(cmd.TenantID) || !periodRe.MatchString(cmd.Period) {
		return nil, errs.Invalid("bad lock command")
	}
	switch cmd.Status {
	case ledgerv1.PeriodOpen, ledgerv1.PeriodSoftLocked, ledgerv1.PeriodHardLocked:
	default:
		return nil, errs.Invalid("bad status")
	}
	p.mu.Lock()
	failWith, applied := p.lockErr, p.applied
	p.mu.Unlock()
	if failWith != "" && !applied {
		return nil, errs.E(failWith, "set_lock failed")
	}
	p.mu.Lock()
	p.commands = append(p.commands, cmd)
	p.unpublished.Add(1)
	p.relay <- cmd
	p.mu.Unlock()
	if failWith != "" {
		return nil, errs.E(failWith, "set_lock applied, but the answer is an error")
	}
	return map[string]any{"ok": true, "period": cmd.Period, "status": cmd.Status}, nil
}

func (p *Peers) publishLockSet(ctx context.Context, cmd ledgerv1.SetPeriodLock) error {
	b, _ := json.Marshal(cmd)
	msg := &nats.Msg{Subject: ledgerv1.EventPeriodLockSet, Data: b, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
	_, err := p.js.PublishMsg(ctx, msg)
	return err
}

func (p *Peers) reviewCount(ctx context.Context, req any) (any, error) {
	c := auth.FromContext(ctx)
	if c == nil || c.TenantID == "" {
		return nil, errs.E(errs.Unauthenticated, "no authenticated tenant")
	}
	if st := req.(*natsx.Request).Query.Get("status"); st != "" && st != "pending" {
		return nil, errs.Invalid("unexpected status filter " + st)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reviewErr != "" {
		return nil, errs.E(p.reviewErr, "review count failed")
	}
	n := p.pending[c.TenantID]
	return map[string]any{"count": n, "pending": n}, nil
}

func (p *Peers) tenant(ctx context.Context, _ any) (any, error) {
	c := auth.FromContext(ctx)
	if c == nil || c.TenantID == "" {
		return nil, errs.E(errs.Unauthenticated, "authentication required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.fiscal[c.TenantID]
	if !ok {
		m = 1
	}
	return identityv1.Tenant{ID: c.TenantID, CompanyName: "Test GmbH", FiscalYearStartMonth: m, IsActive: true}, nil
}

// SetFiscalStart sets a tenant's fiscal year start month (default 1).
func (p *Peers) SetFiscalStart(tenant string, month int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fiscal[tenant] = month
}

// SetPending sets a tenant's number of pending review-queue items.
func (p *Peers) SetPending(tenant string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending[tenant] = n
}

// FailReviewCount makes the review count answer code ("" for success).
func (p *Peers) FailReviewCount(code string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reviewErr = code
}

// FailLocks makes lock commands answer the error code ("" for success).
// With applied set the ledger still applies the change and publishes its
// event: the answer is lost, as when the caller crashed or timed out.
func (p *Peers) FailLocks(code string, applied bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lockErr, p.applied = code, applied
}

// StopLedger stops the fake ledger: calls then find no responder.
func (p *Peers) StopLedger() { _ = p.ledger.Stop() }

// Commands returns the lock commands the ledger applied, in order.
func (p *Peers) Commands() []ledgerv1.SetPeriodLock {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ledgerv1.SetPeriodLock(nil), p.commands...)
}

// PublishLockSet publishes a period_lock_set event as the ledger does for a
// lock change it applied, without the periods service having asked.
func (p *Peers) PublishLockSet(t testing.TB, cmd ledgerv1.SetPeriodLock) {
	t.Helper()
	if err := p.publishLockSet(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
}

// PublishIntent publishes an intent_posted event with the message id.
func PublishIntent(t testing.TB, js jetstream.JetStream, msgID, tenant, period string) {
	t.Helper()
	b, _ := json.Marshal(ledgerv1.IntentPosted{TenantID: tenant, IntentID: uuid.NewString(), BookingDate: period + "-15", Period: period,
		Description: "test", Source: "api", CapturedAt: time.Now().UTC()})
	msg := &nats.Msg{Subject: ledgerv1.EventIntentPosted, Data: b, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// Env is one test's periods service with its peers.
type Env struct {
	URL    string
	Owner  *pgxpool.Pool // owner connections, for looking behind the service
	Pool   *pgxpool.Pool // the service's pool, running as periods_svc
	NC     *nats.Conn
	JS     jetstream.JetStream
	Peers  *Peers
	Svc    *periods.Service
	Client *natsx.Client
	Log    *slog.Logger
	// Stop ends the consumers and the relay.
	Stop context.CancelFunc
}

// New serves a periods service whose clock reads now, with its consumers
// and outbox relay, on a new database and NATS server.
func New(t testing.TB, now time.Time) *Env {
	t.Helper()
	ctx := context.Background()
	url := testkit.Postgres(t, postgres.Migrations)
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := db.Open(ctx, url, postgres.Role, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	_, nc := testkit.NATS(t)
	peers := StartPeers(t, nc)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := natsx.EnsureStream(ctx, js, periodsv1.StreamEvents, periodsv1.EventsFilter); err != nil {
		t.Fatal(err)
	}
	log := Log()
	client := &natsx.Client{NC: nc, Timeout: 10 * time.Second}
	remote := natsrpc.Peers{Client: client}
	svc := periods.New(postgres.New(pool), remote, remote, periods.WithClock(func() time.Time { return now }))

	runCtx, cancel := context.WithCancel(ctx)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		_ = (&outbox.Relay{Pool: pool, Schema: postgres.Schema, JS: js, Log: log, Poll: 50 * time.Millisecond}).Run(runCtx)
	}()
	t.Cleanup(func() { cancel(); <-relayDone })
	if err := natsrpc.ConsumeBookings(runCtx, js, svc, log); err != nil {
		t.Fatal(err)
	}
	if err := natsrpc.ConsumeLocks(runCtx, js, svc, log); err != nil {
		t.Fatal(err)
	}
	srv, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "periods", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if err := natsrpc.Register(srv, svc, idem.PG{Pool: pool, Schema: postgres.Schema}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &Env{URL: url, Owner: owner, Pool: pool, NC: nc, JS: js, Peers: peers, Svc: svc, Client: client, Log: log, Stop: cancel}
}

// Tenant returns the claims of a new tenant's admin key.
func Tenant(label string) *auth.Claims {
	return &auth.Claims{TenantID: uuid.NewString(), KeyID: uuid.NewString(), KeyPrefix: "lgr_" + label[:min(4, len(label))], Label: label,
		Role: "admin", Scopes: []string{auth.Admin}, Surface: "api"}
}

// Eventually polls cond until it holds or ten seconds pass.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Drained reports whether a durable consumer of the ledger stream has
// handled (and acknowledged) every event of its subject published so far.
func (e *Env) Drained(t testing.TB, durable string) bool {
	t.Helper()
	if e.Peers.unpublished.Load() > 0 {
		return false
	}
	ctx := context.Background()
	c, err := e.JS.Consumer(ctx, ledgerv1.StreamEvents, durable)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.JS.Stream(ctx, ledgerv1.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetLastMsgForSubject(ctx, info.Config.FilterSubject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return info.NumAckPending == 0 && info.AckFloor.Stream >= last.Sequence
}
