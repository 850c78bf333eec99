package bankd_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank/bankd"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// ignoreTimes leaves the clock's fields out of a comparison.
var ignoreTimes = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.Last().String()
	return s == ".CreatedAt" || s == ".UpdatedAt"
}, cmp.Ignore())

// fakeLedger answers ledger.v1.accounts.get from a chart the test sets,
// for the bank's own principal only, as the ledger does.
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
		return daemon.Parts{Routes: []natsx.Route{{Subject: ledgerv1.SubjectAccountGet, Callers: []string{"bank"},
			Decode: natsx.JSON[ledgerv1.AccountGet], Endpoint: natsx.Typed(get)}}}, nil
	}}
}

func (f *fakeLedger) fail(code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = code
}

// start runs the bank daemon and a fake ledger with a small chart.
func start(t *testing.T) (*testkit.RPC, *fakeLedger) {
	t.Helper()
	h := testkit.NewRPC(t, postgres.Schema)
	ledger := &fakeLedger{chart: map[string]string{"1800": "asset", "1810": "asset", "1820": "asset", "1830": "asset", "6815": "expense", "3300": "liability"}}
	h.Start(ledger.service(), nil)
	svc, err := bankd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, nil)
	return h, ledger
}

func claims(tenant string) *auth.Claims {
	return &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), Scopes: []string{"bank:write"}}
}

func TestAccountsList(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	id := uuid.NewString()
	if _, err := h.Pool.Exec(context.Background(), `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number)
		VALUES ($1, $2, 'Girokonto', 'DE89370400440532013000', '1800')`, id, alice); err != nil {
		t.Fatal(err)
	}

	h.Fails(bankv1.SubjectAccountsList, testkit.Rq{}, 401, errs.Unauthenticated)
	var got bankv1.AccountList
	h.OK(bankv1.SubjectAccountsList, testkit.Rq{As: &auth.Claims{TenantID: alice, KeyID: "k"}}, 200, &got)
	want := []bankv1.Account{{ID: id, Name: "Girokonto", IBAN: "DE89370400440532013000", AccountNumber: "1800", Currency: "EUR"}}
	if diff := cmp.Diff(want, got.BankAccounts, ignoreTimes); diff != "" {
		t.Fatalf("accounts (-want +got):\n%s", diff)
	}
	// Another tenant sees none of them, and an empty list is [] not null.
	r := h.OK(bankv1.SubjectAccountsList, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}}, 200, nil)
	if string(r.Body) != `{"bank_accounts":[]}` {
		t.Fatalf("other tenant: %s", r.Body)
	}
}

