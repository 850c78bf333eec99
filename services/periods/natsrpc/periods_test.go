package natsrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

type okPeriod struct {
	OK     bool             `json:"ok"`
	Period periodsv1.Period `json:"period"`
}

// transition sends a lock command and returns the period it answered.
func (h *harness) transition(t *testing.T, subject string, c *auth.Claims, period string) periodsv1.Period {
	t.Helper()
	if subject == periodsv1.SubjectSoftLock {
		var p periodsv1.Period
		h.OK(subject, testkit.Rq{As: c, Params: param("period", period)}, http.StatusOK, &p)
		return p
	}
	var out okPeriod
	h.OK(subject, testkit.Rq{As: c, Params: param("period", period)}, http.StatusOK, &out)
	if !out.OK {
		t.Fatalf("%s %s: ok = false", subject, period)
	}
	return out.Period
}

// Every transition of the state table, and every refusal, in one history.
func TestLockTransitions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Closing")
	by := "Closing (lgr_Clos)"
	const (
		soft = periodsv1.SubjectSoftLock
		lock = periodsv1.SubjectLock
		open = periodsv1.SubjectReopen
	)
	steps := []struct {
		name    string
		subject string
		period  string
		status  int    // of the answer
		code    string // of a refusal
		want    string // stored state afterwards ("" without a row)
	}{
		{"reopen a month never seen", open, "2025-02", 409, errs.PeriodNotLocked, ""},
		{"soft-lock an open month", soft, "2025-02", 200, "", "soft-locked"},
		{"soft-lock a soft-locked month", soft, "2025-02", 409, errs.PeriodAlreadySoftLocked, "soft-locked"},
		{"reopen a soft-locked month", open, "2025-02", 200, "", "open"},
		{"soft-lock a reopened month", soft, "2025-02", 200, "", "soft-locked"},
		{"hard-lock a soft-locked month", lock, "2025-02", 200, "", "hard-locked"},
		{"soft-lock a hard-locked month", soft, "2025-02", 409, errs.PeriodAlreadyLocked, "hard-locked"},
		{"hard-lock a hard-locked month", lock, "2025-02", 409, errs.PeriodAlreadyLocked, "hard-locked"},
		{"reopen a hard-locked month", open, "2025-02", 409, errs.PeriodAlreadyLocked, "hard-locked"},
		{"hard-lock an open month", lock, "2025-03", 200, "", "hard-locked"},
		{"soft-lock a month of another year without bookings", soft, "2019-07", 200, "", "soft-locked"},
		{"reopen an open month", open, "2025-04", 409, errs.PeriodNotLocked, ""},
		{"soft-lock it", soft, "2025-04", 200, "", "soft-locked"},
		{"reopen it", open, "2025-04", 200, "", "open"},
		{"reopen it again", open, "2025-04", 409, errs.PeriodNotLocked, "open"},
	}
	var wantCommands []ledgerv1.SetPeriodLock
	for _, s := range steps {
		if s.code != "" {
			got := h.Fails(s.subject, testkit.Rq{As: c, Params: param("period", s.period)}, s.status, s.code)
			if got.Err.Error == "" {
				t.Errorf("%s: refusal without a message", s.name)
			}
		} else {
			p := h.transition(t, s.subject, c, s.period)
			want := periodsv1.Period{Period: s.period, Status: s.want, PeriodNumber: periodNumber(s.period)}
			if s.want != "open" {
				want.LockedBy = &by
				if p.LockedAt == nil {
					t.Errorf("%s: locked_at = null", s.name)
				} else if _, err := time.Parse(time.RFC3339Nano, *p.LockedAt); err != nil {
					t.Errorf("%s: locked_at %q: %v", s.name, *p.LockedAt, err)
				}
			} else if p.LockedAt != nil {
				t.Errorf("%s: locked_at = %s on an open period", s.name, *p.LockedAt)
			}
			if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(periodsv1.Period{}, "LockedAt")); diff != "" {
				t.Errorf("%s: answer (-want +got):\n%s", s.name, diff)
			}
			wantCommands = append(wantCommands, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: s.period, Status: s.want, LockedBy: by})
		}
		if got, _ := h.status(t, c.TenantID, s.period); got != s.want {
			t.Errorf("%s: stored status %q, want %q", s.name, got, s.want)
		}
	}
	if diff := cmp.Diff(wantCommands, h.Peers.Commands()); diff != "" {
		t.Errorf("commands to the ledger (-want +got):\n%s", diff)
	}
}

