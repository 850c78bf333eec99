package allinone_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ---- helpers shared by the end-to-end tests ----

// setup starts a platform for a parallel test and creates a tenant in it;
// admin is the tenant's admin key.
func setup(t *testing.T, overrides env, company string) (p *platform, admin, tenant string) {
	t.Helper()
	t.Parallel()
	p = startPlatform(t, overrides)
	admin, tenant = p.newTenant(company)
	return p, admin, tenant
}

// apiKey creates an API key with scopes in the tenant of admin and returns
// the raw key.
func (p *platform) apiKey(admin string, scopes ...string) string {
	p.t.Helper()
	raw, _ := p.newKey(admin, scopes...)
	return raw
}

// verifyOK asserts that the tenant's hash chain verifies and, when events
// is not negative, that it holds that many events.
func (p *platform) verifyOK(token string, events int) verifyBody {
	p.t.Helper()
	v := p.verify(token)
	if !v.OK || events >= 0 && v.Events != int64(events) {
		p.t.Fatalf("verify %+v, want ok with %d events", v, events)
	}
	return v
}

// wantCount asserts that the query (run as the database owner) counts want.
func (p *platform) wantCount(want int, sql string, args ...any) {
	p.t.Helper()
	if n := count(p.t, p.owner, sql, args...); n != want {
		p.t.Fatalf("%s: %d, want %d", sql, n, want)
	}
}

// sameLedger asserts that the tenant's ledger is still what before
// (a ledgerSnapshot) describes.
func (p *platform) sameLedger(what, tenant, before string) {
	p.t.Helper()
	if after := ledgerSnapshot(p.t, p, tenant); after != before {
		p.t.Fatalf("%s changed the ledger:\nbefore %s\nafter  %s", what, before, after)
	}
}

// outcomes sorts concurrent answers: status ok counts as won, 409 with the
// code refusal as refused; any other answer is an error of the test.
func outcomes(t testing.TB, what string, rs []resp, ok int, refusal string) (won, refused int) {
	t.Helper()
	for _, r := range rs {
		switch {
		case r.Status == ok:
			won++
		case r.Status == 409 && r.code() == refusal:
			refused++
		default:
			t.Errorf("%s: %d %s", what, r.Status, r.Raw)
		}
	}
	return won, refused
}

// lockRace sends 50 postings dated 2025-08-15 with w, spacing apart, and
// calls lock on the test's goroutine as soon as ten of them have been
// answered, while the others are in flight. It returns the postings that
// went through (201) and those refused with 409 PERIOD_LOCKED; any other
// answer fails the test. answered is how many had been answered once lock
// returned.
func (p *platform) lockRace(w string, spacing time.Duration, lock func()) (posted, locked int, answered int32) {
	p.t.Helper()
	const n = 50
	out := make([]resp, n)
	errs := make([]error, n)
	var count atomic.Int32
	tenAnswered := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * spacing)
			out[i], errs[i] = p.send("POST", "/v1/bookings", w, bookingBody("2025-08-15", fmt.Sprintf("race %d", i), bline("6310", "1800", "2")))
			if count.Add(1) == 10 {
				close(tenAnswered)
			}
		})
	}
	<-tenAnswered
	lock()
	answered = count.Load()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			p.t.Fatalf("posting %d: %v", i, err)
		}
	}
	posted, locked = outcomes(p.t, "posting", out, 201, "PERIOD_LOCKED")
	if posted < 10 {
		p.t.Fatalf("only %d postings succeeded, but 10 were answered before the lock was sent", posted)
	}
	return posted, locked, answered
}

// afterLockRace checks the ledger after lockRace locked 2025-08: no event
// was captured after the lock committed, exactly the answered postings are
// stored, the month refuses postings, and the chain holds them and the one
// posted before the race.
func (p *platform) afterLockRace(tenant, w string, posted int) {
	p.t.Helper()
	p.wantCount(0, `SELECT count(*) FROM ledger.journal_events e JOIN ledger.period_locks l ON l.tenant_id = e.tenant_id AND l.period = '2025-08'
		WHERE e.tenant_id = $1 AND e.captured_at > l.changed_at`, tenant)
	p.wantCount(posted, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND description LIKE 'race %'", tenant)
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-08-20", "danach", bline("6310", "1800", "3")))
	p.verifyOK(w, posted+1)
}

// echoesConsumed waits until the periods service has consumed the ledger's
// period_lock_set echo of every lock change of the tenant.
func (p *platform) echoesConsumed(tenant string) {
	p.t.Helper()
	eventually(p.t, 5*time.Second, func() error {
		if n := count(p.t, p.owner, "SELECT coalesce(sum(unconfirmed), 0)::int FROM periods.periods WHERE tenant_id = $1", tenant); n != 0 {
			return fmt.Errorf("%d lock changes still await the ledger's echo", n)
		}
		return nil
	})
}

// sigsOf reduces each of xs to what a test compares.
func sigsOf[T any](xs []T, sig func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, sig(x))
	}
	return out
}

// wantRows compares a report's row signatures and totals.
func wantRows(t testing.TB, what string, got []string, gotTotals string, want []string, wantTotals string) {
	t.Helper()
	if !slices.Equal(got, want) || gotTotals != wantTotals {
		t.Fatalf("%s rows\n%s\ntotals %s\nwant\n%s\ntotals %s", what, strings.Join(got, "\n"), gotTotals, strings.Join(want, "\n"), wantTotals)
	}
}
