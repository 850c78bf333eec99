package periods

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// Store persists periods and closing tasks. Each method is one
// transaction; the events a method documents go to the outbox in that same
// transaction. Tenant-scoped methods see only the rows of their tenant. A
// missing row is an *errs.Error with code NOT_FOUND. Periods come back
// without PeriodNumber and IsAdjustment, which the Service fills in.
type Store interface {
	// FiscalStart returns the stored fiscal year start month of a tenant
	// and whether one is stored.
	FiscalStart(ctx context.Context, tenant string) (int, bool, error)
	// SaveFiscalStart stores a tenant's fiscal year start month.
	SaveFiscalStart(ctx context.Context, tenant string, month int) error

	// List creates the periods of ensure that are missing (open, no
	// bookings) and returns every period of the tenant, newest first.
	List(ctx context.Context, tenant string, ensure []string) ([]periodsv1.Period, error)
	// Period returns one period.
	Period(ctx context.Context, tenant, period string) (periodsv1.Period, error)
	// LatestBooked returns the latest month (not an adjustment period) with
	// bookings, or "" when there is none.
	LatestBooked(ctx context.Context, tenant string) (string, error)
	// Statuses maps every period of the tenant from from to to (inclusive,
	// compared as text; "" is open-ended) to its status.
	Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error)

	// ChangeStatus locks the period's row (creating an open one first when
	// c.Create is set, NOT_FOUND otherwise), passes the row to apply and,
	// when apply returns nil, stores c.To with c.By and the time, counts
	// the change as awaiting the ledger's period_lock_set event and
	// records EventPeriodChanged; all in one transaction. An error from
	// apply rolls everything back and is returned as is.
	ChangeStatus(ctx context.Context, c StatusChange, apply func(ctx context.Context, current periodsv1.Period) error) (periodsv1.Period, error)
	// CreateAdjustment inserts the open adjustment period, calls apply and,
	// when it returns nil, records EventPeriodChanged and commits. An
	// existing period is CONFLICT.
	CreateAdjustment(ctx context.Context, c StatusChange, apply func(ctx context.Context) error) (periodsv1.Period, error)

	// CountBookings adds one booking per event to its period, creating
	// the period when missing, and records the event ids; events whose id
	// is recorded already are skipped. It returns how many were counted.
	CountBookings(ctx context.Context, bookings []Booking) (int, error)
	// ApplyLockSet reconciles a period with the ledger's period_lock_set
	// event (see Service.ApplyLockSet) and records the event id; a
	// recorded id is skipped. It reports whether the local status changed.
	ApplyLockSet(ctx context.Context, ev LockSet) (bool, error)

	// Tasks lists the manual closing tasks of a period.
	Tasks(ctx context.Context, tenant, period string) ([]periodsv1.Task, error)
	// CreateTask stores a manual task.
	CreateTask(ctx context.Context, t NewTask) (periodsv1.Task, error)
	// UpdateTask applies p to a manual task.
	UpdateTask(ctx context.Context, tenant, id string, p TaskPatch) (periodsv1.Task, error)
}

// StatusChange is a lock change to store.
type StatusChange struct {
	TenantID string
	Period   string
	Create   bool   // create an open row when the period has none
	To       string // the new status
	By       string // who changed it; stored as locked_by unless To is open
	// FiscalStart gives the period number of the event.
	FiscalStart int
}

// Booking is one intent posted into a period, from the ledger's event.
type Booking struct {
	EventID  string
	TenantID string
	Period   string
}

// LockSet is the ledger's period_lock_set event.
type LockSet struct {
	EventID string
	ledgerv1.SetPeriodLock
}

// NewTask is a manual closing task to store.
type NewTask struct {
	TenantID  string
	Period    string
	Title     string
	Status    string
	Assignee  *string
	Note      *string
	DueDate   *string
	CreatedBy string
}

// TaskPatch changes a manual task; nil fields stay as they are, and a set
// Nullable with a nil Value clears the field.
type TaskPatch struct {
	Status   *string
	Title    *string
	Assignee Nullable
	Note     Nullable
	DueDate  Nullable
}

func (p TaskPatch) empty() bool {
	return p.Status == nil && p.Title == nil && !p.Assignee.Set && !p.Note.Set && !p.DueDate.Set
}
