package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Peers reaches the ledger and identity over NATS request/reply through the
// typed clients of their contracts. Calls carry the caller's claims,
// deadline and request id from ctx.
type Peers struct {
	Ledger   ledgerv1.Client
	Identity identityv1.Client
	Bank     bankv1.Client
}

var (
	_ periods.Ledger  = Peers{}
	_ periods.Tenants = Peers{}
	_ periods.Bank    = Peers{}
)

// PeriodStatus implements periods.Bank.
func (p Peers) PeriodStatus(ctx context.Context, tenant, from, to string) (bankv1.PeriodStatus, error) {
	return p.Bank.PeriodStatus(ctx, tenant, from, to)
}

// SetPeriodLock implements periods.Ledger.
func (p Peers) SetPeriodLock(ctx context.Context, cmd ledgerv1.SetPeriodLock) error {
	_, err := p.Ledger.SetPeriodLock(ctx, cmd)
	return err
}

// PendingReviews implements periods.Ledger.
func (p Peers) PendingReviews(ctx context.Context) (int, error) {
	n, err := p.Ledger.ReviewCount(ctx, "pending")
	return n.Pending, err
}

// FiscalYearStartMonth implements periods.Tenants.
func (p Peers) FiscalYearStartMonth(ctx context.Context) (int, error) {
	t, err := p.Identity.Tenant(ctx)
	if err != nil {
		return 0, err
	}
	return periods.NormalizeStart(t.FiscalYearStartMonth), nil
}
