package bankd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
)

// reconciliationRoute serves the reconciliation figures of one bank
// account.
func reconciliationRoute(svc *bank.Service) natsx.Route {
	return natsx.Route{Subject: bankv1.SubjectAccountsReconciliation, Decode: reconciliationQuery, Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[bank.ReconciliationQuery]) (bankv1.Reconciliation, error) {
		return svc.Reconciliation(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
	})}
}

// balanceHistoryRoute serves the daily balances of every bank account.
func balanceHistoryRoute(svc *bank.Service) natsx.Route {
	return natsx.Route{Subject: bankv1.SubjectAccountsBalanceHistory, Decode: historyDays, Endpoint: natsx.Typed(func(ctx context.Context, days int) (bankv1.BalanceHistory, error) {
		return svc.BalanceHistory(ctx, natsx.Claims(ctx).TenantID, days)
	})}
}

// periodStatusRoute answers the periods service's closing checklist.
func periodStatusRoute(svc *bank.Service) natsx.Route {
	return natsx.Route{Subject: bankv1.SubjectPeriodStatus, Callers: []string{"periods"}, Decode: natsx.JSON[bankv1.PeriodStatusGet], Endpoint: natsx.Typed(func(ctx context.Context, r bankv1.PeriodStatusGet) (bankv1.PeriodStatus, error) {
		tenant, err := natsx.Tenant(ctx, r.TenantID)
		if err != nil {
			return bankv1.PeriodStatus{}, err
		}
		return svc.PeriodStatus(ctx, tenant, r)
	})}
}

func reconciliationQuery(_ context.Context, r *natsx.Request) (any, error) {
	limit, err := natsx.IntQuery(r.Query, "limit", bankv1.DefaultReconciliationLimit, 1, bankv1.MaxReconciliationLimit)
	if err != nil {
		return nil, err
	}
	q, err := bank.ParseReconciliationQuery(r.Query.Get, limit)
	if err != nil {
		return nil, err
	}
	return natsx.WithID[bank.ReconciliationQuery]{ID: r.Param("id"), Body: q}, nil
}

func historyDays(_ context.Context, r *natsx.Request) (any, error) {
	return natsx.IntQuery(r.Query, "days", bankv1.DefaultHistoryDays, 1, bankv1.MaxHistoryDays)
}