// TestAccountCreate: a bank account is checked (IBAN, BIC, currency, the
// linked account in the ledger's chart), stored normalised, unique per
// IBAN and per ledger account of a tenant, and created once per
// Idempotency-Key.
func TestAccountCreate(t *testing.T) {
	t.Parallel()
	h, ledger := start(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	as := claims(alice)
	create := bankv1.SubjectAccountsCreate

	var a bankv1.Account
	h.OK(create, testkit.Rq{As: as, Body: `{"name":"  Girokonto ","iban":"de89 3704 0044 0532 0130 00","bic":"cobadeffxxx","account_number":"1800"}`}, 201, &a)
	bic := "COBADEFFXXX"
	want := bankv1.Account{ID: a.ID, Name: "Girokonto", IBAN: "DE89370400440532013000", BIC: &bic, AccountNumber: "1800", Currency: "EUR"}
	if diff := cmp.Diff(want, a, ignoreTimes); diff != "" || a.CreatedAt.IsZero() || !a.UpdatedAt.Equal(a.CreatedAt) {
		t.Fatalf("created (-want +got):\n%s\n%+v", diff, a)
	}
	// The ledger was asked about the tenant's account, under the bank's
	// own principal for that tenant.
	if diff := cmp.Diff([]string{alice + "/1800"}, ledger.asked); diff != "" {
		t.Fatalf("ledger calls (-want +got):\n%s", diff)
	}
	var got bankv1.Account
	h.OK(bankv1.SubjectAccountsGet, testkit.Rq{As: as, Params: map[string]string{"id": a.ID}}, 200, &got)
	if diff := cmp.Diff(a, got, cmp.Comparer(func(x, y bankv1.Account) bool { return cmp.Equal(x, y, ignoreTimes) && x.CreatedAt.Equal(y.CreatedAt) })); diff != "" {
		t.Fatalf("get (-created +got):\n%s", diff)
	}

	// A foreign-currency account without a BIC.
	var usd bankv1.Account
	h.OK(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "USD-Konto", IBAN: "CH9300762011623852957", AccountNumber: "1820", Currency: "USD"}}, 201, &usd)
	if usd.BIC != nil || usd.Currency != "USD" || usd.IBAN != "CH9300762011623852957" {
		t.Fatalf("usd account: %+v", usd)
	}

	// Idempotency: the same key and body answer the first account again;
	// the key with another body is refused.
	body := bankv1.AccountInput{Name: "Tagesgeld", IBAN: "AT611904300234573201", AccountNumber: "1810"}
	var first, again bankv1.Account
	h.OK(create, testkit.Rq{As: as, Body: body, IdempotencyKey: "k1"}, 201, &first)
	h.OK(create, testkit.Rq{As: as, Body: body, IdempotencyKey: "k1"}, 201, &again)
	if first.ID != again.ID || !first.CreatedAt.Equal(again.CreatedAt) {
		t.Fatalf("replay: %+v, first %+v", again, first)
	}
	body.Name = "Tagesgeld 2"
	h.Fails(create, testkit.Rq{As: as, Body: body, IdempotencyKey: "k1"}, 422, errs.IdempotencyKeyReused)

	// Conflicts, decided by the unique indexes.
	h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Zweites", IBAN: "NL91ABNA0417164300", AccountNumber: "1800"}}, 409, errs.AccountAlreadyLinked)
	r := h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Doppelt", IBAN: "DE89 3704 0044 0532 0130 00", AccountNumber: "1830"}}, 409, errs.DuplicateIBAN)
	wantFields(t, r, "iban")
	// The chart decides what can be linked.
	r = h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Fehlt", IBAN: "NL91ABNA0417164300", AccountNumber: "1899"}}, 400, errs.AccountNotFound)
	wantFields(t, r, "account_number")
	r = h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Aufwand", IBAN: "NL91ABNA0417164300", AccountNumber: "6815"}}, 400, errs.InvalidAccountType)
	wantFields(t, r, "account_number")
	h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Schuld", IBAN: "NL91ABNA0417164300", AccountNumber: "3300"}}, 400, errs.InvalidAccountType)
	// A ledger that cannot answer creates nothing.
	ledger.fail(errs.Unavailable)
	h.Fails(create, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Später", IBAN: "NL91ABNA0417164300", AccountNumber: "1830"}}, 503, errs.Unavailable)
	ledger.fail("")

	// Another tenant may hold the same IBAN and link the same number.
	h.OK(create, testkit.Rq{As: claims(bob), Body: bankv1.AccountInput{Name: "Girokonto", IBAN: "DE89370400440532013000", AccountNumber: "1800"}}, 201, nil)
	h.Fails(create, testkit.Rq{Body: bankv1.AccountInput{Name: "x", IBAN: "DE89370400440532013000", AccountNumber: "1800"}}, 401, errs.Unauthenticated)

	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.accounts WHERE tenant_id = $1", alice); n != 3 {
		t.Fatalf("%d accounts of the tenant, want 3", n)
	}
}

