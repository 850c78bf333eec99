package payablesd_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/payables/payablesd"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// fakeLedger answers ledger.v1.accounts.get from a small chart, for the
// payables service's own principal only, as the ledger does.
type fakeLedger struct {
	mu     sync.Mutex
	chart  map[string]string // number -> type
	asked  []string          // tenant/number of each call
	failed string            // an error code to answer instead
}

func (f *fakeLedger) service() daemon.Service {
	get := func(ctx context.Context, r ledgerv1.AccountGet) (ledgerv1.Account, error) {
		tenant, err := natsx.Tenant(ctx, r.TenantID)
		if err != nil {
			return ledgerv1.Account{}, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.asked = append(f.asked, tenant+"/"+r.Number)
		if f.failed != "" {
			return ledgerv1.Account{}, errs.E(f.failed, "the ledger failed")
		}
		typ, ok := f.chart[r.Number]
		if !ok {
			return ledgerv1.Account{}, errs.NotFoundf("account %s is not in the chart", r.Number)
		}
		return ledgerv1.Account{Number: r.Number, Name: "Konto " + r.Number, Type: typ, IsActive: true}, nil
	}
	return daemon.Service{Name: "ledger", Build: func(context.Context, daemon.Env) (daemon.Parts, error) {
		return daemon.Parts{Routes: []natsx.Route{{Subject: ledgerv1.SubjectAccountGet, Callers: []string{payablesv1.ServiceName},
			Decode: natsx.JSON[ledgerv1.AccountGet], Endpoint: natsx.Typed(get)}}}, nil
	}}
}

func (f *fakeLedger) fail(code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = code
}

func start(t *testing.T) (*testkit.RPC, *fakeLedger) {
	t.Helper()
	h := testkit.NewRPC(t, postgres.Schema)
	ledger := &fakeLedger{chart: map[string]string{"5400": "expense", "6815": "expense", "0440": "asset"}}
	h.Start(ledger.service(), nil)
	svc, err := payablesd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, nil)
	return h, ledger
}

// TestVendorCreate: the declaration serves the vendor routes for the
// caller's tenant; the ledger is asked about a given default account only,
// under the service's own principal for that tenant, and a ledger that
// cannot answer creates nothing.
func TestVendorCreate(t *testing.T) {
	t.Parallel()
	h, ledger := start(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	as := &auth.Claims{TenantID: alice, KeyID: "k", Scopes: []string{"kreditoren:write"}}
	create := payablesv1.SubjectVendorsCreate

	var v payablesv1.Vendor
	h.OK(create, testkit.Rq{As: as, Body: `{"name":"Müller GmbH"}`}, 201, &v)
	if v.Name != "Müller GmbH" || v.DefaultAccount != nil || !v.IsActive {
		t.Fatalf("created: %+v", v)
	}
	if len(ledger.asked) != 0 {
		t.Fatalf("the ledger was asked without a default account: %v", ledger.asked)
	}
	h.OK(create, testkit.Rq{As: as, Body: `{"name":"Maschinen AG","default_account":"0440"}`}, 201, &v)
	if diff := cmp.Diff([]string{alice + "/0440"}, ledger.asked); diff != "" {
		t.Fatalf("ledger calls (-want +got):\n%s", diff)
	}
	h.Fails(create, testkit.Rq{As: as, Body: `{"name":"Neu","default_account":"5999"}`}, 400, errs.AccountNotFound)
	h.Fails(create, testkit.Rq{As: as, Body: `{"name":"MUELLER"}`}, 409, errs.DuplicateName)
	ledger.fail(errs.Unavailable)
	h.Fails(create, testkit.Rq{As: as, Body: `{"name":"Neu","default_account":"5400"}`}, 503, errs.Unavailable)
	ledger.fail("")
	// Strict decoding behind the gateway too: unknown fields, a tenant in
	// the body.
	h.Fails(create, testkit.Rq{As: as, Body: `{"name":"Neu","tenant_id":"` + bob + `"}`}, 400, errs.InvalidInput)
	h.Fails(create, testkit.Rq{Body: `{"name":"Neu"}`}, 401, errs.Unauthenticated)

	// PATCH asks the ledger about a new default account, not about a
	// removed one.
	upd := testkit.Rq{As: as, Params: map[string]string{"id": v.ID}}
	upd.Body = `{"default_account":""}`
	h.OK(payablesv1.SubjectVendorsUpdate, upd, 200, &v)
	upd.Body = `{"default_account":"5999"}`
	h.Fails(payablesv1.SubjectVendorsUpdate, upd, 400, errs.AccountNotFound)
	if diff := cmp.Diff([]string{alice + "/0440", alice + "/5999", alice + "/5400", alice + "/5999"}, ledger.asked); diff != "" {
		t.Fatalf("ledger calls (-want +got):\n%s", diff)
	}

	var list payablesv1.VendorList
	h.OK(payablesv1.SubjectVendorsList, testkit.Rq{As: as}, 200, &list)
	if len(list.Vendors) != 2 {
		t.Fatalf("%d vendors, want 2", len(list.Vendors))
	}
	r := h.OK(payablesv1.SubjectVendorsList, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}}, 200, nil)
	if string(r.Body) != `{"vendors":[]}` {
		t.Fatalf("other tenant: %s", r.Body)
	}
	h.Fails(payablesv1.SubjectVendorsGet, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}, Params: map[string]string{"id": v.ID}}, 404, errs.NotFound)
	for _, q := range []string{"limit=0", "limit=501", "limit=x", "offset=-1", "is_active=yes", "search=" + strings.Repeat("x", 101)} {
		query, err := url.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		h.Fails(payablesv1.SubjectVendorsList, testkit.Rq{As: as, Query: query}, 400, errs.InvalidInput)
	}
}
