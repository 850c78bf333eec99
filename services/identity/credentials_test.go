package identity_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
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
	e, admin := identitytest.Acme(t)
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

	want := []map[string]any{{"tenant_id": c.TenantID, "session_id": c.SessionID, "user_id": c.UserID}}
	if diff := cmp.Diff(want, e.Payloads(t, "evt.identity.v1.credential_revoked")); diff != "" {
		t.Errorf("credential_revoked events (-want +got):\n%s", diff)
	}
}

func TestSetupPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
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
	e, admin := identitytest.Acme(t)
	before := e.User(t, admin, "anna@acme.example", "admin")
	gone := e.User(t, admin, "gone@acme.example", "viewer")
	if _, err := e.Svc.UpdateUser(ctx, admin, gone.User.ID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "not an email"}), errs.InvalidInput)
	for _, email := range []string{"nobody@acme.example", "gone@acme.example"} {
		wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: email}), "")
	}
	if m := resetMails(t, e); len(m) != 0 {
		t.Fatalf("reset mails for unknown or deactivated users: %v", m)
	}

	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "ANNA@acme.example"}), "")
	m := resetMails(t, e)
	if len(m) != 1 {
		t.Fatalf("reset mails = %v, want one", m)
	}
	// The command carries the link's token only sealed to the mail
	// sender's key, which opens it.
	token := identitytest.MailToken(t, m[0])
	want := map[string]any{"id": m[0]["id"], "to": "anna@acme.example", "template": "password_reset", "tenant_id": admin.TenantID,
		"sealed_token": m[0]["sealed_token"], "key_id": mailseal.KeyID(identitytest.MailerPublic), "expires_at": m[0]["expires_at"]}
	if diff := cmp.Diff(want, m[0]); diff != "" || token == "" || m[0]["id"] == "" {
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
	e, admin := identitytest.Acme(t)
	u := e.User(t, admin, "anna@acme.example", "viewer")
	wantCode(t, e.Svc.ForgotPassword(ctx, identity.ForgotPasswordInput{Email: "anna@acme.example"}), "")
	m := resetMails(t, e)
	if len(m) != 1 {
		t.Fatalf("reset mails = %v, want one", m)
	}
	token := identitytest.MailToken(t, m[0])
	if _, err := e.Svc.UpdateUser(ctx, admin, u.User.ID, identity.UserPatch{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Svc.SetupPassword(ctx, identity.SetupPasswordInput{Token: token, Password: "a brand new password"}), errs.InvalidToken)
	_, err := e.Svc.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: "a brand new password"})
	wantCode(t, err, errs.InvalidCredentials)
}

func TestVerifyClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	op := e.Operator(t)
	admin, raw := e.Tenant(t, "Acme GmbH")
	viewer := e.User(t, admin, "otto@acme.example", "viewer")

	got, err := e.Svc.Verify(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := &auth.Claims{TenantID: admin.TenantID, KeyID: admin.KeyID, KeyPrefix: raw[:12], Label: "admin", Role: "admin", Scopes: []string{"admin"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("key claims (-want +got):\n%s", diff)
	}
	if !op.Operator || op.Label != "bootstrap" {
		t.Errorf("bootstrap key claims = %+v, want an operator key labelled bootstrap", op)
	}

	got, err = e.Svc.Verify(ctx, viewer.Token)
	if err != nil {
		t.Fatal(err)
	}
	want = &auth.Claims{TenantID: admin.TenantID, UserID: viewer.User.ID, SessionID: got.SessionID, Email: "otto@acme.example", Role: "viewer", Scopes: auth.RoleScopes("viewer")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session claims (-want +got):\n%s", diff)
	}
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, admin := identitytest.Acme(t)
	valid := e.User(t, admin, "anna@acme.example", "admin").Token

	var secret string
	if err := e.Owner.QueryRow(ctx, "SELECT value FROM identity.settings WHERE key = 'jwt_signing_key'").Scan(&secret); err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(secret)
	c := e.Claims(t, valid)
	sign := func(method jwt.SigningMethod, k any, claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": "ledger-identity", "sub": c.UserID, "tid": c.TenantID, "jti": c.SessionID, "exp": time.Now().Add(time.Hour).Unix()}
	}
	if _, err := e.Svc.Verify(ctx, sign(jwt.SigningMethodHS256, key, base())); err != nil {
		t.Fatalf("a token signed like the service's is refused: %v", err)
	}

	// A service whose clock is 13 hours behind issues tokens expired now.
	past, err := identity.New(ctx, e.Store, identity.WithClock(func() time.Time { return time.Now().Add(-13 * time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	old, err := past.Login(ctx, identity.LoginInput{Email: "anna@acme.example", Password: identitytest.Password})
	if err != nil {
		t.Fatal(err)
	}

	otherTenant := base()
	otherTenant["tid"] = "00000000-0000-0000-0000-000000000000"
	noExp := base()
	delete(noExp, "exp")
	unknownSession := base()
	unknownSession["jti"] = "00000000-0000-0000-0000-000000000000"
	tampered := []byte(valid)
	tampered[len(tampered)-2] ^= 1

	tests := map[string]string{
		"empty":                 "",
		"unknown key":           identity.KeyPrefix + "does-not-exist",
		"expired session":       old.Token,
		"tampered signature":    string(tampered),
		"wrong secret":          sign(jwt.SigningMethodHS256, []byte("another secret of thirty-two bytes!"), base()),
		"alg none":              sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, base()),
		"HS512":                 sign(jwt.SigningMethodHS512, key, base()),
		"no expiry":             sign(jwt.SigningMethodHS256, key, noExp),
		"tid of another tenant": sign(jwt.SigningMethodHS256, key, otherTenant),
		"unknown session":       sign(jwt.SigningMethodHS256, key, unknownSession),
		"huge":                  strings.Repeat("x", 5000),
	}
	for name, token := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := e.Svc.Verify(ctx, token)
			wantCode(t, err, errs.Unauthenticated)
		})
	}
}

func TestVerifyToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	admin, raw := e.Tenant(t, "Acme GmbH")
	sess := e.User(t, admin, "anna@acme.example", "admin")
	sc := e.Claims(t, sess.Token)

	tests := []struct {
		name   string
		caller *auth.Claims
		token  string
		want   identity.TokenInfo
	}{
		{"a key", sc, raw, identity.TokenInfo{Valid: true, Type: "api_key", TenantID: admin.TenantID, Scopes: []string{"admin"}}},
		{"a session", admin, sess.Token, identity.TokenInfo{Valid: true, Type: "session", TenantID: admin.TenantID, Scopes: []string{"admin"}, ExpiresAt: &sess.ExpiresAt}},
		{"the caller's key", admin, "", identity.TokenInfo{Valid: true, Type: "api_key", TenantID: admin.TenantID, Scopes: []string{"admin"}}},
		{"the caller's session", sc, "", identity.TokenInfo{Valid: true, Type: "session", TenantID: admin.TenantID, Scopes: []string{"admin"}, ExpiresAt: &sess.ExpiresAt}},
		{"garbage", admin, "lgr_nope", identity.TokenInfo{Valid: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Svc.VerifyToken(ctx, tt.caller, identity.VerifyTokenInput{Token: tt.token})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
