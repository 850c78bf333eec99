// Package periods is the domain of the periods service: the accounting
// periods of a tenant (the months of its fiscal years and the adjustment
// periods YYYY-13), their lock states and the closing checklist.
//
// The ledger enforces locks inside its posting transaction; this service
// decides them. A lock change locks the period's row here, asks the ledger
// to apply the new state and commits the local change only when the ledger
// said yes, so the two never disagree for longer than a crash between the
// ledger's commit and the local one, which the ledger's period_lock_set
// event then repairs.
//
// Persistence is behind Store (package postgres), the peers behind Ledger
// and Tenants, and transport in package natsrpc.
package periods

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Period states, exactly as the specification writes them.
const (
	Open       = ledgerv1.PeriodOpen
	SoftLocked = ledgerv1.PeriodSoftLocked
	HardLocked = ledgerv1.PeriodHardLocked
)

// AdjustmentMonth is the month number of a year's adjustment period.
const AdjustmentMonth = 13

// Key is a parsed period: a month 1..12 of a year, or 13 for the year's
// adjustment period.
type Key struct {
	Year  int
	Month int
}

var (
	periodRe = regexp.MustCompile(`^[1-9][0-9]{3}-(0[1-9]|1[0-3])$`)
	yearRe   = regexp.MustCompile(`^[1-9][0-9]{3}$`)
)

// ParsePeriod parses YYYY-MM (01..12) or YYYY-13.
func ParsePeriod(s string) (Key, bool) {
	if !periodRe.MatchString(s) {
		return Key{}, false
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[5:])
	return Key{y, m}, true
}

// ParseYear parses YYYY.
func ParseYear(s string) (int, bool) {
	if !yearRe.MatchString(s) {
		return 0, false
	}
	y, _ := strconv.Atoi(s)
	return y, true
}

