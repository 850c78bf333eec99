package allinone_test

import (
	"fmt"
	"testing"
	"time"
)

// TestPeriodsScopesAndIsolation: the periods routes check perioden:read and
// perioden:write; a tenant's locks and tasks are its own, and its locks
// never block another tenant's postings.
func TestPeriodsScopesAndIsolation(t *testing.T) {
	p, aAdmin, aTenant := setup(t, nil, "A GmbH")
	bAdmin, bTenant := p.newTenant("B GmbH")
	read, write := p.apiKey(aAdmin, "perioden:read"), p.apiKey(aAdmin, "perioden:read", "perioden:write")
	journal, bJournal := p.apiKey(aAdmin, "journal:write", "journal:read"), p.apiKey(bAdmin, "journal:write")

	task := p.must(201, "POST", "/v1/closing/tasks", write, map[string]any{"period": "2025-02", "title": "Kasse gezählt"}).str("id")

	// perioden:read reads and is refused every write.
	p.periods(read)
	p.tasks(read, "period=2025-02")
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/periods/2025-02/soft-lock", nil},
		{"POST", "/v1/periods/2025-02/lock", nil},
		{"POST", "/v1/periods/2025-02/reopen", nil},
		{"POST", "/v1/periods/2025/create-adjustment", nil},
		{"POST", "/v1/closing/tasks", map[string]any{"period": "2025-02", "title": "x"}},
		{"PATCH", "/v1/closing/tasks/" + task, map[string]any{"status": "done"}},
	} {
		p.expectError(403, "FORBIDDEN", c.method, c.path, read, c.body)
		// journal:write is no periods scope either.
		p.expectError(403, "FORBIDDEN", c.method, c.path, journal, c.body)
		p.expectError(401, "UNAUTHENTICATED", c.method, c.path, "", c.body)
	}
	// journal:write may not read the periods.
	p.expectError(403, "FORBIDDEN", "GET", "/v1/periods", journal, nil)
	p.expectError(403, "FORBIDDEN", "GET", "/v1/closing/tasks?period=2025-02", journal, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/periods", "", nil)
	// The refusals changed nothing.
	p.wantCount(0, "SELECT count(*) FROM periods.periods WHERE tenant_id = $1 AND status <> 'open'", aTenant)
	p.wantCount(0, "SELECT count(*) FROM periods.closing_tasks WHERE tenant_id = $1 AND (status <> 'open' OR title <> 'Kasse gezählt')", aTenant)
	p.wantCount(0, "SELECT count(*) FROM ledger.period_locks WHERE tenant_id = $1", aTenant)

	// A's locks are A's: B lists its own, open months.
	p.transition("soft-lock", "2025-02", write)
	p.transition("lock", "2025-01", write)
	for _, period := range []string{"2025-01", "2025-02"} {
		if got, ok := periodOf(p.periods(bAdmin), period); ok {
			t.Fatalf("B lists A's %s: %+v", period, got)
		}
	}
	for _, pb := range p.periods(bAdmin) {
		if pb.Status != "open" || pb.LockedBy != nil {
			t.Fatalf("B lists a locked period: %+v", pb)
		}
	}
	// B cannot reopen A's lock: for B the month is open.
	p.expectError(409, "PERIOD_NOT_LOCKED", "POST", "/v1/periods/2025-02/reopen", bAdmin, nil)
	if got := p.listedPeriod(read, "2025-02"); got.Status != "soft-locked" {
		t.Fatalf("A's 2025-02 after B's reopen: %+v", got)
	}
	// B posts into the months A locked.
	p.book(bJournal, bookingBody("2025-02-10", "B Februar", bline("6310", "1800", "1.00")))
	p.book(bJournal, bookingBody("2025-01-10", "B Januar", bline("6310", "1800", "1.00")))

	// B's lock of March blocks B only.
	if got := p.transition("soft-lock", "2025-03", bAdmin); got.Status != "soft-locked" {
		t.Fatalf("B's soft-lock %+v", got)
	}
	if st := ledgerLock(t, p, bTenant, "2025-03"); st != "soft-locked" {
		t.Fatalf("B's ledger lock %q", st)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", bJournal, bookingBody("2025-03-10", "B März", bline("6310", "1800", "1.00")))
	p.book(journal, bookingBody("2025-03-10", "A März", bline("6310", "1800", "1.00")))
	if st := ledgerLock(t, p, aTenant, "2025-03"); st != "" {
		t.Fatalf("A has a ledger lock on 2025-03: %q", st)
	}
	// A can soft-lock March itself: B's lock is not A's.
	p.transition("soft-lock", "2025-03", write)
	p.expectError(409, "PERIOD_ALREADY_SOFT_LOCKED", "POST", "/v1/periods/2025-03/soft-lock", bAdmin, nil)
	p.transition("reopen", "2025-03", bAdmin)
	if got := p.listedPeriod(read, "2025-03"); got.Status != "soft-locked" {
		t.Fatalf("A's 2025-03 after B reopened its own: %+v", got)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", journal, bookingBody("2025-03-11", "A März 2", bline("6310", "1800", "1.00")))
	p.book(bJournal, bookingBody("2025-03-11", "B März 2", bline("6310", "1800", "1.00")))

	// Booking counts are per tenant too.
	eventually(t, 5*time.Second, func() error {
		a, _ := periodOf(p.periods(read), "2025-03")
		b, _ := periodOf(p.periods(bAdmin), "2025-03")
		if a.BookingCount != 1 || b.BookingCount != 1 {
			return fmt.Errorf("2025-03 counts A %d, B %d; want 1 and 1", a.BookingCount, b.BookingCount)
		}
		return nil
	})
}

// TestPeriodsLockRace: 50 postings through the gateway race a soft lock of
// their month sent to POST /v1/periods/:period/soft-lock. None lands after
// the lock committed; every refusal is 409 PERIOD_LOCKED, and the periods
// service counts exactly the postings that went through.
func TestPeriodsLockRace(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "100000"}, "Wettlauf GmbH")
	w, pw := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "perioden:read", "perioden:write")
	p.book(w, bookingBody("2025-08-01", "vorher", bline("6310", "1800", "1")))
	// Warm the lock path (gateway, periods, identity, ledger) so that the
	// race below is not decided by the first call's connection set-up.
	p.transition("soft-lock", "2025-07", pw)
	p.transition("reopen", "2025-07", pw)

	// The postings go out 3 ms apart; the soft-lock is sent as soon as ten
	// of them have been answered, while the others are in flight.
	var lock resp
	var err error
	posted, locked, lockedAt := p.lockRace(w, 3*time.Millisecond, func() { lock, err = p.send("POST", "/v1/periods/2025-08/soft-lock", pw, nil) })
	if err != nil || lock.Status != 200 || lock.str("status") != "soft-locked" {
		t.Fatalf("soft-lock during the race: %v %d %s", err, lock.Status, lock.Raw)
	}
	t.Logf("soft-lock sent after 10 answers, answered with %d answered; %d posted, %d refused", lockedAt, posted, locked)
	if st := ledgerLock(t, p, tenant, "2025-08"); st != "soft-locked" {
		t.Fatalf("ledger lock %q", st)
	}
	p.afterLockRace(tenant, w, posted)
	eventually(t, 5*time.Second, func() error {
		got := p.listedPeriod(pw, "2025-08")
		if got.Status != "soft-locked" || got.BookingCount != int64(posted+1) {
			return fmt.Errorf("2025-08 listed as %+v, want soft-locked with %d bookings", got, posted+1)
		}
		return nil
	})

	// Concurrent changes of one period: exactly one wins, the others see
	// its result; concurrent create-adjustment creates once.
	races := []struct {
		path, refusal string
		status        int
	}{
		{"/v1/periods/2025-09/soft-lock", "PERIOD_ALREADY_SOFT_LOCKED", 200},
		{"/v1/periods/2025-09/lock", "PERIOD_ALREADY_LOCKED", 200},
		{"/v1/periods/2025/create-adjustment", "CONFLICT", 201},
	}
	for _, rc := range races {
		rs := parallel(t, 8, func(int) (resp, error) { return p.send("POST", rc.path, pw, nil) })
		if won, _ := outcomes(t, "concurrent "+rc.path, rs, rc.status, rc.refusal); won != 1 {
			t.Fatalf("concurrent %s: %d succeeded, want 1", rc.path, won)
		}
	}
	if got := p.listedPeriod(pw, "2025-09"); got.Status != "hard-locked" || ledgerLock(t, p, tenant, "2025-09") != "hard-locked" {
		t.Fatalf("2025-09 after the concurrent changes: %+v", got)
	}
	if got := p.listedPeriod(pw, "2025-13"); got.Status != "open" || ledgerLock(t, p, tenant, "2025-13") != "open" {
		t.Fatalf("2025-13 after concurrent creation: %+v", got)
	}
	p.echoesConsumed(tenant)
	if got := p.listedPeriod(pw, "2025-09"); got.Status != "hard-locked" {
		t.Fatalf("2025-09 after the echoes: %+v", got)
	}
}
