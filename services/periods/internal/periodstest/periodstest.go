// Package periodstest gives the periods tests what testkit.RPC does not:
// fakes of the peer services as small route tables served by daemons on
// the harness (a ledger that takes lock commands, publishes
// period_lock_set events to its stream as the real one does through its
// outbox, and counts review items; an identity that tells each tenant's
// fiscal year start month), and the events the ledger publishes.
package periodstest

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Peers are the fake ledger, identity and bank.
type Peers struct {
	js         jetstream.JetStream
	stopLedger func() error
	mu         sync.Mutex
	commands   []ledgerv1.SetPeriodLock
	fiscal     map[string]int
	pending    map[string]int
	lockErr    string
	applied    bool
	reviewErr  string
	during     func(ledgerv1.SetPeriodLock)
	bank       map[string]bankv1.PeriodStatus
	bankAsked  []string

	// The ledger publishes its events through an outbox relay, after its
	// answer and in commit order; relay and unpublished mimic that.
	relay       chan ledgerv1.SetPeriodLock
	unpublished atomic.Int64
}

// relayDelay is how long the fake ledger's events take to reach the stream.
const relayDelay = 10 * time.Millisecond

var periodRe = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-3])$`)

// StartPeers serves the fake ledger, which owns the ledger's stream, and
// identity on h until the test ends.
func StartPeers(t testing.TB, h *testkit.RPC) *Peers {
	t.Helper()
	p := &Peers{js: h.JS, fiscal: map[string]int{}, pending: map[string]int{}, bank: map[string]bankv1.PeriodStatus{}, relay: make(chan ledgerv1.SetPeriodLock, 1024)}
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
	p.stopLedger = h.Start(p.service("ledger", []natsx.Stream{{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}},
		natsx.Route{Subject: ledgerv1.SubjectSetPeriodLock, Callers: []string{"periods"}, Decode: natsx.JSON[ledgerv1.SetPeriodLock], Endpoint: natsx.Typed(p.setLock)},
		natsx.Route{Subject: ledgerv1.SubjectReviewCount, Decode: natsx.Nothing, Endpoint: natsx.Typed(p.reviewCount)}), nil)
	h.Start(p.service("identity", nil,
		natsx.Route{Subject: identityv1.SubjectTenantGet, Decode: natsx.Nothing, Endpoint: natsx.Typed(p.tenant)}), nil)
	h.Start(p.service("bank", nil,
		natsx.Route{Subject: bankv1.SubjectPeriodStatus, Callers: []string{"periods"}, Decode: natsx.JSON[bankv1.PeriodStatusGet], Endpoint: natsx.Typed(p.bankStatus)}), nil)
	return p
}

func (p *Peers) service(name string, streams []natsx.Stream, routes ...natsx.Route) daemon.Service {
	return daemon.Service{Name: name, Streams: streams, Build: func(context.Context, daemon.Env) (daemon.Parts, error) {
		return daemon.Parts{Routes: routes}, nil
	}}
}

// setLock answers the lock command like the ledger: it validates, records
// the state and has period_lock_set published with a fresh event id.
func (p *Peers) setLock(ctx context.Context, cmd ledgerv1.SetPeriodLock) (ledgerv1.PeriodLockSet, error) {
	var err error
	if cmd.TenantID, err = natsx.Tenant(ctx, cmd.TenantID); err != nil {
		return ledgerv1.PeriodLockSet{}, err
	}
	if !periods.ValidID(cmd.TenantID) || !periodRe.MatchString(cmd.Period) {
		return ledgerv1.PeriodLockSet{}, errs.Invalid("bad lock command")
	}
	switch cmd.Status {
	case ledgerv1.PeriodOpen, ledgerv1.PeriodSoftLocked, ledgerv1.PeriodHardLocked:
	default:
		return ledgerv1.PeriodLockSet{}, errs.Invalid("bad status")
	}
	p.mu.Lock()
	during := p.during
	p.mu.Unlock()
	if during != nil {
		during(cmd)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lockErr != "" && !p.applied {
		return ledgerv1.PeriodLockSet{}, errs.E(p.lockErr, "set_lock failed")
	}
	p.commands = append(p.commands, cmd)
	p.unpublished.Add(1)
	p.relay <- cmd
	if p.lockErr != "" {
		return ledgerv1.PeriodLockSet{}, errs.E(p.lockErr, "set_lock applied, but the answer is an error")
	}
	return ledgerv1.PeriodLockSet{OK: true, Period: cmd.Period, Status: cmd.Status}, nil
}

func (p *Peers) publishLockSet(ctx context.Context, cmd ledgerv1.SetPeriodLock) error {
	b, _ := json.Marshal(cmd)
	msg := &nats.Msg{Subject: ledgerv1.EventPeriodLockSet, Data: b, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
	_, err := p.js.PublishMsg(ctx, msg)
	return err
}

func (p *Peers) reviewCount(ctx context.Context, _ struct{}) (ledgerv1.ReviewCount, error) {
	if st := natsx.RequestFrom(ctx).Query.Get("status"); st != "" && st != "pending" {
		return ledgerv1.ReviewCount{}, errs.Invalid("unexpected status filter " + st)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reviewErr != "" {
		return ledgerv1.ReviewCount{}, errs.E(p.reviewErr, "review count failed")
	}
	n := p.pending[natsx.Claims(ctx).TenantID]
	return ledgerv1.ReviewCount{Count: n, Pending: n}, nil
}

func (p *Peers) tenant(ctx context.Context, _ struct{}) (identityv1.Tenant, error) {
	c := natsx.Claims(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.fiscal[c.TenantID]
	if !ok {
		m = 1
	}
	return identityv1.Tenant{ID: c.TenantID, CompanyName: "Test GmbH", FiscalYearStartMonth: m, IsActive: true}, nil
}

// bankStatus answers the bank's period status: the tenant's as set, no
// bank accounts by default.
func (p *Peers) bankStatus(ctx context.Context, r bankv1.PeriodStatusGet) (bankv1.PeriodStatus, error) {
	tenant, err := natsx.Tenant(ctx, r.TenantID)
	if err != nil {
		return bankv1.PeriodStatus{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bankAsked = append(p.bankAsked, r.From+".."+r.To)
	st, ok := p.bank[tenant]
	if !ok {
		return bankv1.PeriodStatus{}, nil
	}
	if st.BankAccounts < 0 {
		return bankv1.PeriodStatus{}, errs.E(errs.Unavailable, "bank unavailable")
	}
	st.Done = st.Open == 0
	return st, nil
}

// SetBank sets the bank's period status of a tenant; BankAccounts < 0
// makes it answer UNAVAILABLE.
func (p *Peers) SetBank(tenant string, st bankv1.PeriodStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bank[tenant] = st
}

// BankAsked lists the date ranges the bank was asked about, "from..to".
func (p *Peers) BankAsked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bankAsked...)
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

// DuringLock has f run inside every lock command before it is applied,
// while the periods service waits for the answer.
func (p *Peers) DuringLock(f func(ledgerv1.SetPeriodLock)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.during = f
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
func (p *Peers) StopLedger() { _ = p.stopLedger() }

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

// Tenant returns the claims of a new tenant's admin key.
func Tenant(label string) *auth.Claims {
	return &auth.Claims{TenantID: uuid.NewString(), KeyID: uuid.NewString(), KeyPrefix: "lgr_" + label[:min(4, len(label))], Label: label,
		Role: "admin", Scopes: []string{auth.Admin}, Surface: "api"}
}

// Drained reports whether a durable consumer of the ledger stream has
// handled (and acknowledged) every event of its subject published so far.
func (p *Peers) Drained(t testing.TB, durable string) bool {
	t.Helper()
	if p.unpublished.Load() > 0 {
		return false
	}
	ctx := context.Background()
	c, err := p.js.Consumer(ctx, ledgerv1.StreamEvents, durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false // not created yet
	}
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.js.Stream(ctx, ledgerv1.StreamEvents)
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
