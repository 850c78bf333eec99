package natsrpc_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func TestTenantSubjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")

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

	var updates int
	for _, ev := range h.Events(t) {
		if ev.Subject == identityv1.EventTenantUpdated && ev.Payload["tenant_id"] == admin.TenantID {
			updates++
		}
	}
	if updates != 2 {
		t.Errorf("tenant_updated events = %d, want 2", updates)
	}
}
