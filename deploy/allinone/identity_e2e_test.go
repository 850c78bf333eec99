package allinone_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
)

// activeUser invites a user with role through admin and sets a password,
// returning the user's id.
func (p *platform) activeUser(admin, email, role string) string {
	p.t.Helper()
	inv := p.must(201, "POST", "/v1/users/invite", admin, map[string]any{"email": email, "role": role})
	p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": inv.str("invite_token"), "password": "correct horse battery"})
	return inv.str("user_id")
}

// userRole returns the role and active flag of a user as the list shows it.
func (p *platform) userRole(token, id string) string {
	p.t.Helper()
	for _, u := range p.must(200, "GET", "/v1/users", token, nil).list("users") {
		if u["id"] == id {
			return u["role"].(string) + " active=" + strconv.FormatBool(u["is_active"].(bool))
		}
	}
	return "gone"
}

// A config:write key may manage users and keys, but not the admins: it can
// neither demote, deactivate or delete an admin user nor revoke an admin key
// (the bootstrap key included), and such an attempt changes nothing. An
// admin can; the last admin stays.
func TestAdminsOnlyByAdmins(t *testing.T) {
	p, admin, _ := setup(t, nil, "Admins GmbH")
	// Every scope but admin: it could hand out any role but admin.
	cfg := p.must(201, "POST", "/v1/api-keys", admin, map[string]any{"label": "all but admin",
		"scopes": slices.DeleteFunc(auth.AllScopes(), func(s string) bool { return s == auth.Admin })}).str("raw_key")
	anna := p.activeUser(admin, "anna@admins.example", "admin")
	otto := p.activeUser(admin, "otto@admins.example", "viewer")
	_, adminKey := p.newKey(admin, "admin")

	p.expectError(403, "FORBIDDEN", "PATCH", "/v1/users/"+anna, cfg, map[string]any{"role": "viewer"})
	p.expectError(403, "FORBIDDEN", "PATCH", "/v1/users/"+anna, cfg, map[string]any{"is_active": false})
	p.expectError(403, "FORBIDDEN", "DELETE", "/v1/users/"+anna, cfg, nil)
	p.expectError(403, "FORBIDDEN", "DELETE", "/v1/api-keys/"+adminKey, cfg, nil)
	if got := p.userRole(admin, anna); got != "admin active=true" {
		t.Fatalf("anna after refused changes: %s", got)
	}
	p.wantCount(0, "SELECT count(*) FROM identity.api_keys WHERE id = $1 AND revoked_at IS NOT NULL", adminKey)

	// The operator's bootstrap key is an admin key like any other.
	opCfg, _ := p.newKey(p.key, "config:write")
	var bootstrapID string
	for _, k := range p.must(200, "GET", "/v1/api-keys", p.key, nil).list("api_keys") {
		if k["label"] == "bootstrap" {
			bootstrapID = k["id"].(string)
		}
	}
	p.expectError(403, "FORBIDDEN", "DELETE", "/v1/api-keys/"+bootstrapID, opCfg, nil)
	p.must(200, "GET", "/v1/auth/me", p.key, nil)

	// What is not an admin stays the config:write key's to manage.
	p.must(200, "PATCH", "/v1/users/"+otto, cfg, map[string]any{"is_active": false})
	_, readKey := p.newKey(admin, "journal:read")
	p.must(200, "DELETE", "/v1/api-keys/"+readKey, cfg, nil)

	// An admin may; anna is the last active admin user, so she stays until
	// otto is promoted.
	p.must(200, "DELETE", "/v1/api-keys/"+adminKey, admin, nil)
	p.expectError(409, "LAST_ADMIN", "PATCH", "/v1/users/"+anna, admin, map[string]any{"role": "viewer"})
	p.must(200, "PATCH", "/v1/users/"+otto, admin, map[string]any{"role": "admin", "is_active": true})
	p.must(200, "PATCH", "/v1/users/"+anna, admin, map[string]any{"role": "viewer"})
	p.expectError(409, "LAST_ADMIN", "DELETE", "/v1/users/"+otto, admin, nil)
	if got := p.userRole(admin, otto); got != "admin active=true" {
		t.Fatalf("otto after the refused delete: %s", got)
	}

	// A tenant without admin users keeps its last admin key.
	solo, _ := p.newTenant("Solo GmbH")
	_, second := p.newKey(solo, "admin")
	p.must(200, "DELETE", "/v1/api-keys/"+second, solo, nil)
	me := p.must(200, "GET", "/v1/auth/me", solo, nil)
	soloID := me.str("key", "id")
	if soloID == "" {
		t.Fatalf("me without key id: %s", me.Raw)
	}
	p.expectError(409, "LAST_ADMIN", "DELETE", "/v1/api-keys/"+soloID, solo, nil)
	p.must(200, "GET", "/v1/auth/me", solo, nil)
}

