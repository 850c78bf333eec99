package gateway

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ledgerplatform/ledger/gateway/contract"
)

// route is a Route ready to serve.
type route struct {
	Route
	name   string   // "METHOD /pattern": the ServeMux pattern, audit route and metrics label
	params []string // path parameter names in order; the first is the audited target
	op     *contract.Operation
}

// router serves Routes by ServeMux patterns, which already let static
// segments win over parameters (/v1/review-queue/count is never an id).
// What a ServeMux would answer in plain text, the unrouted handler answers
// in the API's error shape.
type router struct {
	mux     *http.ServeMux
	routes  map[string]*route // by name
	methods []string          // every method some route takes
}

func newRouter(routes []Route, serve func(*route) http.Handler, unrouted http.Handler) *router {
	rr := &router{mux: http.NewServeMux(), routes: map[string]*route{}}
	for _, def := range routes {
		rt := &route{Route: def, name: def.Method + " " + def.Pattern}
		for _, seg := range strings.Split(def.Pattern, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				rt.params = append(rt.params, strings.TrimSuffix(name, "}"))
			}
		}
		rr.routes[rt.name] = rt
		if !slices.Contains(rr.methods, def.Method) {
			rr.methods = append(rr.methods, def.Method)
		}
		h := serve(rt)
		rr.mux.Handle(rt.name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != rt.Method { // ServeMux lets HEAD into GET routes; the API declares no HEAD
				unrouted.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		}))
	}
	rr.mux.Handle("/v1/", unrouted)
	return rr
}

// allowed lists the methods whose routes take r's path, for a 405 and its
// Allow header.
func (rr *router) allowed(r *http.Request) []string {
	var out []string
	for _, m := range rr.methods {
		probe := r.WithContext(r.Context())
		probe.Method = m
		if _, pattern := rr.mux.Handler(probe); rr.routes[pattern] != nil {
			out = append(out, m)
		}
	}
	return out
}
