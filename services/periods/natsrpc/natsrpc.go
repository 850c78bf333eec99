// Package natsrpc is the periods service's NATS transport: the route table
// of the contracts/periodsv1 request/reply surface, the consumers of the
// ledger's events and the peers the service depends on (ledger, identity).
package natsrpc

import (
	"context"

	"github.com/go-kit/kit/endpoint"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Routes is the route table of every periodsv1 subject. Every route but
// the internal SubjectStatus acts for the tenant of the caller's claims;
// the mutating ones honour Idempotency-Key.
func Routes(svc *periods.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: periodsv1.SubjectList, Decode: natsx.Nothing, Endpoint: asCaller(func(ctx context.Context, c *auth.Claims, _ struct{}) ([]periodsv1.Period, error) {
			return svc.List(ctx, c)
		})},
		{Subject: periodsv1.SubjectSoftLock, Decode: natsx.PathParam("period"), Endpoint: asCaller(svc.SoftLock), Idempotent: true},
		{Subject: periodsv1.SubjectLock, Decode: natsx.PathParam("period"), Endpoint: asCaller(ok(svc.Lock)), Idempotent: true},
		{Subject: periodsv1.SubjectReopen, Decode: natsx.PathParam("period"), Endpoint: asCaller(ok(svc.Reopen)), Idempotent: true},
		{Subject: periodsv1.SubjectCreateAdjustment, Decode: natsx.PathParam("year"), Endpoint: asCaller(created(ok(svc.CreateAdjustment))), Idempotent: true},
		{Subject: periodsv1.SubjectTasksList, Decode: natsx.QueryParam("period"), Endpoint: asCaller(svc.Tasks)},
		{Subject: periodsv1.SubjectTasksCreate, Decode: natsx.JSON[periods.TaskInput], Endpoint: asCaller(created(svc.CreateTask)), Idempotent: true},
		{Subject: periodsv1.SubjectTasksUpdate, Decode: decodeTaskChange, Endpoint: asCaller(func(ctx context.Context, c *auth.Claims, r taskChange) (periodsv1.Task, error) {
			return svc.UpdateTask(ctx, c, r.ID, r.Change)
		}), Idempotent: true},
		// Internal: for reporting, the tenant of its signed principal.
		{Subject: periodsv1.SubjectStatus, Callers: []string{"reporting"}, Decode: natsx.JSON[periodsv1.StatusRequest], Endpoint: natsx.Typed(func(ctx context.Context, r periodsv1.StatusRequest) (periodsv1.StatusReply, error) {
			var err error
			if r.TenantID, err = natsx.Tenant(ctx, r.TenantID); err != nil {
				return periodsv1.StatusReply{}, err
			}
			return svc.Statuses(ctx, r)
		})},
	}
}

// asCaller is the endpoint of a service method acting for the caller.
func asCaller[Req, Resp any](f func(context.Context, *auth.Claims, Req) (Resp, error)) endpoint.Endpoint {
	return natsx.Typed(func(ctx context.Context, r Req) (Resp, error) { return f(ctx, natsx.Claims(ctx), r) })
}

// okPeriod is the answer of lock, reopen and create-adjustment. ok and
// created tell idem.Reply their shape, so the answer the store saves with
// its change is the route's.
type okPeriod struct {
	OK     bool             `json:"ok"`
	Period periodsv1.Period `json:"period"`
}

func ok(f func(context.Context, *auth.Claims, string) (periodsv1.Period, error)) func(context.Context, *auth.Claims, string) (okPeriod, error) {
	return func(ctx context.Context, c *auth.Claims, s string) (okPeriod, error) {
		idem.Reply(ctx, func(v any) any { return okPeriod{OK: true, Period: v.(periodsv1.Period)} })
		p, err := f(ctx, c, s)
		return okPeriod{OK: true, Period: p}, err
	}
}

// created answers 201.
func created[Req, Resp any](f func(context.Context, *auth.Claims, Req) (Resp, error)) func(context.Context, *auth.Claims, Req) (*natsx.Response, error) {
	return func(ctx context.Context, c *auth.Claims, r Req) (*natsx.Response, error) {
		idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
		v, err := f(ctx, c, r)
		if err != nil {
			return nil, err
		}
		return natsx.Created(v), nil
	}
}

// taskChange is a change to the manual task ID.
type taskChange struct {
	ID     string
	Change periods.TaskUpdate
}

func decodeTaskChange(_ context.Context, r *natsx.Request) (any, error) {
	in := taskChange{ID: r.Param("id")}
	return in, natsx.Decode(r.Body, &in.Change)
}
