package natsrpc_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
)

func (h *harness) tasks(t *testing.T, c *auth.Claims, period string) periodsv1.TaskList {
	t.Helper()
	var q url.Values
	if period != "" {
		q = url.Values{"period": {period}}
	}
	var l periodsv1.TaskList
	h.OK(periodsv1.SubjectTasksList, testkit.Rq{As: c, Query: q}, http.StatusOK, &l)
	return l
}

// computedTask builds the expected computed task.
func computedTask(key, period, title, status, detail string) periodsv1.Task {
	return periodsv1.Task{ID: key, Kind: "computed", Key: &key, Period: period, Title: title, Status: status, Detail: &detail}
}

// The bank reconciliation task asks the bank about the month: done when
// every bank transaction of it is reconciled or evidenced.
func TestComputedBankTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Bank")
	bank := func(period string) periodsv1.Task {
		t.Helper()
		return h.tasks(t, c, period).Tasks[1]
	}
	const title = "Bank accounts reconciled"
	for _, tc := range []struct {
		name   string
		period string
		st     bankv1.PeriodStatus
		want   periodsv1.Task
	}{
		{"open transactions", "2025-02", bankv1.PeriodStatus{BankAccounts: 2, Total: 10, Open: 3, Reconciled: 5, Evidenced: 2},
			computedTask("bank_reconciled", "2025-02", title, "open", "3 of 10 bank transaction(s) of the period open (5 reconciled, 2 evidenced): GET /v1/bank-transactions?status=open&from=2025-02-01&to=2025-02-28")},
		{"all reconciled or evidenced", "2024-12", bankv1.PeriodStatus{BankAccounts: 1, Total: 7, Reconciled: 5, Evidenced: 2},
			computedTask("bank_reconciled", "2024-12", title, "done", "all 7 bank transaction(s) of the period reconciled or evidenced (5 reconciled, 2 evidenced)")},
		{"no transactions", "2025-03", bankv1.PeriodStatus{BankAccounts: 1},
			computedTask("bank_reconciled", "2025-03", title, "done", "no bank transactions booked in the period")},
		{"bank unavailable", "2025-03", bankv1.PeriodStatus{BankAccounts: -1},
			computedTask("bank_reconciled", "2025-03", title, "open", "the bank transactions could not be counted right now; try again")},
	} {
		h.Peers.SetBank(c.TenantID, tc.st)
		if diff := cmp.Diff(tc.want, bank(tc.period)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if diff := cmp.Diff([]string{"2025-02-01..2025-02-28", "2024-12-01..2024-12-31", "2025-03-01..2025-03-31", "2025-03-01..2025-03-31"}, h.Peers.BankAsked()); diff != "" {
		t.Errorf("ranges asked (-want +got):\n%s", diff)
	}
	// An adjustment period has no bank transactions; the bank is not asked.
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: c, Params: param("year", "2025")}, http.StatusCreated, nil)
	if diff := cmp.Diff(computedTask("bank_reconciled", "2025-13", title, "skipped", "an adjustment period has no bank transactions"), bank("2025-13")); diff != "" {
		t.Errorf("adjustment period (-want +got):\n%s", diff)
	}
	if n := len(h.Peers.BankAsked()); n != 4 {
		t.Errorf("the bank was asked %d times", n)
	}
}

