package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// registerChart serves the chart of accounts and the tax codes.
func registerChart(s *natsx.Server, svc *ledger.Service) error {
	h := map[string]func(context.Context, *auth.Claims, *natsx.Request) (any, error){
		ledgerv1.SubjectAccountsList: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			q := r.Query
			f := ledger.AccountFilter{Q: q.Get("q"), Category: q.Get("category"), Type: q.Get("type")}
			var err error
			if f.Limit, err = intParam(q, "limit", ledger.DefaultAccountsLimit, 1, ledger.MaxAccountsLimit); err != nil {
				return nil, err
			}
			if f.Offset, err = intParam(q, "offset", 0, 0, 1<<31-1); err != nil {
				return nil, err
			}
			return svc.Accounts(ctx, c.TenantID, f)
		},
		ledgerv1.SubjectAccountsCreate: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var in ledger.AccountInput
			if err := natsx.Decode(r.Body, &in); err != nil {
				return nil, err
			}
			a, replay, err := svc.CreateAccount(ctx, request(ctx, c, r, "rest"), in)
			if err != nil {
				return nil, err
			}
			return replayOr(replay, a, 201), nil
		},
		ledgerv1.SubjectAccountsSearch: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			q := r.Query
			f := ledger.AccountSearch{Q: q.Get("q"), Type: q.Get("type")}
			var err error
			if f.Limit, err = intParam(q, "limit", ledger.DefaultSearchLimit, 1, ledger.MaxSearchLimit); err != nil {
				return nil, err
			}
			hits, err := svc.SearchAccounts(ctx, c.TenantID, f)
			if err != nil {
				return nil, err
			}
			return map[string]any{"accounts": hits}, nil
		},
		ledgerv1.SubjectAccountsEntries: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			q := r.Query
			eq := ledger.EntriesQuery{StartDate: q.Get("startDate"), EndDate: q.Get("endDate")}
			var err error
			if eq.Limit, err = intParam(q, "limit", ledger.DefaultEntriesLimit, 1, ledger.MaxEntriesLimit); err != nil {
				return nil, err
			}
			if eq.Offset, err = intParam(q, "offset", 0, 0, 1<<31-1); err != nil {
				return nil, err
			}
			return svc.AccountEntries(ctx, c.TenantID, r.Param("number"), eq)
		},
		ledgerv1.SubjectTaxCodesList: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			var all bool
			switch v := r.Query.Get("include_inactive"); v {
			case "", "false":
			case "true":
				all = true
			default:
				return nil, errs.Invalid("invalid query parameter include_inactive", errs.Field("include_inactive", "must be true or false"))
			}
			codes, err := svc.TaxCodes(ctx, c.TenantID, all)
			if err != nil {
				return nil, err
			}
			return ledgerv1.TaxCodeList{TaxCodes: codes}, nil
		},
		ledgerv1.SubjectTaxCodesUpdate: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			p, err := ledger.ParseTaxCodePatch(r.Body)
			if err != nil {
				return nil, err
			}
			changed, replay, err := svc.UpdateTaxCode(ctx, request(ctx, c, r, "rest"), r.Param("code"), p)
			if err != nil {
				return nil, err
			}
			return replayOr(replay, changed, 200), nil
		},
	}
	for subject, f := range h {
		if err := s.Handle(subject, handler(f)); err != nil {
			return err
		}
	}
	return nil
}
