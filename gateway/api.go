package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

const maxIdempotencyKey = 255

// serveAPI runs one /v1 call: match, authenticate, authorise, rate-limit,
// forward, and audit the outcome whatever it is.
func (g *Gateway) serveAPI(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw, _ := w.(*statusWriter)
	if sw == nil {
		sw = &statusWriter{ResponseWriter: w}
	}
	call := &gatewayv1.Call{
		RequestID: requestIDOf(r), Surface: "api", Method: r.Method,
		Route: "unmatched", ClientIP: g.clientIP(r), At: start.UTC(),
	}
	defer func() {
		call.Status = sw.status
		call.DurationMS = time.Since(start).Milliseconds()
		g.audit.record(call)
		g.metrics.requests.WithLabelValues(r.Method, call.Route, strconv.Itoa(sw.status)).Inc()
		g.metrics.duration.WithLabelValues(r.Method, call.Route).Observe(time.Since(start).Seconds())
	}()
	fail := func(err error) {
		call.ErrorCode, _, _ = errs.Public(err)
		if e := errs.As(err); e != nil {
			call.ErrorCode = e.Code
		}
		writeError(sw, r, err)
	}

	m, pathKnown := g.router.find(r.Method, r.URL.Path)
	if m.route == nil {
		if pathKnown {
			fail(errs.E(errs.MethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path))
			return
		}
		fail(errs.NotFoundf("no route for %s %s", r.Method, r.URL.Path))
		return
	}
	rt := m.route
	call.Route = rt.Method + " " + rt.Pattern
	call.Scope = rt.Scope
	if len(rt.names) > 0 {
		call.TargetID = m.params.Get(rt.names[0])
	}
	setRouteLabel(r, call.Route)

	if rt.Flags&AuthLimited != 0 {
		if !g.allow(sw, r, "ip:"+call.ClientIP, g.cfg.AuthRateLimitPerMinute, fail) {
			return
		}
	}
	ctx := r.Context()
	if rt.Flags&Public == 0 {
		claims, err := g.authenticate(ctx, r)
		if err != nil {
			fail(err)
			return
		}
		call.TenantID, call.KeyID, call.UserID, call.Actor = claims.TenantID, claims.KeyID, claims.UserID, claims.Actor()
		if err := authorize(claims, rt.Route); err != nil {
			fail(err)
			return
		}
		if rt.Flags&AuthLimited == 0 && !g.allow(sw, r, claims.Actor(), g.cfg.RateLimitPerMinute, fail) {
			return
		}
		c := *claims
		c.Surface = "api"
		ctx = auth.WithClaims(ctx, &c)
	}
	req, err := g.buildRequest(sw, r, m, rt.Flags&Upload != 0)
	if err != nil {
		fail(err)
		return
	}
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		if len(k) > maxIdempotencyKey {
			fail(errs.Invalid("Idempotency-Key is too long", errs.Field("Idempotency-Key", "at most 255 characters")))
			return
		}
		ctx = natsx.WithIdempotencyKey(ctx, k)
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.RequestTimeout)
	defer cancel()
	reply, err := g.client.Do(ctx, rt.Subject, req)
	if err != nil {
		fail(err)
		return
	}
	g.writeReply(sw, r, reply, call)
	if rt.Flags&Stream != 0 && reply.ErrCode == "" {
		g.stream(ctx, sw, r, rt.Subject, req, reply.NextCursor)
	}
}

