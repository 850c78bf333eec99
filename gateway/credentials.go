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

// credentialCache keeps verified credentials so identity is not asked on
// every call. An entry is trusted only while the revocation epoch of its
// tenant (read with the rate limit on every call, see Limiter) is the one it
// was verified under: every call that may revoke a credential changes the
// epoch before it answers, so no replica trusts an entry verified before.
// Identity's revocation events drop entries too, for when the epoch cannot
// be read (Redis down: the cache is trusted then, as the limiter fails
// open); the TTL bounds what both could miss.
type credentialCache struct {
	verifier Verifier
	ttl      time.Duration
	now      func() time.Time

	mu      sync.RWMutex
	entries map[[32]byte]cacheEntry
	// gen increases with every invalidation, so a verification that started
	// before a revocation cannot store its now-stale result afterwards.
	gen uint64
	// seen is each tenant's epoch as last read, and seq numbers its changes:
	// a verification may record the epoch it was verified under only if
	// the epoch was seen before the verification began.
	seen map[string]seenEpoch
	seq  uint64
}

type cacheEntry struct {
	claims  *auth.Claims
	expires time.Time
	epoch   string // the tenant's epoch before the verification; "" unknown
}

type seenEpoch struct {
	epoch string
	seq   uint64 // c.seq when it was seen to change
}

// credential is a verified credential.
type credential struct {
	claims *auth.Claims
	epoch  string // as in cacheEntry
	cached bool   // from the cache, not verified by this call
}

func newCredentialCache(v Verifier, ttl time.Duration) *credentialCache {
	return &credentialCache{verifier: v, ttl: ttl, now: time.Now, entries: map[[32]byte]cacheEntry{}, seen: map[string]seenEpoch{}}
}

// lookup returns the token's credential if it is cached and fresh, asking
// no one; whether its epoch is still current is the caller's to check.
func (c *credentialCache) lookup(token string) (credential, bool) {
	key := sha256.Sum256([]byte(token))
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return credential{claims: e.claims, epoch: e.epoch, cached: true}, true
	}
	return credential{}, false
}

// verify asks identity and caches the answer. epoch is the tenant's epoch
// read before the call, or "" when none was: then the epoch last seen
// before the call is recorded, if it was, else the entry is kept with an
// unknown epoch and verified again on its next use.
func (c *credentialCache) verify(ctx context.Context, token, epoch string) (credential, error) {
	key := sha256.Sum256([]byte(token))
	c.mu.RLock()
	gen, seq := c.gen, c.seq
	c.mu.RUnlock()
	claims, err := c.verifier.Verify(ctx, token)
	if err != nil {
		return credential{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.seen[claims.TenantID]; epoch == "" && ok && s.seq <= seq {
		epoch = s.epoch
	}
	if c.gen == gen {
		if len(c.entries) > 100_000 {
			clear(c.entries) // bound memory against floods of distinct tokens
		}
		c.entries[key] = cacheEntry{claims: claims, expires: c.now().Add(c.ttl), epoch: epoch}
	}
	return credential{claims: claims, epoch: epoch}, nil
}

// observe notes the tenant's epoch as just read.
func (c *credentialCache) observe(tenantID, epoch string) {
	c.mu.RLock()
	s, ok := c.seen[tenantID]
	c.mu.RUnlock()
	if ok && s.epoch == epoch {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.seen[tenantID]; ok && s.epoch == epoch {
		return
	}
	if len(c.seen) > 100_000 {
		clear(c.seen) // what is forgotten is only verified once more
	}
	c.seq++
	c.seen[tenantID] = seenEpoch{epoch: epoch, seq: c.seq}
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

// dropTenant removes the tenant's cached credentials, every one for "".
func (c *credentialCache) dropTenant(tenantID string) {
	c.drop(func(cl *auth.Claims) bool { return tenantID == "" || cl.TenantID == tenantID })
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
