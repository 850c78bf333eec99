package natsrpc_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

type userView struct {
	ID        string  `json:"id"`
	Email     string  `json:"email"`
	Role      string  `json:"role"`
	IsActive  bool    `json:"is_active"`
	InvitedAt *string `json:"invited_at"`
	LastLogin *string `json:"last_login"`
}

func TestUsersSubjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
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
		Users []userView `json:"users"`
	}
	h.OK(identityv1.SubjectUsersList, testkit.Rq{As: admin}, http.StatusOK, &list)
	if len(list.Users) != 2 || list.Users[0].Email != "anna@acme.example" || !list.Users[0].IsActive || list.Users[0].LastLogin == nil ||
		list.Users[1].Email != "otto@acme.example" || list.Users[1].IsActive || list.Users[1].InvitedAt == nil {
		t.Errorf("users = %+v", list.Users)
	}

	id := map[string]string{"id": inv.UserID}
	annaID := map[string]string{"id": anna.User.ID}
	var u userView
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
