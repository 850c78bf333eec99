// Package identity is the domain of the identity service: tenants, users,
// passwords, sessions, API keys, OAuth apps and clients, and the audit log.
// It validates input and makes every security decision; persistence is
// behind the Store it consumes (package postgres) and transport is in
// package natsrpc.
package identity

import (
	"context"
	"encoding/hex"
	"fmt"
	"runtime"
	"time"
)

// Lifetimes of the credentials this service issues.
const (
	SessionTTL = 12 * time.Hour
	InviteTTL  = 7 * 24 * time.Hour
	ResetTTL   = time.Hour
)

// DefaultMaxKeyRateLimit is the operator's maximum for a key's own rate
// limit unless WithMaxKeyRateLimit sets another.
const DefaultMaxKeyRateLimit = 6000

// signingKeyName is the settings key holding the JWT signing secret.
const signingKeyName = "jwt_signing_key"

// Service implements the identity use cases.
type Service struct {
	store  Store
	now    func() time.Time
	secret []byte
	// hashing bounds concurrent argon2 computations: each one takes ~19 MiB,
	// so a burst of logins must queue rather than exhaust memory.
	hashing chan struct{}
	// dummyHash is verified against when a login names no user, so a wrong
	// email costs the same time as a wrong password.
	dummyHash string
	// maxKeyRate caps the per-minute limit an admin may give a key.
	maxKeyRate int
	// mailerKey, when set, is the public key mail links are sealed to.
	mailerKey *[32]byte
}

// Option configures a Service.
type Option func(*Service)

// WithClock replaces time.Now, for tests of expiry.
func WithClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
}

// WithMaxKeyRateLimit sets the operator's maximum for a key's own
// per-minute rate limit.
func WithMaxKeyRateLimit(n int) Option {
	return func(s *Service) { s.maxKeyRate = n }
}

// WithMailerKey seals the tokens of mailed links to the mail sender's
// public key (pkg/mailseal). Without it mail commands carry no link.
func WithMailerKey(public *[32]byte) Option {
	return func(s *Service) { s.mailerKey = public }
}

// New returns a Service. It loads the JWT signing secret from the store,
// creating it on the first start so that every replica signs alike.
func New(ctx context.Context, store Store, opts ...Option) (*Service, error) {
	s := &Service{
		store:      store,
		now:        time.Now,
		hashing:    make(chan struct{}, max(1, runtime.GOMAXPROCS(0))),
		maxKeyRate: DefaultMaxKeyRateLimit,
	}
	for _, o := range opts {
		o(s)
	}
	secret, err := store.Setting(ctx, signingKeyName, hex.EncodeToString(randomBytes(32)))
	if err != nil {
		return nil, fmt.Errorf("identity.New: signing key: %w", err)
	}
	if s.secret, err = hex.DecodeString(secret); err != nil || len(s.secret) < 32 {
		return nil, fmt.Errorf("identity.New: stored signing key is malformed")
	}
	if s.dummyHash, err = s.hashPassword(ctx, hex.EncodeToString(randomBytes(16))); err != nil {
		return nil, fmt.Errorf("identity.New: %w", err)
	}
	return s, nil
}
