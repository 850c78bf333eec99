package natsrpc

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

func registerJournal(s *natsx.Server, svc *ledger.Service) error {
	h := map[string]func(context.Context, *auth.Claims, *natsx.Request) (any, error){
		ledgerv1.SubjectBookingsCreate: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var b ledger.Booking
			if err := natsx.Decode(r.Body, &b); err != nil {
				return nil, err
			}
			posted, replay, err := svc.Book(ctx, request(ctx, c, r, "rest"), b, "", "")
			if err != nil {
				return nil, err
			}
			return replayOr(replay, posted, 201), nil
		},
		ledgerv1.SubjectJournalReverse: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var rr ledger.ReverseRequest
			if err := natsx.Decode(r.Body, &rr); err != nil {
				return nil, err
			}
			rev, replay, err := svc.Reverse(ctx, request(ctx, c, r, "reversal"), rr)
			if err != nil {
				return nil, err
			}
			return replayOr(replay, rev, 201), nil
		},
		ledgerv1.SubjectJournalList: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			f, err := journalFilter(r)
			if err != nil {
				return nil, err
			}
			entries, err := svc.Journal(ctx, c.TenantID, f)
			if err != nil {
				return nil, err
			}
			return map[string]any{"entries": entries, "limit": f.Limit, "offset": f.Offset}, nil
		},
		ledgerv1.SubjectJournalGet: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.Intent(ctx, c.TenantID, r.Param("intent_id"))
		},
		ledgerv1.SubjectJournalVerify: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.Verify(ctx, c.TenantID)
		},
	}
	for subject, f := range h {
		if err := s.Handle(subject, handler(f)); err != nil {
			return err
		}
	}
	// Internal feed for projections and exports; the tenant is in the body.
	if err := s.Handle(ledgerv1.SubjectJournalFeed, func(ctx context.Context, req any) (any, error) {
		var fr ledgerv1.JournalFeedRequest
		if err := natsx.Decode(req.(*natsx.Request).Body, &fr); err != nil {
			return nil, err
		}
		return svc.JournalFeed(ctx, fr)
	}); err != nil {
		return err
	}
	// Internal command of the periods service; the tenant is in the body.
	return s.Handle(ledgerv1.SubjectSetPeriodLock, func(ctx context.Context, req any) (any, error) {
		var cmd ledgerv1.SetPeriodLock
		if err := natsx.Decode(req.(*natsx.Request).Body, &cmd); err != nil {
			return nil, err
		}
		if err := svc.SetPeriodLock(ctx, cmd.TenantID, cmd.Period, cmd.Status, cmd.LockedBy); err != nil {
			return nil, err
		}
		return ledgerv1.PeriodLockSet{OK: true, Period: cmd.Period, Status: cmd.Status}, nil
	})
}

func journalFilter(r *natsx.Request) (ledger.JournalFilter, error) {
	q := r.Query
	var f ledger.JournalFilter
	var err error
	if f.Limit, err = intParam(q, "limit", 200, 1, 1000); err != nil {
		return f, err
	}
	if f.Offset, err = intParam(q, "offset", 0, 0, 1<<31-1); err != nil {
		return f, err
	}
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"startDate", &f.From}, {"endDate", &f.To}} {
		if s := q.Get(d.name); s != "" {
			t, ok := ledger.ParseDate(s)
			if !ok {
				return f, errs.Invalid("invalid query parameter "+d.name, errs.Field(d.name, "must be a date YYYY-MM-DD"))
			}
			*d.dst = &t
		}
	}
	if f.From != nil && f.To != nil && f.To.Before(*f.From) {
		return f, errs.Invalid("endDate is before startDate", errs.Field("endDate", "must not be before startDate"))
	}
	f.Account = q.Get("account")
	if f.Account != "" && !accountNumber(f.Account) {
		return f, errs.Invalid("invalid account", errs.Field("account", "1 to 8 digits"))
	}
	f.Search = q.Get("search")
	f.ExternalReference = q.Get("externalReference")
	if len(f.Search) > 200 || len(f.ExternalReference) > ledger.MaxExternalRef {
		return f, errs.Invalid("search text is too long", errs.Field("search", "at most 200 characters"))
	}
	return f, nil
}

func accountNumber(s string) bool {
	if len(s) == 0 || len(s) > 8 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
