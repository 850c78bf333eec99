package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

// The one pipeline. Every /v1 request and every MCP message is one
// exchange: begin and finish bracket it with the audit record and the
// metrics, call takes it through authentication, the scope check, the rate
// limit, the idempotency key and the timeout to the route's service. The
// surfaces only translate: HTTP in api.go, JSON-RPC in mcp.go.

const maxIdempotencyKey = 255

// surface is how a call arrived.
type surface struct {
	name     string // as audited and as the claims tell services: "api" or "mcp"
	keyField string // where the caller put the idempotency key, for error details
}

var (
	restSurface = surface{name: "api", keyField: "Idempotency-Key"}
	mcpSurface  = surface{name: "mcp", keyField: "idempotency_key"}
)

// exchange is one call on its way through the pipeline.
type exchange struct {
	rec        gatewayv1.Call // audited and counted by finish
	surface    surface
	start      time.Time
	header     http.Header // the response's, for rate-limit and auth headers
	credential string      // the Authorization header
	route      *route
	claims     *auth.Claims
	limited    bool // a rate limit was applied; an MCP tool call spends no second one

	// ctx and req are the service call, kept for the later chunks of a stream.
	ctx context.Context
	req *natsx.Request
}

func (g *Gateway) begin(w http.ResponseWriter, r *http.Request, s surface) *exchange {
	start := time.Now()
	return &exchange{
		rec: gatewayv1.Call{
			RequestID: requestIDOf(r), ClientRequestID: clientRequestIDOf(r), Surface: s.name, Method: r.Method, Route: "unmatched",
			ClientIP: clientAddr(r, g.cfg.TrustedProxies), At: start.UTC(),
		},
		surface: s, start: start, header: w.Header(), credential: r.Header.Get("Authorization"),
	}
}

// finish audits and counts the exchange, whatever its outcome.
func (g *Gateway) finish(x *exchange) {
	elapsed := time.Since(x.start)
	x.rec.DurationMS = elapsed.Milliseconds()
	g.audit.record(&x.rec)
	g.metrics.requests.WithLabelValues(x.rec.Surface, x.rec.Method, x.rec.Route, strconv.Itoa(x.rec.Status)).Inc()
	g.metrics.duration.WithLabelValues(x.rec.Surface, x.rec.Method, x.rec.Route).Observe(elapsed.Seconds())
}

// use names the route the exchange is for; param gives a path parameter's
// value, the first of which is the audited target.
func (x *exchange) use(rt *route, param func(name string) string) {
	x.route = rt
	x.rec.Method, x.rec.Route, x.rec.Scope = rt.Method, rt.name, rt.Scope
	if len(rt.params) > 0 {
		x.rec.TargetID = param(rt.params[0])
	}
}

// fail records err as the outcome and returns what the client may see of
// it, the same on both surfaces.
func (x *exchange) fail(err error) (int, errs.Body) {
	status, body := publicError(err, x.rec.RequestID)
	x.rec.Status, x.rec.ErrorCode = status, body.Code
	return status, body
}

// reject fails the exchange with an HTTP error response.
func (x *exchange) reject(w http.ResponseWriter, err error) {
	status, body := x.fail(err)
	writeJSON(w, status, body)
}

// call admits the caller, lets the surface build the service request (only
// now, so nothing is read for a caller who is refused) and calls the route's
// subject. It returns the service's reply or an *errs.Error.
func (g *Gateway) call(ctx context.Context, x *exchange, build func() (req *natsx.Request, idemKey string, err error)) (*natsx.Reply, error) {
	ctx, err := g.admit(ctx, x)
	if err != nil {
		return nil, err
	}
	req, key, err := build()
	if err != nil {
		return nil, err
	}
	// The input boundary: nothing the document refuses reaches a service.
	// A large upload's form was checked part by part as it streamed.
	if x.route.Flags&(LargeUpload|MailUpload) != 0 {
		if err := x.route.op.CheckParams(req.Params, req.Query); err != nil {
			return nil, err
		}
	} else if err := x.route.op.CheckRequest(req.Params, req.Query, req.ContentType, req.Body); err != nil {
		return nil, err
	}
	if x.route.Flags&LoginLimited != 0 {
		if err := g.limitLogin(ctx, x, req.Body); err != nil {
			return nil, err
		}
	}
	if len(key) > maxIdempotencyKey {
		f := x.surface.keyField
		return nil, errs.Invalid(f+" is too long", errs.Field(f, "at most 255 characters"))
	}
	if issue := strictjson.TextIssue(key, false); issue != "" {
		f := x.surface.keyField
		return nil, errs.Invalid(f+" is not text", errs.Field(f, issue))
	}
	if key != "" {
		ctx = natsx.WithIdempotencyKey(ctx, key)
	}
	x.ctx, x.req = ctx, req
	reply, err := g.do(ctx, x.route.Subject, req)
	if x.route.Flags&WebhookLimited != 0 && errs.Is(err, errs.Unauthenticated) {
		// As for every 401: no caller is known whose budget the headers
		// could describe.
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining"} {
			x.header.Del(h)
		}
	}
	// A refusal changed nothing; any other outcome, an unknown one too, may
	// have revoked something.
	if x.route.Flags&(Revokes|RevokesAny) != 0 && (err == nil || errs.Status(errs.CodeOf(err)) >= 500) {
		g.revoked(ctx, x)
	}
	return reply, err
}

