package ledger

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// AccountBalance reads the balance of one account at the end of asOf for
// another service (SubjectAccountBalance): the totals of AccountEntries
// without its page, so it costs one aggregate however long the account's
// history is. An account the chart lacks is NOT_FOUND.
func (s *Service) AccountBalance(ctx context.Context, tenant string, r ledgerv1.AccountBalanceGet) (ledgerv1.AccountBalance, error) {
	if !ValidAccountNumber(r.Number) {
		return ledgerv1.AccountBalance{}, errs.Invalid("invalid account number", errs.Field("number", "1 to 8 digits"))
	}
	res, err := s.AccountEntries(ctx, tenant, r.Number, EntriesQuery{EndDate: r.AsOf, Limit: 1})
	if e := errs.As(err); e != nil && e.Code == errs.InvalidInput {
		// AccountEntries names the query parameter of the REST route.
		return ledgerv1.AccountBalance{}, errs.Invalid("invalid as_of", errs.Field("as_of", "must be a date YYYY-MM-DD"))
	}
	if err != nil {
		return ledgerv1.AccountBalance{}, err
	}
	return ledgerv1.AccountBalance{Number: r.Number, AsOf: res.EndDate, Balance: res.Balance, EntryCount: res.EntryCount}, nil
}