// periodNumber is the number of a month of a calendar fiscal year.
func periodNumber(p string) int {
	if p[5:] == "13" {
		return 13
	}
	n := int(p[5]-'0')*10 + int(p[6]-'0')
	return n
}

// The soft-lock answer has exactly the fields of the specification (plus
// booking_count and is_adjustment).
func TestSoftLockAnswerShape(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := &auth.Claims{TenantID: periodstest.Tenant("x").TenantID, UserID: "u1", Email: "anna@example.com", Scopes: []string{"perioden:write"}}
	got := h.Call(periodsv1.SubjectSoftLock, testkit.Rq{As: c, Params: param("period", "2025-01")})
	var m map[string]any
	if err := json.Unmarshal(got.Body, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for k := range m {
		keys = append(keys, k)
	}
	if diff := cmp.Diff([]string{"booking_count", "is_adjustment", "locked_at", "locked_by", "period", "period_number", "status"}, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if m["locked_by"] != "anna@example.com" || m["status"] != "soft-locked" || m["period_number"] != float64(1) {
		t.Errorf("answer = %s", got.Body)
	}
}

func TestMalformedPeriods(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Malformed")
	for _, subject := range []string{periodsv1.SubjectSoftLock, periodsv1.SubjectLock, periodsv1.SubjectReopen} {
		for _, p := range []string{"2025-00", "2025-1", "abc", "2025-14", "", "2025-01-01", "0999-01", "2025/01"} {
			got := h.Fails(subject, testkit.Rq{As: c, Params: param("period", p)}, http.StatusBadRequest, errs.InvalidInput)
			if diff := cmp.Diff([]errs.Detail{{Field: "period", Issue: "expected YYYY-MM"}}, got.Err.Details); diff != "" {
				t.Errorf("%s %q: details (-want +got):\n%s", subject, p, diff)
			}
		}
		// The adjustment period exists only once created.
		h.Fails(subject, testkit.Rq{As: c, Params: param("period", "2025-13")}, http.StatusNotFound, errs.NotFound)
	}
	for _, y := range []string{"25", "abcd", "2025-01", "", "0999", "20255"} {
		h.Fails(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", y)}, http.StatusBadRequest, errs.InvalidInput)
	}
	if cmds := h.Peers.Commands(); len(cmds) != 0 {
		t.Errorf("the ledger got %v for refused requests", cmds)
	}
	if ps := h.periods(t, c); len(ps) != 12 {
		t.Errorf("refused requests left periods behind: %v", ps)
	}
}

func TestAdjustmentPeriod(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Adjust")
	by := "Adjust (lgr_Adju)"
	var created okPeriod
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2024")}, http.StatusCreated, &created)
	want := okPeriod{OK: true, Period: periodsv1.Period{Period: "2024-13", Status: "open", PeriodNumber: 13, IsAdjustment: true}}
	if diff := cmp.Diff(want, created); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	h.Fails(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2024")}, http.StatusConflict, errs.Conflict)

	p := h.transition(t, periodsv1.SubjectSoftLock, c, "2024-13")
	if p.Status != "soft-locked" || p.PeriodNumber != 13 || !p.IsAdjustment {
		t.Errorf("soft-lock 2024-13 = %+v", p)
	}
	h.Fails(periodsv1.SubjectSoftLock, testkit.Rq{As: c, Params: param("period", "2024-13")}, http.StatusConflict, errs.PeriodAlreadySoftLocked)
	h.transition(t, periodsv1.SubjectReopen, c, "2024-13")
	h.transition(t, periodsv1.SubjectLock, c, "2024-13")
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: c, Params: param("period", "2024-13")}, http.StatusConflict, errs.PeriodAlreadyLocked)

	wantCommands := []ledgerv1.SetPeriodLock{
		{TenantID: c.TenantID, Period: "2024-13", Status: "open", LockedBy: by},
		{TenantID: c.TenantID, Period: "2024-13", Status: "soft-locked", LockedBy: by},
		{TenantID: c.TenantID, Period: "2024-13", Status: "open", LockedBy: by},
		{TenantID: c.TenantID, Period: "2024-13", Status: "hard-locked", LockedBy: by},
	}
	if diff := cmp.Diff(wantCommands, h.Peers.Commands()); diff != "" {
		t.Errorf("commands to the ledger (-want +got):\n%s", diff)
	}

	// Newest first: the adjustment period follows December of its year.
	var ps []periodsv1.Period
	h.OK(periodsv1.SubjectList, testkit.Rq{As: c}, http.StatusOK, &ps)
	var order []string
	for _, p := range ps {
		order = append(order, p.Period)
	}
	wantOrder := []string{"2025-12", "2025-11", "2025-10", "2025-09", "2025-08", "2025-07", "2025-06", "2025-05", "2025-04", "2025-03", "2025-02", "2025-01", "2024-13"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("list order (-want +got):\n%s", diff)
	}
}

// The list holds the current fiscal year, numbered from the tenant's start
// month, and every other period the tenant has.
func TestListFiscalYear(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Fiscal")
	h.Peers.SetFiscalStart(c.TenantID, 4) // April to March
	h.transition(t, periodsv1.SubjectSoftLock, c, "2023-05")
	periodstest.PublishIntent(t, h.JS, "fy-1", c.TenantID, "2024-06")
	periodstest.PublishIntent(t, h.JS, "fy-2", c.TenantID, "2024-06")
	testkit.Eventually(t, "bookings counted", func() bool { return h.Drained(t, "periods-bookings") })

	var ps []periodsv1.Period
	for range 2 { // listing again creates nothing more
		h.OK(periodsv1.SubjectList, testkit.Rq{As: c}, http.StatusOK, &ps)
	}
	want := []periodsv1.Period{}
	for i, p := range []string{"2025-03", "2025-02", "2025-01", "2024-12", "2024-11", "2024-10", "2024-09", "2024-08", "2024-07", "2024-06", "2024-05", "2024-04"} {
		want = append(want, periodsv1.Period{Period: p, Status: "open", PeriodNumber: 12 - i})
	}
	want[9].BookingCount = 2
	by := "Fiscal (lgr_Fisc)"
	want = append(want, periodsv1.Period{Period: "2023-05", Status: "soft-locked", PeriodNumber: 2, LockedBy: &by})
	if diff := cmp.Diff(want, ps, cmpopts.IgnoreFields(periodsv1.Period{}, "LockedAt")); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	// A new start month renumbers, and its fiscal year is listed too.
	h.Peers.SetFiscalStart(c.TenantID, 1)
	got := h.periods(t, c)
	if len(got) != 22 || got["2025-12"].PeriodNumber != 12 || got["2024-06"].PeriodNumber != 6 || got["2023-05"].PeriodNumber != 5 {
		t.Errorf("after the change of start month: %d periods, %+v", len(got), got)
	}
}

// When the ledger does not apply a change, nothing changes here.
func TestLedgerFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Failing")
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-01")

	h.Peers.FailLocks(errs.Internal, false)
	h.Fails(periodsv1.SubjectSoftLock, testkit.Rq{As: c, Params: param("period", "2025-02")}, http.StatusServiceUnavailable, errs.Unavailable)
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: c, Params: param("period", "2025-01")}, http.StatusServiceUnavailable, errs.Unavailable)
	h.Peers.FailLocks(errs.Timeout, false)
	h.Fails(periodsv1.SubjectLock, testkit.Rq{As: c, Params: param("period", "2025-01")}, http.StatusGatewayTimeout, errs.Timeout)
	h.Peers.FailLocks("", false)
	h.Peers.StopLedger()
	h.Fails(periodsv1.SubjectLock, testkit.Rq{As: c, Params: param("period", "2025-01")}, http.StatusServiceUnavailable, errs.Unavailable)
	h.Fails(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2025")}, http.StatusServiceUnavailable, errs.Unavailable)

	for p, want := range map[string]string{"2025-01": "soft-locked", "2025-02": "", "2025-13": ""} {
		if got, _ := h.status(t, c.TenantID, p); got != want {
			t.Errorf("%s: status %q, want %q", p, got, want)
		}
	}
	// Only the first soft-lock was announced.
	testkit.Eventually(t, "the relay to publish", func() bool {
		s, err := h.JS.Stream(context.Background(), periodsv1.StreamEvents)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 1
	})
	time.Sleep(200 * time.Millisecond)
	s, _ := h.JS.Stream(context.Background(), periodsv1.StreamEvents)
	if info, _ := s.Info(context.Background()); info.State.Msgs != 1 {
		t.Errorf("%d period_changed events, want 1", info.State.Msgs)
	}
}