// burst sends n GET /v1/auth/me with token from 16 goroutines and returns
// the statuses counted and the X-RateLimit-Limit headers seen.
func (p *platform) burst(token string, n int) (statuses map[int]int, limits map[string]int) {
	p.t.Helper()
	statuses, limits = map[int]int{}, map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range 16 {
		wg.Go(func() {
			for range next {
				r := p.call("GET", "/v1/auth/me", token, nil)
				mu.Lock()
				statuses[r.Status]++
				limits[r.Header.Get("X-RateLimit-Limit")]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses, limits
}

// A key with its own limit of 1000 per minute gets it while other keys keep
// the platform's 300; a limit over the operator's maximum is refused.
func TestPerKeyRateLimit(t *testing.T) {
	p, admin, _ := setup(t, env{"MAX_KEY_RATE_LIMIT": "2000"}, "Limits GmbH")
	fast := p.must(201, "POST", "/v1/api-keys", admin, map[string]any{"label": "fast", "scopes": []string{"journal:read"}, "rate_limit_per_minute": 1000})
	if got := fast.Body["rate_limit_per_minute"]; got != float64(1000) {
		t.Fatalf("created key's rate_limit_per_minute = %v, want 1000", got)
	}
	plain, _ := p.newKey(admin, "journal:read")

	limits := map[string]any{}
	for _, k := range p.must(200, "GET", "/v1/api-keys", admin, nil).list("api_keys") {
		limits[k["label"].(string)] = k["rate_limit_per_minute"]
	}
	if limits["fast"] != float64(1000) || limits["test journal:read"] != nil {
		t.Fatalf("listed limits = %v, want fast 1000 and the other null", limits)
	}

	r := p.expectError(400, "INVALID_INPUT", "POST", "/v1/api-keys", admin, map[string]any{"label": "greedy", "scopes": []string{"journal:read"}, "rate_limit_per_minute": 2001})
	if !strings.Contains(string(r.Raw), `"field":"rate_limit_per_minute"`) {
		t.Fatalf("over the maximum: %s, want the field named", r.Raw)
	}
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/api-keys", admin, map[string]any{"label": "none", "scopes": []string{"journal:read"}, "rate_limit_per_minute": 0})
	cfg, _ := p.newKey(admin, "config:write", "journal:read")
	p.expectError(403, "FORBIDDEN", "POST", "/v1/api-keys", cfg, map[string]any{"label": "self-served", "scopes": []string{"journal:read"}, "rate_limit_per_minute": 1000})
	p.wantCount(0, "SELECT count(*) FROM identity.api_keys WHERE label IN ('greedy', 'none', 'self-served')")

	statuses, headers := p.burst(fast.str("raw_key"), 400)
	if statuses[200] != 400 || len(headers) != 1 || headers["1000"] != 400 {
		t.Fatalf("400 calls with the 1000/min key: statuses %v, X-RateLimit-Limit %v; want all 200 under 1000", statuses, headers)
	}
	statuses, headers = p.burst(plain, 400)
	if statuses[200] < 300 || statuses[429] == 0 || statuses[200]+statuses[429] != 400 || headers["300"] != 400 {
		t.Fatalf("400 calls with a plain key: statuses %v, X-RateLimit-Limit %v; want 300 (and what refilled meanwhile) through, the rest 429, under 300", statuses, headers)
	}
}

// A mail command on the bus carries the link's token only sealed to the
// mail sender's key: whatever else listens cannot read it, the mailer can.
func TestMailCommandCarriesNoToken(t *testing.T) {
	pub, priv, err := mailseal.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p, admin, _ := setup(t, env{"MAILER_PUBLIC_KEY": mailseal.Encode(pub)}, "Mail GmbH")
	mails := make(chan *nats.Msg, 16)
	sub, err := p.nc.ChanSubscribe(identityv1.MailFilter, mails)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	inv := p.must(201, "POST", "/v1/users/invite", admin, map[string]any{"email": "mia@mail.example", "role": "viewer"})
	token := inv.str("invite_token")
	msg, ok := receiveWithin(mails, 10*time.Second)
	if !ok {
		t.Fatal("no mail command within 10s")
	}
	if strings.Contains(string(msg.Data), token) || strings.Contains(string(msg.Data), base64.StdEncoding.EncodeToString([]byte(token))) {
		t.Fatalf("the mail command carries the invite token: %s", msg.Data)
	}
	var m identityv1.Mail
	if err := json.Unmarshal(msg.Data, &m); err != nil {
		t.Fatal(err)
	}
	if m.To != "mia@mail.example" || m.Template != "invite" || m.ID == "" || m.KeyID != mailseal.KeyID(pub) {
		t.Fatalf("mail command %s", msg.Data)
	}
	opened, err := mailseal.Open(pub, priv, m.SealedToken)
	if err != nil || opened != token {
		t.Fatalf("the mailer opens %q, %v; want the invite token", opened, err)
	}

	// A reset mail alike; the opened token sets the password.
	p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": token, "password": "correct horse battery"})
	p.must(200, "POST", "/v1/auth/forgot-password", "", map[string]any{"email": "mia@mail.example"})
	msg, ok = receiveWithin(mails, 10*time.Second)
	if !ok {
		t.Fatal("no reset mail within 10s")
	}
	if err := json.Unmarshal(msg.Data, &m); err != nil || m.Template != "password_reset" {
		t.Fatalf("reset mail %s: %v", msg.Data, err)
	}
	reset, err := mailseal.Open(pub, priv, m.SealedToken)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(msg.Data), reset) {
		t.Fatalf("the reset mail carries its token: %s", msg.Data)
	}
	p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": reset, "password": "another horse battery"})
	p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": "mia@mail.example", "password": "another horse battery"})
}
