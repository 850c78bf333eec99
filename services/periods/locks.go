package periods

import (
	"context"
	"errors"
	"time"

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

// transition checks the period text, then checks the move from the
// current state against refused and has the ledger apply it (see change).
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
	ch := StatusChange{TenantID: tenant, Period: k.String(), Create: !k.IsAdjustment(), To: to, By: LockedBy(c), FiscalStart: start}
	p, err := s.change(ctx, ch, func(cur periodsv1.Period) error {
		if r, ok := refused[to][cur.Status]; ok {
			return errs.E(r.code, r.format, cur.Period)
		}
		return nil
	})
	if errs.Is(err, errs.NotFound) && k.IsAdjustment() {
		return periodsv1.Period{}, errs.NotFoundf("adjustment period %s does not exist; create it with POST /v1/periods/%d/create-adjustment", ch.Period, k.Year)
	}
	if err != nil {
		return periodsv1.Period{}, errs.Wrap("periods.transition", err)
	}
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
	ch := StatusChange{TenantID: tenant, Period: Key{y, AdjustmentMonth}.String(), New: true, To: Open, By: LockedBy(c), FiscalStart: start}
	p, err := s.change(ctx, ch, nil)
	if err != nil {
		return periodsv1.Period{}, errs.Wrap("periods.CreateAdjustment", err)
	}
	return p, nil
}

// waitForBusy bounds the wait for another change of the period, which
// takes as long as one ledger call; it ends well before the caller's deadline.
const waitForBusy = 5 * time.Second

// finishWithin bounds the local transaction after the ledger's answer,
// which runs even when the caller has given up: the ledger has the change.
const finishWithin = 10 * time.Second

// change makes a lock change without holding a lock or a transaction
// across the call to the ledger: the change is recorded as pending in one
// short transaction, the ledger (whose set_lock is idempotent) applies it,
// and a second short transaction applies it here. A change of the same
// period in flight is waited for, so concurrent changes still happen one
// after the other. Should this process die between the ledger's commit and
// the second transaction, the ledger's period_lock_set event applies the
// pending change (ApplyLockSet).
func (s *Service) change(ctx context.Context, ch StatusChange, check func(periodsv1.Period) error) (periodsv1.Period, error) {
	var pend Pending
	var err error
	giveUp := time.After(waitForBusy)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		pend, err = s.store.BeginChange(ctx, ch, check)
		if !errors.Is(err, ErrBusy) {
			break
		}
		select {
		case <-ctx.Done():
			return periodsv1.Period{}, ctx.Err()
		case <-giveUp:
			return periodsv1.Period{}, errs.E(errs.Conflict, "another lock change of period %s is in progress; check GET /v1/periods before retrying", ch.Period)
		case <-time.After(wait):
		}
	}
	if err != nil {
		return periodsv1.Period{}, err
	}
	after, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishWithin)
	defer cancel()
	if err := s.setLedgerLock(ctx, ch.TenantID, ch.Period, ch.To, ch.By); err != nil {
		return periodsv1.Period{}, errors.Join(err, s.store.AbandonChange(after, ch, pend))
	}
	return s.store.FinishChange(after, ch, pend)
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
	case errs.Is(err, errs.PeriodAlreadyLocked):
		return err // the ledger's own refusal: the month is hard-locked there
	case errs.Is(err, errs.Timeout):
		return &errs.Error{Code: errs.Timeout, Message: "the ledger did not confirm the lock change in time; it may still take effect, so check GET /v1/periods before retrying", Err: err}
	default:
		return &errs.Error{Code: errs.Unavailable, Message: "the ledger could not apply the lock change; nothing was changed", Err: err}
	}
}
