package natsrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// The peers of the reporting service over NATS. Every call uses the
// caller's ctx, so its deadline and claims travel with the request.

// AccountsPage is the page size used to read the chart (the ledger's
// maximum list limit).
const AccountsPage = 500

// maxAccountPages bounds the paging through the chart (500,000 accounts).
const maxAccountPages = 1000

// Ledger implements reporting.Ledger.
type Ledger struct{ Client *natsx.Client }

var _ reporting.Ledger = Ledger{}

// Feed reads a page of a tenant's journal (internal subject; the tenant is
// in the request).
func (l Ledger) Feed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	var out ledgerv1.JournalFeed
	err := l.Client.Call(ctx, ledgerv1.SubjectJournalFeed, nil, r, &out)
	return out, err
}

// Accounts reads the caller's whole chart of accounts (GET /v1/accounts),
// page by page.
func (l Ledger) Accounts(ctx context.Context) ([]reporting.Account, error) {
	var out []reporting.Account
	for page := 0; page < maxAccountPages; page++ {
		var resp struct {
			Accounts []reporting.Account `json:"accounts"`
			Total    int                 `json:"total"`
		}
		q := url.Values{"limit": {strconv.Itoa(AccountsPage)}, "offset": {strconv.Itoa(len(out))}}
		if err := callQuery(ctx, l.Client, ledgerv1.SubjectAccountsList, q, &resp); err != nil {
			return nil, err
		}
		out = append(out, resp.Accounts...)
		if len(resp.Accounts) < AccountsPage || len(out) >= resp.Total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("natsrpc.Ledger.Accounts: more than %d accounts", maxAccountPages*AccountsPage)
}

// TaxCodes reads the caller's tax codes, deactivated ones included (old
// bookings may use them).
func (l Ledger) TaxCodes(ctx context.Context) ([]reporting.TaxCode, error) {
	var resp struct {
		TaxCodes []struct {
			reporting.TaxCode
			Rate json.Number `json:"rate"` // a JSON number on the wire, kept as its exact text
		} `json:"tax_codes"`
	}
	if err := callQuery(ctx, l.Client, ledgerv1.SubjectTaxCodesList, url.Values{"include_inactive": {"true"}}, &resp); err != nil {
		return nil, err
	}
	out := make([]reporting.TaxCode, len(resp.TaxCodes))
	for i, t := range resp.TaxCodes {
		out[i] = t.TaxCode
		out[i].Rate = t.Rate.String()
	}
	return out, nil
}

// Tenants implements reporting.Tenants.
type Tenants struct{ Client *natsx.Client }

var _ reporting.Tenants = Tenants{}

// Tenant reads the caller's tenant (GET /v1/tenant).
func (t Tenants) Tenant(ctx context.Context) (identityv1.Tenant, error) {
	var out identityv1.Tenant
	err := t.Client.Call(ctx, identityv1.SubjectTenantGet, nil, nil, &out)
	return out, err
}

// Periods implements reporting.Periods.
type Periods struct{ Client *natsx.Client }

var _ reporting.Periods = Periods{}

// Statuses reads the lock status of the tenant's months from..to (internal
// subject; the tenant is in the request).
func (p Periods) Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error) {
	var out periodsv1.StatusReply
	if err := p.Client.Call(ctx, periodsv1.SubjectStatus, nil, periodsv1.StatusRequest{TenantID: tenant, From: from, To: to}, &out); err != nil {
		return nil, err
	}
	if out.Statuses == nil {
		out.Statuses = map[string]string{}
	}
	return out.Statuses, nil
}

// callQuery is natsx.Client.Call for a GET route: the parameters travel as
// the query, the body is empty.
func callQuery(ctx context.Context, c *natsx.Client, subject string, q url.Values, out any) error {
	r, err := c.Do(ctx, subject, &natsx.Request{Query: q})
	if err != nil {
		return err
	}
	if r.ErrCode != "" {
		var b errs.Body
		_ = json.Unmarshal(r.Body, &b)
		return &errs.Error{Code: r.ErrCode, Message: b.Error, Details: b.Details, Op: subject}
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return fmt.Errorf("natsrpc %s: decode: %w", subject, err)
	}
	return nil
}
