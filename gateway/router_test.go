package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

func TestRouterFind(t *testing.T) {
	var (
		served *route
		params url.Values
	)
	serve := func(rt *route) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served, params = rt, url.Values{}
			for _, name := range rt.params {
				params.Set(name, r.PathValue(name))
			}
		})
	}
	r := newRouter([]Route{
		{Method: "GET", Pattern: "/v1/review-queue/{id}", Subject: "get"},
		{Method: "GET", Pattern: "/v1/review-queue/count", Subject: "count"},
		{Method: "DELETE", Pattern: "/v1/review-queue/{id}", Subject: "delete"},
		{Method: "POST", Pattern: "/v1/review-queue/{id}/adjust", Subject: "adjust"},
	}, serve, http.NotFoundHandler())
	tests := []struct {
		method, path string
		subject      string
		params       url.Values
		pathKnown    bool // another method serves the path: 405 rather than 404
	}{
		{"GET", "/v1/review-queue/count", "count", url.Values{}, true}, // DELETE /{id} also matches the path
		{"GET", "/v1/review-queue/abc", "get", url.Values{"id": {"abc"}}, true},
		{"DELETE", "/v1/review-queue/abc", "delete", url.Values{"id": {"abc"}}, true},
		{"POST", "/v1/review-queue/abc/adjust", "adjust", url.Values{"id": {"abc"}}, false},
		{"PUT", "/v1/review-queue/abc", "", nil, true},
		{"HEAD", "/v1/review-queue/abc", "", nil, true},
		{"GET", "/v1/review-queue/", "", nil, false},
		{"GET", "/v1/nothing", "", nil, false},
	}
	for _, tt := range tests {
		served, params = nil, nil
		req := httptest.NewRequest(tt.method, tt.path, nil)
		r.mux.ServeHTTP(httptest.NewRecorder(), req)
		var subject string
		if served != nil {
			subject = served.Subject
		}
		known := slices.ContainsFunc(r.allowed(req), func(m string) bool { return m != tt.method })
		got := []any{subject, params, known}
		if diff := cmp.Diff([]any{tt.subject, tt.params, tt.pathKnown}, got); diff != "" {
			t.Errorf("%s %s mismatch (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}

// TestToolsAreRoutes: every MCP tool describes a route, and what a GET tool
// declares besides path parameters is its query.
func TestToolsAreRoutes(t *testing.T) {
	rr := newRouter(Routes, func(*route) http.Handler { return http.NotFoundHandler() }, http.NotFoundHandler())
	ts, err := newTools(rr)
	if err != nil {
		t.Fatal(err)
	}
	got := ts["account_entries"]
	if !got.query["startDate"] || got.query["number"] || ts["post_booking"].query["description"] {
		t.Fatalf("query arguments: account_entries %v, post_booking %v", got.query, ts["post_booking"].query)
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

// TestToolArgumentsMeetTheirSchema: arguments are checked against the
// tool's published schema before a GET tool turns them into query text,
// where their JSON types would be lost.
func TestToolArgumentsMeetTheirSchema(t *testing.T) {
	rr := newRouter(Routes, func(*route) http.Handler { return http.NotFoundHandler() }, http.NotFoundHandler())
	ts, err := newTools(rr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, args, want string
	}{
		{"list_journal", `{"account":"1800","limit":10}`, "ok"},
		{"whoami", ``, "ok"},
		{"list_tax_codes", `{"include_inactive":true}`, "ok"},
		{"list_journal", `{"account":1800}`, "account: must be a string"},
		{"list_journal", `{"limit":"10"}`, "limit: must be an integer"},
		{"list_tax_codes", `{"include_inactive":"true"}`, "include_inactive: must be a boolean"},
		{"post_booking", `{"booking_date":"2025-03-14","description":"x","lines":[{"account_debit":"6815","account_credit":"1800","amount":1}],"idempotency_key":null}`, "idempotency_key: must be a string"},
		{"get_intent", `{}`, "intent_id: required"},
	} {
		var args map[string]json.RawMessage
		if tt.args != "" {
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
		}
		got := "ok"
		if _, _, err := ts[tt.tool].request(args); err != nil {
			e := errs.As(err)
			got = e.Code
			for _, d := range e.Details {
				got = d.Field + ": " + d.Issue
			}
		}
		if got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.tool, tt.args, got, tt.want)
		}
	}
}
