package allinone_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// replica starts another gateway beside the platform's, with its
// configuration, NATS, NKEY and Redis, as a second replica behind a load
// balancer runs; the platform returned calls it.
func (p *platform) replica(t *testing.T) *platform {
	t.Helper()
	cfg := p.gateway
	cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.NATSURL, cfg.Key = p.bus.URL, p.bus.Keys[natsauth.Gateway]
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- gatewayd.Run(ctx, cfg, gatewayd.Deps{Redis: p.redis, Log: testLogger(t), Ready: func(a string) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err, stopped := receiveWithin(done, 20*time.Second); !stopped || err != nil {
			t.Errorf("replica stopped %v, error %v", stopped, err)
		}
	})
	select {
	case a := <-addr:
		r := *p
		r.base = "http://" + a
		return &r
	case err := <-done:
		t.Fatalf("replica failed to start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("replica not ready within 30s")
	}
	return nil
}

// TestRevocationHoldsOnEveryReplica: two gateway replicas cache credentials
// for an hour; whatever revokes a credential through one of them holds on
// both as soon as it has answered, without any wait: logout, key
// revocation, deactivating and deleting a user, a role change, deactivating
// a tenant. Each is repeated, through either replica, so a race would show.
func TestRevocationHoldsOnEveryReplica(t *testing.T) {
	t.Parallel()
	a := startPlatform(t, env{"CREDENTIAL_CACHE_TTL": "1h", "LOGIN_RATE_LIMIT_PER_MINUTE": "1000", "AUTH_RATE_LIMIT_PER_MINUTE": "1000", "AUTH_FAILURE_LIMIT_PER_MINUTE": "1000"})
	b := a.replica(t)
	replicas := []*platform{a, b}
	// warm has both replicas cache token; the second call of each confirms
	// the epoch the first one's verification recorded, so from then on the
	// cache alone answers.
	warm := func(token string) {
		for _, r := range replicas {
			r.must(200, "GET", "/v1/auth/me", token, nil)
			r.must(200, "GET", "/v1/auth/me", token, nil)
		}
	}
	// refused asserts that both replicas refuse token at once, the one
	// that did not serve the revocation first.
	refused := func(what string, round, via int, token string) {
		t.Helper()
		for _, i := range []int{1 - via, via} {
			if r := replicas[i].call("GET", "/v1/auth/me", token, nil); r.Status != 401 {
				t.Fatalf("%s, round %d, revoked through replica %d: replica %d answered %d %s", what, round, via, i, r.Status, r.Raw)
			}
		}
	}
	login := func(email string) string {
		return a.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": email, "password": "correct horse battery"}).str("token")
	}

	const rounds = 20
	a.activeUser(a.key, "leaving@example.com", "accountant")
	for i := range rounds {
		session := login("leaving@example.com")
		warm(session)
		replicas[i%2].must(200, "POST", "/v1/auth/logout", session, nil)
		refused("logout", i, i%2, session)
	}
	for i := range rounds {
		raw, id := a.newKey(a.key, "config:read")
		warm(raw)
		replicas[i%2].must(200, "DELETE", "/v1/api-keys/"+id, a.key, nil)
		refused("key revocation", i, i%2, raw)
	}
	for i := range 4 {
		email := fmt.Sprintf("user%d@example.com", i)
		id := a.activeUser(a.key, email, "accountant")
		session := login(email)
		warm(session)
		if i < 2 {
			replicas[i%2].must(200, "PATCH", "/v1/users/"+id, a.key, map[string]any{"is_active": false})
			refused("user deactivation", i, i%2, session)
		} else {
			replicas[i%2].must(200, "DELETE", "/v1/users/"+id, a.key, nil)
			refused("user deletion", i, i%2, session)
		}
	}
	for i := range 2 {
		key, tenant := a.newTenant(fmt.Sprintf("Closing %d GmbH", i))
		warm(key)
		replicas[i%2].must(200, "DELETE", "/v1/admin/tenants/"+tenant, a.key, nil)
		refused("tenant deactivation", i, i%2, key)
	}

	// A role change decides the next request's scopes: an accountant may
	// reverse bookings (the empty body is then refused as input), a viewer
	// may not.
	id := a.activeUser(a.key, "demoted@example.com", "accountant")
	session := login("demoted@example.com")
	warm(session)
	for _, r := range replicas {
		if got := r.call("POST", "/v1/journal/reverse", session, map[string]any{}); got.Status != 400 {
			t.Fatalf("accountant reversing an empty body: %d %s, want 400", got.Status, got.Raw)
		}
	}
	a.must(200, "PATCH", "/v1/users/"+id, a.key, map[string]any{"role": "viewer"})
	for _, i := range []int{1, 0} {
		replicas[i].expectError(403, "FORBIDDEN", "POST", "/v1/journal/reverse", session, map[string]any{})
	}
}