// stream fetches and writes the remaining chunks of a streaming reply. The
// status line is out, so a failure can only cut the response short; the
// client sees a truncated body and the log says why.
func (g *Gateway) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, subject string, req *natsx.Request, cursor string) {
	flusher, _ := w.(http.Flusher)
	for cursor != "" {
		if flusher != nil {
			flusher.Flush()
		}
		if r.Context().Err() != nil {
			return
		}
		req.Cursor = cursor
		// Every chunk gets the full request timeout; the export as a whole
		// may run longer.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.RequestTimeout)
		reply, err := g.client.Do(cctx, subject, req)
		cancel()
		if err == nil && reply.ErrCode != "" {
			err = errs.E(reply.ErrCode, "%s", reply.Body)
		}
		if err != nil {
			g.deps.Log.Error("stream aborted", "request_id", requestIDOf(r), "subject", subject, "err", err)
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(reply.Body); err != nil {
			return
		}
		cursor = reply.NextCursor
	}
}

// authenticate resolves the bearer credential; 401 when missing or invalid.
func (g *Gateway) authenticate(ctx context.Context, r *http.Request) (*auth.Claims, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if h == "" {
		return nil, errs.E(errs.Unauthenticated, "missing Authorization header; send 'Authorization: Bearer <API key or session token>'")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 4096 {
		return nil, errs.E(errs.Unauthenticated, "malformed Authorization header; expected 'Bearer <API key or session token>'")
	}
	claims, err := g.creds.claims(ctx, token)
	if err != nil {
		if errs.Is(err, errs.Unavailable) || errs.Is(err, errs.Timeout) {
			return nil, err
		}
		if e := errs.As(err); e == nil || e.Code != errs.Unauthenticated {
			g.deps.Log.Error("credential verification failed", "request_id", requestIDOf(r), "err", err)
			return nil, errs.E(errs.Unavailable, "credential verification is unavailable")
		}
		return nil, errs.E(errs.Unauthenticated, "invalid or revoked credential")
	}
	return claims, nil
}

// authorize checks the route's scope; admin covers all.
func authorize(c *auth.Claims, rt Route) error {
	if rt.Scope != "" && !c.Has(rt.Scope) {
		return errs.E(errs.Forbidden, "this credential lacks the scope %s", rt.Scope)
	}
	if rt.Flags&Operator != 0 && !c.Operator {
		return errs.E(errs.Forbidden, "only the platform operator may do this")
	}
	return nil
}

// allow applies a rate limit and writes the 429 itself. Limiter outages
// let the call through: refusing every request would be worse.
func (g *Gateway) allow(w http.ResponseWriter, r *http.Request, key string, perMinute int, fail func(error)) bool {
	d, err := g.deps.Limiter.Allow(r.Context(), key, perMinute)
	if err != nil {
		g.deps.Log.Warn("rate limiter unavailable; allowing", "err", err)
		return true
	}
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(perMinute))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
	if d.Allowed {
		return true
	}
	g.metrics.rateLimited.Inc()
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	fail(errs.E(errs.RateLimited, "rate limit of %d requests per minute exceeded; retry after %d s", perMinute, max(secs, 1)))
	return false
}

// buildRequest reads the body within its limit and checks JSON is well formed
// before anything reaches a service.
func (g *Gateway) buildRequest(w http.ResponseWriter, r *http.Request, m match, upload bool) (*natsx.Request, error) {
	req := &natsx.Request{Params: m.params, Query: r.URL.Query()}
	if r.Body == nil || r.ContentLength == 0 && r.Method == http.MethodGet {
		return req, nil
	}
	limit := g.cfg.MaxBodyBytes
	if upload {
		limit = g.cfg.MaxUploadBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			if upload {
				return nil, errs.E(errs.FileTooLarge, "the upload exceeds %d bytes; files may have at most 10 MB", limit)
			}
			return nil, errs.E(errs.PayloadTooLarge, "request body exceeds %d bytes", limit)
		}
		return nil, errs.Invalid("could not read request body")
	}
	if len(body) == 0 {
		return req, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case upload && mt == "multipart/form-data":
		req.ContentType = ct // the boundary is needed to parse it
	case upload:
		return nil, errs.E(errs.UnsupportedMedia, "send this as multipart/form-data with a file field")
	case mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json"):
		if !json.Valid(body) {
			return nil, errs.Invalid("request body is not valid JSON")
		}
		req.ContentType = "application/json"
	default:
		return nil, errs.E(errs.UnsupportedMedia, "Content-Type %q is not supported here; send application/json", mt)
	}
	req.Body = body
	return req, nil
}

func (g *Gateway) writeReply(w http.ResponseWriter, r *http.Request, reply *natsx.Reply, call *gatewayv1.Call) {
	if reply.ErrCode != "" {
		call.ErrorCode = reply.ErrCode
		var b errs.Body
		if err := json.Unmarshal(reply.Body, &b); err != nil || b.Error == "" {
			b = errs.Body{Error: "request failed", Code: reply.ErrCode}
		}
		b.Code = reply.ErrCode
		b.RequestID = requestIDOf(r)
		writeJSON(w, reply.Status, b)
		return
	}
	ct := reply.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	if reply.Disposition != "" {
		w.Header().Set("Content-Disposition", reply.Disposition)
	}
	if !strings.HasPrefix(ct, "application/json") {
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}
	w.WriteHeader(reply.Status)
	w.Write(reply.Body)
}
