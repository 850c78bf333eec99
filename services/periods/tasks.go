package periods

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Keys of the computed closing tasks, in checklist order. A computed
// task's id is its key.
const (
	TaskReviewQueueEmpty = "review_queue_empty"
	TaskBankReconciled   = "bank_reconciled"
	TaskVATPrepared      = "vat_prepared"
	TaskPeriodSoftLocked = "period_soft_locked"
)

// ComputedKeys lists the computed tasks in checklist order.
func ComputedKeys() []string {
	return []string{TaskReviewQueueEmpty, TaskBankReconciled, TaskVATPrepared, TaskPeriodSoftLocked}
}

func isComputed(id string) bool {
	for _, k := range ComputedKeys() {
		if k == id {
			return true
		}
	}
	return false
}

// Limits of manual task fields, in characters.
const (
	MaxTitle    = 200
	MaxAssignee = 100
	MaxNote     = 2000
)

// ValidTaskStatus reports whether st is a closing-task status.
func ValidTaskStatus(st string) bool {
	switch st {
	case periodsv1.TaskOpen, periodsv1.TaskInProgress, periodsv1.TaskDone, periodsv1.TaskSkipped:
		return true
	}
	return false
}

// Nullable is an optional JSON field that may also be null: Set reports
// that the field was present, Value is nil for null.
type Nullable struct {
	Set   bool
	Value *string
}

// UnmarshalJSON implements json.Unmarshaler; it is called only for fields
// that are present.
func (n *Nullable) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		// Written for the client, who never sees Go's types.
		return errors.New("must be a string or null")
	}
	n.Value = &s
	return nil
}

// TaskInput is the body of a new manual task.
type TaskInput struct {
	Period   string  `json:"period"`
	Title    string  `json:"title"`
	Status   string  `json:"status,omitempty"`
	Assignee *string `json:"assignee"`
	Note     *string `json:"note"`
	DueDate  *string `json:"due_date"`
}

// TaskUpdate is the body of a change to a manual task.
type TaskUpdate struct {
	Status   *string  `json:"status"`
	Title    *string  `json:"title"`
	Assignee Nullable `json:"assignee"`
	Note     Nullable `json:"note"`
	DueDate  Nullable `json:"due_date"`
}

// checkText trims an optional text field, turns "" into nil and checks its
// length.
func checkText(v *string, field string, limit int, pr *[]errs.Detail) *string {
	if v == nil {
		return nil
	}
	s := strings.TrimSpace(*v)
	if s == "" {
		return nil
	}
	if utf8.RuneCountInString(s) > limit {
		*pr = append(*pr, errs.Field(field, "at most "+itoa(limit)+" characters"))
	}
	return &s
}

func checkTitle(v string, pr *[]errs.Detail) string {
	s := strings.TrimSpace(v)
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		*pr = append(*pr, errs.Field("title", "required"))
	case n > MaxTitle:
		*pr = append(*pr, errs.Field("title", "at most "+itoa(MaxTitle)+" characters"))
	}
	return s
}

func checkDate(v *string, pr *[]errs.Detail) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	s := strings.TrimSpace(*v)
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		*pr = append(*pr, errs.Field("due_date", "expected YYYY-MM-DD"))
	}
	return &s
}

func itoa(n int) string { return strconv.Itoa(n) }

// taskPeriod checks the period of a task request: YYYY-MM, or YYYY-13
// when that adjustment period exists.
func (s *Service) taskPeriod(ctx context.Context, tenant, period string) (periodsv1.Period, error) {
	k, ok := ParsePeriod(period)
	if !ok {
		return periodsv1.Period{}, errs.Invalid("period must be YYYY-MM", errs.Field("period", "expected YYYY-MM"))
	}
	p, err := s.store.Period(ctx, tenant, k.String())
	switch {
	case errs.Is(err, errs.NotFound) && k.IsAdjustment():
		return periodsv1.Period{}, errs.NotFoundf("adjustment period %s does not exist", k.String())
	case errs.Is(err, errs.NotFound):
		return periodsv1.Period{TenantID: tenant, Period: k.String(), Status: Open}, nil
	case err != nil:
		return periodsv1.Period{}, err
	}
	return p, nil
}

// Tasks returns the closing checklist of a period: the computed tasks,
// evaluated now, then the manual ones. Without a period it is the latest
// month with bookings, or the current month.
func (s *Service) Tasks(ctx context.Context, c *auth.Claims, period string) (periodsv1.TaskList, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return periodsv1.TaskList{}, err
	}
	if period == "" {
		if period, err = s.store.LatestBooked(ctx, tenant); err != nil {
			return periodsv1.TaskList{}, errs.Wrap("periods.Tasks", err)
		}
		if period == "" {
			period = s.now().UTC().Format("2006-01")
		}
	}
	p, err := s.taskPeriod(ctx, tenant, period)
	if err != nil {
		return periodsv1.TaskList{}, errs.Wrap("periods.Tasks", err)
	}
	manual, err := s.store.Tasks(ctx, tenant, p.Period)
	if err != nil {
		return periodsv1.TaskList{}, errs.Wrap("periods.Tasks", err)
	}
	tasks := s.computed(ctx, p)
	tasks = append(tasks, manual...)
	return periodsv1.TaskList{Period: p.Period, Tasks: tasks}, nil
}

