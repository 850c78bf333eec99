package natsrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/periods"
)

// Peers reaches the ledger and identity over NATS request/reply. Calls
// carry the caller's claims, deadline and request id from ctx.
type Peers struct {
	Client *natsx.Client
}

var (
	_ periods.Ledger  = Peers{}
	_ periods.Tenants = Peers{}
)

// SetPeriodLock implements periods.Ledger.
func (p Peers) SetPeriodLock(ctx context.Context, cmd ledgerv1.SetPeriodLock) error {
	return p.Client.Call(ctx, ledgerv1.SubjectSetPeriodLock, nil, cmd, nil)
}

// PendingReviews implements periods.Ledger.
func (p Peers) PendingReviews(ctx context.Context) (int, error) {
	r, err := p.Client.Do(ctx, ledgerv1.SubjectReviewCount, &natsx.Request{Query: url.Values{"status": {"pending"}}})
	if err != nil {
		return 0, err
	}
	if r.ErrCode != "" {
		return 0, errs.E(r.ErrCode, "the ledger refused the review count")
	}
	var n struct {
		Pending *int `json:"pending"`
		Count   int  `json:"count"`
	}
	if err := json.Unmarshal(r.Body, &n); err != nil {
		return 0, fmt.Errorf("review count: decode: %w", err)
	}
	if n.Pending != nil {
		return *n.Pending, nil
	}
	return n.Count, nil
}

// FiscalYearStartMonth implements periods.Tenants.
func (p Peers) FiscalYearStartMonth(ctx context.Context) (int, error) {
	var t identityv1.Tenant
	if err := p.Client.Call(ctx, identityv1.SubjectTenantGet, nil, nil, &t); err != nil {
		return 0, err
	}
	return periods.NormalizeStart(t.FiscalYearStartMonth), nil
}
