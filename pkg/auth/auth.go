// Package auth holds the scope table of the specification and the
// authenticated principal (claims) carried through contexts and NATS headers.
package auth

import (
	"context"
	"slices"
	"strings"
)

// Admin covers every module:action.
const Admin = "admin"

// modules maps each module to the actions it has; review exists only where a
// module creates posting proposals.
var modules = map[string][]string{
	"journal":      {"read", "write", "review"},
	"bank":         {"read", "write", "review"},
	"debitoren":    {"read", "write", "review"},
	"kreditoren":   {"read", "write", "review"},
	"anlagen":      {"read", "write", "review"},
	"perioden":     {"read", "write"},
	"auswertungen": {"read", "write"},
	"config":       {"read", "write"},
}

// AllScopes lists every grantable scope, admin first.
func AllScopes() []string {
	out := []string{Admin}
	names := make([]string, 0, len(modules))
	for m := range modules {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		for _, a := range modules[m] {
			out = append(out, m+":"+a)
		}
	}
	return out
}

// ValidScope reports whether s is admin or a module:action of the table.
func ValidScope(s string) bool {
	if s == Admin {
		return true
	}
	m, a, ok := strings.Cut(s, ":")
	return ok && slices.Contains(modules[m], a)
}

// Roles name a user's or key's bundle of scopes.
var roleScopes = map[string][]string{
	"admin":      {Admin},
	"accountant": accountantScopes(),
	"viewer":     readScopes(),
}

func readScopes() []string {
	var out []string
	for _, s := range AllScopes() {
		if strings.HasSuffix(s, ":read") {
			out = append(out, s)
		}
	}
	return out
}

func accountantScopes() []string {
	var out []string
	for _, s := range AllScopes() {
		if s != Admin && s != "config:write" {
			out = append(out, s)
		}
	}
	return out
}

// ValidRole reports whether r is a known role.
func ValidRole(r string) bool { _, ok := roleScopes[r]; return ok }

// RoleScopes returns the scopes of a role.
func RoleScopes(r string) []string { return slices.Clone(roleScopes[r]) }

// Roles lists the known roles.
func Roles() []string { return []string{"admin", "accountant", "viewer"} }

// Claims is the authenticated principal of a request.
type Claims struct {
	TenantID  string   `json:"tenant_id"`
	KeyID     string   `json:"key_id,omitempty"`
	KeyPrefix string   `json:"key_prefix,omitempty"`
	UserID    string   `json:"user_id,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	Email     string   `json:"email,omitempty"`
	Role      string   `json:"role,omitempty"`
	Label     string   `json:"label,omitempty"`
	Scopes    []string `json:"scopes"`
	Operator  bool     `json:"operator,omitempty"`
	// RateLimit is an API key's own requests per minute; zero means the
	// gateway's platform default.
	RateLimit int `json:"rate_limit_per_minute,omitempty"`
	// Surface is how the call arrived: "api" (REST) or "mcp".
	Surface string `json:"surface,omitempty"`
	// Service is set on a service's own principal (work it does for a
	// tenant on its own, not for a caller), signed by that service.
	Service string `json:"service,omitempty"`
}

// Has reports whether the claims grant scope; admin grants all.
func (c *Claims) Has(scope string) bool {
	if c == nil {
		return false
	}
	return slices.Contains(c.Scopes, Admin) || slices.Contains(c.Scopes, scope)
}

// Covers reports whether every scope in want is granted by c, so that a key
// can never hand out more than its creator holds.
func (c *Claims) Covers(want []string) bool {
	for _, s := range want {
		if !c.Has(s) {
			return false
		}
	}
	return true
}

// Actor is a stable identifier of who acted: the key or the user.
func (c *Claims) Actor() string {
	switch {
	case c == nil:
		return ""
	case c.KeyID != "":
		return "key:" + c.KeyID
	case c.UserID != "":
		return "user:" + c.UserID
	}
	return ""
}

type ctxKey struct{}

// WithClaims stores claims in ctx.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the claims in ctx, or nil.
func FromContext(ctx context.Context) *Claims {
	c, _ := ctx.Value(ctxKey{}).(*Claims)
	return c
}
