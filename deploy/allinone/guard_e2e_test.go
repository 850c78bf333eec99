package allinone_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRateLimits uses lowered limits: per key, and per client address on the
// auth routes. A second key is never affected.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, env{"RATE_LIMIT_PER_MINUTE": "20", "AUTH_RATE_LIMIT_PER_MINUTE": "4"})
	a, b := p.apiKey(p.key, "config:read"), p.apiKey(p.key, "config:read")
	for i := 0; i < 20; i++ {
		r := p.must(200, "GET", "/v1/users", a, nil)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(19-i) || r.Header.Get("X-RateLimit-Limit") != "20" {
			t.Fatalf("request %d: X-RateLimit-Remaining %q Limit %q", i, got, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	r := p.expectError(429, "RATE_LIMITED", "GET", "/v1/users", a, nil)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 3 {
		t.Fatalf("Retry-After %q, want an integer of about 60/20 s", r.Header.Get("Retry-After"))
	}
	p.must(200, "GET", "/v1/users", b, nil)

	// A call refused for its scope spends the budget as well and says so;
	// once the budget is spent, the answer is 429. A 401 knows no caller
	// whose limit it could state.
	weak := p.apiKey(p.key, "journal:read")
	for i := 0; i < 20; i++ {
		r := p.expectError(403, "FORBIDDEN", "GET", "/v1/users", weak, nil)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(19-i) || r.Header.Get("X-RateLimit-Limit") != "20" {
			t.Fatalf("403 %d: X-RateLimit-Remaining %q Limit %q", i, got, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	p.expectError(429, "RATE_LIMITED", "GET", "/v1/users", weak, nil)
	if r := p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/users", "lgr_nope", nil); r.Header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("401 with X-RateLimit-Limit %q", r.Header.Get("X-RateLimit-Limit"))
	}

	login := map[string]any{"email": "nobody@example.com", "password": "whatever password"}
	for i := 0; i < 4; i++ {
		r := p.expectError(401, "INVALID_CREDENTIALS", "POST", "/v1/auth/login", "", login)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(3-i) || r.Header.Get("X-RateLimit-Limit") != "4" {
			t.Fatalf("login %d: X-RateLimit-Remaining %q Limit %q", i, got, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	r = p.expectError(429, "RATE_LIMITED", "POST", "/v1/auth/login", "", login)
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || r.Header.Get("X-RateLimit-Limit") != "4" {
		t.Fatalf("auth Retry-After %q, X-RateLimit-Limit %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Limit"))
	}
	// The auth limit is per client address, apart from key limits.
	p.must(200, "GET", "/v1/users", b, nil)
}

// TestDefaultRateLimit: 300 requests per minute per key by default. GCRA
// refills one request every 200 ms while the burst is being spent, so the
// first refusal comes after 300 plus what refilled meanwhile.
func TestDefaultRateLimit(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	k := p.apiKey(p.key, "config:read")
	start := time.Now()
	var ok int
	var last resp
	for {
		last = p.call("GET", "/v1/auth/me", k, nil)
		if last.Status != 200 {
			break
		}
		ok++
		if ok > 1000 {
			t.Fatal("no rate limit after 1000 requests")
		}
	}
	refill := int(time.Since(start)/(200*time.Millisecond)) + 1
	if last.Status != 429 || last.code() != "RATE_LIMITED" || ok < 300 || ok > 300+refill {
		t.Fatalf("after %d allowed requests (refill allowance %d): %d %s", ok, refill, last.Status, last.Raw)
	}
	if last.Header.Get("X-RateLimit-Limit") != "300" || last.Header.Get("Retry-After") == "" {
		t.Fatalf("429 headers: %v", last.Header)
	}
}

// TestTenantIsolation: tenant B sees none of A's users, keys or audit rows;
// A's ids answer 404 to B.
func TestTenantIsolation(t *testing.T) {
	p, aKey, _ := setup(t, nil, "A GmbH")
	bKey, _ := p.newTenant("B GmbH")
	inv := p.must(201, "POST", "/v1/users/invite", aKey, map[string]any{"email": "a-user@example.com", "role": "viewer"})
	aUser := inv.str("user_id")
	_, aKeyID := p.newKey(aKey, "journal:read")
	p.must(201, "PUT", "/v1/oauth/clients/a-client", aKey, map[string]any{"name": "A app", "redirect_uris": []string{"https://a.example.com/cb"}, "scopes": []string{"journal:read"}})

	if r := p.must(200, "GET", "/v1/users", bKey, nil); strings.Contains(string(r.Raw), "a-user@example.com") {
		t.Fatal("B sees A's user")
	}
	if r := p.must(200, "GET", "/v1/api-keys", bKey, nil); strings.Contains(string(r.Raw), aKeyID) {
		t.Fatal("B sees A's key")
	}
	if r := p.must(200, "GET", "/v1/oauth/clients", bKey, nil); strings.Contains(string(r.Raw), "a-client") {
		t.Fatal("B sees A's OAuth client")
	}
	if r := p.must(200, "GET", "/v1/tenant", bKey, nil); r.str("company_name") != "B GmbH" {
		t.Fatalf("B's tenant: %s", r.Raw)
	}
	p.expectError(404, "NOT_FOUND", "DELETE", "/v1/api-keys/"+aKeyID, bKey, nil)
	p.expectError(404, "NOT_FOUND", "PATCH", "/v1/users/"+aUser, bKey, map[string]any{"role": "admin"})
	p.expectError(404, "NOT_FOUND", "DELETE", "/v1/users/"+aUser, bKey, nil)
	// A's objects are untouched.
	if r := p.must(200, "GET", "/v1/users", aKey, nil); !strings.Contains(string(r.Raw), "a-user@example.com") {
		t.Fatal("A's user vanished")
	}
	eventually(t, 3*time.Second, func() error {
		r := p.must(200, "GET", "/v1/audit-log?limit=500", aKey, nil)
		if len(r.list("entries")) == 0 {
			return fmt.Errorf("A has no audit rows yet")
		}
		return nil
	})
	for _, e := range p.must(200, "GET", "/v1/audit-log?limit=500", bKey, nil).list("entries") {
		target := fmt.Sprint(e["target_id"])
		if e["key_id"] == aKeyID || ((strings.Contains(target, aKeyID) || strings.Contains(target, aUser)) && e["status"] != float64(404)) {
			t.Fatalf("B sees A's audit row: %v", e)
		}
	}
}

// TestOperatorRoutes: only the operator tenant's admin keys manage tenants.
func TestOperatorRoutes(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	created := p.must(201, "POST", "/v1/admin/tenants", p.key, map[string]any{"company_name": "Kunde GmbH", "vat_id": "DE123456789", "fiscal_year_start_month": 1})
	key, id := created.str("raw_key"), created.str("tenant", "id")
	if key == "" || id == "" {
		t.Fatalf("create tenant: %s", created.Raw)
	}
	list := p.must(200, "GET", "/v1/admin/tenants", p.key, nil)
	if !strings.Contains(string(list.Raw), "Kunde GmbH") || !strings.Contains(string(list.Raw), "Demo GmbH") {
		t.Fatalf("tenant list: %s", list.Raw)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/admin/tenants", key, nil)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/admin/tenants", key, map[string]any{"company_name": "Sneaky"})
	p.expectError(403, "FORBIDDEN", "DELETE", "/v1/admin/tenants/"+id, key, nil)
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/admin/tenants", p.key, map[string]any{"company_name": ""})
	p.expectError(404, "NOT_FOUND", "DELETE", "/v1/admin/tenants/00000000-0000-0000-0000-000000000000", p.key, nil)
	p.must(200, "DELETE", "/v1/admin/tenants/"+id, p.key, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/auth/me", key, nil)
	// Deleting deactivates: the tenant and its data stay for GoBD retention.
	p.wantCount(1, "SELECT count(*) FROM identity.tenants WHERE id = $1 AND NOT is_active", id)
}

// TestAuditLog records allowed and refused calls, never a secret.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	weak, weakID := p.newKey(p.key, "journal:read")
	refused := p.expectError(403, "FORBIDDEN", "GET", "/v1/users", weak, nil)
	unauth := p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/users", "lgr_nope", nil)
	ok := p.must(200, "GET", "/v1/tenant", p.key, nil)

	var entries []map[string]any
	eventually(t, 3*time.Second, func() error {
		entries = p.must(200, "GET", "/v1/audit-log?limit=500", p.key, nil).list("entries")
		ids := map[string]bool{}
		for _, e := range entries {
			ids[fmt.Sprint(e["request_id"])] = true
		}
		if !ids[refused.Header.Get("X-Request-Id")] || !ids[ok.Header.Get("X-Request-Id")] {
			return fmt.Errorf("audit rows missing; have %d", len(entries))
		}
		return nil
	})
	for _, e := range entries {
		if e["request_id"] == refused.Header.Get("X-Request-Id") {
			if e["status"] != float64(403) || e["key_id"] != weakID || e["route"] != "GET /v1/users" || e["scope"] != "config:read" {
				t.Fatalf("refused call audited as %v", e)
			}
		}
	}
	// Refused unauthenticated calls are stored too, with no tenant.
	eventually(t, 3*time.Second, func() error {
		if n := count(t, p.owner, "SELECT count(*) FROM identity.audit_log WHERE request_id = $1 AND status = 401 AND tenant_id IS NULL", unauth.Header.Get("X-Request-Id")); n != 1 {
			return fmt.Errorf("401 call not audited")
		}
		return nil
	})
	p.wantCount(0, "SELECT count(*) FROM identity.audit_log WHERE row_to_json(audit_log)::text LIKE '%' || $1 || '%'", p.key)
	// Filters.
	q := url.Values{"status": {"403"}, "limit": {"10"}}
	for _, e := range p.must(200, "GET", "/v1/audit-log?"+q.Encode(), p.key, nil).list("entries") {
		if e["status"] != float64(403) {
			t.Fatalf("status filter returned %v", e)
		}
	}
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/audit-log?limit=501", p.key, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/audit-log?from=yesterday", p.key, nil)
	// The audit log is append-only, even for the service's own role.
	if _, err := p.owner.Exec(t.Context(), "SET ROLE identity_svc; UPDATE identity.audit_log SET status = 200"); err == nil {
		t.Fatal("identity_svc could update the audit log")
	}
}
