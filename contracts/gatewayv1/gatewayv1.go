// Package gatewayv1 is the contract of events the gateway emits.
package gatewayv1

import "time"

// Audit records of every call, allowed or refused, go to this stream; the
// identity service stores them append-only.
const (
	StreamCalls = "GATEWAY"
	CallsFilter = "evt.gateway.v1.>"
	// SubjectCall carries one Call.
	SubjectCall = "evt.gateway.v1.call"
	// SubjectCalls carries a CallBatch: a gateway under load sends the calls
	// of a few milliseconds together, one stored message instead of many.
	SubjectCalls = "evt.gateway.v1.calls"
)

// CallBatch is the payload of SubjectCalls.
type CallBatch struct {
	Calls []Call `json:"calls"`
}

// Call is one audited call. It never holds a secret: no credential, no body.
// RequestID is the gateway's own id, generated for every call and never
// taken from the client, so a client cannot make two calls share one record;
// ClientRequestID is the client's X-Request-Id, kept beside it for
// correlation only.
type Call struct {
	RequestID       string    `json:"request_id"`
	ClientRequestID string    `json:"client_request_id,omitempty"`
	TenantID        string    `json:"tenant_id,omitempty"`
	KeyID           string    `json:"key_id,omitempty"`
	UserID          string    `json:"user_id,omitempty"`
	Actor           string    `json:"actor,omitempty"`
	Surface         string    `json:"surface"` // api or mcp
	Method          string    `json:"method"`
	Route           string    `json:"route"` // the route pattern, e.g. DELETE /v1/api-keys/{id}
	Scope           string    `json:"scope,omitempty"`
	TargetID        string    `json:"target_id,omitempty"`
	Status          int       `json:"status"`
	ErrorCode       string    `json:"error_code,omitempty"`
	ClientIP        string    `json:"client_ip,omitempty"`
	DurationMS      int64     `json:"duration_ms"`
	At              time.Time `json:"at"`
}
