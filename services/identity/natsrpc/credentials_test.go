package natsrpc_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

type keyView struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Role       string   `json:"role"`
	Scopes     []string `json:"scopes"`
	KeyPrefix  string   `json:"key_prefix"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	CallCount  int64    `json:"call_count"`
	RawKey     string   `json:"raw_key"`
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)

	var created keyView
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: admin, Body: map[string]any{"label": " Bank import ", "scopes": []string{"bank:write", "bank:read", "bank:read"}}}, http.StatusCreated, &created)
	if !strings.HasPrefix(created.RawKey, "lgr_") || created.KeyPrefix != created.RawKey[:12] {
		t.Fatalf("raw key %q with prefix %q", created.RawKey, created.KeyPrefix)
	}
	want := keyView{ID: created.ID, Label: "Bank import", Scopes: []string{"bank:read", "bank:write"}, KeyPrefix: created.KeyPrefix, CreatedAt: created.CreatedAt}
	got := created
	got.RawKey = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("created key (-want +got):\n%s", diff)
	}

	var viaRole keyView
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: admin, Body: map[string]any{"label": "reader", "role": "viewer"}}, http.StatusCreated, &viaRole)
	if viaRole.Role != "viewer" || !cmp.Equal(viaRole.Scopes, auth.RoleScopes("viewer")) {
		t.Errorf("a key with only a role gets the role's scopes: %+v", viaRole)
	}

	var claims auth.Claims
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: created.RawKey}}, http.StatusOK, &claims)
	wantClaims := auth.Claims{TenantID: admin.TenantID, KeyID: created.ID, KeyPrefix: created.KeyPrefix, Label: "Bank import", Scopes: []string{"bank:read", "bank:write"}}
	if diff := cmp.Diff(wantClaims, claims); diff != "" {
		t.Errorf("claims of the new key (-want +got):\n%s", diff)
	}

	var list struct {
		APIKeys []map[string]any `json:"api_keys"`
	}
	listKeys := func() []string {
		h.OK(identityv1.SubjectKeysList, testkit.Rq{As: admin}, http.StatusOK, &list)
		var labels []string
		for _, k := range list.APIKeys {
			if _, leaked := k["raw_key"]; leaked {
				t.Error("the list shows a raw key")
			}
			if _, leaked := k["key_hash"]; leaked {
				t.Error("the list shows a key hash")
			}
			labels = append(labels, k["label"].(string))
		}
		return labels
	}
	if diff := cmp.Diff([]string{"admin", "Bank import", "reader"}, listKeys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}

	var ok okBody
	h.OK(identityv1.SubjectKeysDelete, testkit.Rq{As: admin, Params: map[string]string{"id": created.ID}}, http.StatusOK, &ok)
	h.Fails(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: created.RawKey}}, http.StatusUnauthorized, errs.Unauthenticated)
	h.Fails(identityv1.SubjectKeysDelete, testkit.Rq{As: admin, Params: map[string]string{"id": created.ID}}, http.StatusNotFound, errs.NotFound)
	if diff := cmp.Diff([]string{"admin", "reader"}, listKeys()); diff != "" {
		t.Errorf("keys after revoking (-want +got):\n%s", diff)
	}

	if revoked := h.CountEvents(t, identityv1.EventCredentialRevoked, "key_id", created.ID); revoked != 1 {
		t.Errorf("credential_revoked events for the key = %d, want 1", revoked)
	}
}

func TestKeyCreateRefusals(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)
	var bank keyView
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: admin, Body: map[string]any{"label": "bank", "scopes": []string{"bank:read", "bank:write"}}}, http.StatusCreated, &bank)
	var bankClaims auth.Claims
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: bank.RawKey}}, http.StatusOK, &bankClaims)

	tests := []struct {
		name    string
		as      *auth.Claims
		body    any
		status  int
		code    string
		details []errs.Detail
	}{
		{"no label", admin, map[string]any{"scopes": []string{"bank:read"}}, 400, errs.InvalidInput, []errs.Detail{{Field: "label", Issue: "required"}}},
		{"long label", admin, map[string]any{"label": strings.Repeat("x", 101), "scopes": []string{"bank:read"}}, 400, errs.InvalidInput, []errs.Detail{{Field: "label", Issue: "must have at most 100 characters"}}},
		{"unknown scope", admin, map[string]any{"label": "x", "scopes": []string{"bank:delete"}}, 400, errs.InvalidInput, []errs.Detail{{Field: "scopes", Issue: `unknown scope "bank:delete"`}}},
		{"unknown role", admin, map[string]any{"label": "x", "role": "root"}, 400, errs.InvalidInput, []errs.Detail{{Field: "role", Issue: "must be one of admin, accountant, viewer"}}},
		{"neither scopes nor role", admin, map[string]any{"label": "x"}, 400, errs.InvalidInput, []errs.Detail{{Field: "scopes", Issue: "required unless a role is given"}}},
		{"unknown field", admin, `{"label": "x", "scopes": ["bank:read"], "expires": "never"}`, 400, errs.InvalidInput, []errs.Detail{{Field: "expires", Issue: "unknown field"}}},
		{"not JSON", admin, `{"label": `, 400, errs.InvalidInput, nil},
		{"more than the creator holds", &bankClaims, map[string]any{"label": "x", "scopes": []string{"journal:read"}}, 403, errs.ScopeNotGrantable, nil},
		{"admin from a module key", &bankClaims, map[string]any{"label": "x", "role": "admin"}, 403, errs.ScopeNotGrantable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.Fails(identityv1.SubjectKeysCreate, testkit.Rq{As: tt.as, Body: tt.body}, tt.status, tt.code)
			if tt.details != nil {
				if diff := cmp.Diff(tt.details, got.Err.Details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
			}
		})
	}
	// A key may hand out what it holds.
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: &bankClaims, Body: map[string]any{"label": "reader", "scopes": []string{"bank:read"}}}, http.StatusCreated, nil)

	for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000", ""} {
		h.Fails(identityv1.SubjectKeysDelete, testkit.Rq{As: admin, Params: map[string]string{"id": id}}, http.StatusNotFound, errs.NotFound)
	}
}

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
	h, admin := newAcme(t)
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
	h, admin := newAcme(t)
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
	// The apps as they are on the wire: these fields and no others.
	var list struct {
		Apps []map[string]any `json:"apps"`
	}
	h.OK(identityv1.SubjectOAuthAppsList, testkit.Rq{As: admin}, http.StatusOK, &list)
	want := []map[string]any{
		{"client_id": "lexoffice", "name": "Lexoffice", "scopes": []any{"bank:read", "journal:read"}, "authorized_at": "2025-03-01T12:00:00Z"},
		{"client_id": "agent", "name": "Agent", "scopes": []any{"kreditoren:read"}, "authorized_at": "2025-03-01T14:00:00Z"},
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
