package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// registerReview serves the review queue (path parameter id) and the
// internal command that adds items to it.
// Applying an instruction twice would change the draft twice, so adjust
// answers a retry with the same Idempotency-Key with its first answer (keys).
func registerReview(s *natsx.Server, svc *ledger.Service, keys idem.Store) error {
	h := map[string]func(context.Context, *auth.Claims, *natsx.Request) (any, error){
		ledgerv1.SubjectReviewList: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			f := ledger.ReviewFilter{Status: r.Query.Get("status")}
			if f.Status == "" {
				f.Status = ledger.ReviewPending
			}
			var err error
			if f.Limit, err = intParam(r.Query, "limit", 50, 1, ledger.MaxReviewListSize); err != nil {
				return nil, err
			}
			if f.Offset, err = intParam(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
				return nil, err
			}
			items, err := svc.ReviewItems(ctx, c.TenantID, f)
			if err != nil {
				return nil, err
			}
			return map[string]any{"items": items, "limit": f.Limit, "offset": f.Offset}, nil
		},
		ledgerv1.SubjectReviewCount: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			status := r.Query.Get("status")
			if status == "" {
				status = ledger.ReviewPending
			}
			count, pending, err := svc.ReviewCount(ctx, c.TenantID, status)
			if err != nil {
				return nil, err
			}
			return ledgerv1.ReviewCount{Count: count, Pending: pending}, nil
		},
		ledgerv1.SubjectReviewNext: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.NextReviewItem(ctx, c.TenantID, r.Query.Get("after_id"))
		},
		ledgerv1.SubjectReviewGet: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.ReviewItem(ctx, c.TenantID, r.Param("id"))
		},
		ledgerv1.SubjectReviewDelete: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.DeleteReview(ctx, request(ctx, c, r, "review_queue"), r.Param("id"))
		},
		ledgerv1.SubjectReviewAdjust: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var body struct {
				Instruction string `json:"instruction"`
			}
			if err := natsx.Decode(r.Body, &body); err != nil {
				return nil, err
			}
			return svc.AdjustReview(ctx, request(ctx, c, r, "review_queue"), r.Param("id"), body.Instruction)
		},
		ledgerv1.SubjectReviewConfirm: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var body struct {
				SkipDuplicateCheck bool `json:"skip_duplicate_check"`
			}
			if err := natsx.Decode(r.Body, &body); err != nil {
				return nil, err
			}
			res, err := svc.ConfirmReview(ctx, request(ctx, c, r, "review_queue"), r.Param("id"), body.SkipDuplicateCheck)
			if err != nil {
				return nil, err
			}
			return natsx.Created(res), nil
		},
		ledgerv1.SubjectReviewDraft: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var body struct {
				LouSuggestion *ledger.Suggestion `json:"lou_suggestion"`
			}
			if err := natsx.Decode(r.Body, &body); err != nil {
				return nil, err
			}
			if body.LouSuggestion == nil {
				return nil, missing("lou_suggestion", "the full draft: booking_date, description, lines")
			}
			sug, err := svc.UpdateReviewDraft(ctx, request(ctx, c, r, "review_queue"), r.Param("id"), *body.LouSuggestion)
			if err != nil {
				return nil, err
			}
			return map[string]any{"lou_suggestion": sug}, nil
		},
		ledgerv1.SubjectReviewOverride: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var body struct {
				BookingDraft       *ledger.Booking `json:"booking_draft"`
				SkipDuplicateCheck bool            `json:"skip_duplicate_check"`
			}
			if err := natsx.Decode(r.Body, &body); err != nil {
				return nil, err
			}
			if body.BookingDraft == nil {
				return nil, missing("booking_draft", "the booking to post instead: booking_date, description, lines")
			}
			b := *body.BookingDraft
			b.SkipDuplicateCheck = b.SkipDuplicateCheck || body.SkipDuplicateCheck
			res, err := svc.OverrideReview(ctx, request(ctx, c, r, "review_queue"), r.Param("id"), b)
			if err != nil {
				return nil, err
			}
			return natsx.Created(res), nil
		},
	}
	for subject, f := range h {
		e := handler(f)
		if subject == ledgerv1.SubjectReviewAdjust && keys != nil {
			e = idem.Middleware(keys, subject)(e)
		}
		if err := s.Handle(subject, e); err != nil {
			return err
		}
	}
	// Internal command of other services; the tenant is in the body. 201
	// for a new item, 200 when the id or the live source already has one.
	return s.Handle(ledgerv1.SubjectReviewCreate, func(ctx context.Context, req any) (any, error) {
		var in ledgerv1.ReviewItemInput
		if err := natsx.Decode(req.(*natsx.Request).Body, &in); err != nil {
			return nil, err
		}
		it, created, err := svc.CreateReviewItem(ctx, in)
		if err != nil {
			return nil, err
		}
		status := 200
		if created {
			status = 201
		}
		return &natsx.Response{Status: status, Body: ledgerv1.ReviewItemCreated{ID: it.ID, Created: created}}, nil
	})
}

func missing(field, what string) error {
	return errs.Invalid(field+" is required", errs.Field(field, "required: "+what))
}
