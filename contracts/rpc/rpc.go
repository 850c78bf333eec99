// Package rpc is what the typed clients of the contract packages
// (ledgerv1.Client, identityv1.Client, ...) need of a NATS request/reply
// client. *natsx.Client satisfies Caller.
package rpc

import (
	"context"
	"net/url"
)

// Caller sends one request and decodes the reply.
//
// Call sends in as the JSON body (none when nil) with the path parameters
// params, and decodes a success reply into out (when non-nil).
//
// CallQuery is Call for a GET route: no body, the query parameters travel
// as the request's query.
//
// Both turn an error reply into an *errs.Error with the service's code,
// message and details, and transport failures into UNAVAILABLE or TIMEOUT.
// The caller's claims, deadline and request id travel from ctx.
type Caller interface {
	Call(ctx context.Context, subject string, params url.Values, in, out any) error
	CallQuery(ctx context.Context, subject string, params, query url.Values, out any) error
}

// Send is Caller.Call for a reply of type Out.
func Send[Out any](ctx context.Context, c Caller, subject string, in any) (Out, error) {
	var out Out
	err := c.Call(ctx, subject, nil, in, &out)
	return out, err
}

// Query is Caller.CallQuery for a reply of type Out.
func Query[Out any](ctx context.Context, c Caller, subject string, query url.Values) (Out, error) {
	var out Out
	err := c.CallQuery(ctx, subject, nil, query, &out)
	return out, err
}

type tenantKey struct{}

// ForTenant marks a call a service makes on its own for tenant (a
// consumer, a loop): the client sends it under the service's own signed
// principal for that tenant instead of a caller's. Internal subjects take
// the tenant from that principal, never from the body.
func ForTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantOf returns the tenant set by ForTenant, or "".
func TenantOf(ctx context.Context) string {
	s, _ := ctx.Value(tenantKey{}).(string)
	return s
}
