package natsrpc_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestTenantSubjects(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)

	var got identityv1.Tenant
	h.OK(identityv1.SubjectTenantGet, testkit.Rq{As: admin}, http.StatusOK, &got)
	want := identityv1.Tenant{ID: admin.TenantID, CompanyName: "Acme GmbH", FiscalYearStartMonth: 1, IsActive: true}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(identityv1.Tenant{}, "CreatedAt")); diff != "" {
		t.Errorf("tenant (-want +got):\n%s", diff)
	}

	patch := map[string]any{
		"company_name":            "Acme Software GmbH",
		"legal_form":              "GmbH",
		"tax_id":                  "143/123/45678",
		"vat_id":                  "DE 123456789",
		"address":                 map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin", "country": "de"},
		"fiscal_year_start_month": 7,
		"datev_consultant_number": "1234567",
		"datev_client_number":     "10001",
	}
	h.OK(identityv1.SubjectTenantUpdate, testkit.Rq{As: admin, Body: patch}, http.StatusOK, &got)
	want = identityv1.Tenant{
		ID: admin.TenantID, CompanyName: "Acme Software GmbH", LegalForm: "GmbH", TaxID: "143/123/45678", VATID: "DE123456789",
		Address:              identityv1.Address{Street: "Hauptstr. 1", Zip: "10115", City: "Berlin", Country: "DE"},
		FiscalYearStartMonth: 7, DATEVConsultantNumber: "1234567", DATEVClientNumber: "10001", IsActive: true,
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(identityv1.Tenant{}, "CreatedAt")); diff != "" {
		t.Errorf("patched tenant (-want +got):\n%s", diff)
	}
	// A partial patch leaves the rest alone.
	h.OK(identityv1.SubjectTenantUpdate, testkit.Rq{As: admin, Body: map[string]any{"datev_client_number": ""}}, http.StatusOK, &got)
	want.DATEVClientNumber = ""
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(identityv1.Tenant{}, "CreatedAt")); diff != "" {
		t.Errorf("tenant after a partial patch (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		body any
		code string
	}{
		{"empty", `{}`, errs.NoChanges},
		{"unknown field", `{"is_operator": true}`, errs.InvalidInput},
		{"unknown address field", `{"address": {"planet": "Earth"}}`, errs.InvalidInput},
		{"German VAT ID", map[string]any{"vat_id": "DE12345"}, errs.InvalidInput},
		{"month", map[string]any{"fiscal_year_start_month": 0}, errs.InvalidInput},
		{"month type", `{"fiscal_year_start_month": "July"}`, errs.InvalidInput},
		{"DATEV consultant", map[string]any{"datev_consultant_number": "12"}, errs.InvalidInput},
		{"company name", map[string]any{"company_name": ""}, errs.InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Fails(identityv1.SubjectTenantUpdate, testkit.Rq{As: admin, Body: tt.body}, http.StatusBadRequest, tt.code)
		})
	}

	if updates := h.CountEvents(t, identityv1.EventTenantUpdated, "tenant_id", admin.TenantID); updates != 2 {
		t.Errorf("tenant_updated events = %d, want 2", updates)
	}
}