// Of concurrent soft-locks of one month exactly one wins; the ledger hears
// of it once.
func TestConcurrentSoftLocks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Race")
	const n = 8
	var wg sync.WaitGroup
	results := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := auth.WithClaims(context.Background(), c)
			r, err := h.Client.Do(ctx, periodsv1.SubjectSoftLock, &natsx.Request{Params: map[string][]string{"period": {"2025-05"}}})
			if err != nil {
				results <- err.Error()
				return
			}
			if r.ErrCode != "" {
				results <- r.ErrCode
				return
			}
			results <- "ok"
		}()
	}
	wg.Wait()
	close(results)
	counts := map[string]int{}
	for r := range results {
		counts[r]++
	}
	if diff := cmp.Diff(map[string]int{"ok": 1, errs.PeriodAlreadySoftLocked: n - 1}, counts); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if cmds := h.Peers.Commands(); len(cmds) != 1 {
		t.Errorf("ledger commands = %v, want one", cmds)
	}

	// A soft-lock and a hard-lock racing end hard-locked either way.
	var wg2 sync.WaitGroup
	for _, s := range []string{periodsv1.SubjectSoftLock, periodsv1.SubjectLock} {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			ctx := auth.WithClaims(context.Background(), c)
			_, _ = h.Client.Do(ctx, s, &natsx.Request{Params: map[string][]string{"period": {"2025-06"}}})
		}()
	}
	wg2.Wait()
	if got, _ := h.status(t, c.TenantID, "2025-06"); got != "hard-locked" {
		t.Errorf("2025-06 after a soft-lock and a hard-lock: %q", got)
	}
}

