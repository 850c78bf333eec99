package natsrpc_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
)

// counts lists the booking counts of the caller's periods that have any.
func (h *harness) counts(t *testing.T, tenant string) map[string]int64 {
	t.Helper()
	rows, err := h.Pool.Query(context.Background(), "SELECT period, booking_count FROM periods.periods WHERE tenant_id = $1 AND booking_count > 0", tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var p string
		var n int64
		if err := rows.Scan(&p, &n); err != nil {
			t.Fatal(err)
		}
		out[p] = n
	}
	return out
}

// Periods come into being as bookings arrive, and each posted intent counts
// once, however often its event is delivered.
func TestBookingCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := periodstest.Tenant("A"), periodstest.Tenant("B")
	for i := range 3 {
		periodstest.PublishIntent(t, h.JS, fmt.Sprintf("a-feb-%d", i), a.TenantID, "2025-02")
	}
	periodstest.PublishIntent(t, h.JS, "a-feb-0", a.TenantID, "2025-02") // a duplicate publish
	periodstest.PublishIntent(t, h.JS, "a-nov", a.TenantID, "2024-11")
	periodstest.PublishIntent(t, h.JS, "a-adj", a.TenantID, "2024-13")
	periodstest.PublishIntent(t, h.JS, "b-feb", b.TenantID, "2025-02")
	// Events that can never be counted are dropped, not retried for ever.
	for _, bad := range []string{`{not json`, `{"tenant_id":"` + a.TenantID + `","period":"2025-00"}`, `{"tenant_id":"nope","period":"2025-01"}`} {
		if _, err := h.JS.PublishMsg(context.Background(), &nats.Msg{Subject: ledgerv1.EventIntentPosted, Data: []byte(bad)}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "bookings counted", func() bool { return h.Drained(t, natsrpc.BookingsConsumer) })

	wantA := map[string]int64{"2025-02": 3, "2024-11": 1, "2024-13": 1}
	wantB := map[string]int64{"2025-02": 1}
	check := func(when string) {
		t.Helper()
		if diff := cmp.Diff(wantA, h.counts(t, a.TenantID)); diff != "" {
			t.Errorf("%s: A's counts (-want +got):\n%s", when, diff)
		}
		if diff := cmp.Diff(wantB, h.counts(t, b.TenantID)); diff != "" {
			t.Errorf("%s: B's counts (-want +got):\n%s", when, diff)
		}
	}
	check("first delivery")

	ps := h.periods(t, a)
	if p := ps["2024-13"]; !p.IsAdjustment || p.PeriodNumber != 13 || p.BookingCount != 1 || p.Status != "open" {
		t.Errorf("the adjustment period from a booking: %+v", p)
	}
	if p := ps["2025-02"]; p.BookingCount != 3 || p.PeriodNumber != 2 {
		t.Errorf("2025-02: %+v", p)
	}

	h.replay(t, natsrpc.BookingsConsumer)
	check("after every event came again")
}

