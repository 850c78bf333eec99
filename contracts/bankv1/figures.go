package bankv1

import (
	"context"
	"net/url"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// Subjects of the reconciliation figures and the balance history.
const (
	SubjectAccountsReconciliation = "bank.v1.accounts.reconciliation"  // param id; query from, to, limit
	SubjectAccountsBalanceHistory = "bank.v1.accounts.balance_history" // query days
	SubjectPeriodStatus           = "bank.v1.period-status"            // internal, for periods
)

// Limits of the reconciliation figures and the balance history
// (specification, Limits: days 1–365, default 90; the specification names
// no bounds for limit, these are those of the other lists).
const (
	DefaultHistoryDays         = 90
	MaxHistoryDays             = 365
	DefaultReconciliationLimit = 50
	MaxReconciliationLimit     = 500
)

// Figure is a count of transactions and the sum of their signed amounts.
type Figure struct {
	Count int          `json:"count"`
	Sum   money.Amount `json:"sum"`
}

// TransactionFigures counts the transactions of a range by state.
type TransactionFigures struct {
	Total      Figure `json:"total"`
	Open       Figure `json:"open"`
	Reconciled Figure `json:"reconciled"`
	Evidenced  Figure `json:"evidenced"`
}

// StatementBalance is the last statement of a range with its closing
// balance.
type StatementBalance struct {
	StatementID    string       `json:"statement_id"`
	Kind           string       `json:"kind"`
	StatementRef   *string      `json:"statement_ref"`
	ClosingDate    string       `json:"closing_date"`
	ClosingBalance money.Amount `json:"closing_balance"`
}

// StatementMismatch is a statement whose opening balance plus its entries
// is not its closing balance: both figures, so a missing entry shows.
type StatementMismatch struct {
	StatementID     string       `json:"statement_id"`
	Kind            string       `json:"kind"`
	StatementRef    *string      `json:"statement_ref"`
	ClosingDate     *string      `json:"closing_date"`
	ClosingBalance  money.Amount `json:"closing_balance"`
	ExpectedClosing money.Amount `json:"expected_closing"`
	Difference      money.Amount `json:"difference"` // closing - expected
}

// Reconciliation answers SubjectAccountsReconciliation (GET
// /v1/bank-accounts/:id/reconciliation).
type Reconciliation struct {
	BankAccountID string             `json:"bank_account_id"`
	AccountNumber string             `json:"account_number"`
	Currency      string             `json:"currency"`
	From          *string            `json:"from"`
	To            string             `json:"to"`
	Transactions  TransactionFigures `json:"transactions"`
	LastStatement *StatementBalance  `json:"last_statement"`
	// Mismatches are the statements of the range whose balance check
	// failed, at most limit, latest first.
	Mismatches []StatementMismatch `json:"balance_mismatches"`
	// BankBalance is the bank account's balance at the end of To (see
	// BalanceRule), LedgerBalance that of the linked SKR04 account over
	// every entry booked on or before To; Difference is bank minus ledger.
	BankBalance   money.Amount `json:"bank_balance"`
	BalanceSource string       `json:"balance_source"` // BalanceFromStatement or BalanceFromTransactions
	LedgerBalance money.Amount `json:"ledger_balance"`
	Difference    money.Amount `json:"difference"`
	// Reconciled: no open transaction in the range, no failed balance check
	// and no difference.
	Reconciled bool `json:"reconciled"`
	// OpenTransactions are the oldest open transactions of the range, at
	// most limit.
	OpenTransactions []Transaction `json:"open_transactions"`
}

// Where a balance comes from.
const (
	// BalanceFromStatement: anchored on a statement's closing balance and
	// moved by the transactions booked between its closing date and the day.
	BalanceFromStatement = "statement"
	// BalanceFromTransactions: no statement carries a balance; the sum of
	// every transaction booked up to the day, from an opening balance of 0.
	BalanceFromTransactions = "transactions"
)

// BalanceHistory answers SubjectAccountsBalanceHistory (GET
// /v1/bank-accounts/balance-history).
type BalanceHistory struct {
	Days     int                     `json:"days"`
	From     string                  `json:"from"`
	To       string                  `json:"to"`
	Accounts []AccountBalanceHistory `json:"bank_accounts"`
}

// AccountBalanceHistory is the daily closing balance of one bank account,
// oldest day first, one point a day.
type AccountBalanceHistory struct {
	BankAccountID string         `json:"bank_account_id"`
	Name          string         `json:"name"`
	Currency      string         `json:"currency"`
	BalanceSource string         `json:"balance_source"`
	Balances      []DailyBalance `json:"balances"`
}

// DailyBalance is a bank account's balance at the end of Date.
type DailyBalance struct {
	Date    string       `json:"date"`
	Balance money.Amount `json:"balance"`
}

// PeriodStatusGet is the request of SubjectPeriodStatus: the bank
// transactions booked from From to To (YYYY-MM-DD, inclusive). TenantID is
// the calling service's signed principal's, never in the body.
type PeriodStatusGet struct {
	TenantID string `json:"tenant_id,omitempty"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// PeriodStatus answers SubjectPeriodStatus: the counts over every bank
// account of the tenant; Done when none is open.
type PeriodStatus struct {
	BankAccounts int  `json:"bank_accounts"`
	Total        int  `json:"total"`
	Open         int  `json:"open"`
	Reconciled   int  `json:"reconciled"`
	Evidenced    int  `json:"evidenced"`
	Done         bool `json:"done"`
}

// Client is the typed client of the bank for other services. Internal
// requests name their tenant as the calling service's own signed
// principal's (rpc.ForTenant), never in the body.
type Client struct{ C rpc.Caller }

// PeriodStatus counts the tenant's bank transactions booked from from to
// to (YYYY-MM-DD) by state (SubjectPeriodStatus).
func (c Client) PeriodStatus(ctx context.Context, tenant, from, to string) (PeriodStatus, error) {
	return rpc.Send[PeriodStatus](rpc.ForTenant(ctx, tenant), c.C, SubjectPeriodStatus, PeriodStatusGet{From: from, To: to})
}

// Account reads one of the tenant's bank accounts (SubjectAccountsGet);
// an unknown id is an *errs.Error with code NOT_FOUND.
func (c Client) Account(ctx context.Context, tenant, id string) (Account, error) {
	var out Account
	err := c.C.Call(rpc.ForTenant(ctx, tenant), SubjectAccountsGet, url.Values{"id": {id}}, nil, &out)
	return out, err
}