// Every change goes out as period_changed through the outbox.
func TestPeriodChangedEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Events")
	h.Peers.SetFiscalStart(c.TenantID, 7)
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-08")
	h.transition(t, periodsv1.SubjectLock, c, "2025-08")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2025")}, http.StatusCreated, nil)

	ctx := context.Background()
	cons, err := h.JS.OrderedConsumer(ctx, periodsv1.StreamEvents, jetstream.OrderedConsumerConfig{FilterSubjects: []string{periodsv1.EventPeriodChanged}})
	if err != nil {
		t.Fatal(err)
	}
	var got []periodsv1.PeriodChanged
	for len(got) < 3 {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		var ev periodsv1.PeriodChanged
		if err := json.Unmarshal(msg.Data(), &ev); err != nil {
			t.Fatal(err)
		}
		if msg.Headers().Get(jetstream.MsgIDHeader) == "" {
			t.Error("event without Nats-Msg-Id")
		}
		got = append(got, ev)
	}
	by := "Events (lgr_Even)"
	want := []periodsv1.PeriodChanged{
		{TenantID: c.TenantID, Period: periodsv1.Period{Period: "2025-08", Status: "soft-locked", PeriodNumber: 2, LockedBy: &by}, PreviousStatus: "open", Source: "api"},
		{TenantID: c.TenantID, Period: periodsv1.Period{Period: "2025-08", Status: "hard-locked", PeriodNumber: 2, LockedBy: &by}, PreviousStatus: "soft-locked", Source: "api"},
		{TenantID: c.TenantID, Period: periodsv1.Period{Period: "2025-13", Status: "open", PeriodNumber: 13, IsAdjustment: true}, PreviousStatus: "", Source: "api"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(periodsv1.Period{}, "LockedAt"), cmpopts.IgnoreFields(periodsv1.PeriodChanged{}, "ChangedAt")); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, ev := range got {
		if ev.ChangedAt.IsZero() || (ev.Status != "open") != (ev.LockedAt != nil) {
			t.Errorf("event %+v: changed_at or locked_at wrong", ev)
		}
	}
}

