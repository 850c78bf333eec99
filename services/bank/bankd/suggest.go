package bankd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
)

func suggestionQuery(_ context.Context, r *natsx.Request) (any, error) {
	limit, err := natsx.IntQuery(r.Query, "limit", bankv1.DefaultSuggestionsLimit, 1, bankv1.MaxSuggestionsLimit)
	if err != nil {
		return nil, err
	}
	return bank.ParseSuggestionQuery(r.Query.Get, limit)
}

func suggestions(svc *bank.Service) natsx.Route {
	return natsx.Route{Subject: bankv1.SubjectSuggestions, Decode: suggestionQuery, Endpoint: natsx.Typed(func(ctx context.Context, q bankv1.SuggestionQuery) ([]bankv1.Suggestion, error) {
		return svc.Suggestions(ctx, natsx.Claims(ctx).TenantID, q)
	})}
}
