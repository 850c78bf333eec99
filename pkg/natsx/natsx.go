// Package natsx carries requests between the gateway and the services over
// NATS request/reply. Metadata travels in headers (request id, deadline,
// claims, idempotency key, path parameters and query), the body is passed
// through unchanged, and errors come back as machine codes in headers.
package natsx

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/pkg/auth"
)

// Header names used on request and reply messages.
const (
	HdrRequestID      = "Request-Id"
	HdrDeadline       = "Deadline"
	HdrClaims         = "Claims"
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
)

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

// contextHeaders copies request metadata from ctx into h.
func contextHeaders(ctx context.Context, h nats.Header) error {
	if id := RequestID(ctx); id != "" {
		h.Set(HdrRequestID, id)
	}
	if k := IdempotencyKey(ctx); k != "" {
		h.Set(HdrIdempotencyKey, k)
	}
	if dl, ok := ctx.Deadline(); ok {
		h.Set(HdrDeadline, dl.UTC().Format(time.RFC3339Nano))
	}
	if c := auth.FromContext(ctx); c != nil {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		h.Set(HdrClaims, string(b))
	}
	return nil
}

// requestContext rebuilds a context from the headers of an incoming message.
func requestContext(parent context.Context, h nats.Header, fallback time.Duration) (context.Context, context.CancelFunc) {
	ctx := parent
	if id := h.Get(HdrRequestID); id != "" {
		ctx = WithRequestID(ctx, id)
	}
	if k := h.Get(HdrIdempotencyKey); k != "" {
		ctx = WithIdempotencyKey(ctx, k)
	}
	if raw := h.Get(HdrClaims); raw != "" {
		var c auth.Claims
		if json.Unmarshal([]byte(raw), &c) == nil {
			ctx = auth.WithClaims(ctx, &c)
		}
	}
	if dl, err := time.Parse(time.RFC3339Nano, h.Get(HdrDeadline)); err == nil {
		return context.WithDeadline(ctx, dl)
	}
	return context.WithTimeout(ctx, fallback)
}
