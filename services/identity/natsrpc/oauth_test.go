package natsrpc_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

type clientView struct {
	ClientID     string   `json:"client_id"`
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"`
	Scopes       []string `json:"scopes"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
	ClientSecret string   `json:"client_secret"`
}

func TestOAuthClients(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
	id := map[string]string{"clientId": "dashboard_1"}
	body := map[string]any{"name": "Dashboard", "redirect_uris": []string{"https://dash.example/cb", "http://localhost:3000/cb"}, "scopes": []string{"journal:read"}}

	var created clientView
	h.OK(identityv1.SubjectOAuthClientsPut, testkit.Rq{As: admin, Params: id, Body: body}, http.StatusCreated, &created)
	if !strings.HasPrefix(created.ClientSecret, "lgrcs_") || created.ClientID != "dashboard_1" {
		t.Errorf("created client = %+v", created)
	}
	body["name"] = "Dashboard 2"
	var updated clientView
	h.OK(identityv1.SubjectOAuthClientsPut, testkit.Rq{As: admin, Params: id, Body: body}, http.StatusOK, &updated)
	if updated.ClientSecret != "" || updated.Name != "Dashboard 2" || updated.CreatedAt != created.CreatedAt {
		t.Errorf("updated client = %+v", updated)
	}

	var list struct {
		Clients []clientView `json:"clients"`
	}
	h.OK(identityv1.SubjectOAuthClientsList, testkit.Rq{As: admin}, http.StatusOK, &list)
	updated.ClientSecret = ""
	if diff := cmp.Diff([]clientView{updated}, list.Clients); diff != "" {
		t.Errorf("clients (-want +got):\n%s", diff)
	}

	var secret string
	if err := h.Pool.QueryRow(t.Context(), "SELECT secret_hash FROM identity.oauth_clients").Scan(&secret); err != nil || len(secret) != 64 {
		t.Errorf("stored secret = %q, %v; want a SHA-256 hex digest", secret, err)
	}

	tests := []struct {
		name   string
		id     string
		body   any
		status int
		code   string
	}{
		{"short id", "ab", body, 400, errs.InvalidInput},
		{"id with a dot", "a.b.c", body, 400, errs.InvalidInput},
		{"no name", "x-client", map[string]any{"redirect_uris": []string{"https://a.example"}, "scopes": []string{"journal:read"}}, 400, errs.InvalidInput},
		{"http redirect", "x-client", map[string]any{"name": "x", "redirect_uris": []string{"http://a.example/cb"}, "scopes": []string{"journal:read"}}, 400, errs.InvalidInput},
		{"no redirect", "x-client", map[string]any{"name": "x", "redirect_uris": []string{}, "scopes": []string{"journal:read"}}, 400, errs.InvalidInput},
		{"eleven redirects", "x-client", map[string]any{"name": "x", "redirect_uris": make11(), "scopes": []string{"journal:read"}}, 400, errs.InvalidInput},
		{"bad scope", "x-client", map[string]any{"name": "x", "redirect_uris": []string{"https://a.example"}, "scopes": []string{"everything"}}, 400, errs.InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Fails(identityv1.SubjectOAuthClientsPut, testkit.Rq{As: admin, Params: map[string]string{"clientId": tt.id}, Body: tt.body}, tt.status, tt.code)
		})
	}
}

func make11() []string {
	out := make([]string, 11)
	for i := range out {
		out[i] = "https://a.example/cb"
	}
	return out
}

func TestOAuthApps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, g := range []struct {
		client, name string
		scopes       []string
		at           time.Time
	}{
		{"lexoffice", "Lexoffice", []string{"journal:read"}, at},
		{"lexoffice", "Lexoffice", []string{"bank:read", "journal:read"}, at.Add(time.Hour)},
		{"agent", "Agent", []string{"kreditoren:read"}, at.Add(2 * time.Hour)},
	} {
		h.Exec(t, "INSERT INTO identity.oauth_grants (tenant_id, client_id, client_name, scopes, created_at) VALUES ($1, $2, $3, $4, $5)",
			admin.TenantID, g.client, g.name, g.scopes, g.at)
	}
	type app struct {
		ClientID     string    `json:"client_id"`
		Name         string    `json:"name"`
		Scopes       []string  `json:"scopes"`
		AuthorizedAt time.Time `json:"authorized_at"`
	}
	var list struct {
		Apps []app `json:"apps"`
	}
	h.OK(identityv1.SubjectOAuthAppsList, testkit.Rq{As: admin}, http.StatusOK, &list)
	want := []app{
		{ClientID: "lexoffice", Name: "Lexoffice", Scopes: []string{"bank:read", "journal:read"}, AuthorizedAt: at},
		{ClientID: "agent", Name: "Agent", Scopes: []string{"kreditoren:read"}, AuthorizedAt: at.Add(2 * time.Hour)},
	}
	if diff := cmp.Diff(want, list.Apps); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	var ok okBody
	h.OK(identityv1.SubjectOAuthAppsDelete, testkit.Rq{As: admin, Params: map[string]string{"clientId": "lexoffice"}}, http.StatusOK, &ok)
	h.Fails(identityv1.SubjectOAuthAppsDelete, testkit.Rq{As: admin, Params: map[string]string{"clientId": "lexoffice"}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectOAuthAppsDelete, testkit.Rq{As: admin, Params: map[string]string{"clientId": "?"}}, http.StatusNotFound, errs.NotFound)
	h.OK(identityv1.SubjectOAuthAppsList, testkit.Rq{As: admin}, http.StatusOK, &list)
	if diff := cmp.Diff(want[1:], list.Apps); diff != "" {
		t.Errorf("apps after revoking (-want +got):\n%s", diff)
	}
}
