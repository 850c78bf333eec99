package allinone_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHealthAndBootstrapKey(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	p.must(200, "GET", "/healthz", "", nil)
	p.must(200, "GET", "/readyz", "", nil)
	me := p.must(200, "GET", "/v1/auth/me", p.key, nil)
	if got := me.str("tenant", "company_name"); got != "Demo GmbH" {
		t.Fatalf("bootstrap tenant = %q, want Demo GmbH", got)
	}
	if me.Header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id on response")
	}
	if r := p.must(200, "GET", "/v1/openapi.json", "", nil); r.str("openapi") == "" {
		t.Fatalf("openapi document lacks version: %.200s", r.Raw)
	}
	res, err := http.Get(p.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(raw), "gateway_http_requests_total") {
		t.Fatalf("metrics listener: %d, lacks gateway_http_requests_total", res.StatusCode)
	}
	// Not on the clients' port.
	p.expectError(404, "NOT_FOUND", "GET", "/metrics", "", nil)
}

// TestAuthentication covers every 401 and 403 case of the spec's
// Authentication section.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	readKey, journalKey := p.apiKey(p.key, "config:read"), p.apiKey(p.key, "journal:read")
	revokedKey, revokedID := p.newKey(p.key, "config:read")
	p.must(200, "DELETE", "/v1/api-keys/"+revokedID, p.key, nil)
	tenantKey, tenantID := p.newTenant("Gone GmbH")
	p.must(200, "GET", "/v1/auth/me", tenantKey, nil)
	p.must(200, "DELETE", "/v1/admin/tenants/"+tenantID, p.key, nil)
	// The deactivation holds once answered, although the key is cached.
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/auth/me", tenantKey, nil)
	forged := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4IiwidGlkIjoieCJ9.c2lnbmF0dXJl"

	unauthenticated := []struct {
		name string
		hdr  string
	}{
		{"no header", ""},
		{"basic scheme", "Basic dXNlcjpwYXNz"},
		{"bearer without token", "Bearer "},
		{"unknown key", "Bearer lgr_thisisnotakeythisisnotakeythisisnotakey1"},
		{"revoked key", "Bearer " + revokedKey},
		{"key of a deactivated tenant", "Bearer " + tenantKey},
		{"forged session token", "Bearer " + forged},
	}
	for _, tt := range unauthenticated {
		r := p.call("GET", "/v1/auth/me", "", nil, "Authorization", tt.hdr)
		if r.Status != http.StatusUnauthorized || r.code() != "UNAUTHENTICATED" {
			t.Errorf("%s: got %d %s, want 401 UNAUTHENTICATED", tt.name, r.Status, r.Raw)
		}
	}

	forbidden := []struct {
		name, method, path, key string
		body                    any
	}{
		{"read key writes", "POST", "/v1/api-keys", readKey, map[string]any{"label": "x", "scopes": []string{"config:read"}}},
		{"other module", "GET", "/v1/users", journalKey, nil},
		{"read key invites", "POST", "/v1/users/invite", readKey, map[string]any{"email": "a@example.com", "role": "viewer"}},
		{"tenant admin on operator route", "GET", "/v1/admin/tenants", mustNewTenantKey(p), nil},
		{"scoped key on operator route", "GET", "/v1/admin/tenants", readKey, nil},
	}
	for _, tt := range forbidden {
		r := p.call(tt.method, tt.path, tt.key, tt.body)
		if r.Status != http.StatusForbidden || r.code() != "FORBIDDEN" {
			t.Errorf("%s: got %d %s, want 403 FORBIDDEN", tt.name, r.Status, r.Raw)
		}
	}
	// Any authenticated key may call the scope-free routes.
	p.must(200, "GET", "/v1/auth/me", journalKey, nil)
	// A key never grants more than its creator holds.
	cfgWriter := p.apiKey(p.key, "config:write", "config:read")
	p.expectError(403, "SCOPE_NOT_GRANTABLE", "POST", "/v1/api-keys", cfgWriter, map[string]any{"label": "escalate", "scopes": []string{"admin"}})
}

func mustNewTenantKey(p *platform) string {
	k, _ := p.newTenant("Other " + strconv.FormatInt(time.Now().UnixNano(), 36))
	return k
}

