package natsrpc_test

import (
	"net/http"
	"strings"
	"testing"

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
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")

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

	revoked := 0
	for _, ev := range h.Events(t) {
		if ev.Subject == identityv1.EventCredentialRevoked && ev.Payload["key_id"] == created.ID {
			revoked++
		}
	}
	if revoked != 1 {
		t.Errorf("credential_revoked events for the key = %d, want 1", revoked)
	}
}

func TestKeyCreateRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
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
