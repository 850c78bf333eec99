package identity_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestSetupPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
	inv, err := e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "anna@acme.example", Role: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := e.Svc.InviteUser(ctx, admin, identity.InviteInput{Email: "late@acme.example", Role: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	e.Exec(t, "UPDATE identity.password_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", expired.UserID)

	steps := []struct {
		name            string
		token, password string
		code            string
	}{
		{"short password", inv.InviteToken, "elevenchars", errs.InvalidInput},
		{"missing token", "", identitytest.Password, errs.InvalidInput},
		{"unknown token", "nope", identitytest.Password, errs.InvalidToken},
		{"expired token", expired.InviteToken, identitytest.Password, errs.InvalidToken},
		{"first use", inv.InviteToken, identitytest.Password, ""},
		{"second use", inv.InviteToken, "another password!", errs.InvalidToken},
	}
	for _, s := range steps {
		err := e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: s.token, Password: s.password})
		if s.code == "" && err != nil || s.code != "" && !errs.Is(err, s.code) {
			t.Errorf("%s: error = %v, want code %q", s.name, err, s.code)
		}
	}
	if _, err := e.Svc.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: identitytest.Password}); err != nil {
		t.Errorf("login with the password set through the invitation: %v", err)
	}
}

func TestForgotPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
	before := e.User(t, admin, "anna@acme.example", "admin")
	gone := e.User(t, admin, "gone@acme.example", "viewer")
	if _, err := e.Svc.UpdateUser(ctx, admin, gone.User.ID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	mails := func() []map[string]any {
		var out []map[string]any
		for _, ev := range e.Outbox(t) {
			if ev.Subject == "cmd.mail.v1.send" && ev.Payload["template"] == "password_reset" {
				out = append(out, ev.Payload)
			}
		}
		return out
	}

	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "not an email"}), errs.InvalidInput)
	for _, email := range []string{"nobody@acme.example", "gone@acme.example"} {
		wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: email}), "")
	}
	if m := mails(); len(m) != 0 {
		t.Fatalf("reset mails for unknown or deactivated users: %v", m)
	}

	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "ANNA@acme.example"}), "")
	m := mails()
	if len(m) != 1 {
		t.Fatalf("reset mails = %v, want one", m)
	}
	token, _ := m[0]["token"].(string)
	want := map[string]any{"to": "anna@acme.example", "template": "password_reset", "tenant_id": admin.TenantID, "token": token, "expires_at": m[0]["expires_at"]}
	if diff := cmp.Diff(want, m[0]); diff != "" || token == "" {
		t.Errorf("reset mail (-want +got):\n%s", diff)
	}
	wantCode(t, e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: token, Password: "a brand new password"}), "")

	// The reset ends the sessions opened with the old password.
	_, err := e.Svc.Verify(ctx, before.Token)
	wantCode(t, err, errs.Unauthenticated)
	_, err = e.Svc.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: identitytest.Password})
	wantCode(t, err, errs.InvalidCredentials)
	_, err = e.Svc.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: "a brand new password"})
	wantCode(t, err, "")
}

// A reset token must not revive a user deactivated after it was mailed.
func TestResetDoesNotReactivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
	u := e.User(t, admin, "anna@acme.example", "viewer")
	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "anna@acme.example"}), "")
	var token string
	for _, ev := range e.Outbox(t) {
		if ev.Payload["template"] == "password_reset" {
			token = ev.Payload["token"].(string)
		}
	}
	if _, err := e.Svc.UpdateUser(ctx, admin, u.User.ID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: token, Password: "a brand new password"}), errs.InvalidToken)
	_, err := e.Svc.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: "a brand new password"})
	wantCode(t, err, errs.InvalidCredentials)
}
