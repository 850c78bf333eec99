package bank

import (
	"context"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// FiguresStore is the part of Store the reconciliation figures, the
// balance history and the period status read.
type FiguresStore interface {
	// ReconciliationFigures reads the figures of one bank account for the
	// transactions booked from From ("" from the first) to To: counts and
	// sums by state, the last statement closing on or before To (and on or
	// after From), the statements of the range whose balance check failed
	// and the newest open transactions, each list at most Limit long.
	ReconciliationFigures(ctx context.Context, tenantID, accountID string, q ReconciliationQuery) (Figures, error)
	// BalanceBases reads what the balances of the tenant's bank accounts
	// are computed from, by bank account id; accountID "" reads them all.
	BalanceBases(ctx context.Context, tenantID, accountID string) (map[string]BalanceBasis, error)
	// PeriodCounts counts the transactions of every bank account of the
	// tenant booked from from to to by state, and the bank accounts.
	PeriodCounts(ctx context.Context, tenantID, from, to string) (bankv1.PeriodStatus, error)
}

// ReconciliationQuery is the checked query of GET
// /v1/bank-accounts/:id/reconciliation.
type ReconciliationQuery struct {
	From  string // YYYY-MM-DD or ""
	To    string // YYYY-MM-DD
	Limit int
}

// Figures is what the store knows of a bank account's reconciliation.
type Figures struct {
	Transactions     bankv1.TransactionFigures
	LastStatement    *bankv1.StatementBalance
	Mismatches       []bankv1.StatementMismatch
	OpenTransactions []Transaction
}

// BalanceBasis is what a bank account's daily balances are computed from:
// the latest statement carrying a closing balance, if any, and the sum of
// the transactions of each booking day, oldest first.
type BalanceBasis struct {
	Anchor *Anchor
	Days   []DaySum
}

// Anchor is a statement's closing balance at the end of Date.
type Anchor struct {
	Date    string
	Balance decimal.Decimal
}

// DaySum is the sum of the transactions booked on Date.
type DaySum struct {
	Date string
	Sum  decimal.Decimal
}

// BalanceAt is a bank account's balance at the end of day (YYYY-MM-DD),
// by one rule for every figure the bank shows:
//
//   - with a statement carrying a closing balance, the latest one (by
//     closing date, then import) is the anchor: the balance at the end of
//     day is its closing balance plus the transactions booked after its
//     closing date up to day, or minus those booked after day up to its
//     closing date. One anchor for every day, so the history is continuous
//     and ends on what the bank last said.
//   - without one, the account's history begins with its first imported
//     transaction: the balance is the sum of those booked up to day, from
//     an opening balance of 0.
//
// A statement's closing balance is taken to include every transaction
// booked on its closing date.
func (b BalanceBasis) BalanceAt(day string) (decimal.Decimal, string) {
	upTo := b.cumulative(day)
	if b.Anchor == nil {
		return upTo, bankv1.BalanceFromTransactions
	}
	return b.Anchor.Balance.Add(upTo).Sub(b.cumulative(b.Anchor.Date)), bankv1.BalanceFromStatement
}

// cumulative is the sum of the transactions booked on or before day.
func (b BalanceBasis) cumulative(day string) decimal.Decimal {
	n := sort.Search(len(b.Days), func(i int) bool { return b.Days[i].Date > day })
	sum := decimal.Zero
	for _, d := range b.Days[:n] {
		sum = sum.Add(d.Sum)
	}
	return sum
}

// Today is the current day in UTC; tests set it.
var Today = func() time.Time { return time.Now().UTC() }

// ParseReconciliationQuery checks the query of GET
// /v1/bank-accounts/:id/reconciliation: to defaults to today.
func ParseReconciliationQuery(get func(string) string, limit int) (ReconciliationQuery, error) {
	q := ReconciliationQuery{From: get("from"), To: get("to"), Limit: limit}
	var details []errs.Detail
	for _, d := range []struct{ name, v string }{{"from", q.From}, {"to", q.To}} {
		if d.v != "" && !validDate(d.v) {
			details = append(details, errs.Field(d.name, "must be a date YYYY-MM-DD"))
		}
	}
	if q.To == "" {
		q.To = Today().Format(time.DateOnly)
	}
	if len(details) == 0 && q.From != "" && q.To < q.From {
		details = append(details, errs.Field("to", "must not be before from"))
	}
	if len(details) > 0 {
		return ReconciliationQuery{}, errs.Invalid("invalid query", details...)
	}
	return q, nil
}

// Reconciliation answers the reconciliation status and key figures of one
// bank account for the transactions booked in q's range: its balance at
// the end of q.To against the linked SKR04 account's in the ledger.
func (s *Service) Reconciliation(ctx context.Context, tenantID, id string, q ReconciliationQuery) (bankv1.Reconciliation, error) {
	acc, err := s.Account(ctx, tenantID, id)
	if err != nil {
		return bankv1.Reconciliation{}, err
	}
	f, err := s.store.ReconciliationFigures(ctx, tenantID, acc.ID, q)
	if err != nil {
		return bankv1.Reconciliation{}, err
	}
	bases, err := s.store.BalanceBases(ctx, tenantID, acc.ID)
	if err != nil {
		return bankv1.Reconciliation{}, err
	}
	bankBalance, source := bases[acc.ID].BalanceAt(q.To)
	ledger, err := s.chart.AccountBalance(ctx, tenantID, acc.AccountNumber, q.To)
	if err != nil {
		return bankv1.Reconciliation{}, errs.Wrap("bank.Reconciliation: ledger", err)
	}
	r := bankv1.Reconciliation{BankAccountID: acc.ID, AccountNumber: acc.AccountNumber, Currency: acc.Currency, To: q.To,
		Transactions: f.Transactions, LastStatement: f.LastStatement, Mismatches: f.Mismatches,
		BankBalance: money.New(bankBalance), BalanceSource: source, LedgerBalance: ledger.Balance,
		Difference: money.New(bankBalance.Sub(ledger.Balance.Decimal)), OpenTransactions: f.OpenTransactions}
	if q.From != "" {
		r.From = &q.From
	}
	if r.Mismatches == nil {
		r.Mismatches = []bankv1.StatementMismatch{}
	}
	if r.OpenTransactions == nil {
		r.OpenTransactions = []Transaction{}
	}
	r.Reconciled = r.Transactions.Open.Count == 0 && len(r.Mismatches) == 0 && r.Difference.IsZero()
	return r, nil
}

// BalanceHistory answers the closing balance of each of the tenant's bank
// accounts for each of the last days days, today included (BalanceAt).
func (s *Service) BalanceHistory(ctx context.Context, tenantID string, days int) (bankv1.BalanceHistory, error) {
	accounts, err := s.store.Accounts(ctx, tenantID)
	if err != nil {
		return bankv1.BalanceHistory{}, err
	}
	bases, err := s.store.BalanceBases(ctx, tenantID, "")
	if err != nil {
		return bankv1.BalanceHistory{}, err
	}
	today := Today()
	dates := make([]string, days)
	for i := range dates {
		dates[i] = today.AddDate(0, 0, i-days+1).Format(time.DateOnly)
	}
	h := bankv1.BalanceHistory{Days: days, From: dates[0], To: dates[days-1], Accounts: make([]bankv1.AccountBalanceHistory, 0, len(accounts))}
	for _, a := range accounts {
		b := bases[a.ID]
		ah := bankv1.AccountBalanceHistory{BankAccountID: a.ID, Name: a.Name, Currency: a.Currency, BalanceSource: bankv1.BalanceFromTransactions,
			Balances: make([]bankv1.DailyBalance, days)}
		// Days without movement carry the previous balance by the rule
		// itself; walking the sums once keeps a year of days linear.
		upTo := b.cumulative(dates[0])
		next := sort.Search(len(b.Days), func(i int) bool { return b.Days[i].Date > dates[0] })
		offset := decimal.Zero
		if b.Anchor != nil {
			offset = b.Anchor.Balance.Sub(b.cumulative(b.Anchor.Date))
			ah.BalanceSource = bankv1.BalanceFromStatement
		}
		for i, d := range dates {
			for ; next < len(b.Days) && b.Days[next].Date <= d; next++ {
				upTo = upTo.Add(b.Days[next].Sum)
			}
			ah.Balances[i] = bankv1.DailyBalance{Date: d, Balance: money.New(offset.Add(upTo))}
		}
		h.Accounts = append(h.Accounts, ah)
	}
	return h, nil
}

// PeriodStatus counts the tenant's bank transactions booked from in.From
// to in.To by state, for the periods service's closing checklist: done
// when none is open.
func (s *Service) PeriodStatus(ctx context.Context, tenantID string, in bankv1.PeriodStatusGet) (bankv1.PeriodStatus, error) {
	var details []errs.Detail
	for _, d := range []struct{ name, v string }{{"from", in.From}, {"to", in.To}} {
		if !validDate(d.v) {
			details = append(details, errs.Field(d.name, "must be a date YYYY-MM-DD"))
		}
	}
	if len(details) == 0 && in.To < in.From {
		details = append(details, errs.Field("to", "must not be before from"))
	}
	if len(details) > 0 {
		return bankv1.PeriodStatus{}, errs.Invalid("invalid period", details...)
	}
	st, err := s.store.PeriodCounts(ctx, tenantID, in.From, in.To)
	if err != nil {
		return bankv1.PeriodStatus{}, err
	}
	st.Done = st.Open == 0
	return st, nil
}
