package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Limiter decides whether one more request under key fits perMinute. It also
// keeps the revocation epochs: a mark per tenant (and one for every tenant)
// that changes whenever a call may have revoked or changed a credential, so
// that every gateway replica can tell whether a credential it cached may
// still be trusted.
type Limiter interface {
	Allow(ctx context.Context, key string, perMinute int) (Decision, error)
	// Peek answers as Allow would but spends nothing.
	Peek(ctx context.Context, key string, perMinute int) (Decision, error)
	// AllowCaller is Allow for an authenticated caller of tenantID; the
	// same round trip reads the tenant's revocation epoch into
	// Decision.Epoch, so checking it costs no latency.
	AllowCaller(ctx context.Context, key string, perMinute int, tenantID string) (Decision, error)
	// Revoke changes the revocation epoch of tenantID, or of every tenant
	// when tenantID is "".
	Revoke(ctx context.Context, tenantID string) error
}

// Decision is a limiter's answer.
type Decision struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration
	// Epoch (AllowCaller only) identifies the revocations that covered the
	// tenant so far; it is never empty and changes with every Revoke of the
	// tenant or of every tenant.
	Epoch string
}

// RedisLimiter is GCRA in Redis, shared by every gateway replica, and keeps
// the revocation epochs there too. It needs one Redis server, not a
// Cluster: one script touches a caller's budget and its tenant's epochs.
type RedisLimiter struct {
	rdb    *redis.Client
	prefix string
}

// NewRedisLimiter limits with keys under prefix.
func NewRedisLimiter(c *redis.Client, prefix string) *RedisLimiter {
	return &RedisLimiter{rdb: c, prefix: prefix}
}

// gcra is redis_rate v10's GCRA script (after Pavel Pravosud's redis-gcra,
// MIT), unchanged but for its end: it also returns the values of KEYS[2..],
// the revocation epochs, which is how the rate limit and the epoch check
// share one round trip. The keys are read, never written, by the script, so
// the state under KEYS[1] is the one redis_rate kept.
var gcra = redis.NewScript(`
redis.replicate_commands()

local rate_limit_key = KEYS[1]
local burst = ARGV[1]
local rate = ARGV[2]
local period = ARGV[3]
local cost = tonumber(ARGV[4])

local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst

local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)

local tat = redis.call("GET", rate_limit_key)

if not tat then
  tat = now
else
  tat = tonumber(tat)
end

tat = math.max(tat, now)

local new_tat = tat + increment
local allow_at = new_tat - burst_offset

local diff = now - allow_at
local remaining = diff / emission_interval

local result
if remaining < 0 then
  result = {0, 0, tostring(diff * -1), tostring(tat - now)}
else
  local reset_after = new_tat - now
  if reset_after > 0 then
    redis.call("SET", rate_limit_key, new_tat, "EX", math.ceil(reset_after))
  end
  result = {cost, remaining, tostring(-1), tostring(reset_after)}
end
for i = 2, #KEYS do
  result[#result + 1] = redis.call("GET", KEYS[i]) or ""
end
return result
`)

// gcraResult is one run of gcra: the decision, when the whole burst is back
// and the values of the extra keys.
type gcraResult struct {
	allowed    bool
	remaining  int
	retryAfter time.Duration
	resetAfter time.Duration
	values     []string
}

func (r *RedisLimiter) gcra(ctx context.Context, key string, perMinute, cost int, read ...string) (gcraResult, error) {
	keys := append([]string{"rate:" + r.prefix + key}, read...)
	v, err := gcra.Run(ctx, r.rdb, keys, perMinute, perMinute, time.Minute.Seconds(), cost).Slice()
	if err != nil {
		return gcraResult{}, err
	}
	if len(v) != 4+len(read) {
		return gcraResult{}, fmt.Errorf("rate limiter: unexpected reply %v", v)
	}
	allowed, _ := v[0].(int64)
	remaining, _ := v[1].(int64)
	res := gcraResult{allowed: allowed > 0, remaining: int(remaining), retryAfter: seconds(v[2]), resetAfter: seconds(v[3])}
	for _, x := range v[4:] {
		s, _ := x.(string)
		res.values = append(res.values, s)
	}
	return res, nil
}

func seconds(v any) time.Duration {
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f == -1 {
		return -1
	}
	return time.Duration(f * float64(time.Second))
}

func (r *RedisLimiter) Allow(ctx context.Context, key string, perMinute int) (Decision, error) {
	res, err := r.gcra(ctx, key, perMinute, 1)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Allowed: res.allowed, Remaining: res.remaining, RetryAfter: res.retryAfter}, nil
}

func (r *RedisLimiter) AllowCaller(ctx context.Context, key string, perMinute int, tenantID string) (Decision, error) {
	res, err := r.gcra(ctx, key, perMinute, 1, r.epochKey(""), r.epochKey(tenantID))
	if err != nil {
		return Decision{}, err
	}
	return Decision{Allowed: res.allowed, Remaining: res.remaining, RetryAfter: res.retryAfter,
		Epoch: res.values[0] + "/" + res.values[1]}, nil
}

// Revoke sets the epoch to a value never used before rather than counting
// up: should Redis lose its data, a counter would restart and could return
// to a value a stale cache entry was verified under.
func (r *RedisLimiter) Revoke(ctx context.Context, tenantID string) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return r.rdb.Set(ctx, r.epochKey(tenantID), hex.EncodeToString(b), 0).Err()
}

// epochKey is the key of tenantID's revocation epoch; "" is every tenant's
// (tenant ids are UUIDs, never "all"). The keys never expire: there is one
// per tenant that ever revoked something.
func (r *RedisLimiter) epochKey(tenantID string) string {
	return "revoked:" + r.prefix + cmp.Or(tenantID, "all")
}

// MemoryLimiter is the single-process fallback when no Redis is configured.
type MemoryLimiter struct {
	mu     sync.Mutex
	m      map[string]*rate.Limiter
	all    uint64            // revocations of every tenant
	epochs map[string]uint64 // revocations per tenant
}

// NewMemoryLimiter returns an in-process limiter.
func NewMemoryLimiter() *MemoryLimiter {
	return &MemoryLimiter{m: map[string]*rate.Limiter{}, epochs: map[string]uint64{}}
}

func (m *MemoryLimiter) limiter(key string, perMinute int) *rate.Limiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.m[key]
	if !ok {
		if len(m.m) > 100_000 {
			clear(m.m)
		}
		l = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		m.m[key] = l
	}
	return l
}

func (m *MemoryLimiter) Allow(_ context.Context, key string, perMinute int) (Decision, error) {
	l := m.limiter(key, perMinute)
	now := time.Now()
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return Decision{RetryAfter: d}, nil
	}
	return Decision{Allowed: true, Remaining: int(math.Max(0, math.Floor(l.TokensAt(now))))}, nil
}

func (m *MemoryLimiter) AllowCaller(ctx context.Context, key string, perMinute int, tenantID string) (Decision, error) {
	d, err := m.Allow(ctx, key, perMinute)
	m.mu.Lock()
	d.Epoch = strconv.FormatUint(m.all, 10) + "/" + strconv.FormatUint(m.epochs[tenantID], 10)
	m.mu.Unlock()
	return d, err
}

// Revoke counts up: the counters live as long as the process, and so does
// every cache entry verified under them.
func (m *MemoryLimiter) Revoke(_ context.Context, tenantID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tenantID == "" {
		m.all++
	} else {
		m.epochs[tenantID]++
	}
	return nil
}