func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, s := range []string{periodsv1.SubjectList, periodsv1.SubjectSoftLock, periodsv1.SubjectLock, periodsv1.SubjectReopen,
		periodsv1.SubjectCreateAdjustment, periodsv1.SubjectTasksList, periodsv1.SubjectTasksCreate, periodsv1.SubjectTasksUpdate} {
		h.Fails(s, testkit.Rq{Params: map[string]string{"period": "2025-01", "year": "2025", "id": "x"}}, http.StatusUnauthorized, errs.Unauthenticated)
		h.Fails(s, testkit.Rq{As: &auth.Claims{Scopes: []string{auth.Admin}}}, http.StatusUnauthorized, errs.Unauthenticated)
	}
}

// The internal status subject, for reporting.
func TestStatusSubject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Status")
	other := periodstest.Tenant("Other")
	h.transition(t, periodsv1.SubjectLock, c, "2025-01")
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-02")
	h.transition(t, periodsv1.SubjectSoftLock, c, "2024-12")
	h.transition(t, periodsv1.SubjectSoftLock, other, "2025-03")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2025")}, http.StatusCreated, nil)

	tests := []struct {
		name string
		req  periodsv1.StatusRequest
		want map[string]string
	}{
		{"the year with its adjustment period", periodsv1.StatusRequest{TenantID: c.TenantID, From: "2025-01", To: "2025-13"},
			map[string]string{"2025-01": "hard-locked", "2025-02": "soft-locked", "2025-13": "open"}},
		{"the months only", periodsv1.StatusRequest{TenantID: c.TenantID, From: "2025-01", To: "2025-12"},
			map[string]string{"2025-01": "hard-locked", "2025-02": "soft-locked"}},
		{"open-ended", periodsv1.StatusRequest{TenantID: c.TenantID},
			map[string]string{"2024-12": "soft-locked", "2025-01": "hard-locked", "2025-02": "soft-locked", "2025-13": "open"}},
		{"another tenant", periodsv1.StatusRequest{TenantID: other.TenantID, From: "2025-01", To: "2025-13"},
			map[string]string{"2025-03": "soft-locked"}},
		{"an unknown tenant", periodsv1.StatusRequest{TenantID: periodstest.Tenant("x").TenantID}, map[string]string{}},
	}
	// Reporting asks, for the tenant of its own signed principal.
	asReporting := func(req periodsv1.StatusRequest) testkit.Rq {
		tenant := req.TenantID
		req.TenantID = ""
		return testkit.Rq{Service: "reporting", As: &auth.Claims{TenantID: tenant}, Body: req}
	}
	for _, tt := range tests {
		var got periodsv1.StatusReply
		h.OK(periodsv1.SubjectStatus, asReporting(tt.req), http.StatusOK, &got)
		if diff := cmp.Diff(periodsv1.StatusReply{Statuses: tt.want}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	for _, rq := range []testkit.Rq{
		asReporting(periodsv1.StatusRequest{TenantID: "nope"}),
		asReporting(periodsv1.StatusRequest{TenantID: c.TenantID, From: "2025-1"}),
		asReporting(periodsv1.StatusRequest{TenantID: c.TenantID, To: "2025-14"}),
		{Service: "reporting", As: c, Body: `{"from":"2025-01","extra":1}`},
		// The tenant is the principal's; a body naming one is refused.
		{Service: "reporting", As: c, Body: periodsv1.StatusRequest{TenantID: other.TenantID}},
	} {
		h.Fails(periodsv1.SubjectStatus, rq, http.StatusBadRequest, errs.InvalidInput)
	}
	// Only reporting may ask.
	h.Fails(periodsv1.SubjectStatus, testkit.Rq{As: c}, http.StatusForbidden, errs.Forbidden)
	h.Fails(periodsv1.SubjectStatus, testkit.Rq{Service: "bank", As: c}, http.StatusForbidden, errs.Forbidden)
}

// Tenant B sees and changes nothing of tenant A.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := periodstest.Tenant("A GmbH"), periodstest.Tenant("B GmbH")
	h.Peers.SetFiscalStart(b.TenantID, 7)
	h.transition(t, periodsv1.SubjectSoftLock, a, "2025-02")
	h.transition(t, periodsv1.SubjectLock, a, "2023-01")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: a, Params: param("year", "2024")}, http.StatusCreated, nil)
	periodstest.PublishIntent(t, h.JS, "iso-1", a.TenantID, "2025-02")
	testkit.Eventually(t, "bookings counted", func() bool { return h.Drained(t, natsrpc.BookingsConsumer) })
	var task periodsv1.Task
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: a, Body: map[string]any{"period": "2025-02", "title": "A's task"}}, http.StatusCreated, &task)

	bs := h.periods(t, b)
	if p := bs["2025-02"]; p.Status != "open" || p.BookingCount != 0 || p.PeriodNumber != 8 {
		t.Errorf("B's 2025-02 = %+v", p)
	}
	for _, p := range []string{"2023-01", "2024-13"} {
		if _, ok := bs[p]; ok {
			t.Errorf("B sees A's %s", p)
		}
	}
	if l := h.tasks(t, b, "2025-02"); len(l.Tasks) != 4 {
		t.Errorf("B's checklist of 2025-02 has %d tasks, want the 4 computed ones", len(l.Tasks))
	}
	h.Fails(periodsv1.SubjectTasksUpdate, testkit.Rq{As: b, Params: param("id", task.ID), Body: map[string]any{"status": "done"}}, http.StatusNotFound, errs.NotFound)
	h.Fails(periodsv1.SubjectSoftLock, testkit.Rq{As: b, Params: param("period", "2024-13")}, http.StatusNotFound, errs.NotFound)
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: b, Params: param("period", "2025-02")}, http.StatusConflict, errs.PeriodNotLocked)
	// B's own lock of the same month is B's alone.
	h.transition(t, periodsv1.SubjectLock, b, "2025-02")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: b, Params: param("year", "2024")}, http.StatusCreated, nil)

	as := h.periods(t, a)
	if p := as["2025-02"]; p.Status != "soft-locked" || p.BookingCount != 1 {
		t.Errorf("A's 2025-02 after B's changes = %+v", p)
	}
	if l := h.tasks(t, a, "2025-02"); len(l.Tasks) != 5 || l.Tasks[4].Status != "open" {
		t.Errorf("A's checklist after B's attempt: %+v", l.Tasks)
	}

	// Row-level security fences the service role even without a filter.
	ctx := context.Background()
	svcPool, err := db.Open(ctx, h.DBURL, postgres.Migrations.Role, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer svcPool.Close()
	for setting, want := range map[string]int{b.TenantID: 0, "": 0, a.TenantID: 15} {
		var n int
		err := db.WithTx(ctx, svcPool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if setting != "" {
				if err := db.SetTenant(ctx, tx, setting); err != nil {
					return err
				}
			}
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM periods.periods WHERE tenant_id = $1)
				+ (SELECT count(*) FROM periods.closing_tasks WHERE tenant_id = $1)`, a.TenantID).Scan(&n)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("app.tenant_id %q sees %d of A's rows, want %d", setting, n, want)
		}
	}
}
