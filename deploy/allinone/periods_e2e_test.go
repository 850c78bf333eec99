package allinone_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// ---- helpers of the periods end-to-end tests ----

// periodBody is one period as the API shows it.
type periodBody = periodsv1.Period

// periodKeys are the fields of a period: the specification's six and
// is_adjustment.
var periodKeys = []string{"period", "status", "period_number", "booking_count", "locked_by", "locked_at", "is_adjustment"}

// periods lists GET /v1/periods. The answer is a JSON array, which
// platform.call (made for objects) cannot decode, so it is fetched here.
func (p *platform) periods(token string) []periodBody {
	p.t.Helper()
	req, err := http.NewRequest("GET", p.base+"/v1/periods", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("GET /v1/periods: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		p.t.Fatalf("GET /v1/periods: %d %s", res.StatusCode, raw)
	}
	var items []json.RawMessage
	decodeJSON(p.t, raw, &items)
	out := make([]periodBody, 0, len(items))
	for _, it := range items {
		wantKeys(p.t, "listed period", it, periodKeys...)
		var pb periodBody
		decodeJSON(p.t, it, &pb)
		out = append(out, pb)
	}
	return out
}

// periodOf finds one period in a listing.
func periodOf(ps []periodBody, period string) (periodBody, bool) {
	for _, pb := range ps {
		if pb.Period == period {
			return pb, true
		}
	}
	return periodBody{}, false
}

// listedPeriod is the listed period that must be there.
func (p *platform) listedPeriod(token, period string) periodBody {
	p.t.Helper()
	pb, ok := periodOf(p.periods(token), period)
	if !ok {
		p.t.Fatalf("GET /v1/periods lacks %s", period)
	}
	return pb
}

// transition posts soft-lock, lock or reopen and returns the period it
// answered. soft-lock answers the period itself, lock and reopen
// {"ok":true,"period":{...}}.
func (p *platform) transition(action, period, token string) periodBody {
	p.t.Helper()
	r := p.must(200, "POST", "/v1/periods/"+period+"/"+action, token, nil)
	return p.periodOfAnswer(action, r)
}

func (p *platform) periodOfAnswer(action string, r resp) periodBody {
	p.t.Helper()
	raw := r.Raw
	if action != "soft-lock" {
		wantKeys(p.t, action, r.Raw, "ok", "period")
		if r.Body["ok"] != true {
			p.t.Fatalf("%s answered %s", action, r.Raw)
		}
		var env struct {
			Period json.RawMessage `json:"period"`
		}
		decodeJSON(p.t, r.Raw, &env)
		raw = env.Period
	}
	wantKeys(p.t, action+" period", raw, periodKeys...)
	var pb periodBody
	decodeJSON(p.t, raw, &pb)
	return pb
}

// keyLabel is what locked_by shows for an API key: its label and prefix.
func (p *platform) keyLabel(admin, keyID string) string {
	p.t.Helper()
	r := p.must(200, "GET", "/v1/api-keys", admin, nil)
	var list struct {
		Keys []struct {
			ID     string `json:"id"`
			Label  string `json:"label"`
			Prefix string `json:"key_prefix"`
		} `json:"api_keys"`
	}
	decodeJSON(p.t, r.Raw, &list)
	for _, k := range list.Keys {
		if k.ID == keyID {
			return k.Label + " (" + k.Prefix + ")"
		}
	}
	p.t.Fatalf("key %s not in %s", keyID, r.Raw)
	return ""
}

// ledgerLock is the ledger's own record of a period's state ("" when it
// has none): the lock the ledger enforces.
func ledgerLock(t testing.TB, p *platform, tenant, period string) string {
	t.Helper()
	var st string
	if err := p.owner.QueryRow(t.Context(), "SELECT coalesce((SELECT status FROM ledger.period_locks WHERE tenant_id = $1 AND period = $2), '')", tenant, period).Scan(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// assertRecent checks that an API timestamp is RFC 3339 and of the last minute.
func assertRecent(t testing.TB, what string, at *string) {
	t.Helper()
	if at == nil {
		t.Fatalf("%s: no timestamp", what)
	}
	ts, err := time.Parse(time.RFC3339Nano, *at)
	if err != nil || time.Since(ts) > time.Minute || time.Until(ts) > 5*time.Second {
		t.Fatalf("%s: timestamp %q (%v)", what, *at, err)
	}
}

// fiscalYearMonths lists the months of the fiscal year, starting in month start,
// that contains now.
func fiscalYearMonths(now time.Time, start int) []string {
	first := time.Date(now.Year(), time.Month(start), 1, 0, 0, 0, 0, time.UTC)
	if int(now.Month()) < start {
		first = first.AddDate(-1, 0, 0)
	}
	out := []string{}
	for i := range 12 {
		out = append(out, first.AddDate(0, i, 0).Format("2006-01"))
	}
	return out
}

// ---- the lock states ----

// TestPeriodsLockStates walks every transition of soft-lock, lock and
// reopen through the gateway, the refusals of each, and that the ledger
// enforces the state: a posting into a locked period is 409 PERIOD_LOCKED
// and writes nothing.
func TestPeriodsLockStates(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Perioden GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")
	pw, pwID := p.newKey(admin, "perioden:read", "perioden:write")
	by := p.keyLabel(admin, pwID)

	march := bookingBody("2025-03-15", "Miete März", bline("6310", "1800", "800.00"))
	p.book(w, march)

	// open → soft-locked: the answer is the period with who and when.
	r := p.must(200, "POST", "/v1/periods/2025-03/soft-lock", pw, nil)
	sl := p.periodOfAnswer("soft-lock", r)
	if sl.Period != "2025-03" || sl.Status != "soft-locked" || sl.PeriodNumber != 3 || sl.IsAdjustment || sl.LockedBy == nil || *sl.LockedBy != by {
		t.Fatalf("soft-lock answered %s, want locked_by %q", r.Raw, by)
	}
	assertRecent(t, "soft-lock locked_at", sl.LockedAt)
	if st := ledgerLock(t, p, tenant, "2025-03"); st != "soft-locked" {
		t.Fatalf("the ledger enforces %q for 2025-03", st)
	}

	// A posting into the soft-locked month is refused and writes nothing,
	// a reversal dated in it too; the next month takes postings.
	before := ledgerSnapshot(t, p, tenant)
	r = p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-03-31", "Strom März", bline("6310", "1800", "50.00")))
	if !strings.Contains(r.str("error"), "2025-03") {
		t.Fatalf("lock refusal does not name the period: %s", r.Raw)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-03-01", "Strom März", bline("6310", "1800", "50.00")), "Idempotency-Key", "locked-1")
	p.sameLedger("a refused posting", tenant, before)
	p.book(w, bookingBody("2025-04-01", "Miete April", bline("6310", "1800", "800.00")))

	// soft-locked → soft-locked is refused; the lock stays as it was.
	p.expectError(409, "PERIOD_ALREADY_SOFT_LOCKED", "POST", "/v1/periods/2025-03/soft-lock", pw, nil)
	if got := p.listedPeriod(pw, "2025-03"); got.Status != "soft-locked" || *got.LockedAt != *sl.LockedAt || *got.LockedBy != by {
		t.Fatalf("after a refused second soft-lock: %+v", got)
	}

	// soft-locked → open: locked_by and locked_at are cleared and
	// postings go through again.
	ro := p.transition("reopen", "2025-03", pw)
	if ro.Status != "open" || ro.LockedBy != nil || ro.LockedAt != nil || ro.PeriodNumber != 3 {
		t.Fatalf("reopen answered %+v", ro)
	}
	if st := ledgerLock(t, p, tenant, "2025-03"); st != "open" {
		t.Fatalf("the ledger enforces %q for 2025-03 after reopen", st)
	}
	p.book(w, bookingBody("2025-03-31", "Strom März", bline("6310", "1800", "50.00")))
	// open → reopen is refused, also for a month never touched.
	p.expectError(409, "PERIOD_NOT_LOCKED", "POST", "/v1/periods/2025-03/reopen", pw, nil)
	p.expectError(409, "PERIOD_NOT_LOCKED", "POST", "/v1/periods/2025-05/reopen", pw, nil)

	// open → hard-locked.
	hl := p.transition("lock", "2025-03", pw)
	if hl.Status != "hard-locked" || hl.LockedBy == nil || *hl.LockedBy != by || hl.PeriodNumber != 3 {
		t.Fatalf("lock answered %+v", hl)
	}
	assertRecent(t, "lock locked_at", hl.LockedAt)
	if st := ledgerLock(t, p, tenant, "2025-03"); st != "hard-locked" {
		t.Fatalf("the ledger enforces %q for 2025-03 after lock", st)
	}
	before = ledgerSnapshot(t, p, tenant)
	r = p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-03-20", "Nachzügler", bline("6310", "1800", "1.00")))
	if !strings.Contains(r.str("error"), "hard-locked") {
		t.Fatalf("hard lock refusal: %s", r.Raw)
	}
	// A hard-locked period is final: no second lock, no soft-lock, no reopen.
	p.expectError(409, "PERIOD_ALREADY_LOCKED", "POST", "/v1/periods/2025-03/lock", pw, nil)
	p.expectError(409, "PERIOD_ALREADY_LOCKED", "POST", "/v1/periods/2025-03/soft-lock", pw, nil)
	p.expectError(409, "PERIOD_ALREADY_LOCKED", "POST", "/v1/periods/2025-03/reopen", pw, nil)
	p.sameLedger("refusals", tenant, before)
	if got := p.listedPeriod(pw, "2025-03"); got.Status != "hard-locked" || *got.LockedAt != *hl.LockedAt {
		t.Fatalf("2025-03 after the refusals: %+v", got)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-03-21", "Nachzügler 2", bline("6310", "1800", "1.00")))

	// soft-locked → hard-locked, for a month that has never had a booking.
	p.transition("soft-lock", "2025-07", pw)
	if got := p.transition("lock", "2025-07", pw); got.Status != "hard-locked" || got.PeriodNumber != 7 || got.BookingCount != 0 {
		t.Fatalf("soft → hard: %+v", got)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-07-10", "Juli", bline("6310", "1800", "1.00")))

	// Malformed periods are 400 INVALID_INPUT on every transition and
	// change nothing; an adjustment period that does not exist is 404.
	before = ledgerSnapshot(t, p, tenant)
	for _, bad := range []string{"2025-00", "2025-14", "25-01", "abc", "2025-1", "2025-3a", "02025-01"} {
		for _, action := range []string{"soft-lock", "lock", "reopen"} {
			r := p.expectError(400, "INVALID_INPUT", "POST", "/v1/periods/"+bad+"/"+action, pw, nil)
			if got := detailFields(t, r); !slices.Equal(got, []string{"period"}) {
				t.Fatalf("%s %s: details %v: %s", action, bad, got, r.Raw)
			}
		}
	}
	for _, action := range []string{"soft-lock", "lock", "reopen"} {
		r := p.expectError(404, "NOT_FOUND", "POST", "/v1/periods/2025-13/"+action, pw, nil)
		if !strings.Contains(r.str("error"), "create-adjustment") {
			t.Fatalf("%s of a missing adjustment period does not say how to create it: %s", action, r.Raw)
		}
	}
	p.sameLedger("refused transitions", tenant, before)
	p.wantCount(0, "SELECT count(*) FROM periods.periods WHERE tenant_id = $1 AND (period LIKE '%-13' OR period LIKE '%-00' OR period LIKE '%-14')", tenant)

	// The periods service and the ledger agree on every state.
	ps := p.periods(pw)
	for _, want := range []struct{ period, status string }{{"2025-03", "hard-locked"}, {"2025-04", "open"}, {"2025-07", "hard-locked"}} {
		got, ok := periodOf(ps, want.period)
		if !ok || got.Status != want.status {
			t.Fatalf("listed %s: %+v, want %s", want.period, got, want.status)
		}
		if st := ledgerLock(t, p, tenant, want.period); st != want.status && !(st == "" && want.status == "open") {
			t.Fatalf("ledger %s: %q, want %s", want.period, st, want.status)
		}
	}
	// Every change's period_lock_set echo from the ledger is consumed
	// without moving the local state.
	p.echoesConsumed(tenant)
	for _, want := range []struct{ period, status string }{{"2025-03", "hard-locked"}, {"2025-07", "hard-locked"}} {
		if got := p.listedPeriod(pw, want.period); got.Status != want.status {
			t.Fatalf("%s after the echoes: %+v", want.period, got)
		}
	}
	p.verifyOK(w, -1)
}

// ---- the adjustment period ----

// TestPeriodsAdjustment: create-adjustment creates YYYY-13, open, which
// takes postings (booking field period) while the year's months are all
// hard-locked, and has lock states of its own.
func TestPeriodsAdjustment(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "100000"}, "Abschluss GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")
	pw, pwID := p.newKey(admin, "perioden:read", "perioden:write")
	by := p.keyLabel(admin, pwID)

	p.book(w, bookingBody("2025-12-15", "Dezember", bline("6310", "1800", "100.00")))
	closing := bookingBody("2025-12-31", "Abschlussbuchung", bline("6310", "1800", "5.00"))
	closing["period"] = "2025-13"
	// Before it exists the adjustment period takes nothing and has no state.
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bookings", w, closing)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/periods/2025-13/soft-lock", pw, nil)
	if _, ok := periodOf(p.periods(pw), "2025-13"); ok {
		t.Fatal("2025-13 listed before it was created")
	}
	for _, bad := range []string{"25", "abc", "2025-13", "0999"} {
		p.expectError(400, "INVALID_INPUT", "POST", "/v1/periods/"+bad+"/create-adjustment", pw, nil)
	}

	r := p.must(201, "POST", "/v1/periods/2025/create-adjustment", pw, nil)
	adj := p.periodOfAnswer("create-adjustment", r)
	if adj.Period != "2025-13" || adj.Status != "open" || adj.PeriodNumber != 13 || !adj.IsAdjustment || adj.BookingCount != 0 || adj.LockedBy != nil || adj.LockedAt != nil {
		t.Fatalf("create-adjustment answered %s", r.Raw)
	}
	if st := ledgerLock(t, p, tenant, "2025-13"); st != "open" {
		t.Fatalf("the ledger knows 2025-13 as %q", st)
	}
	p.expectError(409, "CONFLICT", "POST", "/v1/periods/2025/create-adjustment", pw, nil)

	// Festschreibung of the whole year through the gateway.
	for m := 1; m <= 12; m++ {
		if got := p.transition("lock", fmt.Sprintf("2025-%02d", m), pw); got.Status != "hard-locked" {
			t.Fatalf("lock 2025-%02d: %+v", m, got)
		}
	}
	dec := bookingBody("2025-12-31", "Abschlussbuchung", bline("6310", "1800", "5.00"))
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, dec)
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, bookingBody("2025-01-02", "Januar", bline("6310", "1800", "5.00")))
	// The adjustment period still takes postings dated in its year...
	posted := p.book(w, closing)
	p.wantCount(1, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND id = $2 AND period = '2025-13'", tenant, posted.IntentID)
	if d := p.must(200, "GET", "/v1/journal/"+posted.IntentID, w, nil); d.str("period") != "2025-13" {
		t.Fatalf("adjustment intent: %s", d.Raw)
	}
	second := bookingBody("2025-06-30", "Rückstellung", bline("6310", "1800", "7.00"))
	second["period"] = "2025-13"
	p.book(w, second)
	// ...but not of another year.
	other := bookingBody("2026-01-05", "Falsches Jahr", bline("6310", "1800", "1.00"))
	other["period"] = "2025-13"
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/bookings", w, other)

	// The adjustment period is listed with number 13 and counts its intents.
	eventually(t, 5*time.Second, func() error {
		got, ok := periodOf(p.periods(pw), "2025-13")
		if !ok || got.BookingCount != 2 || got.PeriodNumber != 13 || !got.IsAdjustment || got.Status != "open" {
			return fmt.Errorf("2025-13 listed as %+v", got)
		}
		if dec, _ := periodOf(p.periods(pw), "2025-12"); dec.BookingCount != 1 || dec.Status != "hard-locked" || dec.PeriodNumber != 12 {
			return fmt.Errorf("2025-12 listed as %+v", dec)
		}
		return nil
	})

	// Its own lock states: soft-lock, reopen, lock.
	sl := p.transition("soft-lock", "2025-13", pw)
	if sl.Status != "soft-locked" || sl.PeriodNumber != 13 || !sl.IsAdjustment || sl.LockedBy == nil || *sl.LockedBy != by {
		t.Fatalf("soft-lock 2025-13: %+v", sl)
	}
	closing["skip_duplicate_check"] = true
	before := ledgerSnapshot(t, p, tenant)
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, closing)
	p.sameLedger("a refused adjustment posting", tenant, before)
	p.expectError(409, "PERIOD_ALREADY_SOFT_LOCKED", "POST", "/v1/periods/2025-13/soft-lock", pw, nil)
	p.transition("reopen", "2025-13", pw)
	p.book(w, closing)
	if got := p.transition("lock", "2025-13", pw); got.Status != "hard-locked" || got.PeriodNumber != 13 {
		t.Fatalf("lock 2025-13: %+v", got)
	}
	p.expectError(409, "PERIOD_LOCKED", "POST", "/v1/bookings", w, closing)
	p.expectError(409, "PERIOD_ALREADY_LOCKED", "POST", "/v1/periods/2025-13/reopen", pw, nil)
	p.expectError(409, "CONFLICT", "POST", "/v1/periods/2025/create-adjustment", pw, nil)
	// Another year's adjustment period is still missing.
	p.expectError(404, "NOT_FOUND", "POST", "/v1/periods/2024-13/soft-lock", pw, nil)
	p.verifyOK(w, -1)
}

// ---- the listing ----

// TestPeriodsList: GET /v1/periods lists the current fiscal year's months
// and every period with bookings or a state, counts intents per period from
// the ledger's events, and numbers periods by the tenant's fiscal year
// start month.
func TestPeriodsList(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Liste GmbH")
	w, pr := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "perioden:read")

	// A new tenant: the months of the current calendar year, open and empty,
	// newest first.
	now := time.Now().UTC()
	ps := p.periods(pr)
	fy := fiscalYearMonths(now, 1)
	got := []string{}
	for _, pb := range ps {
		got = append(got, pb.Period)
		if pb.Status != "open" || pb.BookingCount != 0 || pb.LockedBy != nil || pb.LockedAt != nil || pb.IsAdjustment {
			t.Fatalf("fresh period %+v", pb)
		}
		var m int
		fmt.Sscanf(pb.Period[5:], "%d", &m)
		if pb.PeriodNumber != m {
			t.Fatalf("%s has number %d with a January fiscal year", pb.Period, pb.PeriodNumber)
		}
	}
	want := slices.Clone(fy)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("fresh listing %v, want %v", got, want)
	}

	// booking_count counts intents, not lines or entries: a taxed booking
	// with two lines is one.
	p.book(w, bookingBody("2025-03-10", "Büro", bline("6815", "1800", "119.00", "tax_code", "VSt19"), bline("6805", "1800", "10.00")))
	m2 := p.book(w, bookingBody("2025-03-20", "Telefon", bline("6805", "1800", "20.00")))
	p.book(w, bookingBody("2025-05-02", "Mai", bline("6310", "1800", "30.00")))
	// A reversal is an intent of the month it is dated in.
	p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": m2.IntentID, "booking_date": "2025-06-30"})
	thisMonth := now.Format("2006-01")
	p.book(w, bookingBody(now.Format("2006-01-02"), "Heute", bline("6310", "1800", "1.00")))
	counts := map[string]int64{"2025-03": 2, "2025-05": 1, "2025-06": 1, thisMonth: 1}
	eventually(t, 5*time.Second, func() error {
		ps := p.periods(pr)
		for period, n := range counts {
			if got, ok := periodOf(ps, period); !ok || got.BookingCount != n {
				return fmt.Errorf("%s listed as %+v, want %d bookings", period, got, n)
			}
		}
		if got, ok := periodOf(ps, "2025-04"); ok && got.BookingCount != 0 {
			return fmt.Errorf("2025-04 has bookings: %+v", got)
		}
		return nil
	})
	// Newest first; as text YYYY-13 comes before its year's months.
	p.must(201, "POST", "/v1/periods/2025/create-adjustment", admin, nil)
	ps = p.periods(pr)
	got = got[:0]
	for _, pb := range ps {
		got = append(got, pb.Period)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatalf("listing not newest first: %v", got)
	}
	if i := slices.Index(got, "2025-13"); i < 0 || got[i+1] != "2025-06" {
		t.Fatalf("2025-13 misplaced: %v", got)
	}
	for _, period := range fy {
		if !slices.Contains(got, period) {
			t.Fatalf("current fiscal year month %s missing: %v", period, got)
		}
	}

	// A lock shows in the listing with who and when.
	sl := p.transition("soft-lock", "2025-05", admin)
	got5 := p.listedPeriod(pr, "2025-05")
	if got5.Status != "soft-locked" || got5.LockedBy == nil || *got5.LockedBy != *sl.LockedBy || got5.LockedAt == nil || *got5.LockedAt != *sl.LockedAt || got5.BookingCount != 1 {
		t.Fatalf("listed after soft-lock: %+v, soft-lock answered %+v", got5, sl)
	}
	assertRecent(t, "listed locked_at", got5.LockedAt)

	// A fiscal year from April: the numbers follow, the April-to-March year
	// containing today is listed, nothing else changes.
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"fiscal_year_start_month": 4})
	fy4 := fiscalYearMonths(now, 4)
	eventually(t, 5*time.Second, func() error {
		ps := p.periods(pr)
		wantNum := map[string]int{"2025-03": 12, "2025-05": 2, "2026-01": 10, "2025-06": 3, "2025-13": 13, fy4[0]: 1, fy4[11]: 12}
		for period, n := range wantNum {
			if got, ok := periodOf(ps, period); !ok || got.PeriodNumber != n {
				return fmt.Errorf("%s listed as %+v, want number %d", period, got, n)
			}
		}
		for _, period := range fy4 {
			if _, ok := periodOf(ps, period); !ok {
				return fmt.Errorf("fiscal year month %s missing", period)
			}
		}
		return nil
	})
	if got := p.listedPeriod(pr, "2025-05"); got.Status != "soft-locked" || got.BookingCount != 1 {
		t.Fatalf("2025-05 after the fiscal year change: %+v", got)
	}
	// Transitions number by the new start month too.
	if got := p.transition("reopen", "2025-05", admin); got.PeriodNumber != 2 {
		t.Fatalf("reopen with an April fiscal year: %+v", got)
	}
	if got := p.transition("soft-lock", "2026-01", admin); got.PeriodNumber != 10 {
		t.Fatalf("soft-lock 2026-01 with an April fiscal year: %+v", got)
	}
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"fiscal_year_start_month": 1})
	if got := p.listedPeriod(pr, "2026-01"); got.PeriodNumber != 1 {
		t.Fatalf("2026-01 back on a January fiscal year: %+v", got)
	}
	if n := count(t, p.owner, "SELECT count(*) FROM periods.periods WHERE tenant_id = $1", tenant); n != len(p.periods(pr)) {
		t.Fatalf("%d stored periods, listing differs", n)
	}
}
