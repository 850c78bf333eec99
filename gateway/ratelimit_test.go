package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// eachLimiter runs test against the Redis and the in-memory limiter.
func eachLimiter(t *testing.T, test func(t *testing.T, ctx context.Context, l Limiter)) {
	rdb, prefix := testkit.Redis(t)
	limiters := map[string]Limiter{"redis": NewRedisLimiter(rdb, prefix), "memory": NewMemoryLimiter()}
	for name, l := range limiters {
		t.Run(name, func(t *testing.T) { test(t, context.Background(), l) })
	}
}

func TestLimiters(t *testing.T) {
	eachLimiter(t, func(t *testing.T, ctx context.Context, l Limiter) {
		for i := 0; i < 5; i++ {
			d, err := l.Allow(ctx, "a", 5)
			if err != nil || !d.Allowed {
				t.Fatalf("request %d refused: %+v %v", i, d, err)
			}
			if d.Remaining != 4-i {
				t.Errorf("request %d: remaining %d, want %d", i, d.Remaining, 4-i)
			}
		}
		d, err := l.Allow(ctx, "a", 5)
		if err != nil || d.Allowed {
			t.Fatalf("sixth request allowed: %+v %v", d, err)
		}
		if d.RetryAfter <= 0 || d.RetryAfter > 12*time.Second {
			t.Errorf("retry after %v, want within one emission interval (12s)", d.RetryAfter)
		}
		if d, err := l.Allow(ctx, "b", 5); err != nil || !d.Allowed {
			t.Fatalf("another key was affected: %+v %v", d, err)
		}
	})
}

// TestLimiterPeek: Peek spends nothing, and once the budget is spent it
// refuses with the wait for one request.
func TestLimiterPeek(t *testing.T) {
	eachLimiter(t, func(t *testing.T, ctx context.Context, l Limiter) {
		for i := 0; i < 10; i++ {
			if d, err := l.Peek(ctx, "p", 3); err != nil || !d.Allowed || d.Remaining != 3 {
				t.Fatalf("peek %d on a fresh key: %+v %v", i, d, err)
			}
		}
		for i := 0; i < 3; i++ {
			if d, err := l.Allow(ctx, "p", 3); err != nil || !d.Allowed {
				t.Fatalf("request %d refused after peeks: %+v %v", i, d, err)
			}
		}
		d, err := l.Peek(ctx, "p", 3)
		if err != nil || d.Allowed {
			t.Fatalf("peek on a spent key: %+v %v", d, err)
		}
		if d.RetryAfter <= 0 || d.RetryAfter > 20*time.Second {
			t.Errorf("retry after %v, want within one emission interval (20s)", d.RetryAfter)
		}
	})
}
