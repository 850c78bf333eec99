package natsrpc_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

// Every subject of the contract is served, and all but the public ones
// refuse a request that carries no principal.
func TestEverySubjectIsServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	public := map[string]bool{
		identityv1.SubjectLogin:          true,
		identityv1.SubjectForgotPassword: true,
		identityv1.SubjectSetupPassword:  true,
		identityv1.SubjectVerify:         true,
	}
	subjects := []string{
		identityv1.SubjectLogin, identityv1.SubjectLogout, identityv1.SubjectMe, identityv1.SubjectForgotPassword,
		identityv1.SubjectSetupPassword, identityv1.SubjectVerifyToken, identityv1.SubjectVerify,
		identityv1.SubjectKeysList, identityv1.SubjectKeysCreate, identityv1.SubjectKeysDelete,
		identityv1.SubjectUsersList, identityv1.SubjectUsersInvite, identityv1.SubjectUsersUpdate, identityv1.SubjectUsersDelete,
		identityv1.SubjectTenantGet, identityv1.SubjectTenantUpdate,
		identityv1.SubjectOAuthAppsList, identityv1.SubjectOAuthAppsDelete, identityv1.SubjectOAuthClientsList, identityv1.SubjectOAuthClientsPut,
		identityv1.SubjectAdminTenantsList, identityv1.SubjectAdminTenantsCreate, identityv1.SubjectAdminTenantsDelete,
		identityv1.SubjectAuditList,
	}
	for _, s := range subjects {
		got := h.call(t, s, rq{body: "{}"})
		switch {
		case got.code == errs.Unavailable:
			t.Errorf("%s is not served", s)
		case public[s] && got.code == errs.Unauthenticated && s != identityv1.SubjectVerify:
			t.Errorf("%s is public but wants a principal", s)
		case !public[s] && (got.status != http.StatusUnauthorized || got.code != errs.Unauthenticated):
			t.Errorf("%s without a principal: %d %s, want 401 UNAUTHENTICATED", s, got.status, got.code)
		}
	}
}