// TestAccountCreateInvalid: each field is checked and named; nothing is
// created and the ledger is not asked.
func TestAccountCreateInvalid(t *testing.T) {
	t.Parallel()
	h, ledger := start(t)
	as := claims(uuid.NewString())
	valid := `"name":"Giro","iban":"DE89370400440532013000","account_number":"1800"`
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"checksum", `{"name":"Giro","iban":"DE89370400440532013001","account_number":"1800"}`, []string{"iban"}},
		{"length of the country", `{"name":"Giro","iban":"DE8937040044053201300","account_number":"1800"}`, []string{"iban"}},
		{"unknown country", `{"name":"Giro","iban":"QQ89370400440532013000","account_number":"1800"}`, []string{"iban"}},
		{"punctuation", `{"name":"Giro","iban":"DE89-3704-0044-0532-0130-00","account_number":"1800"}`, []string{"iban"}},
		{"too short", `{"name":"Giro","iban":"DE89","account_number":"1800"}`, []string{"iban"}},
		{"no iban", `{"name":"Giro","account_number":"1800"}`, []string{"iban"}},
		{"bic of 9", `{` + valid + `,"bic":"COBADEFFX"}`, []string{"bic"}},
		{"bic with a digit for the country", `{` + valid + `,"bic":"COBAD1FFXXX"}`, []string{"bic"}},
		{"empty bic", `{` + valid + `,"bic":""}`, []string{"bic"}},
		{"account number with a letter", `{"name":"Giro","iban":"DE89370400440532013000","account_number":"18A0"}`, []string{"account_number"}},
		{"account number of 9 digits", `{"name":"Giro","iban":"DE89370400440532013000","account_number":"123456789"}`, []string{"account_number"}},
		{"no account number", `{"name":"Giro","iban":"DE89370400440532013000"}`, []string{"account_number"}},
		{"lower-case currency", `{` + valid + `,"currency":"eur"}`, []string{"currency"}},
		{"no such currency", `{` + valid + `,"currency":"XYZ"}`, []string{"currency"}},
		{"empty name", `{"name":" ","iban":"DE89370400440532013000","account_number":"1800"}`, []string{"name"}},
		{"long name", `{"name":"` + strings.Repeat("ä", 256) + `","iban":"DE89370400440532013000","account_number":"1800"}`, []string{"name"}},
		{"control character", `{"name":"Gi\u0007ro","iban":"DE89370400440532013000","account_number":"1800"}`, []string{"name"}},
		{"every field", `{"name":"","iban":"DE00","bic":"X","account_number":"x","currency":"EURO"}`, []string{"name", "iban", "bic", "account_number", "currency"}},
		{"unknown field", `{` + valid + `,"type":"asset"}`, []string{"type"}},
		{"number for a string", `{"name":"Giro","iban":"DE89370400440532013000","account_number":1800}`, []string{"account_number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Fails(bankv1.SubjectAccountsCreate, testkit.Rq{As: as, Body: tc.body}, 400, errs.InvalidInput)
			wantFields(t, r, tc.fields...)
		})
	}
	if n := testkit.Count(t, h.Pool, "SELECT count(*) FROM bank.accounts"); n != 0 || len(ledger.asked) != 0 {
		t.Fatalf("%d accounts, ledger asked %v; want none", n, ledger.asked)
	}
}

