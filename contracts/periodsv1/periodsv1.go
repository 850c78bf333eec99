// Package periodsv1 is the contract of the periods service: accounting
// periods, their locks and the closing checklist.
package periodsv1

import "time"

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectList             = "periods.v1.list"
	SubjectSoftLock         = "periods.v1.soft_lock"         // param period
	SubjectLock             = "periods.v1.lock"              // param period
	SubjectReopen           = "periods.v1.reopen"            // param period
	SubjectCreateAdjustment = "periods.v1.create_adjustment" // param year
	SubjectTasksList        = "periods.v1.tasks.list"
	SubjectTasksCreate      = "periods.v1.tasks.create"
	SubjectTasksUpdate      = "periods.v1.tasks.update" // param id
	// SubjectStatus is internal: the lock status of periods of a tenant,
	// for other services (reporting's DATEV Festschreibung flag). Body
	// StatusRequest, reply StatusReply.
	SubjectStatus = "periods.v1.status"
)

// Events of the periods service.
const (
	StreamEvents = "PERIODS"
	EventsFilter = "evt.periods.v1.>"
	// EventPeriodChanged: a period's status changed, or an adjustment
	// period was created; payload PeriodChanged (a Period with its tenant).
	EventPeriodChanged = "evt.periods.v1.period_changed"
)

// Period is one accounting period as the API shows it.
type Period struct {
	TenantID     string  `json:"-"`
	Period       string  `json:"period"`
	Status       string  `json:"status"`
	PeriodNumber int     `json:"period_number"`
	BookingCount int64   `json:"booking_count"`
	LockedBy     *string `json:"locked_by"`
	LockedAt     *string `json:"locked_at"`
	IsAdjustment bool    `json:"is_adjustment"`
}

// StatusRequest asks for the status of periods from From to To (YYYY-MM),
// both inclusive and compared as text, so YYYY-13 lies between YYYY-12 and
// the next January; an empty bound is open-ended. TenantID never travels in
// the body: the tenant is the calling service's signed principal's (Client
// moves it there), and a body naming one is refused.
type StatusRequest struct {
	TenantID string `json:"tenant_id,omitempty"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// StatusReply maps each period in range to its status; a period not listed
// is open.
type StatusReply struct {
	Statuses map[string]string `json:"statuses"`
}

// Closing-task kinds and statuses.
const (
	TaskComputed = "computed"
	TaskManual   = "manual"

	TaskOpen       = "open"
	TaskInProgress = "in_progress"
	TaskDone       = "done"
	TaskSkipped    = "skipped"
)

// PeriodChanged is the payload of EventPeriodChanged: the period as the API
// shows it, with its tenant, the status before the change ("" when the
// period was just created) and what caused it: "api" for a change made
// through the periods API, "ledger" when the ledger's period_lock_set
// event repaired the local state.
type PeriodChanged struct {
	TenantID string `json:"tenant_id"`
	Period
	PreviousStatus string    `json:"previous_status"`
	Source         string    `json:"source"`
	ChangedAt      time.Time `json:"changed_at"`
}

// Task is one item of a period's closing checklist. Computed tasks follow
// the books and are evaluated on every read (their id is their key and they
// cannot be changed); manual tasks are stored and have a UUID.
type Task struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Key       *string `json:"key"`
	Period    string  `json:"period"`
	Title     string  `json:"title"`
	Status    string  `json:"status"`
	Detail    *string `json:"detail"`
	Assignee  *string `json:"assignee"`
	Note      *string `json:"note"`
	DueDate   *string `json:"due_date"`
	UpdatedAt *string `json:"updated_at"`
}

// TaskList answers SubjectTasksList.
type TaskList struct {
	Period string `json:"period"`
	Tasks  []Task `json:"tasks"`
}