// String formats k as YYYY-MM.
func (k Key) String() string {
	return strconv.Itoa(k.Year) + "-" + twoDigits(k.Month)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// IsAdjustment reports whether k is an adjustment period.
func (k Key) IsAdjustment() bool { return k.Month == AdjustmentMonth }

// IsAdjustment reports whether the period text names an adjustment period.
func IsAdjustment(period string) bool {
	k, ok := ParsePeriod(period)
	return ok && k.IsAdjustment()
}

// Number is the position of a period within its fiscal year: 1..12 for a
// month of a fiscal year starting in month start, 13 for an adjustment
// period, 0 for text that is no period.
func Number(period string, start int) int {
	k, ok := ParsePeriod(period)
	if !ok {
		return 0
	}
	if k.IsAdjustment() {
		return AdjustmentMonth
	}
	start = NormalizeStart(start)
	return (k.Month-start+12)%12 + 1
}

// NormalizeStart maps a fiscal year start month outside 1..12 to January.
func NormalizeStart(start int) int {
	if start < 1 || start > 12 {
		return 1
	}
	return start
}

// FiscalYear returns the twelve months, in order, of the fiscal year that
// contains the date t for a fiscal year starting in month start.
func FiscalYear(t time.Time, start int) []string {
	start = NormalizeStart(start)
	y, m := t.Year(), int(t.Month())
	if m < start {
		y--
	}
	out := make([]string, 0, 12)
	for i := range 12 {
		mm := start + i
		yy := y
		if mm > 12 {
			mm -= 12
			yy++
		}
		out = append(out, Key{yy, mm}.String())
	}
	return out
}

// LockedBy names who changed a lock for the locked_by field: the user's
// email, or the API key's label and prefix, or the actor id.
func LockedBy(c *auth.Claims) string {
	switch {
	case c == nil:
		return ""
	case c.Email != "":
		return c.Email
	case c.Label != "" && c.KeyPrefix != "":
		return c.Label + " (" + c.KeyPrefix + ")"
	case c.Label != "":
		return c.Label
	case c.KeyPrefix != "":
		return c.KeyPrefix
	}
	return c.Actor()
}

// Ledger is what the service needs of the ledger.
type Ledger interface {
	// SetPeriodLock makes the ledger enforce a period's state.
	SetPeriodLock(ctx context.Context, cmd ledgerv1.SetPeriodLock) error
	// PendingReviews counts the caller's (claims in ctx) pending
	// review-queue items.
	PendingReviews(ctx context.Context) (int, error)
}

// Tenants is what the service needs of identity.
type Tenants interface {
	// FiscalYearStartMonth returns the caller's (claims in ctx) fiscal
	// year start month, 1..12.
	FiscalYearStartMonth(ctx context.Context) (int, error)
}

// Service implements the periods use cases.
type Service struct {
	store   Store
	ledger  Ledger
	tenants Tenants
	bank    Bank
	now     func() time.Time

	mu     sync.Mutex
	starts map[string]int // fiscal year start months known to be stored
}

// Option configures a Service.
type Option func(*Service)

// WithClock replaces time.Now, for tests of the current fiscal year.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// New returns a Service.
func New(store Store, ledger Ledger, tenants Tenants, opts ...Option) *Service {
	s := &Service{store: store, ledger: ledger, tenants: tenants, now: time.Now, starts: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// fiscalStart asks identity for the caller's fiscal year start month and
// keeps it in the store, where the event paths (which have no caller to ask
// for) find it. When identity cannot answer, the stored month is used.
func (s *Service) fiscalStart(ctx context.Context, tenant string) (int, error) {
	m, err := s.tenants.FiscalYearStartMonth(ctx)
	if err != nil {
		stored, ok, serr := s.store.FiscalStart(ctx, tenant)
		if serr == nil && ok {
			return stored, nil
		}
		return 0, errs.Wrap("periods.fiscalStart", err)
	}
	m = NormalizeStart(m)
	s.mu.Lock()
	known := s.starts[tenant] == m
	s.mu.Unlock()
	if !known {
		if err := s.store.SaveFiscalStart(ctx, tenant, m); err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.starts[tenant] = m
		s.mu.Unlock()
	}
	return m, nil
}

func tenantOf(c *auth.Claims) (string, error) {
	if c == nil || c.TenantID == "" {
		return "", errs.E(errs.Unauthenticated, "no authenticated tenant")
	}
	return c.TenantID, nil
}

// number fills in the period numbers of ps.
func number(ps []periodsv1.Period, start int) {
	for i := range ps {
		ps[i].PeriodNumber = Number(ps[i].Period, start)
		ps[i].IsAdjustment = IsAdjustment(ps[i].Period)
	}
}

// List returns every period of the caller's tenant, newest first, after
// creating the months of the current fiscal year that are missing.
func (s *Service) List(ctx context.Context, c *auth.Claims) ([]periodsv1.Period, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return nil, err
	}
	start, err := s.fiscalStart(ctx, tenant)
	if err != nil {
		return nil, err
	}
	ps, err := s.store.List(ctx, tenant, FiscalYear(s.now().UTC(), start))
	if err != nil {
		return nil, errs.Wrap("periods.List", err)
	}
	number(ps, start)
	return ps, nil
}

// Statuses answers the internal status request of other services.
func (s *Service) Statuses(ctx context.Context, r periodsv1.StatusRequest) (periodsv1.StatusReply, error) {
	if !ValidID(r.TenantID) {
		return periodsv1.StatusReply{}, errs.Invalid("tenant_id must be a UUID", errs.Field("tenant_id", "UUID required"))
	}
	var problems []errs.Detail
	for _, b := range []struct{ name, v string }{{"from", r.From}, {"to", r.To}} {
		if _, ok := ParsePeriod(b.v); b.v != "" && !ok {
			problems = append(problems, errs.Field(b.name, "YYYY-MM or YYYY-13"))
		}
	}
	if len(problems) > 0 {
		return periodsv1.StatusReply{}, errs.Invalid("invalid period range", problems...)
	}
	st, err := s.store.Statuses(ctx, r.TenantID, r.From, r.To)
	if err != nil {
		return periodsv1.StatusReply{}, errs.Wrap("periods.Statuses", err)
	}
	return periodsv1.StatusReply{Statuses: st}, nil
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidID reports whether s is a UUID.
func ValidID(s string) bool { return uuidRe.MatchString(s) }
