package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
	anna := e.User(t, admin, "anna@acme.example", "admin")
	e.User(t, admin, "otto@acme.example", "viewer")
	if _, err := e.Svc.UpdateUser(ctx, admin, e.Claims(t, e.User(t, admin, "ina@acme.example", "viewer").Token).UserID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "new@acme.example", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	closed, _ := e.Tenant(t, "Closed GmbH")
	e.User(t, closed, "carl@closed.example", "admin")
	if err := e.Svc.DeactivateTenant(ctx, e.Operator(t), closed.TenantID); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name            string
		email, password string
		code            string
	}{
		{"ok", "anna@acme.example", identitytest.Password, ""},
		{"email is case-insensitive", " Anna@ACME.example ", identitytest.Password, ""},
		{"wrong password", "anna@acme.example", "wrong horse battery staple", errs.InvalidCredentials},
		{"unknown email", "nobody@acme.example", identitytest.Password, errs.InvalidCredentials},
		{"deactivated user", "ina@acme.example", identitytest.Password, errs.InvalidCredentials},
		{"invited, no password yet", "new@acme.example", "", errs.InvalidInput},
		{"invited, any password", "new@acme.example", identitytest.Password, errs.InvalidCredentials},
		{"deactivated tenant", "carl@closed.example", identitytest.Password, errs.InvalidCredentials},
		{"missing email", "", "x", errs.InvalidInput},
	}
	var failure string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Svc.Login(ctx, identity.LoginInput{Email: tt.email, Password: tt.password})
			wantCode(t, err, tt.code)
			if tt.code == errs.InvalidCredentials {
				// Every failure reads alike, so none reveals an email exists.
				if failure == "" {
					failure = err.Error()
				}
				if err.Error() != failure {
					t.Errorf("failure %q differs from %q", err, failure)
				}
			}
			if tt.code == "" {
				want := identity.UserRef{ID: anna.User.ID, Email: "anna@acme.example", Role: "admin"}
				if diff := cmp.Diff(want, res.User); diff != "" {
					t.Errorf("user (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(identity.TenantRef{ID: admin.TenantID, CompanyName: "Acme GmbH"}, res.Tenant); diff != "" {
					t.Errorf("tenant (-want +got):\n%s", diff)
				}
			}
		})
	}

	users, err := e.Svc.ListUsers(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if users[0].Email != "anna@acme.example" || users[0].LastLogin == nil || time.Since(*users[0].LastLogin) > time.Minute {
		t.Errorf("last_login of %s not set by login: %v", users[0].Email, users[0].LastLogin)
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
	res := e.User(t, admin, "anna@acme.example", "admin")
	c := e.Claims(t, res.Token)

	if err := e.Svc.Logout(ctx, c); err != nil {
		t.Fatal(err)
	}
	_, err := e.Svc.Verify(ctx, res.Token)
	wantCode(t, err, errs.Unauthenticated)
	// A second logout and a logout with an API key change nothing.
	wantCode(t, e.Svc.Logout(ctx, c), "")
	wantCode(t, e.Svc.Logout(ctx, admin), "")
	if _, err := e.Svc.Verify(ctx, identitytest.BootstrapKey); err != nil {
		t.Errorf("key stopped working after its logout: %v", err)
	}

	var revoked []map[string]any
	for _, ev := range e.Outbox(t) {
		if ev.Subject == "evt.identity.v1.credential_revoked" {
			revoked = append(revoked, ev.Payload)
		}
	}
	want := []map[string]any{{"tenant_id": c.TenantID, "session_id": c.SessionID, "user_id": c.UserID}}
	if diff := cmp.Diff(want, revoked); diff != "" {
		t.Errorf("credential_revoked events (-want +got):\n%s", diff)
	}
}
