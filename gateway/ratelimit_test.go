package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func TestLimiters(t *testing.T) {
	rdb, prefix := testkit.Redis(t)
	limiters := map[string]Limiter{"redis": NewRedisLimiter(rdb, prefix), "memory": NewMemoryLimiter()}
	for name, l := range limiters {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
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
}
