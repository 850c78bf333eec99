// Package bankv1 is the contract of the bank service: bank accounts,
// statement import, matching and reconciliation.
package bankv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectAccountsList   = "bank.v1.accounts.list"
	SubjectAccountsCreate = "bank.v1.accounts.create"
	SubjectAccountsGet    = "bank.v1.accounts.get"    // param id
	SubjectAccountsUpdate = "bank.v1.accounts.update" // param id

	SubjectTransactionsImport = "bank.v1.transactions.import"
	SubjectTransactionsList   = "bank.v1.transactions.list"
	SubjectTransactionsGet    = "bank.v1.transactions.get" // param id
	SubjectSuggestions        = "bank.v1.transactions.suggestions"
)

// Events of the bank service, published through its outbox.
const (
	StreamEvents = "BANK"
	EventsFilter = "evt.bank.v1.>"
)

// Account is a bank account linked to an SKR04 asset account.
type Account struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	IBAN          string    `json:"iban"`
	BIC           *string   `json:"bic"`
	AccountNumber string    `json:"account_number"`
	Currency      string    `json:"currency"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// AccountList is the reply of SubjectAccountsList.
type AccountList struct {
	BankAccounts []Account `json:"bank_accounts"`
}

// AccountInput is the body of SubjectAccountsCreate (POST
// /v1/bank-accounts). IBAN and BIC may come with spaces and in lower case;
// the account stores them normalised. Currency defaults to EUR.
type AccountInput struct {
	Name          string  `json:"name"`
	IBAN          string  `json:"iban"`
	BIC           *string `json:"bic,omitempty"`
	AccountNumber string  `json:"account_number"`
	Currency      string  `json:"currency,omitempty"`
}

// AccountUpdate is the body of SubjectAccountsUpdate (PUT
// /v1/bank-accounts/:id): the name is all that changes; the IBAN and the
// linked ledger account are what the statements and bookings refer to.
type AccountUpdate struct {
	Name *string `json:"name"`
}

// States of a bank transaction: open until it is reconciled against the
// ledger or explained by evidence.
const (
	StatusOpen       = "open"
	StatusReconciled = "reconciled"
	StatusEvidenced  = "evidenced"
)

// MaxImportItems is the most transactions one JSON import takes
// (specification, Limits).
const MaxImportItems = 1000

// ImportInput is the body of SubjectTransactionsImport (POST
// /v1/bank-transactions).
type ImportInput struct {
	BankAccountID string       `json:"bank_account_id"`
	Transactions  []ImportItem `json:"transactions"`
}

// ImportItem is one transaction of a JSON import (specification: Bank
// transaction, JSON import item). Amount is signed: positive money in,
// negative money out.
type ImportItem struct {
	TxDate           string        `json:"tx_date"`
	Amount           *money.Amount `json:"amount"`
	Currency         string        `json:"currency,omitempty"`
	CounterpartyName string        `json:"counterparty_name,omitempty"`
	CounterpartyIBAN string        `json:"counterparty_iban,omitempty"`
	Reference        string        `json:"reference,omitempty"`
	BankReference    string        `json:"bank_reference,omitempty"`
	TxType           string        `json:"tx_type,omitempty"`
	ValueDate        string        `json:"value_date,omitempty"`
}

// ImportResult answers SubjectTransactionsImport: every row is imported,
// skipped as a duplicate of one the bank account already has, or refused
// with its errors.
type ImportResult struct {
	BatchID           string     `json:"batch_id"`
	TotalRows         int        `json:"total_rows"`
	Imported          int        `json:"imported"`
	SkippedDuplicates int        `json:"skipped_duplicates"`
	Errors            []RowError `json:"errors"`
}

// RowError names one field of one refused row; Index is the row's
// position in transactions, from 0.
type RowError struct {
	Index int    `json:"index"`
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Transaction is a bank transaction as the API shows it. Optional texts
// are null when the bank or the import gave none.
type Transaction struct {
	ID               string       `json:"id"`
	BankAccountID    string       `json:"bank_account_id"`
	TxDate           string       `json:"tx_date"`
	ValueDate        *string      `json:"value_date"`
	Amount           money.Amount `json:"amount"`
	Currency         string       `json:"currency"`
	CounterpartyName *string      `json:"counterparty_name"`
	CounterpartyIBAN *string      `json:"counterparty_iban"`
	CounterpartyBIC  *string      `json:"counterparty_bic"`
	Reference        *string      `json:"reference"`
	BankReference    *string      `json:"bank_reference"`
	EndToEndID       *string      `json:"end_to_end_id"`
	MandateID        *string      `json:"mandate_id"`
	CreditorID       *string      `json:"creditor_id"`
	BatchRef         *string      `json:"batch_ref"`
	TxType           *string      `json:"tx_type"`
	GVC              *string      `json:"gvc"`
	Charges          money.Amount `json:"charges"`
	Reversal         bool         `json:"reversal"`
	Status           string       `json:"status"`
	BatchID          string       `json:"batch_id"`
	StatementID      *string      `json:"statement_id"`
	CreatedAt        time.Time    `json:"created_at"`
}

// TransactionFilter selects a page of transactions (SubjectTransactionsList,
// GET /v1/bank-transactions); empty fields select everything.
type TransactionFilter struct {
	BankAccountID string
	From, To      string // booking dates YYYY-MM-DD, inclusive
	Status        string
	Search        string // part of counterparty name or IBAN, reference or bank reference
	Limit, Offset int
}

// TransactionList answers SubjectTransactionsList, newest booking first.
type TransactionList struct {
	Transactions []Transaction `json:"transactions"`
}

// Candidate kinds of a matching suggestion and of reconciliation: a
// booking already posted to the bank's ledger account, or an open item.
const (
	CandidateBankBooking    = "bank_booking"
	CandidateOpenReceivable = "open_receivable"
	CandidateOpenLiability  = "open_liability"
)

// Limits of SubjectSuggestions: limit caps the answer, each open
// transaction contributes at most MaxSuggestionsPerTransaction.
const (
	DefaultSuggestionsLimit      = 100
	MaxSuggestionsLimit          = 1000
	MaxSuggestionsPerTransaction = 5
)

// SuggestionQuery selects the open transactions of SubjectSuggestions
// (GET /v1/bank-transactions/suggestions); Period (YYYY-MM) narrows them
// to a month of booking dates.
type SuggestionQuery struct {
	BankAccountID string
	Period        string
	Limit         int
}

// Suggestion is one matching suggestion (specification: Matching
// suggestion): an open bank transaction against a journal intent, never a
// single line. LedgerAmount is signed as the bank transaction would be:
// positive money in (an open receivable, a booking of money in), negative
// money out. CandidateKind and OpenItemAccount are what a reconcile call
// takes; OpenItemAccount is null for a bank_booking.
type Suggestion struct {
	BankTransactionID string       `json:"bank_transaction_id"`
	LedgerIntentID    string       `json:"ledger_intent_id"`
	CandidateKind     string       `json:"candidate_kind"`
	OpenItemAccount   *string      `json:"open_item_account"`
	MatchScore        float64      `json:"match_score"`
	MatchReasons      []string     `json:"match_reasons"`
	LedgerDescription string       `json:"ledger_description"`
	LedgerAmount      money.Amount `json:"ledger_amount"`
	LedgerDate        string       `json:"ledger_date"`
}
