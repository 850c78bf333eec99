package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Limits that guard authentication, apart from the per-key limit of
// authenticated calls:
//
//   - failed authentication per client address (AuthFailureLimitPerMinute):
//     the address's budget is checked before a credential is looked up and
//     spent only when authentication fails, so guessing tokens costs no
//     identity lookups beyond the budget. A credential already verified and
//     cached passes without the check, so the valid callers behind an
//     address that is refused keep working while their cache entries live;
//   - the auth routes per client address (AuthRateLimitPerMinute), every
//     attempt counted;
//   - login per account (LoginRateLimitPerMinute), keyed by the e-mail.

// Peek implements Limiter: a GCRA request of cost 0 reports the remaining
// budget without moving it.
func (r *RedisLimiter) Peek(ctx context.Context, key string, perMinute int) (Decision, error) {
	res, err := r.gcra(ctx, key, perMinute, 0)
	if err != nil {
		return Decision{}, err
	}
	if res.remaining >= 1 {
		return Decision{Allowed: true, Remaining: res.remaining}, nil
	}
	// resetAfter is when the whole burst is back; one request fits burst-1
	// emission intervals earlier.
	interval := time.Minute / time.Duration(perMinute)
	return Decision{RetryAfter: max(res.resetAfter-time.Duration(perMinute-1)*interval, time.Millisecond)}, nil
}

// Peek implements Limiter.
func (m *MemoryLimiter) Peek(_ context.Context, key string, perMinute int) (Decision, error) {
	tokens := m.limiter(key, perMinute).TokensAt(time.Now())
	if tokens >= 1 {
		return Decision{Allowed: true, Remaining: int(math.Floor(tokens))}, nil
	}
	perSecond := float64(perMinute) / 60
	return Decision{RetryAfter: time.Duration((1 - tokens) / perSecond * float64(time.Second))}, nil
}

func authFailureKey(x *exchange) string { return "authfail:" + x.rec.ClientIP }

// checkAuthFailures refuses the exchange when its client address has no
// failed-authentication budget left; it spends nothing.
func (g *Gateway) checkAuthFailures(ctx context.Context, x *exchange) error {
	perMinute := g.cfg.AuthFailureLimitPerMinute
	d, err := g.deps.Limiter.Peek(ctx, authFailureKey(x), perMinute)
	if err != nil {
		g.limiterUnavailable(err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	return g.refuse(x, perMinute, d, "too many failed authentications from this address")
}

// spendAuthFailure counts one failed authentication against the address.
func (g *Gateway) spendAuthFailure(ctx context.Context, x *exchange) {
	if _, err := g.deps.Limiter.Allow(ctx, authFailureKey(x), g.cfg.AuthFailureLimitPerMinute); err != nil {
		g.limiterUnavailable(err)
	}
}

// limitLogin spends one attempt of the account a login names. The address
// limit alone would let one attacker lock out every user behind a shared
// ingress address, or leave one account open to guessing from many
// addresses; the account limit bounds guessing per account whatever the
// address. An unreadable body is left for identity to refuse.
func (g *Gateway) limitLogin(ctx context.Context, x *exchange, body []byte) error {
	var login struct {
		Email string `json:"email"`
	}
	_ = json.Unmarshal(body, &login)
	email := strings.ToLower(strings.TrimSpace(login.Email))
	if email == "" || len(email) > 320 {
		return nil
	}
	perMinute := g.cfg.LoginRateLimitPerMinute
	d, err := g.deps.Limiter.Allow(ctx, "login:"+email, perMinute)
	if err != nil {
		g.limiterUnavailable(err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	return g.refuse(x, perMinute, d, "too many login attempts for this account")
}

// refuse answers 429 with Retry-After for a limit of perMinute; the
// rate-limit headers name the limit that refused.
func (g *Gateway) refuse(x *exchange, perMinute int, d Decision, why string) error {
	g.metrics.rateLimited.Inc()
	secs := max(int((d.RetryAfter+time.Second-1)/time.Second), 1)
	setLimitHeaders(x, perMinute, Decision{})
	x.header.Set("Retry-After", strconv.Itoa(secs))
	return errs.E(errs.RateLimited, "%s (at most %d per minute); retry after %d s", why, perMinute, secs)
}

// limiterUnavailable notes that the limiter failed and the call goes on
// unlimited: refusing every call while Redis is down would be worse, and
// readiness deliberately ignores Redis for the same reason. The metric
// counts every such call; the warning is logged at most every 10 s.
func (g *Gateway) limiterUnavailable(err error) {
	g.metrics.limiterErrors.Inc()
	now := time.Now().UnixNano()
	last := g.limiterWarned.Load()
	if now-last < int64(10*time.Second) || !g.limiterWarned.CompareAndSwap(last, now) {
		return
	}
	g.deps.Log.Warn("rate limiter unavailable; allowing calls unlimited", "err", err)
}

// failFast keeps a limiter outage from slowing every call: each call to
// the limiter is bounded by timeout (a Redis client otherwise retries its
// dial for seconds), and after a failure the limiter is not asked again for
// pause, the calls in between failing open at once.
type failFast struct {
	Limiter
	timeout, pause time.Duration
	downUntil      atomic.Int64 // UnixNano
}

var errLimiterPaused = errors.New("rate limiter failed recently; not asked")

func (f *failFast) Allow(ctx context.Context, key string, perMinute int) (Decision, error) {
	return f.do(ctx, func(ctx context.Context) (Decision, error) { return f.Limiter.Allow(ctx, key, perMinute) })
}

func (f *failFast) Peek(ctx context.Context, key string, perMinute int) (Decision, error) {
	return f.do(ctx, func(ctx context.Context) (Decision, error) { return f.Limiter.Peek(ctx, key, perMinute) })
}

func (f *failFast) AllowCaller(ctx context.Context, key string, perMinute int, tenantID string) (Decision, error) {
	return f.do(ctx, func(ctx context.Context) (Decision, error) {
		return f.Limiter.AllowCaller(ctx, key, perMinute, tenantID)
	})
}

// Revoke is tried even while the limiter is paused: revocations are rare,
// and every one written keeps the other replicas exact.
func (f *failFast) Revoke(ctx context.Context, tenantID string) error {
	bounded, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	err := f.Limiter.Revoke(bounded, tenantID)
	if err != nil && ctx.Err() == nil {
		f.downUntil.Store(time.Now().Add(f.pause).UnixNano())
	}
	return err
}

func (f *failFast) do(ctx context.Context, call func(context.Context) (Decision, error)) (Decision, error) {
	if time.Now().UnixNano() < f.downUntil.Load() {
		return Decision{}, errLimiterPaused
	}
	bounded, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	d, err := call(bounded)
	// A caller that went away says nothing about the limiter.
	if err != nil && ctx.Err() == nil {
		f.downUntil.Store(time.Now().Add(f.pause).UnixNano())
	}
	return d, err
}
