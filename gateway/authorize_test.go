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
