package identity_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

// key creates a key in the tenant of by and returns its claims.
func key(t *testing.T, e *identitytest.Env, by *auth.Claims, in identity.CreateKeyInput) *auth.Claims {
	t.Helper()
	k, err := e.Svc.CreateKey(context.Background(), by, in)
	if err != nil {
		t.Fatalf("create key %s: %v", in.Label, err)
	}
	return e.Claims(t, k.RawKey)
}

// A caller without admin can change no admin user and revoke no admin key,
// whatever other scopes it holds; a refusal changes nothing.
func TestOnlyAdminsTouchAdmins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	allButAdmin := slices.DeleteFunc(auth.AllScopes(), func(s string) bool { return s == auth.Admin })
	cfg := key(t, e, admin, identity.CreateKeyInput{Label: "cfg", Scopes: allButAdmin})
	anna := e.User(t, admin, "anna@acme.example", "admin").User
	otto := e.User(t, admin, "otto@acme.example", "viewer").User
	adminKey := key(t, e, admin, identity.CreateKeyInput{Label: "second admin", Role: "admin"})
	viewerKey := key(t, e, admin, identity.CreateKeyInput{Label: "viewer", Role: "viewer"})

	refused := []struct {
		name string
		do   func() error
	}{
		{"demote an admin", func() error {
			_, err := e.Svc.UpdateUser(ctx, cfg, anna.ID, identity.UserPatch{Role: ptr("viewer")})
			return err
		}},
		{"deactivate an admin", func() error {
			_, err := e.Svc.UpdateUser(ctx, cfg, anna.ID, identity.UserPatch{IsActive: ptr(false)})
			return err
		}},
		{"delete an admin", func() error { return e.Svc.DeleteUser(ctx, cfg, anna.ID) }},
		{"revoke an admin key", func() error { return e.Svc.RevokeKey(ctx, cfg, adminKey.KeyID) }},
		{"revoke the admin's own key", func() error { return e.Svc.RevokeKey(ctx, cfg, admin.KeyID) }},
	}
	for _, r := range refused {
		if err := r.do(); !errs.Is(err, errs.Forbidden) {
			t.Errorf("%s: error = %v, want FORBIDDEN", r.name, err)
		}
	}
	got, err := e.Svc.ListUsers(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(got, func(u identity.User) bool { return u.ID == anna.ID }); i < 0 || got[i].Role != "admin" || !got[i].IsActive {
		t.Errorf("anna after the refused changes: %+v", got)
	}
	var revoked int
	if err := e.Owner.QueryRow(ctx, "SELECT count(*) FROM identity.api_keys WHERE revoked_at IS NOT NULL").Scan(&revoked); err != nil || revoked != 0 {
		t.Errorf("revoked keys after the refusals: %d, %v", revoked, err)
	}

	// The rest stays the caller's to manage.
	if _, err := e.Svc.UpdateUser(ctx, cfg, otto.ID, identity.UserPatch{Role: ptr("accountant")}); err != nil {
		t.Errorf("change a viewer: %v", err)
	}
	if err := e.Svc.RevokeKey(ctx, cfg, viewerKey.KeyID); err != nil {
		t.Errorf("revoke a viewer key: %v", err)
	}
	// An admin may.
	if err := e.Svc.RevokeKey(ctx, admin, adminKey.KeyID); err != nil {
		t.Errorf("admin revokes an admin key: %v", err)
	}
	if _, err := e.Svc.UpdateUser(ctx, admin, otto.ID, identity.UserPatch{Role: ptr("admin")}); err != nil {
		t.Fatal(err)
	}
	if err := e.Svc.DeleteUser(ctx, admin, anna.ID); err != nil {
		t.Errorf("admin deletes an admin: %v", err)
	}
}

// The tenant's last admin key cannot be revoked while no admin user is
// active; with one, or with another admin key, it can.
func TestLastAdminKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	second := key(t, e, admin, identity.CreateKeyInput{Label: "second", Scopes: []string{auth.Admin}})
	if err := e.Svc.RevokeKey(ctx, second, admin.KeyID); err != nil {
		t.Fatalf("revoke one of two admin keys: %v", err)
	}
	if err := e.Svc.RevokeKey(ctx, second, second.KeyID); !errs.Is(err, errs.LastAdmin) {
		t.Fatalf("revoke the last admin key: %v, want LAST_ADMIN", err)
	}
	e.User(t, second, "anna@acme.example", "admin")
	if err := e.Svc.RevokeKey(ctx, second, second.KeyID); err != nil {
		t.Fatalf("revoke the last admin key beside an active admin user: %v", err)
	}
}

// An admin may give a key its own per-minute limit up to the operator's
// maximum; it is listed and carried in the key's claims. Nobody else may
// set one.
func TestKeyRateLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t, identity.WithMaxKeyRateLimit(2000))
	fast := key(t, e, admin, identity.CreateKeyInput{Label: "fast", Scopes: []string{"journal:read"}, RateLimitPerMinute: ptr(1000)})
	plain := key(t, e, admin, identity.CreateKeyInput{Label: "plain", Scopes: []string{"journal:read"}})
	if fast.RateLimit != 1000 || plain.RateLimit != 0 || admin.RateLimit != 0 {
		t.Errorf("claims' rate limits: fast %d, plain %d, admin %d; want 1000, 0, 0", fast.RateLimit, plain.RateLimit, admin.RateLimit)
	}
	keys, err := e.Svc.ListKeys(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*int{}
	for _, k := range keys {
		listed[k.Label] = k.RateLimit
	}
	if diff := cmp.Diff(map[string]*int{"admin": nil, "fast": ptr(1000), "plain": nil}, listed); diff != "" {
		t.Errorf("listed limits (-want +got):\n%s", diff)
	}

	for _, n := range []int{0, -1, 2001} {
		_, err := e.Svc.CreateKey(ctx, admin, identity.CreateKeyInput{Label: "bad", Scopes: []string{"journal:read"}, RateLimitPerMinute: ptr(n)})
		if e := errs.As(err); e == nil || e.Code != errs.InvalidInput || len(e.Details) != 1 || e.Details[0].Field != "rate_limit_per_minute" {
			t.Errorf("limit %d: error = %v, want INVALID_INPUT naming rate_limit_per_minute", n, err)
		}
	}
	cfg := key(t, e, admin, identity.CreateKeyInput{Label: "cfg", Scopes: []string{"config:write", "journal:read"}})
	_, err = e.Svc.CreateKey(ctx, cfg, identity.CreateKeyInput{Label: "self-served", Scopes: []string{"journal:read"}, RateLimitPerMinute: ptr(1000)})
	wantCode(t, err, errs.Forbidden)
	var n int
	if err := e.Owner.QueryRow(ctx, "SELECT count(*) FROM identity.api_keys WHERE label IN ('bad', 'self-served')").Scan(&n); err != nil || n != 0 {
		t.Errorf("refused keys stored: %d, %v", n, err)
	}
}
