package gateway

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRouterFind(t *testing.T) {
	r := newRouter([]Route{
		{Method: "GET", Pattern: "/v1/review-queue/{id}", Subject: "get"},
		{Method: "GET", Pattern: "/v1/review-queue/count", Subject: "count"},
		{Method: "DELETE", Pattern: "/v1/review-queue/{id}", Subject: "delete"},
		{Method: "POST", Pattern: "/v1/review-queue/{id}/adjust", Subject: "adjust"},
	})
	tests := []struct {
		method, path string
		subject      string
		params       url.Values
		pathKnown    bool
	}{
		{"GET", "/v1/review-queue/count", "count", url.Values{}, true}, // DELETE /{id} also matches the path
		{"GET", "/v1/review-queue/abc", "get", url.Values{"id": {"abc"}}, true},
		{"DELETE", "/v1/review-queue/abc", "delete", url.Values{"id": {"abc"}}, true},
		{"POST", "/v1/review-queue/abc/adjust", "adjust", url.Values{"id": {"abc"}}, false},
		{"PUT", "/v1/review-queue/abc", "", nil, true},
		{"GET", "/v1/review-queue/", "", nil, false},
		{"GET", "/v1/nothing", "", nil, false},
	}
	for _, tt := range tests {
		m, known := r.find(tt.method, tt.path)
		var subject string
		if m.route != nil {
			subject = m.route.Subject
		}
		got := []any{subject, m.params, known}
		if diff := cmp.Diff([]any{tt.subject, tt.params, tt.pathKnown}, got); diff != "" {
			t.Errorf("%s %s mismatch (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}

func TestRoutesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range Routes {
		k := rt.Method + " " + rt.Pattern
		if seen[k] {
			t.Errorf("route %s listed twice", k)
		}
		seen[k] = true
		if rt.Subject == "" {
			t.Errorf("route %s has no subject", k)
		}
	}
}
