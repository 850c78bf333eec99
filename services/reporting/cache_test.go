package reporting

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestTTLCache(t *testing.T) {
	var c ttlCache[int]
	ctx := context.Background()
	var loads atomic.Int32
	load := func(v int, err error) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { loads.Add(1); return v, err }
	}
	if v, err := c.get(ctx, "t", false, load(1, nil)); v != 1 || err != nil {
		t.Fatalf("first get: %d %v", v, err)
	}
	if v, _ := c.get(ctx, "t", false, load(2, nil)); v != 1 || loads.Load() != 1 {
		t.Errorf("cached get: %d after %d loads", v, loads.Load())
	}
	if v, _ := c.get(ctx, "t", true, load(3, nil)); v != 3 {
		t.Errorf("fresh get: %d", v)
	}
	// A failed reload serves the last value.
	if v, err := c.get(ctx, "t", true, load(0, errors.New("down"))); v != 3 || err != nil {
		t.Errorf("failed reload: %d %v", v, err)
	}
	// Without a value, the error comes through and nothing is cached.
	if _, err := c.get(ctx, "u", false, load(0, errors.New("down"))); err == nil {
		t.Error("no error for a failed first load")
	}
	if v, err := c.get(ctx, "u", false, load(5, nil)); v != 5 || err != nil {
		t.Errorf("after a failed load: %d %v", v, err)
	}
	// Concurrent misses share one load.
	loads.Store(0)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.get(ctx, "w", false, func(context.Context) (int, error) { loads.Add(1); <-release; return 7, nil })
			if v != 7 || err != nil {
				t.Errorf("concurrent get: %d %v", v, err)
			}
		}()
	}
	for loads.Load() == 0 {
	}
	close(release)
	wg.Wait()
	if loads.Load() != 1 {
		t.Errorf("%d loads for concurrent misses", loads.Load())
	}
	c.forget("w")
	if v, _ := c.get(ctx, "w", false, load(8, nil)); v != 8 {
		t.Errorf("after forget: %d", v)
	}
}