// The computed tasks follow the books on every read.
func TestComputedTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Tasks")

	// Without bookings the checklist is the current month's.
	want := periodsv1.TaskList{Period: "2025-03", Tasks: []periodsv1.Task{
		computedTask("review_queue_empty", "2025-03", "Review queue is empty", "done", "no pending review-queue items"),
		computedTask("bank_reconciled", "2025-03", "Bank accounts reconciled", "skipped", "the tenant has no bank accounts"),
		computedTask("vat_prepared", "2025-03", "VAT return (UStVA) prepared", "open", "VAT return (UStVA) figures: run GET /v1/reports?type=susa&period=2025-03"),
		computedTask("period_soft_locked", "2025-03", "Period soft-locked", "open", "soft-lock it with POST /v1/periods/2025-03/soft-lock"),
	}}
	if diff := cmp.Diff(want, h.tasks(t, c, "")); diff != "" {
		t.Errorf("current month (-want +got):\n%s", diff)
	}

	// With bookings it is the latest booked month (adjustment periods aside).
	periodstest.PublishIntent(t, h.JS, "t-1", c.TenantID, "2024-12")
	periodstest.PublishIntent(t, h.JS, "t-2", c.TenantID, "2025-02")
	periodstest.PublishIntent(t, h.JS, "t-3", c.TenantID, "2025-13")
	testkit.Eventually(t, "bookings counted", func() bool { return h.Drained(t, natsrpc.BookingsConsumer) })
	if got := h.tasks(t, c, "").Period; got != "2025-02" {
		t.Errorf("default period = %s, want 2025-02", got)
	}

	h.Peers.SetPending(c.TenantID, 3)
	l := h.tasks(t, c, "2025-02")
	if diff := cmp.Diff(computedTask("review_queue_empty", "2025-02", "Review queue is empty", "open", "3 pending review-queue item(s): GET /v1/review-queue"), l.Tasks[0]); diff != "" {
		t.Errorf("pending reviews (-want +got):\n%s", diff)
	}
	h.Peers.FailReviewCount(errs.Unavailable)
	if got := h.tasks(t, c, "2025-02").Tasks[0]; got.Status != "open" || !strings.Contains(*got.Detail, "could not be counted") {
		t.Errorf("review count unavailable: %+v", got)
	}
	h.Peers.FailReviewCount("")
	h.Peers.SetPending(c.TenantID, 0)

	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-02")
	l = h.tasks(t, c, "2025-02")
	byKey := map[string]periodsv1.Task{}
	for _, task := range l.Tasks {
		byKey[task.ID] = task
	}
	if byKey["period_soft_locked"].Status != "done" || !strings.Contains(*byKey["period_soft_locked"].Detail, "soft-locked by Tasks (lgr_Task) at ") {
		t.Errorf("after the soft-lock: %+v", byKey["period_soft_locked"])
	}
	if byKey["vat_prepared"].Status != "done" || byKey["review_queue_empty"].Status != "done" {
		t.Errorf("after the soft-lock: %+v", l.Tasks)
	}
	h.transition(t, periodsv1.SubjectLock, c, "2025-02")
	if got := h.tasks(t, c, "2025-02").Tasks[3]; got.Status != "done" {
		t.Errorf("after the hard-lock: %+v", got)
	}

	// The adjustment period has a checklist once it exists.
	h.Fails(periodsv1.SubjectTasksList, testkit.Rq{As: c, Query: url.Values{"period": {"2026-13"}}}, http.StatusNotFound, errs.NotFound)
	if got := h.tasks(t, c, "2025-13"); got.Period != "2025-13" || len(got.Tasks) != 4 {
		t.Errorf("2025-13: %+v", got)
	}
	for _, p := range []string{"abc", "2025-00", "2025-1"} {
		h.Fails(periodsv1.SubjectTasksList, testkit.Rq{As: c, Query: url.Values{"period": {p}}}, http.StatusBadRequest, errs.InvalidInput)
	}
}

func TestManualTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Manual")

	var accruals, payroll, inventory periodsv1.Task
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-02", "title": "  Accruals booked ", "assignee": "Bea",
		"due_date": "2025-03-10", "note": "Rechnungsabgrenzung"}}, http.StatusCreated, &accruals)
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-02", "title": "Payroll checked"}}, http.StatusCreated, &payroll)
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-02", "title": "Inventory counted", "due_date": "2025-03-05", "status": "in_progress"}}, http.StatusCreated, &inventory)
	want := periodsv1.Task{Kind: "manual", Period: "2025-02", Title: "Accruals booked", Status: "open", Assignee: str("Bea"), DueDate: str("2025-03-10"), Note: str("Rechnungsabgrenzung")}
	if diff := cmp.Diff(want, accruals, cmpopts.IgnoreFields(periodsv1.Task{}, "ID", "UpdatedAt")); diff != "" {
		t.Errorf("created task (-want +got):\n%s", diff)
	}
	if _, err := uuid.Parse(accruals.ID); err != nil || accruals.UpdatedAt == nil {
		t.Errorf("created task id %q, updated_at %v", accruals.ID, accruals.UpdatedAt)
	}
	if inventory.Status != "in_progress" {
		t.Errorf("status on creation: %+v", inventory)
	}
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-01", "title": "Another month"}}, http.StatusCreated, nil)

	// Computed first, then manual: due first, undated last.
	var ids []string
	for _, task := range h.tasks(t, c, "2025-02").Tasks {
		ids = append(ids, task.ID)
	}
	if diff := cmp.Diff([]string{"review_queue_empty", "bank_reconciled", "vat_prepared", "period_soft_locked", inventory.ID, accruals.ID, payroll.ID}, ids); diff != "" {
		t.Errorf("checklist order (-want +got):\n%s", diff)
	}

	long := func(n int) string { return strings.Repeat("ä", n) }
	invalid := []struct {
		name  string
		body  any
		field string
	}{
		{"no period", map[string]any{"title": "x"}, "period"},
		{"bad period", map[string]any{"period": "2025-2", "title": "x"}, "period"},
		{"no title", map[string]any{"period": "2025-02"}, "title"},
		{"blank title", map[string]any{"period": "2025-02", "title": "   "}, "title"},
		{"long title", map[string]any{"period": "2025-02", "title": long(201)}, "title"},
		{"long assignee", map[string]any{"period": "2025-02", "title": "x", "assignee": long(101)}, "assignee"},
		{"long note", map[string]any{"period": "2025-02", "title": "x", "note": long(2001)}, "note"},
		{"bad due date", map[string]any{"period": "2025-02", "title": "x", "due_date": "2025-02-30"}, "due_date"},
		{"bad status", map[string]any{"period": "2025-02", "title": "x", "status": "finished"}, "status"},
		{"unknown field", map[string]any{"period": "2025-02", "title": "x", "priority": 1}, "priority"},
		{"wrong type", map[string]any{"period": "2025-02", "title": 5}, "title"},
	}
	for _, tt := range invalid {
		got := h.Fails(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: tt.body}, http.StatusBadRequest, errs.InvalidInput)
		if len(got.Err.Details) != 1 || got.Err.Details[0].Field != tt.field {
			t.Errorf("%s: details %+v, want one about %s", tt.name, got.Err.Details, tt.field)
		}
	}
	// Limits count characters, not bytes.
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-02", "title": long(200), "assignee": long(100), "note": long(2000)}}, http.StatusCreated, nil)
	h.Fails(periodsv1.SubjectTasksCreate, testkit.Rq{As: c, Body: map[string]any{"period": "2025-13", "title": "x"}}, http.StatusNotFound, errs.NotFound)

	// Changes.
	update := func(id string, body any) periodsv1.Task {
		t.Helper()
		var out periodsv1.Task
		h.OK(periodsv1.SubjectTasksUpdate, testkit.Rq{As: c, Params: param("id", id), Body: body}, http.StatusOK, &out)
		return out
	}
	time.Sleep(2 * time.Millisecond)
	got := update(accruals.ID, map[string]any{"status": "done", "assignee": nil, "note": "gebucht"})
	want = accruals
	want.Status, want.Assignee, want.Note = "done", nil, str("gebucht")
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(periodsv1.Task{}, "UpdatedAt")); diff != "" {
		t.Errorf("after the change (-want +got):\n%s", diff)
	}
	if *got.UpdatedAt <= *accruals.UpdatedAt {
		t.Errorf("updated_at %s not after %s", *got.UpdatedAt, *accruals.UpdatedAt)
	}
	got = update(payroll.ID, map[string]any{"title": "Payroll reconciled", "due_date": "2025-03-20", "assignee": "Carl"})
	if got.Title != "Payroll reconciled" || *got.DueDate != "2025-03-20" || *got.Assignee != "Carl" || got.Status != "open" {
		t.Errorf("payroll after the change: %+v", got)
	}
	got = update(payroll.ID, map[string]any{"due_date": nil, "assignee": ""})
	if got.DueDate != nil || got.Assignee != nil || got.Title != "Payroll reconciled" {
		t.Errorf("payroll after clearing: %+v", got)
	}

	refusals := []struct {
		name   string
		id     string
		body   any
		status int
		code   string
	}{
		{"nothing to change", accruals.ID, map[string]any{}, 400, errs.NoChanges},
		{"no body", accruals.ID, nil, 400, errs.NoChanges},
		{"bad status", accruals.ID, map[string]any{"status": "finished"}, 400, errs.InvalidInput},
		{"empty title", accruals.ID, map[string]any{"title": ""}, 400, errs.InvalidInput},
		{"long note", accruals.ID, map[string]any{"note": long(2001)}, 400, errs.InvalidInput},
		{"bad due date", accruals.ID, map[string]any{"due_date": "tomorrow"}, 400, errs.InvalidInput},
		{"unknown field", accruals.ID, map[string]any{"period": "2025-03"}, 400, errs.InvalidInput},
		{"unknown id", uuid.NewString(), map[string]any{"status": "done"}, 404, errs.NotFound},
		{"malformed id", "nope", map[string]any{"status": "done"}, 404, errs.NotFound},
		{"computed task", "vat_prepared", map[string]any{"status": "done"}, 400, errs.InvalidInput},
	}
	for _, tt := range refusals {
		got := h.Call(periodsv1.SubjectTasksUpdate, testkit.Rq{As: c, Params: param("id", tt.id), Body: tt.body})
		if got.Status != tt.status || got.Code != tt.code {
			t.Errorf("%s: %d %s %s, want %d %s", tt.name, got.Status, got.Code, got.Body, tt.status, tt.code)
		}
	}
}
