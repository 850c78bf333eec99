package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Limiter decides whether one more request under key fits perMinute.
type Limiter interface {
	Allow(ctx context.Context, key string, perMinute int) (Decision, error)
	// Peek answers as Allow would but spends nothing.
	Peek(ctx context.Context, key string, perMinute int) (Decision, error)
}

// Decision is a limiter's answer.
type Decision struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration
}

// RedisLimiter is GCRA in Redis, shared by every gateway replica.
type RedisLimiter struct {
	l      *redis_rate.Limiter
	prefix string
}

// NewRedisLimiter limits with keys under prefix.
func NewRedisLimiter(c *redis.Client, prefix string) *RedisLimiter {
	return &RedisLimiter{l: redis_rate.NewLimiter(c), prefix: prefix}
}

func (r *RedisLimiter) Allow(ctx context.Context, key string, perMinute int) (Decision, error) {
	res, err := r.l.Allow(ctx, r.prefix+key, redis_rate.PerMinute(perMinute))
	if err != nil {
		return Decision{}, err
	}
	return Decision{Allowed: res.Allowed > 0, Remaining: res.Remaining, RetryAfter: res.RetryAfter}, nil
}

// MemoryLimiter is the single-process fallback when no Redis is configured.
type MemoryLimiter struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

// NewMemoryLimiter returns an in-process limiter.
func NewMemoryLimiter() *MemoryLimiter { return &MemoryLimiter{m: map[string]*rate.Limiter{}} }

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
