package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Verifier resolves a bearer credential to claims; identity implements it
// over NATS.
type Verifier interface {
	Verify(ctx context.Context, token string) (*auth.Claims, error)
}

// credentialCache keeps verified credentials briefly so identity is not asked
// on every call. Identity's revocation events drop entries at once; the TTL
// bounds staleness if an event is ever missed.
type credentialCache struct {
	verifier Verifier
	ttl      time.Duration
	now      func() time.Time

	mu      sync.RWMutex
	entries map[[32]byte]cacheEntry
	// gen increases with every invalidation, so a verification that started
	// before a revocation cannot store its now-stale result afterwards.
	gen uint64
}

type cacheEntry struct {
	claims  *auth.Claims
	expires time.Time
}

func newCredentialCache(v Verifier, ttl time.Duration) *credentialCache {
	return &credentialCache{verifier: v, ttl: ttl, now: time.Now, entries: map[[32]byte]cacheEntry{}}
}

// cached returns the token's claims if they are cached and fresh, asking
// no one.
func (c *credentialCache) cached(token string) *auth.Claims {
	key := sha256.Sum256([]byte(token))
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return e.claims
	}
	return nil
}

func (c *credentialCache) claims(ctx context.Context, token string) (*auth.Claims, error) {
	key := sha256.Sum256([]byte(token))
	c.mu.RLock()
	e, ok := c.entries[key]
	gen := c.gen
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return e.claims, nil
	}
	claims, err := c.verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if len(c.entries) > 100_000 {
			clear(c.entries) // bound memory against floods of distinct tokens
		}
		c.entries[key] = cacheEntry{claims: claims, expires: c.now().Add(c.ttl)}
	}
	c.mu.Unlock()
	return claims, nil
}

// drop removes every cached credential the predicate matches.
func (c *credentialCache) drop(match func(*auth.Claims) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if match(e.claims) {
			delete(c.entries, k)
		}
	}
}

// subscribe listens to identity events on core NATS (every gateway replica
// receives them, unlike a queue group) and invalidates affected entries.
func (c *credentialCache) subscribe(nc *nats.Conn, log *slog.Logger) (*nats.Subscription, error) {
	return nc.Subscribe(identityv1.EventsFilter, func(m *nats.Msg) {
		switch m.Subject {
		case identityv1.EventCredentialRevoked:
			var ev identityv1.CredentialRevoked
			if err := json.Unmarshal(m.Data, &ev); err != nil {
				log.Warn("bad revocation event", "err", err)
				c.drop(func(*auth.Claims) bool { return true })
				return
			}
			c.drop(func(cl *auth.Claims) bool {
				return cl.TenantID == ev.TenantID && ((ev.KeyID != "" && cl.KeyID == ev.KeyID) ||
					(ev.SessionID != "" && cl.SessionID == ev.SessionID) ||
					(ev.UserID != "" && cl.UserID == ev.UserID))
			})
		case identityv1.EventTenantDeactivated, identityv1.EventTenantUpdated:
			var ev identityv1.TenantEvent
			_ = json.Unmarshal(m.Data, &ev)
			c.drop(func(cl *auth.Claims) bool { return ev.TenantID == "" || cl.TenantID == ev.TenantID })
		}
	})
}

// natsVerifier asks identity.
type natsVerifier struct{ client *natsx.Client }

func (v natsVerifier) Verify(ctx context.Context, token string) (*auth.Claims, error) {
	var c auth.Claims
	if err := v.client.Call(ctx, identityv1.SubjectVerify, nil, identityv1.VerifyRequest{Token: token}, &c); err != nil {
		return nil, err
	}
	if c.TenantID == "" {
		return nil, errs.E(errs.Unauthenticated, "invalid credential")
	}
	return &c, nil
}
