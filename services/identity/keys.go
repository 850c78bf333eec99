package identity

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// APIKey is an API key's metadata; the raw key is shown once at creation.
type APIKey struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"-"`
	Label      string     `json:"label"`
	Role       string     `json:"role,omitempty"`
	Scopes     []string   `json:"scopes"`
	Prefix     string     `json:"key_prefix"`
	Hash       string     `json:"-"`
	CreatedBy  string     `json:"-"` // the creator's auth.Claims.Actor
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"-"`
	LastUsedAt *time.Time `json:"last_used_at"`
	CallCount  int64      `json:"call_count"`
	// RateLimit is the key's own requests per minute; nil keeps the
	// gateway's platform default.
	RateLimit *int `json:"rate_limit_per_minute"`
}

// NewAPIKey is a created key with its raw value.
type NewAPIKey struct {
	APIKey
	RawKey string `json:"raw_key"`
}

// CreateKeyInput is the body of a key creation.
type CreateKeyInput struct {
	Label  string   `json:"label"`
	Role   string   `json:"role"`
	Scopes []string `json:"scopes"`
	// RateLimitPerMinute, set only by an admin, replaces the platform's
	// per-key limit for this key, up to the operator's maximum.
	RateLimitPerMinute *int `json:"rate_limit_per_minute"`
}

// maxLabelLen bounds a key's label.
const maxLabelLen = 100

// ListKeys lists the caller's tenant's live keys.
func (s *Service) ListKeys(ctx context.Context, c *auth.Claims) ([]APIKey, error) {
	return tenantList(ctx, c, "identity.ListKeys", s.store.Keys)
}

// CreateKey issues a key in the caller's tenant. Without scopes the key gets
// its role's scopes. A caller can grant only scopes it holds itself.
func (s *Service) CreateKey(ctx context.Context, c *auth.Claims, in CreateKeyInput) (NewAPIKey, error) {
	var p problems
	label := strings.TrimSpace(in.Label)
	p.length("label", label, 1, maxLabelLen)
	if in.Role != "" && !auth.ValidRole(in.Role) {
		p.add("role", "must be one of "+strings.Join(auth.Roles(), ", "))
	}
	scopes := checkScopes(&p, "scopes", in.Scopes)
	if len(scopes) == 0 && len(in.Scopes) == 0 && auth.ValidRole(in.Role) {
		scopes = auth.RoleScopes(in.Role)
	}
	if len(scopes) == 0 && len(p) == 0 {
		p.add("scopes", "required unless a role is given")
	}
	if r := in.RateLimitPerMinute; r != nil && (*r < 1 || *r > s.maxKeyRate) {
		p.add("rate_limit_per_minute", fmt.Sprintf("must be a whole number from 1 to %d, the operator's maximum", s.maxKeyRate))
	}
	if err := p.err("invalid API key"); err != nil {
		return NewAPIKey{}, err
	}
	if !c.Covers(scopes) {
		return NewAPIKey{}, errs.E(errs.ScopeNotGrantable, "a key cannot be granted scopes its creator does not hold")
	}
	// A limit is capacity of the whole platform, not of the tenant: only an
	// admin hands it out.
	if in.RateLimitPerMinute != nil && !c.Has(auth.Admin) {
		return NewAPIKey{}, errs.E(errs.Forbidden, "only an admin may set a key's rate_limit_per_minute")
	}
	k := s.newKey(c.TenantID, label, in.Role, scopes, c.Actor())
	k.RateLimit = in.RateLimitPerMinute
	if err := s.store.CreateKey(ctx, k.APIKey); err != nil {
		return NewAPIKey{}, errs.Wrap("identity.CreateKey", err)
	}
	return k, nil
}

// newKey makes a key with a fresh raw value.
func (s *Service) newKey(tenantID, label, role string, scopes []string, createdBy string) NewAPIKey {
	raw := newRawKey()
	return NewAPIKey{
		APIKey: APIKey{
			ID:        uuid.NewString(),
			TenantID:  tenantID,
			Label:     label,
			Role:      role,
			Scopes:    scopes,
			Prefix:    raw[:keyPrefixLen],
			Hash:      hashToken(raw),
			CreatedBy: createdBy,
			CreatedAt: s.now().UTC(),
		},
		RawKey: raw,
	}
}

// RevokeKey revokes one of the caller's tenant's keys.
func (s *Service) RevokeKey(ctx context.Context, c *auth.Claims, id string) error {
	id, err := parseID(id, "API key")
	if err != nil {
		return err
	}
	return errs.Wrap("identity.RevokeKey", s.store.RevokeKey(ctx, c.TenantID, id, mayRevokeKey(c)))
}

// mayRevokeKey is the guard the store runs on the locked key: only a caller
// holding admin may revoke a key that holds admin, the bootstrap key
// included.
func mayRevokeKey(c *auth.Claims) func(APIKey) error {
	return func(k APIKey) error {
		if slices.Contains(k.Scopes, auth.Admin) && !c.Has(auth.Admin) {
			return errs.E(errs.Forbidden, "only an admin may revoke an admin API key")
		}
		return nil
	}
}

// checkScopes validates a scope list and returns it sorted without duplicates.
func checkScopes(p *problems, field string, scopes []string) []string {
	out := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if !auth.ValidScope(sc) {
			p.add(field, "unknown scope "+quote(sc))
			continue
		}
		out = append(out, sc)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// quote keeps client-supplied text in a message short and recognisable.
func quote(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