// revoked makes a revoking call's effect hold on every replica before the
// caller hears of it: this replica drops the tenant's cached credentials,
// and the tenant's revocation epoch changes, so the other replicas verify
// theirs again on their next use. Should the epoch not change (Redis down),
// the answer goes out all the same, as calls go on when the limiter fails:
// the other replicas then learn of the revocation from identity's event.
func (g *Gateway) revoked(ctx context.Context, x *exchange) {
	tenant := ""
	if x.route.Flags&RevokesAny == 0 && x.claims != nil {
		tenant = x.claims.TenantID
	}
	g.creds.dropTenant(tenant)
	// Also when the client has gone: the revocation is done.
	if err := g.deps.Limiter.Revoke(context.WithoutCancel(ctx), tenant); err != nil {
		g.metrics.revocationErrors.Inc()
		g.deps.Log.Warn("revocation epoch not changed; other replicas rely on identity's event", "request_id", x.rec.RequestID, "route", x.rec.Route, "err", err)
	}
}

// admit runs the guards of the exchange's route. Each runs once per
// exchange: an MCP message is authenticated and rate-limited as a whole, and
// the tool call it carries then adds only the tool's scope check.
//
// The rate limit comes before the scope check, so a refused call spends
// budget like any other and every answer to an authenticated caller, 403
// included, carries the rate-limit headers. A 401 carries none: no caller
// is known whose budget they could describe.
func (g *Gateway) admit(ctx context.Context, x *exchange) (context.Context, error) {
	if err := g.audit.admit(); err != nil {
		return ctx, err
	}
	rt := x.route
	if rt.Flags&Public != 0 {
		if rt.Flags&AuthLimited != 0 && !x.limited {
			if err := g.limit(ctx, x, "ip:"+x.rec.ClientIP, g.cfg.AuthRateLimitPerMinute); err != nil {
				return ctx, err
			}
		}
		if rt.Flags&WebhookLimited != 0 && !x.limited {
			if err := g.limit(ctx, x, "webhook:"+x.rec.ClientIP, g.cfg.WebhookRateLimitPerMinute); err != nil {
				return ctx, err
			}
		}
		return ctx, nil
	}
	if x.claims == nil {
		if err := g.authenticate(ctx, x); err != nil {
			return ctx, err
		}
	}
	if err := authorize(x.claims, rt.Route); err != nil {
		return ctx, err
	}
	return auth.WithClaims(ctx, x.claims), nil
}

// authenticate resolves the bearer credential and spends the caller's rate
// limit: the per-address auth limit on an AuthLimited route, else the
// caller's own. The limit's round trip to Redis also reads the revocation
// epoch of the credential's tenant; a cached credential verified under
// another epoch is verified with identity again, so a credential revoked
// through any replica is refused here once the revoking call has answered.
// 401 when the credential is missing, invalid or revoked; 429 when the
// client address has failed too often to be heard again yet, or the limit
// is spent.
func (g *Gateway) authenticate(ctx context.Context, x *exchange) error {
	token, malformed := bearerToken(x.credential)
	var cred credential
	if malformed == nil {
		cred, _ = g.creds.lookup(token)
	}
	if cred.claims == nil {
		// Before anything is looked up: an address that keeps failing costs
		// identity nothing more.
		if err := g.checkAuthFailures(ctx, x); err != nil {
			return err
		}
		if malformed != nil {
			return g.unauthenticated(ctx, x, malformed)
		}
		var err error
		if cred, err = g.verify(ctx, x, token, ""); err != nil {
			return err
		}
	}

	key, perMinute := cred.claims.Actor(), g.perMinute(cred.claims)
	if x.route.Flags&AuthLimited != 0 {
		key, perMinute = "ip:"+x.rec.ClientIP, g.cfg.AuthRateLimitPerMinute
	}
	x.limited = true
	d, limitErr := g.deps.Limiter.AllowCaller(ctx, key, perMinute, cred.claims.TenantID)
	if limitErr != nil {
		// As the limit fails open, so does the epoch check: the cache is
		// trusted as it stands, kept right by identity's events.
		g.limiterUnavailable(limitErr)
	} else {
		g.creds.observe(cred.claims.TenantID, d.Epoch)
		if cred.cached && cred.epoch != d.Epoch {
			var err error
			if cred, err = g.verify(ctx, x, token, d.Epoch); err != nil {
				return err
			}
		}
	}

	c := *cred.claims // the cached claims are shared; the surface is this call's
	c.Surface = x.surface.name
	x.claims = &c
	x.rec.TenantID, x.rec.KeyID, x.rec.UserID, x.rec.Actor = c.TenantID, c.KeyID, c.UserID, c.Actor()
	if limitErr != nil {
		return nil
	}
	return g.limited(x, perMinute, d)
}

