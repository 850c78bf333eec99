package natsrpc_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestUsersSubjects(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)
	anna := h.User(t, admin, "anna@acme.example", "admin")

	var inv struct {
		UserID string `json:"user_id"`
	}
	h.OK(identityv1.SubjectUsersInvite, testkit.Rq{As: admin, Body: map[string]any{"email": "otto@acme.example", "role": "viewer"}}, http.StatusCreated, &inv)
	h.Fails(identityv1.SubjectUsersInvite, testkit.Rq{As: admin, Body: map[string]any{"email": "OTTO@acme.example", "role": "viewer"}}, http.StatusConflict, errs.DuplicateEmail)
	got := h.Fails(identityv1.SubjectUsersInvite, testkit.Rq{As: admin, Body: map[string]any{"email": "otto", "role": "boss"}}, http.StatusBadRequest, errs.InvalidInput)
	want := []errs.Detail{
		{Field: "email", Issue: "must be a valid email address of at most 254 characters"},
		{Field: "role", Issue: "must be one of admin, accountant, viewer"},
	}
	if diff := cmp.Diff(want, got.Err.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}

	var list struct {
		Users []identity.User `json:"users"`
	}
	h.OK(identityv1.SubjectUsersList, testkit.Rq{As: admin}, http.StatusOK, &list)
	if len(list.Users) != 2 || list.Users[0].Email != "anna@acme.example" || !list.Users[0].IsActive || list.Users[0].LastLogin == nil ||
		list.Users[1].Email != "otto@acme.example" || list.Users[1].IsActive || list.Users[1].InvitedAt == nil {
		t.Errorf("users = %+v", list.Users)
	}

	id := map[string]string{"id": inv.UserID}
	annaID := map[string]string{"id": anna.User.ID}
	var u identity.User
	h.OK(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: id, Body: map[string]any{"role": "accountant"}}, http.StatusOK, &u)
	if u.Role != "accountant" || u.ID != inv.UserID {
		t.Errorf("updated user = %+v", u)
	}
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: id, Body: `{}`}, http.StatusBadRequest, errs.NoChanges)
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: id, Body: `{"email": "x@y.de"}`}, http.StatusBadRequest, errs.InvalidInput)
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: annaID, Body: map[string]any{"role": "viewer"}}, http.StatusConflict, errs.LastAdmin)
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: annaID, Body: map[string]any{"is_active": false}}, http.StatusConflict, errs.LastAdmin)
	h.Fails(identityv1.SubjectUsersDelete, testkit.Rq{As: admin, Params: annaID}, http.StatusConflict, errs.LastAdmin)
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: admin, Params: map[string]string{"id": "nope"}, Body: map[string]any{"role": "viewer"}}, http.StatusNotFound, errs.NotFound)

	var ok okBody
	h.OK(identityv1.SubjectUsersDelete, testkit.Rq{As: admin, Params: id}, http.StatusOK, &ok)
	h.Fails(identityv1.SubjectUsersDelete, testkit.Rq{As: admin, Params: id}, http.StatusNotFound, errs.NotFound)
	h.OK(identityv1.SubjectUsersList, testkit.Rq{As: admin}, http.StatusOK, &list)
	if len(list.Users) != 1 {
		t.Errorf("users after deleting otto = %+v", list.Users)
	}
}

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
		got := h.Call(s, testkit.Rq{Body: "{}"})
		switch {
		case got.Code == errs.Unavailable:
			t.Errorf("%s is not served", s)
		case public[s] && got.Code == errs.Unauthenticated && s != identityv1.SubjectVerify:
			t.Errorf("%s is public but wants a principal", s)
		case !public[s] && (got.Status != http.StatusUnauthorized || got.Code != errs.Unauthenticated):
			t.Errorf("%s without a principal: %d %s, want 401 UNAUTHENTICATED", s, got.Status, got.Code)
		}
	}
}

