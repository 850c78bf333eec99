package identity

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Session is one login; its id is the session token's jti.
type Session struct {
	ID        string
	TenantID  string
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// Account is a user as login sees it.
type Account struct {
	User         User
	PasswordHash string // "" until the user sets a password
	CompanyName  string
	TenantActive bool
}

// LoginInput is the body of a login.
type LoginInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// UserRef is the short form of a user in login and me.
type UserRef struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Role  string `json:"role"`
}

// TenantRef is the short form of a tenant in a login.
type TenantRef struct {
	ID          string `json:"id"`
	CompanyName string `json:"company_name"`
}

// LoginResult answers a successful login.
type LoginResult struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	User      UserRef   `json:"user"`
	Tenant    TenantRef `json:"tenant"`
}

// maxPasswordBytes bounds what login hashes; no stored password is longer.
const maxPasswordBytes = 1024

var errInvalidCredentials = errs.E(errs.InvalidCredentials, "invalid email or password")

// Login checks an email and password and starts a session. Every failure,
// whether the email is unknown, the password wrong or the user or tenant
// inactive, answers the same error after the same amount of hashing, so a
// caller cannot probe which emails exist.
func (s *Service) Login(ctx context.Context, in LoginInput) (LoginResult, error) {
	const op = "identity.Login"
	var p problems
	if in.Email == "" {
		p.add("email", "required")
	}
	if in.Password == "" {
		p.add("password", "required")
	} else if len(in.Password) > maxPasswordBytes {
		p.add("password", "too long")
	}
	if err := p.err("invalid login"); err != nil {
		return LoginResult{}, err
	}
	acc, err := s.store.Account(ctx, normalizeEmail(in.Email))
	if err != nil && !errs.Is(err, errs.NotFound) {
		return LoginResult{}, errs.Wrap(op, err)
	}
	hash := acc.PasswordHash
	if hash == "" {
		hash = s.dummyHash
	}
	ok, err := s.checkPassword(ctx, hash, in.Password)
	if err != nil {
		return LoginResult{}, errs.Wrap(op, err)
	}
	if !ok || acc.PasswordHash == "" || !acc.User.IsActive || !acc.TenantActive {
		return LoginResult{}, errInvalidCredentials
	}

	now := s.now().UTC()
	sess := Session{
		ID:        uuid.NewString(),
		TenantID:  acc.User.TenantID,
		UserID:    acc.User.ID,
		CreatedAt: now,
		ExpiresAt: now.Add(SessionTTL),
	}
	token, err := s.signSession(sess)
	if err != nil {
		return LoginResult{}, errs.Wrap(op, err)
	}
	if err := s.store.StartSession(ctx, sess); err != nil {
		return LoginResult{}, errs.Wrap(op, err)
	}
	u := acc.User
	return LoginResult{
		Token:     token,
		ExpiresAt: sess.ExpiresAt,
		User:      UserRef{ID: u.ID, Email: u.Email, Role: u.Role},
		Tenant:    TenantRef{ID: u.TenantID, CompanyName: acc.CompanyName},
	}, nil
}

// Logout ends the caller's session. A caller using an API key has no
// session; the call succeeds and changes nothing.
func (s *Service) Logout(ctx context.Context, c *auth.Claims) error {
	if c.SessionID == "" {
		return nil
	}
	return errs.Wrap("identity.Logout", s.store.RevokeSession(ctx, c.TenantID, c.SessionID))
}

// KeyRef describes the API key a caller uses.
type KeyRef struct {
	ID     string   `json:"id"`
	Label  string   `json:"label"`
	Prefix string   `json:"key_prefix"`
	Scopes []string `json:"scopes"`
}

// MeResult describes the caller: the user of a session or the API key.
type MeResult struct {
	User   *UserRef          `json:"user"`
	Tenant identityv1.Tenant `json:"tenant"`
	Key    *KeyRef           `json:"key"`
	Scopes []string          `json:"scopes"`
}

// Me describes the caller.
func (s *Service) Me(ctx context.Context, c *auth.Claims) (MeResult, error) {
	const op = "identity.Me"
	t, err := s.store.Tenant(ctx, c.TenantID)
	if err != nil {
		return MeResult{}, errs.Wrap(op, err)
	}
	res := MeResult{Tenant: t, Scopes: nonNil(c.Scopes)}
	switch {
	case c.UserID != "":
		u, err := s.store.User(ctx, c.TenantID, c.UserID)
		if err != nil {
			return MeResult{}, errs.Wrap(op, err)
		}
		res.User = &UserRef{ID: u.ID, Email: u.Email, Role: u.Role}
	case c.KeyID != "":
		k, err := s.store.Key(ctx, c.TenantID, c.KeyID)
		if err != nil {
			return MeResult{}, errs.Wrap(op, err)
		}
		res.Key = &KeyRef{ID: k.ID, Label: k.Label, Prefix: k.Prefix, Scopes: nonNil(k.Scopes)}
	}
	return res, nil
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
