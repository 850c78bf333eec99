package reporting

import (
	"context"
	"sync"
	"time"
)

// ttlCache keeps one value per tenant for CacheTTL. Concurrent misses for
// the same tenant share one load. The zero value is ready to use.
type ttlCache[V any] struct {
	mu   sync.Mutex
	vals map[string]*cacheEntry[V]
}

// CacheTTL is how long reports reuse a tenant's chart of accounts and
// master data.
const CacheTTL = 30 * time.Second

type cacheEntry[V any] struct {
	val     V
	err     error
	expires time.Time
	ready   chan struct{}
}

// get returns the cached value of key, loading it when absent, expired or
// when fresh is set. A failed load is not cached; when an earlier value
// exists it is served instead (for CacheTTL/6) so a peer's outage does not
// fail every report.
func (c *ttlCache[V]) get(ctx context.Context, key string, fresh bool, load func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	if c.vals == nil {
		c.vals = map[string]*cacheEntry[V]{}
	}
	e, ok := c.vals[key]
	if ok && !fresh {
		select {
		case <-e.ready:
			if e.err == nil && time.Now().Before(e.expires) {
				c.mu.Unlock()
				return e.val, nil
			}
		default:
			// A load is running: wait for it.
			c.mu.Unlock()
			select {
			case <-e.ready:
				if e.err == nil {
					return e.val, nil
				}
				return c.get(ctx, key, fresh, load)
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
		}
	}
	// An expired value stays at hand in case the reload fails.
	var stale *cacheEntry[V]
	if ok {
		select {
		case <-e.ready:
			if e.err == nil {
				stale = e
			}
		default:
		}
	}
	if len(c.vals) > 10000 {
		c.evictLocked()
	}
	e = &cacheEntry[V]{ready: make(chan struct{})}
	c.vals[key] = e
	c.mu.Unlock()

	e.val, e.err = load(ctx)
	e.expires = time.Now().Add(CacheTTL)
	if e.err != nil && stale != nil && ctx.Err() == nil {
		// The peer is unreachable: serve the last known value for a while
		// rather than failing every report.
		e.val, e.err = stale.val, nil
		e.expires = time.Now().Add(CacheTTL / 6)
	}
	close(e.ready)
	if e.err != nil {
		c.mu.Lock()
		if c.vals[key] == e {
			delete(c.vals, key)
		}
		c.mu.Unlock()
	}
	return e.val, e.err
}

// evictLocked drops expired entries.
func (c *ttlCache[V]) evictLocked() {
	now := time.Now()
	for k, e := range c.vals {
		select {
		case <-e.ready:
			if !now.Before(e.expires) {
				delete(c.vals, k)
			}
		default:
		}
	}
}

// forget drops key.
func (c *ttlCache[V]) forget(key string) {
	c.mu.Lock()
	delete(c.vals, key)
	c.mu.Unlock()
}
