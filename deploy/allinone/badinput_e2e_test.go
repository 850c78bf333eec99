package allinone_test

import (
	"strings"
	"testing"
)

// TestBadInput: malformed or invalid input on every identity route answers
// 400 with a machine code and changes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	inv := p.must(201, "POST", "/v1/users/invite", p.key, map[string]any{"email": "bob@example.com", "role": "viewer"})
	userID := inv.str("user_id")

	snapshot := func() string {
		var s strings.Builder
		for _, q := range []string{
			"SELECT count(*) FROM identity.tenants", "SELECT count(*) FROM identity.users",
			"SELECT count(*) FROM identity.api_keys WHERE revoked_at IS NULL", "SELECT count(*) FROM identity.oauth_clients",
			"SELECT count(*) FROM identity.sessions", "SELECT count(*) FROM identity.password_tokens WHERE used_at IS NULL",
		} {
			s.WriteString(strings.Repeat("x", count(t, p.owner, q)) + "|")
		}
		var tenant string
		_ = p.owner.QueryRow(t.Context(), "SELECT row_to_json(t)::text FROM identity.tenants t WHERE is_operator").Scan(&tenant)
		var user string
		_ = p.owner.QueryRow(t.Context(), "SELECT role || is_active::text FROM identity.users WHERE id = $1", userID).Scan(&user)
		return s.String() + tenant + user
	}
	before := snapshot()

	tests := []struct {
		name, method, path string
		body               any
		code               string
	}{
		{"login malformed JSON", "POST", "/v1/auth/login", `{"email":`, "INVALID_INPUT"},
		{"login missing password", "POST", "/v1/auth/login", map[string]any{"email": "a@example.com"}, "INVALID_INPUT"},
		{"login unknown field", "POST", "/v1/auth/login", map[string]any{"email": "a@example.com", "password": "x", "admin": true}, "INVALID_INPUT"},
		{"forgot bad email", "POST", "/v1/auth/forgot-password", map[string]any{"email": "not-an-email"}, "INVALID_INPUT"},
		{"setup missing token", "POST", "/v1/auth/setup-password", map[string]any{"password": "long enough password"}, "INVALID_INPUT"},
		{"setup unknown token", "POST", "/v1/auth/setup-password", map[string]any{"token": "nope", "password": "long enough password"}, "INVALID_TOKEN"},
		{"verify-token wrong type", "POST", "/v1/auth/verify-token", map[string]any{"token": 5}, "INVALID_INPUT"},
		{"key without label", "POST", "/v1/api-keys", map[string]any{"scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"key without scopes", "POST", "/v1/api-keys", map[string]any{"label": "x"}, "INVALID_INPUT"},
		{"key bad scope", "POST", "/v1/api-keys", map[string]any{"label": "x", "scopes": []string{"journal"}}, "INVALID_INPUT"},
		{"key bad role", "POST", "/v1/api-keys", map[string]any{"label": "x", "role": "god", "scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"key label too long", "POST", "/v1/api-keys", map[string]any{"label": strings.Repeat("x", 101), "scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"key scopes wrong type", "POST", "/v1/api-keys", map[string]any{"label": "x", "scopes": "journal:read"}, "INVALID_INPUT"},
		{"invite bad email", "POST", "/v1/users/invite", map[string]any{"email": "nope", "role": "viewer"}, "INVALID_INPUT"},
		{"invite bad role", "POST", "/v1/users/invite", map[string]any{"email": "c@example.com", "role": "king"}, "INVALID_INPUT"},
		{"invite duplicate", "POST", "/v1/users/invite", map[string]any{"email": "BOB@example.com", "role": "viewer"}, "DUPLICATE_EMAIL"},
		{"patch user empty", "PATCH", "/v1/users/" + userID, map[string]any{}, "NO_CHANGES"},
		{"patch user bad role", "PATCH", "/v1/users/" + userID, map[string]any{"role": "king"}, "INVALID_INPUT"},
		{"patch user wrong type", "PATCH", "/v1/users/" + userID, map[string]any{"is_active": "no"}, "INVALID_INPUT"},
		{"patch tenant empty", "PATCH", "/v1/tenant", map[string]any{}, "NO_CHANGES"},
		{"patch tenant empty name", "PATCH", "/v1/tenant", map[string]any{"company_name": ""}, "INVALID_INPUT"},
		{"patch tenant bad month", "PATCH", "/v1/tenant", map[string]any{"fiscal_year_start_month": 13}, "INVALID_INPUT"},
		{"patch tenant bad Beraternummer", "PATCH", "/v1/tenant", map[string]any{"datev_consultant_number": "12a"}, "INVALID_INPUT"},
		{"patch tenant bad VAT id", "PATCH", "/v1/tenant", map[string]any{"vat_id": "DE12"}, "INVALID_INPUT"},
		{"patch tenant unknown field", "PATCH", "/v1/tenant", map[string]any{"is_operator": false}, "INVALID_INPUT"},
		{"oauth client bad id", "PUT", "/v1/oauth/clients/a%20b", map[string]any{"name": "x", "redirect_uris": []string{"https://x.example.com"}, "scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"oauth client no redirect", "PUT", "/v1/oauth/clients/good-id", map[string]any{"name": "x", "redirect_uris": []string{}, "scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"oauth client insecure redirect", "PUT", "/v1/oauth/clients/good-id", map[string]any{"name": "x", "redirect_uris": []string{"http://evil.example.com"}, "scopes": []string{"journal:read"}}, "INVALID_INPUT"},
		{"admin tenant no name", "POST", "/v1/admin/tenants", map[string]any{"vat_id": "DE123456789"}, "INVALID_INPUT"},
		{"admin tenant bad month", "POST", "/v1/admin/tenants", map[string]any{"company_name": "X", "fiscal_year_start_month": 0}, "INVALID_INPUT"},
		{"audit bad limit", "GET", "/v1/audit-log?limit=0", nil, "INVALID_INPUT"},
		{"audit bad offset", "GET", "/v1/audit-log?offset=-1", nil, "INVALID_INPUT"},
		{"audit bad status", "GET", "/v1/audit-log?status=abc", nil, "INVALID_INPUT"},
		{"body not JSON", "POST", "/v1/api-keys", "label=x", "INVALID_INPUT"},
		{"trailing data", "POST", "/v1/api-keys", `{"label":"x","scopes":["journal:read"]} {}`, "INVALID_INPUT"},
	}
	for _, tt := range tests {
		r := p.call(tt.method, tt.path, p.key, tt.body)
		if r.Status/100 != 4 || r.code() != tt.code || r.str("error") == "" {
			t.Errorf("%s: got %d %s, want 4xx %s", tt.name, r.Status, r.Raw, tt.code)
		}
		if r.Status >= 400 && strings.Contains(strings.ToLower(string(r.Raw)), "sql") {
			t.Errorf("%s: response leaks internals: %s", tt.name, r.Raw)
		}
	}
	if after := snapshot(); after != before {
		t.Fatalf("bad input changed state:\nbefore %s\nafter  %s", before, after)
	}

	// Gateway-level refusals.
	p.expectError(413, "PAYLOAD_TOO_LARGE", "POST", "/v1/api-keys", p.key, `{"label":"`+strings.Repeat("x", 2<<20)+`"}`)
	p.expectError(415, "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/api-keys", p.key, "x", "Content-Type", "text/plain")
	p.expectError(405, "METHOD_NOT_ALLOWED", "PUT", "/v1/api-keys", p.key, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/nothing-here", p.key, nil)
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/api-keys", p.key, map[string]any{"label": "x", "scopes": []string{"journal:read"}}, "Idempotency-Key", strings.Repeat("k", 300))
}