// A burst of events is counted in few transactions, and exactly.
func TestBookingBurst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := periodstest.Tenant("Burst")
	const n = 1200
	for i := range n {
		msg := &nats.Msg{Subject: ledgerv1.EventIntentPosted, Header: nats.Header{},
			Data: fmt.Appendf(nil, `{"tenant_id":%q,"intent_id":"i%d","period":"2025-%02d"}`, a.TenantID, i, i%3+1)}
		msg.Header.Set("Nats-Msg-Id", fmt.Sprintf("burst-%d", i))
		if _, err := h.JS.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-h.JS.PublishAsyncComplete():
	case <-time.After(10 * time.Second):
		t.Fatal("publishing timed out")
	}
	testkit.Eventually(t, "the burst counted", func() bool { return h.Drained(t, natsrpc.BookingsConsumer) })
	if diff := cmp.Diff(map[string]int64{"2025-01": n / 3, "2025-02": n / 3, "2025-03": n / 3}, h.counts(t, a.TenantID)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// The ledger enforces locks; when it applied a change this service did not
// commit, its period_lock_set event brings the local state along.
func TestReconcileFromLedger(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Reconcile")
	settled := func() {
		t.Helper()
		testkit.Eventually(t, "lock events applied", func() bool { return h.Drained(t, natsrpc.LocksConsumer) })
	}

	// A change the ledger applied on its own (a crash here after its commit).
	h.Peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2025-06", Status: "soft-locked", LockedBy: "ops@example.com"})
	settled()
	p := h.periods(t, c)["2025-06"]
	if p.Status != "soft-locked" || p.LockedBy == nil || *p.LockedBy != "ops@example.com" || p.LockedAt == nil {
		t.Errorf("2025-06 after the ledger's event: %+v", p)
	}
	h.Fails(periodsv1.SubjectSoftLock, testkit.Rq{As: c, Params: param("period", "2025-06")}, http.StatusConflict, errs.PeriodAlreadySoftLocked)

	// The ledger applies a hard-lock but the answer never arrives.
	h.Peers.FailLocks(errs.Timeout, true)
	h.Fails(periodsv1.SubjectLock, testkit.Rq{As: c, Params: param("period", "2025-06")}, http.StatusGatewayTimeout, errs.Timeout)
	settled()
	if st, _ := h.status(t, c.TenantID, "2025-06"); st != "hard-locked" {
		t.Errorf("after the ledger's event: %q, want hard-locked", st)
	}
	h.Peers.FailLocks("", false)
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: c, Params: param("period", "2025-06")}, http.StatusConflict, errs.PeriodAlreadyLocked)

	// An adjustment period the ledger knows and this service does not.
	h.Peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2026-13", Status: "open"})
	settled()
	if p := h.periods(t, c)["2026-13"]; p.Status != "open" || !p.IsAdjustment {
		t.Errorf("2026-13 after the ledger's event: %+v", p)
	}
	h.Fails(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2026")}, http.StatusConflict, errs.Conflict)

	// Malformed events are dropped.
	for _, bad := range []string{`{`, `{"tenant_id":"` + c.TenantID + `","period":"2025-07","status":"closed"}`} {
		if _, err := h.JS.PublishMsg(context.Background(), &nats.Msg{Subject: ledgerv1.EventPeriodLockSet, Data: []byte(bad)}); err != nil {
			t.Fatal(err)
		}
	}
	settled()

	// Replaying every event changes nothing.
	before := h.periods(t, c)
	h.replay(t, natsrpc.LocksConsumer)
	if diff := cmp.Diff(before, h.periods(t, c)); diff != "" {
		t.Errorf("after the replay (-before +after):\n%s", diff)
	}
}

// The echo of a change made here never turns the local state back, even
// when it arrives after a later change.
func TestEchoesDoNotFlipState(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Echo")
	for range 5 {
		h.transition(t, periodsv1.SubjectSoftLock, c, "2025-07")
		h.transition(t, periodsv1.SubjectReopen, c, "2025-07")
	}
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-08")
	h.transition(t, periodsv1.SubjectLock, c, "2025-08")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, _ := h.status(t, c.TenantID, "2025-07"); st != "open" {
			t.Fatalf("2025-07 flipped to %q while the echoes arrived", st)
		}
		if st, _ := h.status(t, c.TenantID, "2025-08"); st != "hard-locked" {
			t.Fatalf("2025-08 flipped to %q while the echoes arrived", st)
		}
		if h.Drained(t, natsrpc.LocksConsumer) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the echoes were not consumed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, p := range []string{"2025-07", "2025-08"} {
		if _, n := h.status(t, c.TenantID, p); n != 0 {
			t.Errorf("%s: %d changes still await their event", p, n)
		}
	}

	// Once the echoes are in, a change of the ledger's own is taken over.
	h.Peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2025-07", Status: "soft-locked", LockedBy: "ledger"})
	testkit.Eventually(t, "the ledger's change", func() bool {
		st, _ := h.status(t, c.TenantID, "2025-07")
		return st == "soft-locked"
	})
}
