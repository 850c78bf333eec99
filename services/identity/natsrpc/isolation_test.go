package natsrpc_test

import (
	"net/http"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// Tenant B sees nothing of tenant A, and A's ids answer 404 to B.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, _ := h.Tenant(t, "A GmbH")
	b, _ := h.Tenant(t, "B GmbH")
	var key struct {
		ID     string `json:"id"`
		RawKey string `json:"raw_key"`
	}
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: a, Body: map[string]any{"label": "a-key", "role": "viewer"}}, http.StatusCreated, &key)
	anna := h.User(t, a, "anna@a.example", "admin")
	h.OK(identityv1.SubjectOAuthClientsPut, testkit.Rq{As: a, Params: map[string]string{"clientId": "a-client"},
		Body: map[string]any{"name": "A", "redirect_uris": []string{"https://a.example/cb"}, "scopes": []string{"journal:read"}}}, http.StatusCreated, nil)
	h.Exec(t, "INSERT INTO identity.oauth_grants (tenant_id, client_id, client_name, scopes) VALUES ($1, 'a-app', 'A app', '{journal:read}')", a.TenantID)

	var keys struct {
		APIKeys []struct {
			ID string `json:"id"`
		} `json:"api_keys"`
	}
	h.OK(identityv1.SubjectKeysList, testkit.Rq{As: b}, http.StatusOK, &keys)
	if len(keys.APIKeys) != 1 || keys.APIKeys[0].ID != b.KeyID {
		t.Errorf("B's keys = %+v, want only its own", keys.APIKeys)
	}
	var users struct {
		Users []any `json:"users"`
	}
	h.OK(identityv1.SubjectUsersList, testkit.Rq{As: b}, http.StatusOK, &users)
	var clients struct {
		Clients []any `json:"clients"`
	}
	h.OK(identityv1.SubjectOAuthClientsList, testkit.Rq{As: b}, http.StatusOK, &clients)
	var apps struct {
		Apps []any `json:"apps"`
	}
	h.OK(identityv1.SubjectOAuthAppsList, testkit.Rq{As: b}, http.StatusOK, &apps)
	if len(users.Users) != 0 || len(clients.Clients) != 0 || len(apps.Apps) != 0 {
		t.Errorf("B sees A's users %v, clients %v or apps %v", users.Users, clients.Clients, apps.Apps)
	}

	h.Fails(identityv1.SubjectKeysDelete, testkit.Rq{As: b, Params: map[string]string{"id": key.ID}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectKeysDelete, testkit.Rq{As: b, Params: map[string]string{"id": a.KeyID}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectUsersUpdate, testkit.Rq{As: b, Params: map[string]string{"id": anna.User.ID}, Body: map[string]any{"role": "viewer"}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectUsersDelete, testkit.Rq{As: b, Params: map[string]string{"id": anna.User.ID}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectOAuthAppsDelete, testkit.Rq{As: b, Params: map[string]string{"clientId": "a-app"}}, http.StatusNotFound, errs.NotFound)
	// B registering A's client id makes B's own client, not a change to A's.
	h.OK(identityv1.SubjectOAuthClientsPut, testkit.Rq{As: b, Params: map[string]string{"clientId": "a-client"},
		Body: map[string]any{"name": "B", "redirect_uris": []string{"https://b.example/cb"}, "scopes": []string{"journal:read"}}}, http.StatusCreated, nil)

	// A's things still work.
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: key.RawKey}}, http.StatusOK, nil)
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: anna.Token}}, http.StatusOK, nil)
	var aClients struct {
		Clients []struct {
			Name string `json:"name"`
		} `json:"clients"`
	}
	h.OK(identityv1.SubjectOAuthClientsList, testkit.Rq{As: a}, http.StatusOK, &aClients)
	if len(aClients.Clients) != 1 || aClients.Clients[0].Name != "A" {
		t.Errorf("A's clients = %+v", aClients.Clients)
	}
}
