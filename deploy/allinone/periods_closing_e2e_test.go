package allinone_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// taskBody is one closing task.
type taskBody = periodsv1.Task

var taskKeys = []string{"id", "kind", "key", "period", "title", "status", "detail", "assignee", "note", "due_date", "updated_at"}

type taskList = periodsv1.TaskList

// tasks reads the closing checklist; query may be empty.
func (p *platform) tasks(token, query string) taskList {
	p.t.Helper()
	path := "/v1/closing/tasks"
	if query != "" {
		path += "?" + query
	}
	r := p.must(200, "GET", path, token, nil)
	wantKeys(p.t, "task list", r.Raw, "period", "tasks")
	var env struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	decodeJSON(p.t, r.Raw, &env)
	for _, raw := range env.Tasks {
		wantKeys(p.t, "task", raw, taskKeys...)
	}
	var l taskList
	decodeJSON(p.t, r.Raw, &l)
	return l
}

func taskByID(l taskList, id string) (taskBody, bool) {
	for _, t := range l.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return taskBody{}, false
}

func orNil(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestClosingTasks: the computed checklist follows the review queue and the
// period's lock; manual tasks are created, listed and changed; refusals.
func TestClosingTasks(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Abschlussliste GmbH")
	pw, pwID := p.newKey(admin, "perioden:read", "perioden:write")
	by := p.keyLabel(admin, pwID)
	bAdmin, _ := p.newTenant("Fremd GmbH")

	// The computed tasks of an untouched month, in checklist order.
	l := p.tasks(pw, "period=2025-03")
	if l.Period != "2025-03" || len(l.Tasks) != 4 {
		t.Fatalf("checklist %+v", l)
	}
	want := []struct{ id, status string }{{"review_queue_empty", "done"}, {"bank_reconciled", "skipped"}, {"vat_prepared", "open"}, {"period_soft_locked", "open"}}
	for i, w := range want {
		got := l.Tasks[i]
		if got.ID != w.id || got.Key == nil || *got.Key != w.id || got.Kind != "computed" || got.Status != w.status || got.Period != "2025-03" ||
			got.Title == "" || got.Detail == nil || got.UpdatedAt != nil || got.Assignee != nil {
			t.Fatalf("computed task %d: %+v, want %s %s", i, got, w.id, w.status)
		}
	}
	if d := *l.Tasks[3].Detail; !strings.Contains(d, "/v1/periods/2025-03/soft-lock") {
		t.Fatalf("period_soft_locked detail %q", d)
	}

	// A pending review item opens review_queue_empty, for every period:
	// any draft may still become a posting into it.
	item := p.createReview(ledgerv1.ReviewItemInput{TenantID: tenant, SourceType: "manual",
		Suggestion: json.RawMessage(`{"booking_date":"2025-03-15","description":"Porto","lines":[{"account_debit":"6815","account_credit":"1800","amount":5}]}`)})
	for _, period := range []string{"2025-03", "2025-04"} {
		got := p.tasks(pw, "period="+period).Tasks[0]
		if got.ID != "review_queue_empty" || got.Status != "open" || !strings.Contains(orNil(got.Detail), "1 pending") {
			t.Fatalf("%s with a pending review item: %+v (%s)", period, got, orNil(got.Detail))
		}
	}
	// Another tenant's queue is its own.
	if got := p.tasks(bAdmin, "period=2025-03").Tasks[0]; got.Status != "done" {
		t.Fatalf("B sees A's review item: %+v", got)
	}
	p.must(200, "DELETE", "/v1/review-queue/"+item.ID, admin, nil)
	if got := p.tasks(pw, "period=2025-03").Tasks[0]; got.Status != "done" {
		t.Fatalf("after the review item left the queue: %+v", got)
	}

	// Soft-locking the period completes period_soft_locked and vat_prepared.
	sl := p.transition("soft-lock", "2025-03", pw)
	l = p.tasks(pw, "period=2025-03")
	if got := l.Tasks[3]; got.ID != "period_soft_locked" || got.Status != "done" || !strings.Contains(orNil(got.Detail), "soft-locked by "+by) ||
		!strings.Contains(orNil(got.Detail), *sl.LockedAt) {
		t.Fatalf("period_soft_locked after the soft-lock: %+v (%s)", got, orNil(got.Detail))
	}
	if got := l.Tasks[2]; got.ID != "vat_prepared" || got.Status != "done" {
		t.Fatalf("vat_prepared after the soft-lock: %+v", got)
	}
	if got := p.tasks(pw, "period=2025-04").Tasks[3]; got.Status != "open" {
		t.Fatalf("2025-04's period_soft_locked after locking 2025-03: %+v", got)
	}
	p.transition("reopen", "2025-03", pw)
	if got := p.tasks(pw, "period=2025-03").Tasks[3]; got.Status != "open" {
		t.Fatalf("period_soft_locked after reopen: %+v", got)
	}

	// A manual task.
	r := p.must(201, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-03", "title": "  Rückstellungen gebucht ", "assignee": "Bea",
		"due_date": "2025-04-10", "note": "Urlaub und Boni"})
	wantKeys(t, "created task", r.Raw, taskKeys...)
	var accruals taskBody
	decodeJSON(t, r.Raw, &accruals)
	if _, err := uuid.Parse(accruals.ID); err != nil || accruals.Kind != "manual" || accruals.Key != nil || accruals.Period != "2025-03" ||
		accruals.Title != "Rückstellungen gebucht" || accruals.Status != "open" || orNil(accruals.Assignee) != "Bea" ||
		orNil(accruals.DueDate) != "2025-04-10" || orNil(accruals.Note) != "Urlaub und Boni" || accruals.Detail != nil {
		t.Fatalf("created task %s", r.Raw)
	}
	assertRecent(t, "task updated_at", accruals.UpdatedAt)
	var payroll taskBody
	decodeJSON(t, p.must(201, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-03", "title": "Lohn geprüft", "status": "in_progress"}).Raw, &payroll)
	if payroll.Status != "in_progress" || payroll.Assignee != nil || payroll.DueDate != nil {
		t.Fatalf("second task %+v", payroll)
	}
	l = p.tasks(pw, "period=2025-03")
	ids := []string{}
	for _, task := range l.Tasks {
		ids = append(ids, task.ID)
	}
	if !slices.Equal(ids, []string{"review_queue_empty", "bank_reconciled", "vat_prepared", "period_soft_locked", accruals.ID, payroll.ID}) {
		t.Fatalf("checklist order %v", ids)
	}
	if got := p.tasks(pw, "period=2025-04"); len(got.Tasks) != 4 {
		t.Fatalf("2025-04 shows 2025-03's tasks: %+v", got)
	}

	// PATCH: status, assignee and note; null clears a field.
	r = p.must(200, "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{"status": "done", "assignee": "Carl", "note": "erledigt"})
	var upd taskBody
	decodeJSON(t, r.Raw, &upd)
	if upd.ID != accruals.ID || upd.Status != "done" || orNil(upd.Assignee) != "Carl" || orNil(upd.Note) != "erledigt" ||
		upd.Title != accruals.Title || orNil(upd.DueDate) != "2025-04-10" || upd.Kind != "manual" {
		t.Fatalf("patched task %s", r.Raw)
	}
	decodeJSON(t, p.must(200, "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{"assignee": nil, "due_date": nil}).Raw, &upd)
	if upd.Assignee != nil || upd.DueDate != nil || upd.Status != "done" || orNil(upd.Note) != "erledigt" {
		t.Fatalf("cleared task %+v", upd)
	}
	if got, ok := taskByID(p.tasks(pw, "period=2025-03"), accruals.ID); !ok || got.Status != "done" || got.Assignee != nil || orNil(got.Note) != "erledigt" {
		t.Fatalf("listed after PATCH: %+v", got)
	}

	// Refusals of PATCH.
	p.expectError(400, "NO_CHANGES", "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{})
	r = p.expectError(400, "INVALID_INPUT", "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{"status": "finished"})
	if got := detailFields(t, r); !slices.Equal(got, []string{"status"}) {
		t.Fatalf("bad status details %v", got)
	}
	p.expectInvalid([]string{"title"}, "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{"title": "  "})
	p.expectInvalid([]string{"due_date"}, "PATCH", "/v1/closing/tasks/"+accruals.ID, pw, map[string]any{"due_date": "10.04.2025"})
	p.expectError(400, "INVALID_INPUT", "PATCH", "/v1/closing/tasks/review_queue_empty", pw, map[string]any{"status": "done"})
	p.expectError(404, "NOT_FOUND", "PATCH", "/v1/closing/tasks/"+uuid.NewString(), pw, map[string]any{"status": "done"})
	p.expectError(404, "NOT_FOUND", "PATCH", "/v1/closing/tasks/not-a-task", pw, map[string]any{"status": "done"})
	// Another tenant's task is unknown to B, and B's attempts change nothing.
	p.expectError(404, "NOT_FOUND", "PATCH", "/v1/closing/tasks/"+accruals.ID, bAdmin, map[string]any{"status": "skipped", "title": "gekapert"})
	if got := p.tasks(bAdmin, "period=2025-03"); len(got.Tasks) != 4 {
		t.Fatalf("B sees A's manual tasks: %+v", got)
	}
	if got, _ := taskByID(p.tasks(pw, "period=2025-03"), accruals.ID); got.Status != "done" || got.Title != "Rückstellungen gebucht" {
		t.Fatalf("A's task after B's attempts: %+v", got)
	}

	// Refusals of POST.
	p.expectInvalid([]string{"title"}, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-03"})
	p.expectInvalid([]string{"period"}, "POST", "/v1/closing/tasks", pw, map[string]any{"title": "x"})
	p.expectInvalid([]string{"period"}, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-3", "title": "x"})
	p.expectInvalid([]string{"status"}, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-03", "title": "x", "status": "finished"})
	p.expectInvalid([]string{"title"}, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-03", "title": strings.Repeat("x", 201)})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-13", "title": "Abschluss"})
	p.wantCount(2, "SELECT count(*) FROM periods.closing_tasks WHERE tenant_id = $1", tenant)

	// Reading: a bad period is 400, a missing adjustment period 404, one
	// that exists has a checklist.
	for _, bad := range []string{"abc", "2025-00", "2025-1", "25-03"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/closing/tasks?period="+bad, pw, nil)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/closing/tasks?period=2025-13", pw, nil)
	p.must(201, "POST", "/v1/periods/2025/create-adjustment", pw, nil)
	if got := p.tasks(pw, "period=2025-13"); got.Period != "2025-13" || len(got.Tasks) != 4 {
		t.Fatalf("2025-13 checklist %+v", got)
	}
	p.must(201, "POST", "/v1/closing/tasks", pw, map[string]any{"period": "2025-13", "title": "Abschlussbuchungen"})

	// Without a period: the current month for a tenant without bookings,
	// else the latest month with bookings.
	if got := p.tasks(bAdmin, ""); got.Period != time.Now().UTC().Format("2006-01") {
		t.Fatalf("default period of a tenant without bookings: %s", got.Period)
	}
	p.book(admin, bookingBody("2025-02-10", "Februar", bline("6310", "1800", "1.00")))
	p.book(admin, bookingBody("2025-05-10", "Mai", bline("6310", "1800", "1.00")))
	eventually(t, 5*time.Second, func() error {
		if got := p.tasks(pw, ""); got.Period != "2025-05" {
			return fmt.Errorf("default period %s, want 2025-05", got.Period)
		}
		return nil
	})
}
