package allinone_test

import (
	"fmt"
	"testing"
	"time"
)

// TestAuditKeepsReusedClientRequestIDs: the audit key is the gateway's own
// id, so a client sending the same X-Request-Id twice leaves two records,
// each showing the client's id beside the gateway's.
func TestAuditKeepsReusedClientRequestIDs(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, nil)
	const clientID = "client-chosen-id.1"
	first := p.must(200, "GET", "/v1/tenant", p.key, nil, "X-Request-Id", clientID)
	second := p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/tenant", "lgr_nope", nil, "X-Request-Id", clientID)
	third := p.must(200, "GET", "/v1/tenant", p.key, nil, "X-Request-Id", clientID)
	ids := []string{first.Header.Get("X-Request-Id"), second.Header.Get("X-Request-Id"), third.Header.Get("X-Request-Id")}
	if ids[0] == clientID || ids[0] == "" || ids[0] == ids[1] || ids[0] == ids[2] || ids[1] == ids[2] {
		t.Fatalf("response ids %q: want the gateway's own, distinct per call", ids)
	}
	// Both allowed calls are in the tenant's audit log with the client's id.
	eventually(t, 3*time.Second, func() error {
		found := map[string]string{}
		for _, e := range p.must(200, "GET", "/v1/audit-log?limit=500", p.key, nil).list("entries") {
			found[fmt.Sprint(e["request_id"])] = fmt.Sprint(e["client_request_id"])
		}
		for _, id := range []string{ids[0], ids[2]} {
			if found[id] != clientID {
				return fmt.Errorf("audit entry %s has client_request_id %q", id, found[id])
			}
		}
		return nil
	})
	// The refused, tenantless call too.
	eventually(t, 3*time.Second, func() error {
		if n := count(t, p.owner, "SELECT count(*) FROM identity.audit_log WHERE request_id = $1 AND client_request_id = $2 AND status = 401", ids[1], clientID); n != 1 {
			return fmt.Errorf("401 call not audited with the client's id")
		}
		return nil
	})
	p.wantCount(3, "SELECT count(*) FROM identity.audit_log WHERE client_request_id = $1", clientID)
	// A malformed client id is not kept.
	bad := p.must(200, "GET", "/v1/tenant", p.key, nil, "X-Request-Id", "no spaces allowed")
	eventually(t, 3*time.Second, func() error {
		if n := count(t, p.owner, "SELECT count(*) FROM identity.audit_log WHERE request_id = $1 AND client_request_id = ''", bad.Header.Get("X-Request-Id")); n != 1 {
			return fmt.Errorf("call with a malformed client id not audited without it")
		}
		return nil
	})
}

// TestLoginLimitedPerAccount: failed logins lock out the account they name,
// not the other people logging in from the same address.
func TestLoginLimitedPerAccount(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, env{"LOGIN_RATE_LIMIT_PER_MINUTE": "3"})
	for _, email := range []string{"anna@example.com", "bert@example.com"} {
		inv := p.must(201, "POST", "/v1/users/invite", p.key, map[string]any{"email": email, "role": "viewer"})
		p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": inv.str("invite_token"), "password": "correct horse battery"})
	}
	for range 3 {
		p.expectError(401, "INVALID_CREDENTIALS", "POST", "/v1/auth/login", "", map[string]any{"email": "anna@example.com", "password": "guessed wrong"})
	}
	// Anna's account is locked for now, even with the right password and
	// however the e-mail is written.
	r := p.expectError(429, "RATE_LIMITED", "POST", "/v1/auth/login", "", map[string]any{"email": "Anna@Example.com", "password": "correct horse battery"})
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}
	// Bert, from the same address, is not.
	if login := p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": "bert@example.com", "password": "correct horse battery"}); login.str("token") == "" {
		t.Fatalf("bert's login: %s", login.Raw)
	}
}
