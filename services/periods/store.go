package periods

import (
	"context"
	"errors"
	"time"

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

	// BeginChange records c as the period's pending lock change, in one
	// transaction that first claims the request's Idempotency-Key
	// (idem.Claim: a stored answer comes back as *idem.Replay). It locks
	// the period's row briefly (creating an open one when c.Create; with
	// c.New the row must not exist, CONFLICT otherwise; NOT_FOUND when
	// neither), passes it to check (nil: no check) and, when check returns
	// nil, stores the change under a new id and counts it as awaiting the
	// ledger's period_lock_set event. A change still pending (younger than
	// PendingTimeout) is ErrBusy; an older one was left by a crash and is
	// taken over. No transaction stays open after it returns.
	BeginChange(ctx context.Context, c StatusChange, check func(current periodsv1.Period) error) (Pending, error)
	// FinishChange applies the pending change p (status, locked_by, the
	// time), records EventPeriodChanged and saves the period as the
	// request's idempotent answer (idem.Save), in one transaction. When the
	// ledger's event applied p first, the period is answered as it is;
	// when another change took p over, CONFLICT.
	FinishChange(ctx context.Context, c StatusChange, p Pending) (periodsv1.Period, error)
	// AbandonChange forgets the pending change p after the ledger refused
	// it: a row p created goes again, its event is no longer awaited, and
	// the request's Idempotency-Key is released (idem.Release).
	AbandonChange(ctx context.Context, c StatusChange, p Pending) error

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

// Pending is a lock change recorded by BeginChange; its ID is the
// compare-and-set token FinishChange and AbandonChange apply it with.
type Pending struct{ ID string }

// ErrBusy is BeginChange's answer while another lock change of the period
// waits for the ledger; the caller tries again after it.
var ErrBusy = errors.New("periods: another lock change of the period is in progress")

// PendingTimeout is how long a pending lock change holds its period: far
// longer than the ledger call it waits for, so an older one was left by a
// crashed process (its effect, if any, arrives as the ledger's event).
var PendingTimeout = 2 * time.Minute

// StatusChange is a lock change to store.
type StatusChange struct {
	TenantID string
	Period   string
	Create   bool   // create an open row when the period has none
	New      bool   // the change creates the period (an adjustment period)
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
