package gateway

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

func TestAuthorize(t *testing.T) {
	keys := Route{Scope: "config:write"}
	me := Route{}
	admin := Route{Scope: "admin", Flags: Operator}
	tests := []struct {
		name   string
		claims auth.Claims
		route  Route
		want   string // "" allowed, else error code
	}{
		{"scope present", auth.Claims{Scopes: []string{"config:write"}}, keys, ""},
		{"read is not write", auth.Claims{Scopes: []string{"config:read"}}, keys, errs.Forbidden},
		{"admin covers module", auth.Claims{Scopes: []string{"admin"}}, keys, ""},
		{"no scopes at all", auth.Claims{}, keys, errs.Forbidden},
		{"no scope needed", auth.Claims{}, me, ""},
		{"operator admin", auth.Claims{Scopes: []string{"admin"}, Operator: true}, admin, ""},
		{"tenant admin is not operator", auth.Claims{Scopes: []string{"admin"}}, admin, errs.Forbidden},
		{"operator without admin", auth.Claims{Scopes: []string{"config:read"}, Operator: true}, admin, errs.Forbidden},
	}
	for _, tt := range tests {
		err := authorize(&tt.claims, tt.route)
		got := ""
		if err != nil {
			got = errs.CodeOf(err)
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A key's own limit replaces the platform's; a session keeps the platform's.
func TestPerMinute(t *testing.T) {
	g := &Gateway{cfg: Config{RateLimitPerMinute: 300}}
	tests := []struct {
		name   string
		claims auth.Claims
		want   int
	}{
		{"key with its own limit", auth.Claims{KeyID: "k1", RateLimit: 1000}, 1000},
		{"key without one", auth.Claims{KeyID: "k1"}, 300},
		{"a session, whatever it carries", auth.Claims{UserID: "u1", SessionID: "s1", RateLimit: 1000}, 300},
	}
	for _, tt := range tests {
		if got := g.perMinute(&tt.claims); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
