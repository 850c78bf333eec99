// Package natsx carries requests between the gateway and the services over
// NATS request/reply. Metadata travels in headers (request id, deadline,
// claims, idempotency key, path parameters and query), the body is passed
// through unchanged, and errors come back as machine codes in headers.
package natsx

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// Header names used on request and reply messages.
const (
	HdrRequestID = "Request-Id"
	HdrDeadline  = "Deadline"
	HdrClaims    = "Claims"
	// HdrClaimsSig signs Claims, the request id and an expiry (see
	// natsauth.Key.Sign); a request without a valid one is refused.
	HdrClaimsSig      = "Claims-Sig"
	HdrIdempotencyKey = "Idempotency-Key"
	HdrParams         = "Path-Params"
	HdrQuery          = "Query"
	HdrContentType    = "Content-Type"
	HdrStatus         = "Status"
	HdrDisposition    = "Content-Disposition"
	// HdrCursor asks a streaming endpoint for the chunk after a cursor;
	// HdrNextCursor on a reply says more chunks follow.
	HdrCursor     = "Cursor"
	HdrNextCursor = "Next-Cursor"
	// micro's own error headers; the code is our machine code.
	HdrError     = "Nats-Service-Error"
	HdrErrorCode = "Nats-Service-Error-Code"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	idempotencyKey
	principalKey
)

// principal is the verified principal of the request being served, kept
// as it arrived so that calls made while serving it forward it unchanged.
type principal struct {
	caller string
	claims *auth.Claims
	raw    string
	sig    string
}

// Caller returns who signed the principal of the request being served:
// "gateway" or a service's name; "" outside a request.
func Caller(ctx context.Context) string {
	if p, _ := ctx.Value(principalKey).(*principal); p != nil {
		return p.caller
	}
	return ""
}

// WithRequestID stores the request id in ctx.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestID returns the request id in ctx.
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey).(string)
	return s
}

// WithIdempotencyKey stores the client's Idempotency-Key in ctx.
func WithIdempotencyKey(ctx context.Context, k string) context.Context {
	return context.WithValue(ctx, idempotencyKey, k)
}

// IdempotencyKey returns the client's Idempotency-Key, or "".
func IdempotencyKey(ctx context.Context) string {
	s, _ := ctx.Value(idempotencyKey).(string)
	return s
}

// Request is what a service endpoint receives.
type Request struct {
	Subject     string
	Params      url.Values
	Query       url.Values
	Body        []byte
	ContentType string
	Header      nats.Header
	// Cursor is set when a streaming endpoint is asked for a later chunk.
	Cursor string
}

// Param returns a path parameter.
func (r *Request) Param(name string) string { return r.Params.Get(name) }

// Response lets an endpoint choose the status, or return raw bytes (files).
// Endpoints may also return any other value, which is sent as JSON with 200.
type Response struct {
	Status      int
	Body        any
	Raw         []byte
	ContentType string
	Disposition string
	// NextCursor, on a chunk of a stream, is what the caller sends back to
	// get the next chunk; empty on the last one.
	NextCursor string
}

// Created wraps v as a 201 response.
func Created(v any) *Response { return &Response{Status: 201, Body: v} }

// contextHeaders copies request metadata from ctx into h and signs the
// principal: a verified principal being served is forwarded unchanged; the
// gateway signs its caller's claims; a service signs its own principal
// (its name and the tenant it acts for). Without a signer the claims go
// unsigned, and every service refuses them.
func contextHeaders(ctx context.Context, h nats.Header, signer *natsauth.Key) error {
	id := RequestID(ctx)
	if id != "" {
		h.Set(HdrRequestID, id)
	}
	if k := IdempotencyKey(ctx); k != "" {
		h.Set(HdrIdempotencyKey, k)
	}
	dl, _ := ctx.Deadline()
	if !dl.IsZero() {
		h.Set(HdrDeadline, dl.UTC().Format(time.RFC3339Nano))
	}
	c, tenant := auth.FromContext(ctx), rpc.TenantOf(ctx)
	if p, _ := ctx.Value(principalKey).(*principal); p != nil && p.claims == c && tenant == "" {
		if p.raw != "" {
			h.Set(HdrClaims, p.raw)
		}
		h.Set(HdrClaimsSig, p.sig)
		return nil
	}
	switch {
	case signer != nil && signer.Name != natsauth.Gateway:
		if tenant == "" && c != nil {
			tenant = c.TenantID
		}
		c = &auth.Claims{Service: signer.Name, TenantID: tenant}
	case c == nil && tenant != "":
		c = &auth.Claims{TenantID: tenant}
	}
	var raw []byte
	if c != nil {
		var err error
		if raw, err = json.Marshal(c); err != nil {
			return err
		}
		h.Set(HdrClaims, string(raw))
	}
	if signer == nil {
		return nil
	}
	sig, err := signer.Sign(raw, id, dl)
	if err != nil {
		return err
	}
	h.Set(HdrClaimsSig, sig)
	return nil
}

// verify checks the signed principal of an incoming message. The gateway's
// claims are taken as signed; a service's principal names only the
// service and its tenant, so a service's key can never mint a user,
// scopes or the operator.
func verify(h nats.Header, trust *natsauth.Trust) (*principal, error) {
	raw := h.Get(HdrClaims)
	p := &principal{raw: raw, sig: h.Get(HdrClaimsSig)}
	var err error
	if p.caller, err = trust.Verify([]byte(raw), h.Get(HdrRequestID), p.sig, time.Now()); err != nil {
		return nil, errs.E(errs.Unauthenticated, "the request's principal is not valid: %s", err.Error())
	}
	if raw == "" {
		return p, nil
	}
	var c auth.Claims
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil {
		return nil, errs.E(errs.Unauthenticated, "the request's principal is not valid: undecodable claims")
	}
	service := p.caller != natsauth.Gateway
	if service != (c.Service != "") || service && (c.Service != p.caller || len(c.Scopes) > 0 || c.Operator ||
		c.KeyID != "" || c.UserID != "" || c.SessionID != "" || c.Role != "") {
		return nil, errs.E(errs.Unauthenticated, "the request's principal is not valid: claims do not match the signer")
	}
	p.claims = &c
	return p, nil
}

// requestContext rebuilds a context from the headers of an incoming
// message whose principal p was verified.
func requestContext(parent context.Context, h nats.Header, p *principal, fallback time.Duration) (context.Context, context.CancelFunc) {
	ctx := context.WithValue(parent, principalKey, p)
	if id := h.Get(HdrRequestID); id != "" {
		ctx = WithRequestID(ctx, id)
	}
	if k := h.Get(HdrIdempotencyKey); k != "" {
		ctx = WithIdempotencyKey(ctx, k)
	}
	if p.claims != nil {
		ctx = auth.WithClaims(ctx, p.claims)
	}
	if dl, err := time.Parse(time.RFC3339Nano, h.Get(HdrDeadline)); err == nil {
		return context.WithDeadline(ctx, dl)
	}
	return context.WithTimeout(ctx, fallback)
}
