package periods

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// ValidBooking reports whether a booking event can be counted.
func ValidBooking(b Booking) bool {
	_, ok := ParsePeriod(b.Period)
	return ok && ValidID(b.TenantID) && b.EventID != ""
}

// CountBookings counts intents posted by the ledger into their periods,
// creating periods as bookings arrive. Each event counts once, however
// often it is delivered. It returns how many were counted.
func (s *Service) CountBookings(ctx context.Context, bs []Booking) (int, error) {
	for _, b := range bs {
		if !ValidBooking(b) {
			return 0, errs.Invalid("malformed booking event", errs.Field("event", b.EventID))
		}
	}
	if len(bs) == 0 {
		return 0, nil
	}
	n, err := s.store.CountBookings(ctx, bs)
	return n, errs.Wrap("periods.CountBookings", err)
}

// ValidLockSet reports whether a period_lock_set event can be applied.
func ValidLockSet(ev LockSet) bool {
	_, ok := ParsePeriod(ev.Period)
	switch ev.Status {
	case Open, SoftLocked, HardLocked:
	default:
		return false
	}
	return ok && ValidID(ev.TenantID) && ev.EventID != ""
}

// ApplyLockSet reconciles the local state with the ledger, which enforces
// locks and is therefore right about them. Every lock change made here
// also produces one such event; the local row counts the changes whose
// event is still to come. While that count is positive the event is the
// echo of a change made here (or of one the local state has moved past)
// and only lowers the count; at zero the event is a change this service
// did not commit (a crash between the ledger's commit and the local one,
// or a timed-out call the ledger applied late), and its status is adopted.
// The event of a change still pending here (the last one awaited, with the
// pending status) applies that change: its process died between the
// ledger's commit and its own, or has not got there yet.
// Events must be applied in stream order. It reports whether the local
// status changed.
func (s *Service) ApplyLockSet(ctx context.Context, ev LockSet) (bool, error) {
	if !ValidLockSet(ev) {
		return false, errs.Invalid("malformed period_lock_set event", errs.Field("event", ev.EventID))
	}
	changed, err := s.store.ApplyLockSet(ctx, ev)
	return changed, errs.Wrap("periods.ApplyLockSet", err)
}