// The life of a user: invitation, password, login, me, logout.
func TestUserLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")

	var inv identity.Invitation
	h.ok(t, identityv1.SubjectUsersInvite, rq{as: admin, body: map[string]any{"email": "Anna@Acme.example", "role": "accountant"}}, http.StatusCreated, &inv)
	if !inv.OK || inv.InviteToken == "" || inv.UserID == "" {
		t.Fatalf("invitation = %+v", inv)
	}
	h.fails(t, identityv1.SubjectLogin, rq{body: map[string]any{"email": "anna@acme.example", "password": "whatever password"}}, http.StatusUnauthorized, errs.InvalidCredentials)
	h.fails(t, identityv1.SubjectSetupPassword, rq{body: map[string]any{"token": inv.InviteToken, "password": "short"}}, http.StatusBadRequest, errs.InvalidInput)

	var ok okBody
	h.ok(t, identityv1.SubjectSetupPassword, rq{body: map[string]any{"token": inv.InviteToken, "password": identitytest.Password}}, http.StatusOK, &ok)
	if !ok.OK {
		t.Fatal("setup-password did not answer ok")
	}
	h.fails(t, identityv1.SubjectSetupPassword, rq{body: map[string]any{"token": inv.InviteToken, "password": identitytest.Password}}, http.StatusBadRequest, errs.InvalidToken)

	var login identity.LoginResult
	h.ok(t, identityv1.SubjectLogin, rq{body: map[string]any{"email": "anna@acme.example", "password": identitytest.Password}}, http.StatusOK, &login)
	wantLogin := identity.LoginResult{
		User:   identity.UserRef{ID: inv.UserID, Email: "anna@acme.example", Role: "accountant"},
		Tenant: identity.TenantRef{ID: admin.TenantID, CompanyName: "Acme GmbH"},
	}
	if diff := cmp.Diff(wantLogin, login, cmpopts.IgnoreFields(identity.LoginResult{}, "Token", "ExpiresAt")); diff != "" {
		t.Errorf("login (-want +got):\n%s", diff)
	}
	h.fails(t, identityv1.SubjectLogin, rq{body: map[string]any{"email": "anna@acme.example", "password": "wrong password!"}}, http.StatusUnauthorized, errs.InvalidCredentials)
	h.fails(t, identityv1.SubjectLogin, rq{body: `{"email": "anna@acme.example", "password": "x", "remember": true}`}, http.StatusBadRequest, errs.InvalidInput)

	var claims auth.Claims
	h.ok(t, identityv1.SubjectVerify, rq{body: identityv1.VerifyRequest{Token: login.Token}}, http.StatusOK, &claims)
	if claims.UserID != inv.UserID || claims.SessionID == "" || claims.TenantID != admin.TenantID {
		t.Fatalf("session claims = %+v", claims)
	}

	var me struct {
		User   *identity.UserRef `json:"user"`
		Tenant struct {
			ID          string `json:"id"`
			CompanyName string `json:"company_name"`
		} `json:"tenant"`
		Key    *identity.KeyRef `json:"key"`
		Scopes []string         `json:"scopes"`
	}
	h.ok(t, identityv1.SubjectMe, rq{as: &claims}, http.StatusOK, &me)
	if diff := cmp.Diff(&wantLogin.User, me.User); diff != "" || me.Key != nil || me.Tenant.CompanyName != "Acme GmbH" ||
		!cmp.Equal(auth.RoleScopes("accountant"), me.Scopes) {
		t.Errorf("me of a session = %+v %s", me, diff)
	}
	me.User, me.Key = nil, nil
	h.ok(t, identityv1.SubjectMe, rq{as: admin}, http.StatusOK, &me)
	if me.User != nil || me.Key == nil || me.Key.ID != admin.KeyID || me.Key.Prefix != admin.KeyPrefix {
		t.Errorf("me of a key = %+v", me)
	}

	h.ok(t, identityv1.SubjectLogout, rq{as: &claims}, http.StatusOK, &ok)
	h.fails(t, identityv1.SubjectVerify, rq{body: identityv1.VerifyRequest{Token: login.Token}}, http.StatusUnauthorized, errs.Unauthenticated)
	// An API key has no session to end.
	h.ok(t, identityv1.SubjectLogout, rq{as: admin}, http.StatusOK, &ok)
}

func TestForgotPasswordSubject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
	h.User(t, admin, "anna@acme.example", "admin")
	var ok okBody
	for _, email := range []string{"anna@acme.example", "nobody@acme.example"} {
		h.ok(t, identityv1.SubjectForgotPassword, rq{body: map[string]any{"email": email}}, http.StatusOK, &ok)
	}
	h.fails(t, identityv1.SubjectForgotPassword, rq{body: map[string]any{"email": "anna"}}, http.StatusBadRequest, errs.InvalidInput)
	h.fails(t, identityv1.SubjectForgotPassword, rq{body: `{"email": 5}`}, http.StatusBadRequest, errs.InvalidInput)
}

func TestVerifyTokenSubject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, raw := h.Tenant(t, "Acme GmbH")
	var info identity.TokenInfo
	h.ok(t, identityv1.SubjectVerifyToken, rq{as: admin}, http.StatusOK, &info)
	if diff := cmp.Diff(identity.TokenInfo{Valid: true, Type: "api_key", TenantID: admin.TenantID, Scopes: []string{"admin"}}, info); diff != "" {
		t.Errorf("own key (-want +got):\n%s", diff)
	}
	info = identity.TokenInfo{}
	h.ok(t, identityv1.SubjectVerifyToken, rq{as: admin, body: map[string]any{"token": raw + "x"}}, http.StatusOK, &info)
	if info.Valid {
		t.Errorf("an invalid token is valid: %+v", info)
	}
	h.fails(t, identityv1.SubjectVerify, rq{body: identityv1.VerifyRequest{Token: raw + "x"}}, http.StatusUnauthorized, errs.Unauthenticated)
	h.fails(t, identityv1.SubjectVerify, rq{body: `{"token": ["x"]}`}, http.StatusBadRequest, errs.InvalidInput)
}
