package natsx

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Typed adapts a function of a typed request to a go-kit endpoint, so a
// route table reads as "subject, decoder, service method".
func Typed[Req, Resp any](f func(context.Context, Req) (Resp, error)) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req, ok := request.(Req)
		if !ok {
			return nil, fmt.Errorf("natsx.Typed: request is %T, want %T", request, *new(Req))
		}
		return f(ctx, req)
	}
}

// JSON decodes the body strictly into a T (see Decode).
func JSON[T any](_ context.Context, r *Request) (any, error) {
	var v T
	if err := Decode(r.Body, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Nothing decodes a request that carries no input.
func Nothing(context.Context, *Request) (any, error) { return struct{}{}, nil }

// RequireTenant refuses a request without an authenticated tenant: every
// route but a service's internal ones acts for the caller's tenant.
func RequireTenant(next endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		if c := auth.FromContext(ctx); c == nil || c.TenantID == "" {
			return nil, errs.E(errs.Unauthenticated, "authentication required")
		}
		return next(ctx, request)
	}
}

// RequireCaller refuses a request whose verified principal was signed by
// none of callers.
func RequireCaller(callers ...string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			if c := Caller(ctx); !slices.Contains(callers, c) {
				return nil, errs.E(errs.Forbidden, "this subject does not accept calls from %s", cmp.Or(c, "an unknown caller"))
			}
			return next(ctx, request)
		}
	}
}

// Tenant is the tenant an internal command acts for: the verified
// principal's. A body still naming a tenant is refused, so that no caller
// can act for another tenant by writing its id.
func Tenant(ctx context.Context, bodyTenant string) (string, error) {
	if bodyTenant != "" {
		return "", errs.Invalid("the tenant is the signed caller's", errs.Field("tenant_id", "must not be sent"))
	}
	if c := auth.FromContext(ctx); c != nil && c.TenantID != "" {
		return c.TenantID, nil
	}
	return "", errs.E(errs.Unauthenticated, "authentication required")
}

// Claims returns the caller's claims; behind RequireTenant they are set.
func Claims(ctx context.Context) *auth.Claims { return auth.FromContext(ctx) }

// Metrics counts the outcomes of each subject by error code ("" for
// success) with their total time. micro's STATS request returns them as
// each endpoint's data, beside micro's own counters.
type Metrics struct {
	mu   sync.Mutex
	subj map[string]*subjectStats
}

type subjectStats struct {
	Outcomes map[string]int64 `json:"outcomes"`
	TotalMS  float64          `json:"total_ms"`
}

func newMetrics() *Metrics { return &Metrics{subj: map[string]*subjectStats{}} }

func (m *Metrics) observe(subject, code string, d time.Duration) {
	if code == "" {
		code = "OK"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.subj[subject]
	if s == nil {
		s = &subjectStats{Outcomes: map[string]int64{}}
		m.subj[subject] = s
	}
	s.Outcomes[code]++
	s.TotalMS += float64(d.Microseconds()) / 1000
}

// stats is micro's StatsHandler: every worker endpoint of a subject
// reports the subject's totals.
func (m *Metrics) stats(e *micro.Endpoint) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.subj[e.Subject]
	if s == nil {
		return nil
	}
	out := subjectStats{Outcomes: make(map[string]int64, len(s.Outcomes)), TotalMS: s.TotalMS}
	for k, v := range s.Outcomes {
		out.Outcomes[k] = v
	}
	return out
}

// Snapshot returns the outcome counts per subject, sorted by subject.
func (s *Server) Snapshot() []SubjectOutcomes {
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	out := make([]SubjectOutcomes, 0, len(s.metrics.subj))
	for subj, st := range s.metrics.subj {
		o := SubjectOutcomes{Subject: subj, Outcomes: map[string]int64{}}
		for k, v := range st.Outcomes {
			o.Outcomes[k] = v
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subject < out[j].Subject })
	return out
}

// SubjectOutcomes is one subject's outcome counts.
type SubjectOutcomes struct {
	Subject  string
	Outcomes map[string]int64
}