// TestPasswordFlow walks invite → setup-password → login → me → logout.
func TestPasswordFlow(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	inv := p.must(201, "POST", "/v1/users/invite", p.key, map[string]any{"email": "Anna@Example.com", "role": "accountant"})
	token := inv.str("invite_token")
	if token == "" {
		t.Fatalf("invite without token: %s", inv.Raw)
	}
	// Not usable before the password is set.
	p.expectError(401, "INVALID_CREDENTIALS", "POST", "/v1/auth/login", "", map[string]any{"email": "anna@example.com", "password": "correct horse battery"})
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/auth/setup-password", "", map[string]any{"token": token, "password": "short"})
	p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": token, "password": "correct horse battery"})
	p.expectError(400, "INVALID_TOKEN", "POST", "/v1/auth/setup-password", "", map[string]any{"token": token, "password": "another good password"})

	p.expectError(401, "INVALID_CREDENTIALS", "POST", "/v1/auth/login", "", map[string]any{"email": "anna@example.com", "password": "wrong password!!"})
	login := p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": "anna@example.com", "password": "correct horse battery"})
	session := login.str("token")
	if session == "" || login.str("user", "role") != "accountant" || login.str("tenant", "company_name") != "Demo GmbH" {
		t.Fatalf("login response: %s", login.Raw)
	}
	me := p.must(200, "GET", "/v1/auth/me", session, nil)
	if me.str("user", "email") != "anna@example.com" {
		t.Fatalf("me: %s", me.Raw)
	}
	// An accountant has no config:write.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/api-keys", session, map[string]any{"label": "x", "scopes": []string{"journal:read"}})
	if r := p.must(200, "POST", "/v1/auth/verify-token", session, map[string]any{}); r.Body["valid"] != true {
		t.Fatalf("verify-token of own session: %s", r.Raw)
	}
	p.must(200, "POST", "/v1/auth/logout", session, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/auth/me", session, nil)

	// forgot-password never reveals whether the email exists.
	a := p.must(200, "POST", "/v1/auth/forgot-password", "", map[string]any{"email": "anna@example.com"})
	b := p.must(200, "POST", "/v1/auth/forgot-password", "", map[string]any{"email": "nobody@example.com"})
	if string(a.Raw) != string(b.Raw) {
		t.Fatalf("forgot-password differs for known (%s) and unknown (%s) emails", a.Raw, b.Raw)
	}
}

// TestAPIKeyLifecycle: create, list (no secret), use, revoke; the revoked key
// answers 401 as soon as the revocation has answered, although the gateway
// caches credentials.
func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	created := p.must(201, "POST", "/v1/api-keys", p.key, map[string]any{"label": "ci", "scopes": []string{"config:read", "journal:read"}})
	raw, id := created.str("raw_key"), created.str("id")
	if !strings.HasPrefix(raw, "lgr_") || len(raw) < 40 || !strings.HasPrefix(raw, created.str("key_prefix")) {
		t.Fatalf("raw key %q / prefix %q", raw, created.str("key_prefix"))
	}
	p.must(200, "GET", "/v1/users", raw, nil) // cached from now on
	list := p.must(200, "GET", "/v1/api-keys", raw, nil)
	if strings.Contains(string(list.Raw), raw) || strings.Contains(string(list.Raw), "raw_key") {
		t.Fatal("key list reveals a secret")
	}
	var found map[string]any
	for _, k := range list.list("api_keys") {
		if k["id"] == id {
			found = k
		}
	}
	if found == nil || found["label"] != "ci" || found["key_prefix"] != created.str("key_prefix") {
		t.Fatalf("created key not listed properly: %s", list.Raw)
	}
	for _, f := range []string{"created_at", "last_used_at", "call_count", "scopes"} {
		if _, ok := found[f]; !ok {
			t.Errorf("key list item lacks %s", f)
		}
	}
	// Usage is counted from the audit trail.
	eventually(t, 3*time.Second, func() error {
		for _, k := range p.must(200, "GET", "/v1/api-keys", p.key, nil).list("api_keys") {
			if k["id"] == id {
				if n, _ := k["call_count"].(float64); n >= 2 && k["last_used_at"] != nil {
					return nil
				}
				return fmt.Errorf("call_count %v last_used_at %v", k["call_count"], k["last_used_at"])
			}
		}
		return fmt.Errorf("key gone")
	})
	p.must(200, "DELETE", "/v1/api-keys/"+id, p.key, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/users", raw, nil)
	p.expectError(404, "NOT_FOUND", "DELETE", "/v1/api-keys/"+id, p.key, nil)
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/api-keys", p.key, map[string]any{"label": "x", "scopes": []string{"journal:fly"}})
}
