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
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

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
	e := identitytest.New(t)
	admin, _ := e.Tenant(t, "Acme GmbH")
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