// computed evaluates the computed tasks of period p.
func (s *Service) computed(ctx context.Context, p periodsv1.Period) []periodsv1.Task {
	locked := p.Status != Open
	task := func(key, title, status, detail string) periodsv1.Task {
		return periodsv1.Task{ID: key, Kind: periodsv1.TaskComputed, Key: &key, Period: p.Period, Title: title, Status: status, Detail: &detail}
	}
	var out []periodsv1.Task

	// The review queue belongs to no period: every pending draft may still
	// become a posting into this one.
	pending, err := s.ledger.PendingReviews(ctx)
	switch {
	case err != nil:
		out = append(out, task(TaskReviewQueueEmpty, "Review queue is empty", periodsv1.TaskOpen, "the review queue could not be counted right now; try again"))
	case pending == 0:
		out = append(out, task(TaskReviewQueueEmpty, "Review queue is empty", periodsv1.TaskDone, "no pending review-queue items"))
	default:
		out = append(out, task(TaskReviewQueueEmpty, "Review queue is empty", periodsv1.TaskOpen, itoa(pending)+" pending review-queue item(s): GET /v1/review-queue"))
	}

	out = append(out, s.bankTask(ctx, p, task))

	vat := "VAT return (UStVA) figures: run GET /v1/reports?type=susa&period=" + p.Period
	if locked {
		out = append(out, task(TaskVATPrepared, "VAT return (UStVA) prepared", periodsv1.TaskDone, vat+" (the period is "+p.Status+", its figures are final)"))
	} else {
		out = append(out, task(TaskVATPrepared, "VAT return (UStVA) prepared", periodsv1.TaskOpen, vat))
	}

	if locked {
		detail := "the period is " + p.Status
		if p.LockedBy != nil {
			detail += " by " + *p.LockedBy
		}
		if p.LockedAt != nil {
			detail += " at " + *p.LockedAt
		}
		out = append(out, task(TaskPeriodSoftLocked, "Period soft-locked", periodsv1.TaskDone, detail))
	} else {
		out = append(out, task(TaskPeriodSoftLocked, "Period soft-locked", periodsv1.TaskOpen, "soft-lock it with POST /v1/periods/"+p.Period+"/soft-lock"))
	}
	return out
}

// CreateTask adds a manual task to a period's checklist.
func (s *Service) CreateTask(ctx context.Context, c *auth.Claims, in TaskInput) (periodsv1.Task, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return periodsv1.Task{}, err
	}
	var pr []errs.Detail
	if in.Period == "" {
		pr = append(pr, errs.Field("period", "required"))
	} else if _, ok := ParsePeriod(in.Period); !ok {
		pr = append(pr, errs.Field("period", "expected YYYY-MM"))
	}
	t := NewTask{TenantID: tenant, Period: in.Period, Status: in.Status, CreatedBy: LockedBy(c)}
	t.Title = checkTitle(in.Title, &pr)
	if t.Status == "" {
		t.Status = periodsv1.TaskOpen
	} else if !ValidTaskStatus(t.Status) {
		pr = append(pr, errs.Field("status", "one of open, in_progress, done, skipped"))
	}
	t.Assignee = checkText(in.Assignee, "assignee", MaxAssignee, &pr)
	t.Note = checkText(in.Note, "note", MaxNote, &pr)
	t.DueDate = checkDate(in.DueDate, &pr)
	if len(pr) > 0 {
		return periodsv1.Task{}, errs.Invalid("invalid closing task", pr...)
	}
	p, err := s.taskPeriod(ctx, tenant, in.Period)
	if err != nil {
		return periodsv1.Task{}, errs.Wrap("periods.CreateTask", err)
	}
	t.Period = p.Period
	out, err := s.store.CreateTask(ctx, t)
	return out, errs.Wrap("periods.CreateTask", err)
}

// UpdateTask changes a manual task. Computed tasks follow the books and
// cannot be changed (INVALID_INPUT); an unknown id is NOT_FOUND.
func (s *Service) UpdateTask(ctx context.Context, c *auth.Claims, id string, in TaskUpdate) (periodsv1.Task, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return periodsv1.Task{}, err
	}
	if isComputed(id) {
		return periodsv1.Task{}, errs.Invalid("computed closing tasks follow the books and cannot be changed",
			errs.Field("id", "computed task"))
	}
	if !ValidID(id) {
		return periodsv1.Task{}, errs.NotFoundf("closing task %s not found", truncate(id, 40))
	}
	p := TaskPatch{Assignee: in.Assignee, Note: in.Note, DueDate: in.DueDate}
	if p.empty() && in.Status == nil && in.Title == nil {
		return periodsv1.Task{}, errs.E(errs.NoChanges, "nothing to change: send status, title, assignee, note or due_date")
	}
	var pr []errs.Detail
	if in.Status != nil {
		if !ValidTaskStatus(*in.Status) {
			pr = append(pr, errs.Field("status", "one of open, in_progress, done, skipped"))
		}
		p.Status = in.Status
	}
	if in.Title != nil {
		t := checkTitle(*in.Title, &pr)
		p.Title = &t
	}
	if p.Assignee.Set {
		p.Assignee.Value = checkText(p.Assignee.Value, "assignee", MaxAssignee, &pr)
	}
	if p.Note.Set {
		p.Note.Value = checkText(p.Note.Value, "note", MaxNote, &pr)
	}
	if p.DueDate.Set {
		p.DueDate.Value = checkDate(p.DueDate.Value, &pr)
	}
	if len(pr) > 0 {
		return periodsv1.Task{}, errs.Invalid("invalid change to a closing task", pr...)
	}
	out, err := s.store.UpdateTask(ctx, tenant, id, p)
	return out, errs.Wrap("periods.UpdateTask", err)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