func TestAdminTenants(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	op := h.Operator(t)
	acme, _ := h.Tenant(t, "Acme GmbH")

	// Every tenant's own admin key carries the admin scope; only the
	// operator's may administer tenants.
	for _, s := range []string{identityv1.SubjectAdminTenantsList, identityv1.SubjectAdminTenantsCreate, identityv1.SubjectAdminTenantsDelete} {
		h.Fails(s, testkit.Rq{As: acme, Body: map[string]any{"company_name": "X"}, Params: map[string]string{"id": acme.TenantID}}, http.StatusForbidden, errs.Forbidden)
	}
	operatorViewer := *op
	operatorViewer.Scopes = auth.RoleScopes("viewer")
	h.Fails(identityv1.SubjectAdminTenantsList, testkit.Rq{As: &operatorViewer}, http.StatusForbidden, errs.Forbidden)

	var created struct {
		Tenant identityv1.Tenant `json:"tenant"`
		RawKey string            `json:"raw_key"`
	}
	h.OK(identityv1.SubjectAdminTenantsCreate, testkit.Rq{As: op, Body: map[string]any{"company_name": "Beta AG", "legal_form": "AG", "vat_id": "DE987654321"}}, http.StatusCreated, &created)
	if created.Tenant.CompanyName != "Beta AG" || created.Tenant.VATID != "DE987654321" || !created.Tenant.IsActive || created.Tenant.IsOperator {
		t.Errorf("created tenant = %+v", created.Tenant)
	}
	beta := h.Claims(t, created.RawKey)
	if beta.TenantID != created.Tenant.ID || !beta.Has(auth.Admin) || beta.Operator {
		t.Errorf("new tenant's key claims = %+v", beta)
	}
	h.Fails(identityv1.SubjectAdminTenantsCreate, testkit.Rq{As: op, Body: map[string]any{"legal_form": "AG"}}, http.StatusBadRequest, errs.InvalidInput)
	h.Fails(identityv1.SubjectAdminTenantsCreate, testkit.Rq{As: op, Body: `{"company_name": "X", "is_operator": true}`}, http.StatusBadRequest, errs.InvalidInput)

	var list struct {
		Tenants []identityv1.Tenant `json:"tenants"`
		Limit   int                 `json:"limit"`
		Offset  int                 `json:"offset"`
	}
	h.OK(identityv1.SubjectAdminTenantsList, testkit.Rq{As: op}, http.StatusOK, &list)
	if len(list.Tenants) != 3 || list.Tenants[0].CompanyName != "Demo GmbH" || list.Limit != 100 || list.Offset != 0 {
		t.Errorf("tenants = %+v", list)
	}
	h.OK(identityv1.SubjectAdminTenantsList, testkit.Rq{As: op, Query: url.Values{"limit": {"1"}, "offset": {"2"}}}, http.StatusOK, &list)
	if len(list.Tenants) != 1 || list.Tenants[0].CompanyName != "Beta AG" || list.Limit != 1 || list.Offset != 2 {
		t.Errorf("second page = %+v", list)
	}
	h.Fails(identityv1.SubjectAdminTenantsList, testkit.Rq{As: op, Query: url.Values{"limit": {"501"}}}, http.StatusBadRequest, errs.InvalidInput)

	// Deactivation voids the tenant's keys and sessions.
	anna := h.User(t, beta, "anna@beta.example", "admin")
	var ok okBody
	h.OK(identityv1.SubjectAdminTenantsDelete, testkit.Rq{As: op, Params: map[string]string{"id": created.Tenant.ID}}, http.StatusOK, &ok)
	for _, token := range []string{created.RawKey, anna.Token} {
		h.Fails(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: token}}, http.StatusUnauthorized, errs.Unauthenticated)
	}
	h.Fails(identityv1.SubjectLogin, testkit.Rq{Body: map[string]any{"email": "anna@beta.example", "password": identitytest.Password}}, http.StatusUnauthorized, errs.InvalidCredentials)
	// Again is fine; the operator itself and unknown ids are not.
	h.OK(identityv1.SubjectAdminTenantsDelete, testkit.Rq{As: op, Params: map[string]string{"id": created.Tenant.ID}}, http.StatusOK, &ok)
	h.Fails(identityv1.SubjectAdminTenantsDelete, testkit.Rq{As: op, Params: map[string]string{"id": op.TenantID}}, http.StatusConflict, errs.Conflict)
	h.Fails(identityv1.SubjectAdminTenantsDelete, testkit.Rq{As: op, Params: map[string]string{"id": "00000000-0000-0000-0000-000000000000"}}, http.StatusNotFound, errs.NotFound)
	h.Fails(identityv1.SubjectAdminTenantsDelete, testkit.Rq{As: op, Params: map[string]string{"id": "x"}}, http.StatusNotFound, errs.NotFound)

	for _, subject := range []string{identityv1.EventTenantCreated, identityv1.EventTenantDeactivated} {
		if n := h.CountEvents(t, subject, "tenant_id", created.Tenant.ID); n != 1 {
			t.Errorf("%s events of the tenant = %d, want 1", subject, n)
		}
	}
}

// Tenant B sees nothing of tenant A, and A's ids answer 404 to B.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h, a, b := newAB(t)
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
