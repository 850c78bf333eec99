package identity_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestBootstrapConcurrentReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	in := identity.BootstrapInput{APIKey: identitytest.BootstrapKey, AdminEmail: "Ops@Operator.example"}
	outs := make([]identity.BootstrapOutcome, 4)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			var err error
			if outs[i], err = e.Svc.Bootstrap(ctx, in); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var created, added, invited int
	for _, o := range outs {
		if o.TenantID != outs[0].TenantID {
			t.Errorf("replicas disagree on the operator tenant: %s and %s", o.TenantID, outs[0].TenantID)
		}
		created += b2i(o.TenantCreated)
		added += b2i(o.KeyAdded)
		invited += b2i(o.AdminInvited)
	}
	if created != 1 || added != 1 || invited != 1 {
		t.Errorf("created %d tenants, added %d keys, invited %d admins; want 1 each", created, added, invited)
	}
	counts := map[string]int{}
	for _, q := range []string{
		"SELECT count(*) FROM identity.tenants WHERE is_operator",
		"SELECT count(*) FROM identity.api_keys",
		"SELECT count(*) FROM identity.users WHERE email = 'ops@operator.example' AND role = 'admin'",
		"SELECT count(*) FROM identity.outbox WHERE subject = 'evt.identity.v1.tenant_created'",
		"SELECT count(*) FROM identity.outbox WHERE subject = 'cmd.mail.v1.send' AND convert_from(payload, 'UTF8')::jsonb->>'to' = 'ops@operator.example'",
	} {
		var n int
		if err := e.Owner.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[q] = n
	}
	for q, n := range counts {
		if n != 1 {
			t.Errorf("%s = %d, want 1", q, n)
		}
	}
	c := e.Claims(t, identitytest.BootstrapKey)
	want := []string{"admin"}
	if diff := cmp.Diff(want, c.Scopes); diff != "" || !c.Operator || c.TenantID != outs[0].TenantID {
		t.Errorf("bootstrap key claims = %+v", c)
	}
	tenant, err := e.Svc.Tenant(ctx, c)
	if err != nil || tenant.CompanyName != identity.DemoCompanyName || !tenant.IsOperator {
		t.Errorf("operator tenant = %+v, %v", tenant, err)
	}
}

func TestBootstrapGeneratesKeyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	first, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.TenantCreated || first.GeneratedKey == "" {
		t.Fatalf("first start = %+v, want a new tenant and a generated key", first)
	}
	e.Claims(t, first.GeneratedKey)
	second, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{})
	if err != nil {
		t.Fatal(err)
	}
	if second.TenantCreated || second.KeyAdded || second.GeneratedKey != "" || second.TenantID != first.TenantID {
		t.Errorf("second start = %+v, want nothing new", second)
	}
	// A key configured later is added to the existing operator tenant.
	third, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: identitytest.BootstrapKey})
	if err != nil || !third.KeyAdded || third.TenantCreated {
		t.Errorf("start with a configured key = %+v, %v; want the key added", third, err)
	}
	e.Claims(t, first.GeneratedKey)
	e.Claims(t, identitytest.BootstrapKey)

	if _, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: "too-short"}); err == nil {
		t.Error("a short bootstrap key was accepted")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestLastAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	anna := e.User(t, admin, "anna@acme.example", "admin").User.ID
	otto := e.User(t, admin, "otto@acme.example", "viewer").User.ID

	steps := []struct {
		name string
		do   func() error
		code string
	}{
		{"demote the only admin", func() error {
			_, err := e.Svc.UpdateUser(ctx, admin, anna, identity.UserPatch{Role: ptr("viewer")})
			return err
		}, errs.LastAdmin},
		{"deactivate the only admin", func() error {
			_, err := e.Svc.UpdateUser(ctx, admin, anna, identity.UserPatch{IsActive: ptr(false)})
			return err
		}, errs.LastAdmin},
		{"delete the only admin", func() error { return e.Svc.DeleteUser(ctx, admin, anna) }, errs.LastAdmin},
		{"change a viewer", func() error {
			_, err := e.Svc.UpdateUser(ctx, admin, otto, identity.UserPatch{IsActive: ptr(false)})
			return err
		}, ""},
		{"promote otto", func() error {
			_, err := e.Svc.UpdateUser(ctx, admin, otto, identity.UserPatch{Role: ptr("admin"), IsActive: ptr(true)})
			return err
		}, ""},
		{"now anna may go", func() error { return e.Svc.DeleteUser(ctx, admin, anna) }, ""},
		{"and is gone", func() error { return e.Svc.DeleteUser(ctx, admin, anna) }, errs.NotFound},
		{"no changes", func() error { _, err := e.Svc.UpdateUser(ctx, admin, otto, identity.UserPatch{}); return err }, errs.NoChanges},
		{"unknown role", func() error {
			_, err := e.Svc.UpdateUser(ctx, admin, otto, identity.UserPatch{Role: ptr("root")})
			return err
		}, errs.InvalidInput},
	}
	for _, s := range steps {
		if err := s.do(); s.code == "" && err != nil || s.code != "" && !errs.Is(err, s.code) {
			t.Fatalf("%s: error = %v, want code %q", s.name, err, s.code)
		}
	}
}

