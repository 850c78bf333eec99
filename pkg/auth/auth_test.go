package auth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHas(t *testing.T) {
	tests := []struct {
		name   string
		scopes []string
		want   string
		ok     bool
	}{
		{"admin covers all", []string{Admin}, "journal:write", true},
		{"exact", []string{"journal:read"}, "journal:read", true},
		{"read is not write", []string{"journal:read"}, "journal:write", false},
		{"other module", []string{"bank:read"}, "journal:read", false},
		{"none", nil, "config:read", false},
	}
	for _, tt := range tests {
		c := &Claims{Scopes: tt.scopes}
		if got := c.Has(tt.want); got != tt.ok {
			t.Errorf("%s: Has(%q) = %v, want %v", tt.name, tt.want, got, tt.ok)
		}
	}
	var nilClaims *Claims
	if nilClaims.Has("journal:read") {
		t.Error("nil claims must grant nothing")
	}
}

func TestValidScope(t *testing.T) {
	got := map[string]bool{}
	for _, s := range []string{"admin", "journal:review", "perioden:review", "config:write", "config", "x:read", ""} {
		got[s] = ValidScope(s)
	}
	want := map[string]bool{"admin": true, "journal:review": true, "perioden:review": false, "config:write": true, "config": false, "x:read": false, "": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ValidScope mismatch (-want +got):\n%s", diff)
	}
	if n := len(AllScopes()); n != 1+5*3+3*2 {
		t.Fatalf("AllScopes has %d entries", n)
	}
}
