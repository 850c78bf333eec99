package periods

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// SoftLock soft-locks a period: new postings are refused, and the period
// can be reopened. Any month may be soft-locked, with or without bookings;
// an adjustment period only once it exists.
func (s *Service) SoftLock(ctx context.Context, c *auth.Claims, period string) (periodsv1.Period, error) {
	return s.transition(ctx, c, period, SoftLocked)
}

// Lock hard-locks (festschreiben) an open or soft-locked period. A
// hard-locked period is final: it can never be reopened.
func (s *Service) Lock(ctx context.Context, c *auth.Claims, period string) (periodsv1.Period, error) {
	return s.transition(ctx, c, period, HardLocked)
}

// Reopen opens a soft-locked period again. A hard-locked period stays
// locked: corrections go into a later open period or the adjustment period.
func (s *Service) Reopen(ctx context.Context, c *auth.Claims, period string) (periodsv1.Period, error) {
	return s.transition(ctx, c, period, Open)
}

// refusal is why a period cannot move from a status: an error code and a
// message with the period's place.
type refusal struct{ code, format string }

// refused lists, per status a period moves to, the statuses it cannot come
// from; every other move is allowed.
var refused = map[string]map[string]refusal{
	SoftLocked: {
		SoftLocked: {errs.PeriodAlreadySoftLocked, "period %s is already soft-locked"},
		HardLocked: {errs.PeriodAlreadyLocked, "period %s is hard-locked"},
	},
	HardLocked: {
		HardLocked: {errs.PeriodAlreadyLocked, "period %s is already hard-locked"},
	},
	Open: {
		HardLocked: {errs.PeriodAlreadyLocked, "period %s is hard-locked and cannot be reopened; book corrections into an open period or the adjustment period"},
		Open:       {errs.PeriodNotLocked, "period %s is not locked"},
	},
}

// transition checks the period text, then in one transaction of the store
// checks the move from the current state against refused and has the ledger
// apply it before the local change commits.
func (s *Service) transition(ctx context.Context, c *auth.Claims, period, to string) (periodsv1.Period, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return periodsv1.Period{}, err
	}
	k, ok := ParsePeriod(period)
	if !ok {
		return periodsv1.Period{}, errs.Invalid("period must be YYYY-MM (month 01 to 12) or an existing adjustment period YYYY-13",
			errs.Field("period", "expected YYYY-MM"))
	}
	start, err := s.fiscalStart(ctx, tenant)
	if err != nil {
		return periodsv1.Period{}, err
	}
	by := LockedBy(c)
	ch := StatusChange{TenantID: tenant, Period: k.String(), Create: !k.IsAdjustment(), To: to, By: by, FiscalStart: start}
	p, err := s.store.ChangeStatus(ctx, ch, func(ctx context.Context, cur periodsv1.Period) error {
		if r, ok := refused[to][cur.Status]; ok {
			return errs.E(r.code, r.format, cur.Period)
		}
		return s.setLedgerLock(ctx, tenant, ch.Period, to, by)
	})
	if errs.Is(err, errs.NotFound) && k.IsAdjustment() {
		return periodsv1.Period{}, errs.NotFoundf("adjustment period %s does not exist; create it with POST /v1/periods/%d/create-adjustment", ch.Period, k.Year)
	}
	if err != nil {
		return periodsv1.Period{}, errs.Wrap("periods.transition", err)
	}
	p.PeriodNumber, p.IsAdjustment = Number(p.Period, start), k.IsAdjustment()
	return p, nil
}

// CreateAdjustment creates the adjustment period YYYY-13 of a year, open,
// and tells the ledger it exists so postings may go into it. An existing
// adjustment period is CONFLICT.
func (s *Service) CreateAdjustment(ctx context.Context, c *auth.Claims, year string) (periodsv1.Period, error) {
	tenant, err := tenantOf(c)
	if err != nil {
		return periodsv1.Period{}, err
	}
	y, ok := ParseYear(year)
	if !ok {
		return periodsv1.Period{}, errs.Invalid("year must be YYYY", errs.Field("year", "expected YYYY"))
	}
	start, err := s.fiscalStart(ctx, tenant)
	if err != nil {
		return periodsv1.Period{}, err
	}
	by := LockedBy(c)
	ch := StatusChange{TenantID: tenant, Period: Key{y, AdjustmentMonth}.String(), To: Open, By: by, FiscalStart: start}
	p, err := s.store.CreateAdjustment(ctx, ch, func(ctx context.Context) error {
		return s.setLedgerLock(ctx, tenant, ch.Period, Open, by)
	})
	if err != nil {
		return periodsv1.Period{}, errs.Wrap("periods.CreateAdjustment", err)
	}
	p.PeriodNumber, p.IsAdjustment = AdjustmentMonth, true
	return p, nil
}

// setLedgerLock has the ledger apply a state. Whatever goes wrong there,
// the caller sees the ledger as unavailable (503) or slow (504) and nothing
// changes here; should a late ledger commit apply the change after all,
// its period_lock_set event brings the local state along.
func (s *Service) setLedgerLock(ctx context.Context, tenant, period, status, by string) error {
	err := s.ledger.SetPeriodLock(ctx, ledgerv1.SetPeriodLock{TenantID: tenant, Period: period, Status: status, LockedBy: by})
	switch {
	case err == nil:
		return nil
	case errs.Is(err, errs.Timeout):
		return &errs.Error{Code: errs.Timeout, Message: "the ledger did not confirm the lock change in time; it may still take effect, so check GET /v1/periods before retrying", Err: err}
	default:
		return &errs.Error{Code: errs.Unavailable, Message: "the ledger could not apply the lock change; nothing was changed", Err: err}
	}
}