// Two admins demoting each other at once must not both succeed.
func TestLastAdminConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	ids := []string{e.User(t, admin, "a@acme.example", "admin").User.ID, e.User(t, admin, "b@acme.example", "admin").User.ID}
	var wg sync.WaitGroup
	errsOf := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			_, errsOf[i] = e.Svc.UpdateUser(ctx, admin, id, identity.UserPatch{Role: ptr("viewer")})
		})
	}
	wg.Wait()
	var ok, refused int
	for _, err := range errsOf {
		switch {
		case err == nil:
			ok++
		case errs.Is(err, errs.LastAdmin):
			refused++
		default:
			t.Fatal(err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Errorf("%d demotions succeeded and %d were refused, want 1 and 1", ok, refused)
	}
}

func TestDeactivationEndsSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	otto := e.User(t, admin, "otto@acme.example", "viewer")
	if _, err := e.Svc.UpdateUser(ctx, admin, otto.User.ID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	_, err := e.Svc.Verify(ctx, otto.Token)
	wantCode(t, err, errs.Unauthenticated)
	// Reactivation does not revive a revoked session.
	if _, err := e.Svc.UpdateUser(ctx, admin, otto.User.ID, identity.UserPatch{IsActive: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Svc.Verify(ctx, otto.Token)
	wantCode(t, err, errs.Unauthenticated)
}

// An invitation of a user deactivated before accepting no longer works.
func TestDeactivationVoidsInvitation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	inv, err := e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "otto@acme.example", Role: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	// A role change keeps the invitation; deactivation voids it.
	if _, err := e.Svc.UpdateUser(ctx, admin, inv.UserID, identity.UserPatch{Role: ptr("accountant")}); err != nil {
		t.Fatal(err)
	}
	var open int
	if err := e.Owner.QueryRow(ctx, "SELECT count(*) FROM identity.password_tokens WHERE user_id = $1 AND used_at IS NULL", inv.UserID).Scan(&open); err != nil || open != 1 {
		t.Fatalf("open tokens after a role change = %d, %v; want 1", open, err)
	}
	if _, err := e.Svc.UpdateUser(ctx, admin, inv.UserID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: inv.InviteToken, Password: identitytest.Password}), errs.InvalidToken)
}

// A deleted user's email can be invited again.
func TestDeletedEmailReusable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	otto := e.User(t, admin, "otto@acme.example", "viewer")
	_, err := e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "OTTO@acme.example", Role: "viewer"})
	wantCode(t, err, errs.DuplicateEmail)
	wantCode(t, e.Svc.DeleteUser(ctx, admin, otto.User.ID), "")
	_, err = e.Svc.Verify(ctx, otto.Token)
	wantCode(t, err, errs.Unauthenticated)
	_, err = e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "otto@acme.example", Role: "viewer"})
	wantCode(t, err, "")
}

func TestRoleGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	k, err := e.Svc.CreateKey(ctx, admin, identity.CreateKeyInput{Label: "config", Scopes: []string{"config:read", "config:write"}})
	if err != nil {
		t.Fatal(err)
	}
	limited := e.Claims(t, k.RawKey)
	_, err = e.Svc.InviteUser(ctx, limited, identity.InviteInput{Email: "boss@acme.example", Role: "admin"})
	wantCode(t, err, errs.ScopeNotGrantable)
	viewer := e.User(t, admin, "otto@acme.example", "viewer").User.ID
	_, err = e.Svc.UpdateUser(ctx, limited, viewer, identity.UserPatch{Role: ptr("admin")})
	wantCode(t, err, errs.ScopeNotGrantable)
}
