package natsrpc_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

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

	counts := map[string]int{}
	for _, ev := range h.Events(t) {
		if ev.Payload["tenant_id"] == created.Tenant.ID {
			counts[ev.Subject]++
		}
	}
	if counts[identityv1.EventTenantCreated] != 1 || counts[identityv1.EventTenantDeactivated] != 1 {
		t.Errorf("events of the tenant = %v, want one created and one deactivated", counts)
	}
}
