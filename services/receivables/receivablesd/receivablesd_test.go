package receivablesd_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/receivables/postgres"
	"github.com/ledgerplatform/ledger/services/receivables/receivablesd"
)

// fakeLedger answers ledger.v1.accounts.get from a small chart, for the
// receivables service's own principal only, as the ledger does.
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
		return daemon.Parts{Routes: []natsx.Route{{Subject: ledgerv1.SubjectAccountGet, Callers: []string{receivablesv1.ServiceName},
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
	ledger := &fakeLedger{chart: map[string]string{"1200": "asset", "1210": "asset", "4400": "revenue"}}
	h.Start(ledger.service(), nil)
	svc, err := receivablesd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, nil)
	return h, ledger
}

const minimal = `{"name":"Muster GmbH","address":{"street":"Hauptstr. 1","zip":"10115","city":"Berlin"}`

// TestDebtorCreate: the declaration serves the debtor routes for the
// caller's tenant; the ledger is asked about a given receivable account
// only, under the service's own principal for that tenant, and a ledger
// that cannot answer creates nothing and takes no number.
func TestDebtorCreate(t *testing.T) {
	t.Parallel()
	h, ledger := start(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	as := &auth.Claims{TenantID: alice, KeyID: "k", Scopes: []string{"debitoren:write"}}
	create := receivablesv1.SubjectDebtorsCreate

	var d receivablesv1.Debtor
	h.OK(create, testkit.Rq{As: as, Body: minimal + `}`}, 201, &d)
	if d.CustomerNumber != "K-10001" || d.ReceivableAccount != "1200" {
		t.Fatalf("created: %+v", d)
	}
	if len(ledger.asked) != 0 {
		t.Fatalf("the ledger was asked about the default account: %v", ledger.asked)
	}
	h.OK(create, testkit.Rq{As: as, Body: minimal + `,"receivable_account":"1210"}`}, 201, &d)
	if diff := cmp.Diff([]string{alice + "/1210"}, ledger.asked); diff != "" {
		t.Fatalf("ledger calls (-want +got):\n%s", diff)
	}
	h.Fails(create, testkit.Rq{As: as, Body: minimal + `,"receivable_account":"4400"}`}, 400, errs.InvalidAccountType)
	h.Fails(create, testkit.Rq{As: as, Body: minimal + `,"receivable_account":"1299"}`}, 400, errs.AccountNotFound)
	ledger.fail(errs.Unavailable)
	h.Fails(create, testkit.Rq{As: as, Body: minimal + `,"receivable_account":"1210"}`}, 503, errs.Unavailable)
	ledger.fail("")
	h.OK(create, testkit.Rq{As: as, Body: minimal + `}`}, 201, &d)
	if d.CustomerNumber != "K-10003" {
		t.Fatalf("after the refusals: %s, want K-10003", d.CustomerNumber)
	}
	// Strict decoding behind the gateway too: unknown fields, a tenant in
	// the body.
	h.Fails(create, testkit.Rq{As: as, Body: minimal + `,"tenant_id":"` + bob + `"}`}, 400, errs.InvalidInput)
	h.Fails(create, testkit.Rq{Body: minimal + `}`}, 401, errs.Unauthenticated)

	var list receivablesv1.DebtorList
	h.OK(receivablesv1.SubjectDebtorsList, testkit.Rq{As: as}, 200, &list)
	if len(list.Debtors) != 3 {
		t.Fatalf("%d debtors, want 3", len(list.Debtors))
	}
	r := h.OK(receivablesv1.SubjectDebtorsList, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}}, 200, nil)
	if string(r.Body) != `{"debtors":[]}` {
		t.Fatalf("other tenant: %s", r.Body)
	}
	h.Fails(receivablesv1.SubjectDebtorsGet, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}, Params: map[string]string{"id": d.ID}}, 404, errs.NotFound)
}