// The life of a user: invitation, password, login, me, logout.
func TestUserLifecycle(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)

	var inv identity.Invitation
	h.OK(identityv1.SubjectUsersInvite, testkit.Rq{As: admin, Body: map[string]any{"email": "Anna@Acme.example", "role": "accountant"}}, http.StatusCreated, &inv)
	if !inv.OK || inv.InviteToken == "" || inv.UserID == "" {
		t.Fatalf("invitation = %+v", inv)
	}
	h.Fails(identityv1.SubjectLogin, testkit.Rq{Body: map[string]any{"email": "anna@acme.example", "password": "whatever password"}}, http.StatusUnauthorized, errs.InvalidCredentials)
	h.Fails(identityv1.SubjectSetupPassword, testkit.Rq{Body: map[string]any{"token": inv.InviteToken, "password": "short"}}, http.StatusBadRequest, errs.InvalidInput)

	var ok okBody
	h.OK(identityv1.SubjectSetupPassword, testkit.Rq{Body: map[string]any{"token": inv.InviteToken, "password": identitytest.Password}}, http.StatusOK, &ok)
	if !ok.OK {
		t.Fatal("setup-password did not answer ok")
	}
	h.Fails(identityv1.SubjectSetupPassword, testkit.Rq{Body: map[string]any{"token": inv.InviteToken, "password": identitytest.Password}}, http.StatusBadRequest, errs.InvalidToken)

	var login identity.LoginResult
	h.OK(identityv1.SubjectLogin, testkit.Rq{Body: map[string]any{"email": "anna@acme.example", "password": identitytest.Password}}, http.StatusOK, &login)
	wantLogin := identity.LoginResult{
		User:   identity.UserRef{ID: inv.UserID, Email: "anna@acme.example", Role: "accountant"},
		Tenant: identity.TenantRef{ID: admin.TenantID, CompanyName: "Acme GmbH"},
	}
	if diff := cmp.Diff(wantLogin, login, cmpopts.IgnoreFields(identity.LoginResult{}, "Token", "ExpiresAt")); diff != "" {
		t.Errorf("login (-want +got):\n%s", diff)
	}
	h.Fails(identityv1.SubjectLogin, testkit.Rq{Body: map[string]any{"email": "anna@acme.example", "password": "wrong password!"}}, http.StatusUnauthorized, errs.InvalidCredentials)
	h.Fails(identityv1.SubjectLogin, testkit.Rq{Body: `{"email": "anna@acme.example", "password": "x", "remember": true}`}, http.StatusBadRequest, errs.InvalidInput)

	var claims auth.Claims
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: login.Token}}, http.StatusOK, &claims)
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
	h.OK(identityv1.SubjectMe, testkit.Rq{As: &claims}, http.StatusOK, &me)
	if diff := cmp.Diff(&wantLogin.User, me.User); diff != "" || me.Key != nil || me.Tenant.CompanyName != "Acme GmbH" ||
		!cmp.Equal(auth.RoleScopes("accountant"), me.Scopes) {
		t.Errorf("me of a session = %+v %s", me, diff)
	}
	me.User, me.Key = nil, nil
	h.OK(identityv1.SubjectMe, testkit.Rq{As: admin}, http.StatusOK, &me)
	if me.User != nil || me.Key == nil || me.Key.ID != admin.KeyID || me.Key.Prefix != admin.KeyPrefix {
		t.Errorf("me of a key = %+v", me)
	}

	h.OK(identityv1.SubjectLogout, testkit.Rq{As: &claims}, http.StatusOK, &ok)
	h.Fails(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: login.Token}}, http.StatusUnauthorized, errs.Unauthenticated)
	// An API key has no session to end.
	h.OK(identityv1.SubjectLogout, testkit.Rq{As: admin}, http.StatusOK, &ok)
}

func TestForgotPasswordSubject(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)
	h.User(t, admin, "anna@acme.example", "admin")
	var ok okBody
	for _, email := range []string{"anna@acme.example", "nobody@acme.example"} {
		h.OK(identityv1.SubjectForgotPassword, testkit.Rq{Body: map[string]any{"email": email}}, http.StatusOK, &ok)
	}
	h.Fails(identityv1.SubjectForgotPassword, testkit.Rq{Body: map[string]any{"email": "anna"}}, http.StatusBadRequest, errs.InvalidInput)
	h.Fails(identityv1.SubjectForgotPassword, testkit.Rq{Body: `{"email": 5}`}, http.StatusBadRequest, errs.InvalidInput)
}

func TestVerifyTokenSubject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, raw := h.Tenant(t, "Acme GmbH")
	var info identity.TokenInfo
	h.OK(identityv1.SubjectVerifyToken, testkit.Rq{As: admin}, http.StatusOK, &info)
	if diff := cmp.Diff(identity.TokenInfo{Valid: true, Type: "api_key", TenantID: admin.TenantID, Scopes: []string{"admin"}}, info); diff != "" {
		t.Errorf("own key (-want +got):\n%s", diff)
	}
	info = identity.TokenInfo{}
	h.OK(identityv1.SubjectVerifyToken, testkit.Rq{As: admin, Body: map[string]any{"token": raw + "x"}}, http.StatusOK, &info)
	if info.Valid {
		t.Errorf("an invalid token is valid: %+v", info)
	}
	h.Fails(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: raw + "x"}}, http.StatusUnauthorized, errs.Unauthenticated)
	h.Fails(identityv1.SubjectVerify, testkit.Rq{Body: `{"token": ["x"]}`}, http.StatusBadRequest, errs.InvalidInput)
}
