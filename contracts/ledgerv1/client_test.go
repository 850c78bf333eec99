package ledgerv1_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// fakeCaller records a request and answers with a canned JSON body.
type fakeCaller struct {
	subject string
	query   url.Values
	body    string // the request body as JSON
	tenant  string // the tenant the call is made for (rpc.ForTenant)
	reply   string
}

func (f *fakeCaller) Call(ctx context.Context, subject string, params url.Values, in, out any) error {
	f.subject, f.tenant = subject, rpc.TenantOf(ctx)
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		f.body = string(b)
	}
	return json.Unmarshal([]byte(f.reply), out)
}

func (f *fakeCaller) CallQuery(ctx context.Context, subject string, params, query url.Values, out any) error {
	f.subject, f.query = subject, query
	return json.Unmarshal([]byte(f.reply), out)
}

func TestPostSendsATypedBooking(t *testing.T) {
	f := &fakeCaller{reply: `{"intent_id":"i-1","event_count":2}`}
	posted, err := ledgerv1.Client{C: f}.Post(context.Background(), ledgerv1.PostRequest{
		TenantID: "t-1", IntentID: "i-1", Source: "bank",
		Booking: ledgerv1.Booking{BookingDate: "2025-03-01", Description: "Miete", Lines: []ledgerv1.Line{
			{AccountDebit: "6310", AccountCredit: "1800", Amount: money.MustParse("1190"), TaxCode: "VSt19"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The tenant travels as the calling service's signed principal's,
	// never in the body.
	if f.tenant != "t-1" {
		t.Errorf("tenant %q, want t-1", f.tenant)
	}
	want := `{"intent_id":"i-1","source":"bank","booking":{"booking_date":"2025-03-01","description":"Miete",` +
		`"lines":[{"account_debit":"6310","account_credit":"1800","amount":1190.00,"tax_code":"VSt19"}]}}`
	if diff := cmp.Diff(want, f.body); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if f.subject != ledgerv1.SubjectPost || posted != (ledgerv1.Posted{IntentID: "i-1", EventCount: 2}) {
		t.Errorf("subject %s, posted %+v", f.subject, posted)
	}
}

func TestQueries(t *testing.T) {
	ctx := context.Background()
	f := &fakeCaller{reply: `{"accounts":[{"number":"1800","name":"Bank","type":"asset"}],"total":1,"limit":500,"offset":0}`}
	page, err := ledgerv1.Client{C: f}.Accounts(ctx, ledgerv1.AccountFilter{Limit: 500, Offset: 1000})
	if err != nil || len(page.Accounts) != 1 || page.Accounts[0].Type != ledgerv1.AccountAsset || page.Total != 1 {
		t.Errorf("accounts %+v %v", page, err)
	}
	if diff := cmp.Diff(url.Values{"limit": {"500"}, "offset": {"1000"}}, f.query); f.subject != ledgerv1.SubjectAccountsList || diff != "" {
		t.Errorf("accounts %s (-want +got):\n%s", f.subject, diff)
	}

	f.reply = `{"tax_codes":[{"code":"USt19","kind":"output","rate":19.00}]}`
	codes, err := ledgerv1.Client{C: f}.TaxCodes(ctx, true)
	if err != nil || len(codes) != 1 || codes[0].Rate.String() != "19" || f.query.Get("include_inactive") != "true" {
		t.Errorf("tax codes %+v %v %v", codes, f.query, err)
	}

	f.reply = `{"count":3,"pending":3}`
	n, err := ledgerv1.Client{C: f}.ReviewCount(ctx, "pending")
	if err != nil || n.Pending != 3 || f.subject != ledgerv1.SubjectReviewCount || f.query.Get("status") != "pending" {
		t.Errorf("review count %+v %s %v %v", n, f.subject, f.query, err)
	}
}

func TestAccountAsksForTheTenantsAccount(t *testing.T) {
	f := &fakeCaller{reply: `{"number":"1800","name":"Bank","type":"asset","is_active":true}`}
	a, err := ledgerv1.Client{C: f}.Account(context.Background(), "t-1", "1800")
	if err != nil || a.Number != "1800" || a.Type != ledgerv1.AccountAsset {
		t.Fatalf("account %+v %v", a, err)
	}
	if f.subject != ledgerv1.SubjectAccountGet || f.tenant != "t-1" || f.body != `{"number":"1800"}` {
		t.Errorf("subject %s, tenant %q, body %s", f.subject, f.tenant, f.body)
	}
}
