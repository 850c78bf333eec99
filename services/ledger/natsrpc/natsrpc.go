// Package natsrpc exposes the ledger service over NATS request/reply and
// consumes the events it depends on.
package natsrpc

import (
	"context"
	"net/url"
	"strconv"

	"github.com/go-kit/kit/endpoint"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// Register serves every ledger subject on s. keys stores the first answers
// of requests that are not postings (postings keep theirs in the posting
// transaction); nil disables Idempotency-Key for those.
func Register(s *natsx.Server, svc *ledger.Service, keys idem.Store) error {
	for _, reg := range []func(*natsx.Server, *ledger.Service) error{registerJournal, registerChart, registerDocuments} {
		if err := reg(s, svc); err != nil {
			return err
		}
	}
	return registerReview(s, svc, keys)
}

// handler adapts a function of the request and the caller's claims to a
// go-kit endpoint; every ledger route needs a tenant.
func handler(f func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error)) endpoint.Endpoint {
	return func(ctx context.Context, req any) (any, error) {
		c := auth.FromContext(ctx)
		if c == nil || c.TenantID == "" {
			return nil, errs.E(errs.Unauthenticated, "no authenticated tenant")
		}
		return f(ctx, c, req.(*natsx.Request))
	}
}

// request bundles what commands need for idempotency and provenance.
func request(ctx context.Context, c *auth.Claims, r *natsx.Request, channel string) ledger.Request {
	return ledger.Request{Claims: c, IdempotencyKey: natsx.IdempotencyKey(ctx), Body: r.Body, Channel: channel}
}

// replayOr answers with an idempotent replay when there is one.
func replayOr(rec *ledger.IdemRecord, v any, status int) any {
	if rec != nil {
		return &natsx.Response{Status: rec.Status, Body: rec.Response}
	}
	return &natsx.Response{Status: status, Body: v}
}

// intParam parses an optional integer query parameter within bounds.
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("invalid query parameter "+name, errs.Field(name, "must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)))
	}
	return n, nil
}