// TestAccountGetAndRename: the tenant's own accounts only; only the name
// changes.
func TestAccountGetAndRename(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	as, other := claims(uuid.NewString()), claims(uuid.NewString())
	var a bankv1.Account
	h.OK(bankv1.SubjectAccountsCreate, testkit.Rq{As: as, Body: bankv1.AccountInput{Name: "Giro", IBAN: "DE89370400440532013000", AccountNumber: "1800"}}, 201, &a)
	id := map[string]string{"id": a.ID}
	get, update := bankv1.SubjectAccountsGet, bankv1.SubjectAccountsUpdate

	var renamed bankv1.Account
	h.OK(update, testkit.Rq{As: as, Params: id, Body: `{"name":" Hausbank Giro "}`}, 200, &renamed)
	want := a
	want.Name = "Hausbank Giro"
	if diff := cmp.Diff(want, renamed, ignoreTimes); diff != "" || renamed.UpdatedAt.Before(a.UpdatedAt) || !renamed.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("renamed (-want +got):\n%s", diff)
	}
	var got bankv1.Account
	h.OK(get, testkit.Rq{As: as, Params: id}, 200, &got)
	if got.Name != "Hausbank Giro" {
		t.Fatalf("get after rename: %+v", got)
	}

	for _, tc := range []struct {
		name   string
		body   string
		fields []string
	}{
		{"no name", `{}`, []string{"name"}},
		{"null name", `{"name":null}`, []string{"name"}},
		{"empty name", `{"name":""}`, []string{"name"}},
		{"long name", `{"name":"` + strings.Repeat("x", 256) + `"}`, []string{"name"}},
		{"the iban", `{"name":"x","iban":"NL91ABNA0417164300"}`, []string{"iban"}},
		{"the account", `{"account_number":"1810"}`, []string{"account_number"}},
	} {
		r := h.Fails(update, testkit.Rq{As: as, Params: id, Body: tc.body}, 400, errs.InvalidInput)
		wantFields(t, r, tc.fields...)
	}

	// Unknown, malformed and foreign ids are all 404.
	for _, p := range []map[string]string{{"id": uuid.NewString()}, {"id": "not-a-uuid"}, {"id": ""}} {
		h.Fails(get, testkit.Rq{As: as, Params: p}, 404, errs.NotFound)
		h.Fails(update, testkit.Rq{As: as, Params: p, Body: `{"name":"x"}`}, 404, errs.NotFound)
	}
	h.Fails(get, testkit.Rq{As: other, Params: id}, 404, errs.NotFound)
	h.Fails(update, testkit.Rq{As: other, Params: id, Body: `{"name":"Fremd"}`}, 404, errs.NotFound)
	h.Fails(get, testkit.Rq{Params: id}, 401, errs.Unauthenticated)
	h.Fails(update, testkit.Rq{Params: id, Body: `{"name":"x"}`}, 401, errs.Unauthenticated)
	h.OK(get, testkit.Rq{As: as, Params: id}, 200, &got)
	if got.Name != "Hausbank Giro" {
		t.Fatalf("after refused renames: %+v", got)
	}
}

// wantFields wants the error's details to name exactly these fields.
func wantFields(t *testing.T, r testkit.Reply, fields ...string) {
	t.Helper()
	var got []string
	for _, d := range r.Err.Details {
		got = append(got, d.Field)
	}
	slices.Sort(got)
	fields = slices.Clone(fields)
	slices.Sort(fields)
	if diff := cmp.Diff(fields, got); diff != "" {
		b, _ := json.Marshal(r.Err)
		t.Fatalf("fields (-want +got):\n%s\n%s", diff, b)
	}
}

// TestImportWorkerServesNoRequests: a bank process with BANK_API=off (the
// bank-import deployment) answers no request, so a client is never served
// by a pod busy with a 50 MB import; a bad value refuses to start.
func TestImportWorkerServesNoRequests(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Schema)
	svc, err := bankd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, map[string]string{"BANK_API": "off"})
	ctx := auth.WithClaims(context.Background(), claims(uuid.NewString()))
	if _, err := h.Client.Do(ctx, bankv1.SubjectAccountsList, &natsx.Request{}); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("a worker answered, or failed otherwise: %v", err)
	}
	for _, tc := range []struct {
		v    string
		want bool
		bad  bool
	}{{"", true, false}, {"on", true, false}, {"off", false, false}, {"no", false, true}, {"OFF", false, true}} {
		got, err := bankd.APIConfig(func(string) string { return tc.v })
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("BANK_API=%q: %v, %v", tc.v, got, err)
		}
	}
}
