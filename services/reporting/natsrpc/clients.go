package natsrpc

import (
	"context"
	"fmt"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// The peers of the reporting service over NATS, through the typed clients
// of their contracts. Every call uses the caller's ctx, so its deadline and
// claims travel with the request.

// AccountsPage is the page size used to read the chart (the ledger's
// maximum list limit).
const AccountsPage = 500

// maxAccountPages bounds the paging through the chart (500,000 accounts).
const maxAccountPages = 1000

// Ledger implements reporting.Ledger.
type Ledger struct{ Client *natsx.Client }

var _ reporting.Ledger = Ledger{}

func (l Ledger) ledger() ledgerv1.Client { return ledgerv1.Client{C: l.Client} }

// Feed reads a page of a tenant's journal (internal subject; the tenant is
// in the request).
func (l Ledger) Feed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	return l.ledger().JournalFeed(ctx, r)
}

// Accounts reads the caller's whole chart of accounts (GET /v1/accounts),
// page by page.
func (l Ledger) Accounts(ctx context.Context) ([]reporting.Account, error) {
	var out []reporting.Account
	for page := 0; page < maxAccountPages; page++ {
		resp, err := l.ledger().Accounts(ctx, ledgerv1.AccountFilter{Limit: AccountsPage, Offset: len(out)})
		if err != nil {
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
	codes, err := l.ledger().TaxCodes(ctx, true)
	if err != nil {
		return nil, err
	}
	out := make([]reporting.TaxCode, len(codes))
	for i, t := range codes {
		out[i] = reporting.TaxCode{Code: t.Code, Rate: exactText(t.Rate), Kind: t.Kind, DATEVKey: t.DATEVKey, Label: t.Label}
	}
	return out, nil
}

// exactText writes a decimal with the places it was sent with: 19.00 stays
// "19.00" and 7 stays "7".
func exactText(a money.Amount) string {
	if e := a.Exponent(); e < 0 {
		return a.StringFixed(-e)
	}
	return a.String()
}

// Tenants implements reporting.Tenants.
type Tenants struct{ Client *natsx.Client }

var _ reporting.Tenants = Tenants{}

// Tenant reads the caller's tenant (GET /v1/tenant).
func (t Tenants) Tenant(ctx context.Context) (identityv1.Tenant, error) {
	return identityv1.Client{C: t.Client}.Tenant(ctx)
}

// Periods implements reporting.Periods.
type Periods struct{ Client *natsx.Client }

var _ reporting.Periods = Periods{}

// Statuses reads the lock status of the tenant's months from..to (internal
// subject; the tenant is in the request).
func (p Periods) Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error) {
	out, err := periodsv1.Client{C: p.Client}.Status(ctx, periodsv1.StatusRequest{TenantID: tenant, From: from, To: to})
	if err != nil {
		return nil, err
	}
	if out.Statuses == nil {
		out.Statuses = map[string]string{}
	}
	return out.Statuses, nil
}

// ChainVerifier asks the ledger to verify the caller's hash chain (GET
// /v1/journal/verify), for the GoBD export.
type ChainVerifier struct{ Client *natsx.Client }

var _ reporting.ChainVerifier = ChainVerifier{}

// Verify implements reporting.ChainVerifier.
func (v ChainVerifier) Verify(ctx context.Context) (reporting.ChainStatus, error) {
	return ledgerv1.Client{C: v.Client}.VerifyChain(ctx)
}

// Checkpoints implements reporting.ChainVerifier.
func (v ChainVerifier) Checkpoints(ctx context.Context) ([]ledgerv1.Checkpoint, error) {
	return ledgerv1.Client{C: v.Client}.Checkpoints(ctx)
}
