package identity

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// SessionPrincipal is a session with what deciding its validity needs.
type SessionPrincipal struct {
	Session      Session
	User         User
	TenantActive bool
	Operator     bool
}

// KeyPrincipal is an API key with what deciding its validity needs.
type KeyPrincipal struct {
	Key          APIKey
	TenantActive bool
	Operator     bool
}

// maxTokenLen bounds what Verify looks up; real credentials are far shorter.
const maxTokenLen = 4096

var errUnauthenticated = errs.E(errs.Unauthenticated, "invalid or expired credential")

// Verify resolves a bearer credential, a session token or an API key, to
// the claims of its principal. Any reason a credential is not valid is
// UNAUTHENTICATED; other errors mean the answer is unknown.
func (s *Service) Verify(ctx context.Context, token string) (*auth.Claims, error) {
	c, _, err := s.verify(ctx, token)
	return c, err
}

func (s *Service) verify(ctx context.Context, token string) (*auth.Claims, *time.Time, error) {
	const op = "identity.Verify"
	if token == "" || len(token) > maxTokenLen {
		return nil, nil, errUnauthenticated
	}
	if isJWT(token) {
		sc, err := s.parseSession(token)
		if err != nil {
			return nil, nil, errUnauthenticated
		}
		if _, err := parseID(sc.ID, "session"); err != nil {
			return nil, nil, errUnauthenticated
		}
		p, err := s.store.SessionPrincipal(ctx, sc.ID)
		if errs.Is(err, errs.NotFound) {
			return nil, nil, errUnauthenticated
		}
		if err != nil {
			return nil, nil, errs.Wrap(op, err)
		}
		c, err := s.sessionClaims(p)
		if err != nil || p.User.ID != sc.Subject || p.Session.TenantID != sc.TenantID {
			return nil, nil, errUnauthenticated
		}
		return c, &p.Session.ExpiresAt, nil
	}
	p, err := s.store.KeyPrincipal(ctx, hashToken(token))
	if errs.Is(err, errs.NotFound) {
		return nil, nil, errUnauthenticated
	}
	if err != nil {
		return nil, nil, errs.Wrap(op, err)
	}
	if p.Key.RevokedAt != nil || !p.TenantActive {
		return nil, nil, errUnauthenticated
	}
	k := p.Key
	var limit int
	if k.RateLimit != nil {
		limit = *k.RateLimit
	}
	return &auth.Claims{
		TenantID:  k.TenantID,
		KeyID:     k.ID,
		KeyPrefix: k.Prefix,
		Label:     k.Label,
		Role:      k.Role,
		Scopes:    nonNil(k.Scopes),
		Operator:  p.Operator,
		RateLimit: limit,
	}, nil, nil
}

// sessionClaims turns a stored session into claims if it is still valid.
// A session's scopes follow its user's current role.
func (s *Service) sessionClaims(p SessionPrincipal) (*auth.Claims, error) {
	if p.Session.RevokedAt != nil || !p.Session.ExpiresAt.After(s.now()) || !p.User.IsActive || !p.TenantActive {
		return nil, errUnauthenticated
	}
	return &auth.Claims{
		TenantID:  p.Session.TenantID,
		UserID:    p.User.ID,
		SessionID: p.Session.ID,
		Email:     p.User.Email,
		Role:      p.User.Role,
		Scopes:    nonNil(auth.RoleScopes(p.User.Role)),
		Operator:  p.Operator,
	}, nil
}

// TokenInfo answers verify-token.
type TokenInfo struct {
	Valid     bool       `json:"valid"`
	Type      string     `json:"type,omitempty"` // "api_key" or "session"
	TenantID  string     `json:"tenant_id,omitempty"`
	Scopes    []string   `json:"scopes,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// VerifyTokenInput is the body of verify-token; without a token the caller's
// own credential is described.
type VerifyTokenInput struct {
	Token string `json:"token"`
}

// VerifyToken tells whether a credential is valid and what it grants. An
// invalid credential is an answer ({valid: false}), not an error.
func (s *Service) VerifyToken(ctx context.Context, c *auth.Claims, in VerifyTokenInput) (TokenInfo, error) {
	if in.Token == "" {
		return s.describeCaller(ctx, c)
	}
	claims, exp, err := s.verify(ctx, in.Token)
	if errs.Is(err, errs.Unauthenticated) {
		return TokenInfo{Valid: false}, nil
	}
	if err != nil {
		return TokenInfo{}, err
	}
	return tokenInfo(claims, exp), nil
}

func (s *Service) describeCaller(ctx context.Context, c *auth.Claims) (TokenInfo, error) {
	if c.SessionID == "" {
		return tokenInfo(c, nil), nil
	}
	p, err := s.store.SessionPrincipal(ctx, c.SessionID)
	if errs.Is(err, errs.NotFound) {
		return TokenInfo{Valid: false}, nil
	}
	if err != nil {
		return TokenInfo{}, errs.Wrap("identity.VerifyToken", err)
	}
	claims, err := s.sessionClaims(p)
	if err != nil {
		return TokenInfo{Valid: false}, nil
	}
	return tokenInfo(claims, &p.Session.ExpiresAt), nil
}

func tokenInfo(c *auth.Claims, exp *time.Time) TokenInfo {
	info := TokenInfo{Valid: true, Type: "api_key", TenantID: c.TenantID, Scopes: nonNil(c.Scopes)}
	if c.SessionID != "" {
		info.Type = "session"
		info.ExpiresAt = exp
	}
	return info
}
