// Package periodsv1 is the contract of the periods service: accounting
// periods, their locks and the closing checklist.
package periodsv1

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
	// EventPeriodChanged: a period's status changed; payload Period.
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

// StatusRequest asks for the status of periods from From to To (YYYY-MM).
type StatusRequest struct {
	TenantID string `json:"tenant_id"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// StatusReply maps each period in range to its status; a period not listed
// is open.
type StatusReply struct {
	Statuses map[string]string `json:"statuses"`
}
