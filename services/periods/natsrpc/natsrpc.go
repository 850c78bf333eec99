// Package natsrpc serves the periods service's NATS subjects (the
// contracts/periodsv1 request/reply surface), consumes the ledger's events
// and speaks to the peers the service depends on (ledger, identity).
package natsrpc

import (
	"context"
	"fmt"

	"github.com/go-kit/kit/endpoint"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/periods"
)

// mutating lists the subjects that honour Idempotency-Key.
var mutating = []string{periodsv1.SubjectSoftLock, periodsv1.SubjectLock, periodsv1.SubjectReopen,
	periodsv1.SubjectCreateAdjustment, periodsv1.SubjectTasksCreate, periodsv1.SubjectTasksUpdate}

// Register serves every periods subject on s. With keys set, mutating
// requests carrying an Idempotency-Key answer a repeat with the first answer.
func Register(s *natsx.Server, svc *periods.Service, keys idem.Store) error {
	eps := Endpoints(svc)
	if keys != nil {
		for _, subject := range mutating {
			eps[subject] = idem.Middleware(keys, subject)(eps[subject])
		}
	}
	for subject, e := range eps {
		if err := s.Handle(subject, e); err != nil {
			return fmt.Errorf("natsrpc.Register: %w", err)
		}
	}
	return nil
}

// okPeriod is the answer of lock, reopen and create-adjustment.
type okPeriod struct {
	OK     bool             `json:"ok"`
	Period periodsv1.Period `json:"period"`
}

// Endpoints returns the endpoint of every request/reply subject of
// periodsv1. Every subject but the internal SubjectStatus acts for the
// tenant of the caller's claims and answers UNAUTHENTICATED without them.
func Endpoints(svc *periods.Service) map[string]endpoint.Endpoint {
	return map[string]endpoint.Endpoint{
		periodsv1.SubjectList: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.List(ctx, c)
		}),
		periodsv1.SubjectSoftLock: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.SoftLock(ctx, c, r.Param("period"))
		}),
		periodsv1.SubjectLock: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			p, err := svc.Lock(ctx, c, r.Param("period"))
			if err != nil {
				return nil, err
			}
			return okPeriod{OK: true, Period: p}, nil
		}),
		periodsv1.SubjectReopen: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			p, err := svc.Reopen(ctx, c, r.Param("period"))
			if err != nil {
				return nil, err
			}
			return okPeriod{OK: true, Period: p}, nil
		}),
		periodsv1.SubjectCreateAdjustment: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			p, err := svc.CreateAdjustment(ctx, c, r.Param("year"))
			if err != nil {
				return nil, err
			}
			return natsx.Created(okPeriod{OK: true, Period: p}), nil
		}),
		periodsv1.SubjectTasksList: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			return svc.Tasks(ctx, c, r.Query.Get("period"))
		}),
		periodsv1.SubjectTasksCreate: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var in periods.TaskInput
			if err := natsx.Decode(r.Body, &in); err != nil {
				return nil, err
			}
			t, err := svc.CreateTask(ctx, c, in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(t), nil
		}),
		periodsv1.SubjectTasksUpdate: authenticated(func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var in periods.TaskUpdate
			if err := natsx.Decode(r.Body, &in); err != nil {
				return nil, err
			}
			return svc.UpdateTask(ctx, c, r.Param("id"), in)
		}),
		// Internal: the tenant is in the body.
		periodsv1.SubjectStatus: func(ctx context.Context, req any) (any, error) {
			var in periodsv1.StatusRequest
			if err := natsx.Decode(req.(*natsx.Request).Body, &in); err != nil {
				return nil, err
			}
			return svc.Statuses(ctx, in)
		},
	}
}

// authenticated adapts a handler that acts for the caller in the claims
// the gateway attached.
func authenticated(f func(context.Context, *auth.Claims, *natsx.Request) (any, error)) endpoint.Endpoint {
	return func(ctx context.Context, req any) (any, error) {
		r, ok := req.(*natsx.Request)
		if !ok {
			return nil, fmt.Errorf("natsrpc: unexpected request type %T", req)
		}
		c := auth.FromContext(ctx)
		if c == nil || c.TenantID == "" {
			return nil, errs.E(errs.Unauthenticated, "authentication required")
		}
		return f(ctx, c, r)
	}
}
