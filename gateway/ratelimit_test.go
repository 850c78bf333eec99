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

// TestLimiterEpochs: AllowCaller spends like Allow and reads the tenant's
// revocation epoch, which stays put until a revocation of the tenant, or of
// every tenant, changes it; another tenant's revocation leaves it be.
func TestLimiterEpochs(t *testing.T) {
	eachLimiter(t, func(t *testing.T, ctx context.Context, l Limiter) {
		epoch := func(tenant string) string {
			t.Helper()
			d, err := l.AllowCaller(ctx, "caller-"+tenant, 1000, tenant)
			if err != nil || !d.Allowed || d.Epoch == "" {
				t.Fatalf("AllowCaller for %s: %+v %v", tenant, d, err)
			}
			return d.Epoch
		}
		t1, t2 := epoch("t1"), epoch("t2")
		if epoch("t1") != t1 {
			t.Fatal("the epoch moved without a revocation")
		}
		if err := l.Revoke(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
		if epoch("t1") == t1 || epoch("t2") != t2 {
			t.Fatal("revoking t1 must change t1's epoch and only t1's")
		}
		t1 = epoch("t1")
		if err := l.Revoke(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if epoch("t1") == t1 || epoch("t2") == t2 {
			t.Fatal("revoking every tenant must change every tenant's epoch")
		}

		for i := range 3 {
			if d, err := l.AllowCaller(ctx, "spender", 3, "t1"); err != nil || !d.Allowed || d.Remaining != 2-i {
				t.Fatalf("call %d: %+v %v", i, d, err)
			}
		}
		if d, err := l.AllowCaller(ctx, "spender", 3, "t1"); err != nil || d.Allowed || d.RetryAfter <= 0 || d.Epoch == "" {
			t.Fatalf("call over the limit: %+v %v", d, err)
		}
		if d, err := l.Allow(ctx, "spender", 3); err != nil || d.Allowed {
			t.Fatalf("AllowCaller and Allow keep different budgets: %+v %v", d, err)
		}
	})
}