// verify asks identity about the token; epoch as in credentialCache.verify.
func (g *Gateway) verify(ctx context.Context, x *exchange, token, epoch string) (credential, error) {
	cred, err := g.creds.verify(ctx, token, epoch)
	if err != nil {
		if errs.Is(err, errs.Unavailable) || errs.Is(err, errs.Timeout) {
			return credential{}, err
		}
		if e := errs.As(err); e == nil || e.Code != errs.Unauthenticated {
			g.deps.Log.Error("credential verification failed", "request_id", x.rec.RequestID, "err", err)
			return credential{}, errs.E(errs.Unavailable, "credential verification is unavailable")
		}
		return credential{}, g.unauthenticated(ctx, x, errs.E(errs.Unauthenticated, "invalid or revoked credential"))
	}
	return cred, nil
}

// unauthenticated counts a failed authentication against the client
// address and returns err, the 401.
func (g *Gateway) unauthenticated(ctx context.Context, x *exchange, err error) error {
	g.spendAuthFailure(ctx, x)
	x.header.Set("WWW-Authenticate", `Bearer realm="ledger"`)
	return err
}

func bearerToken(h string) (string, error) {
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if h == "" {
		return "", errs.E(errs.Unauthenticated, "missing Authorization header; send 'Authorization: Bearer <API key or session token>'")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 4096 {
		return "", errs.E(errs.Unauthenticated, "malformed Authorization header; expected 'Bearer <API key or session token>'")
	}
	return token, nil
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

// perMinute is the caller's rate limit: an API key's own, which identity
// capped at the operator's maximum when an admin set it, or the platform's.
// Sessions always get the platform's.
func (g *Gateway) perMinute(c *auth.Claims) int {
	if c.KeyID != "" && c.RateLimit > 0 {
		return c.RateLimit
	}
	return g.cfg.RateLimitPerMinute
}

// limit spends one request of key's budget and sets the rate-limit headers.
// Limiter outages let the call through: refusing every request would be
// worse.
func (g *Gateway) limit(ctx context.Context, x *exchange, key string, perMinute int) error {
	x.limited = true
	d, err := g.deps.Limiter.Allow(ctx, key, perMinute)
	if err != nil {
		g.limiterUnavailable(err)
		return nil
	}
	return g.limited(x, perMinute, d)
}

// limited sets the rate-limit headers of decision d and refuses the call
// with 429 if d does.
func (g *Gateway) limited(x *exchange, perMinute int, d Decision) error {
	setLimitHeaders(x, perMinute, d)
	if d.Allowed {
		return nil
	}
	g.metrics.rateLimited.Inc()
	secs := max(int((d.RetryAfter+time.Second-1)/time.Second), 1)
	x.header.Set("Retry-After", strconv.Itoa(secs))
	return errs.E(errs.RateLimited, "rate limit of %d requests per minute exceeded; retry after %d s", perMinute, secs)
}

func setLimitHeaders(x *exchange, perMinute int, d Decision) {
	x.header.Set("X-RateLimit-Limit", strconv.Itoa(perMinute))
	x.header.Set("X-RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
}

// do sends one request to a service within the request timeout. A service's
// error reply comes back as its *errs.Error, so both surfaces render it the
// way they render the gateway's own refusals.
func (g *Gateway) do(ctx context.Context, subject string, req *natsx.Request) (*natsx.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.RequestTimeout)
	defer cancel()
	reply, err := g.client.Do(ctx, subject, req)
	if err != nil {
		return nil, err
	}
	if reply.ErrCode != "" {
		var b errs.Body
		if err := json.Unmarshal(reply.Body, &b); err != nil || b.Error == "" {
			b = errs.Body{Error: "request failed"}
		}
		return nil, &errs.Error{Code: reply.ErrCode, Message: b.Error, Details: b.Details, Op: subject}
	}
	return reply, nil
}
