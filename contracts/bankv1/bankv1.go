// Package bankv1 is the contract of the bank service: bank accounts,
// statement import, matching and reconciliation.
package bankv1

import (
	"encoding/json"
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
	// MatchGroupID names the match group a transaction is reconciled in;
	// only GET /v1/bank-transactions/{id} fills it.
	MatchGroupID *string `json:"match_group_id,omitempty"`
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

// Reconciliation and evidence (issue 10): subjects, bodies, answers and
// events.
const (
	SubjectTransactionsReconcile      = "bank.v1.transactions.reconcile" // param id
	SubjectTransactionsUnmatch        = "bank.v1.transactions.unmatch"   // param id
	SubjectTransactionsBatchReconcile = "bank.v1.transactions.batch_reconcile"
	SubjectEvidencePut                = "bank.v1.transactions.evidence.put" // param id
	SubjectEvidenceGet                = "bank.v1.transactions.evidence.get" // param id

	// EventTransactionReconciled announces a reconciliation with its
	// allocations, so payables and receivables can mark invoices paid;
	// payload TransactionReconciled.
	EventTransactionReconciled = "evt.bank.v1.transaction_reconciled"
	// EventTransactionUnmatched announces that a reconciliation was undone;
	// payload TransactionReconciled with the allocations released.
	EventTransactionUnmatched = "evt.bank.v1.transaction_unmatched"
)

// Candidate kinds of a reconciliation target.
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

// Modes of a reconciliation: linked to a booking already on the bank's
// ledger account, or settled an open item with a clearing booking.
const (
	ModeBankBooking = "bank_booking"
	ModeOpenItem    = "open_item"
)

// MaxBatchPairs is the most pairs one batch-reconcile takes.
const MaxBatchPairs = 500

// ReconcileInput is the body of SubjectTransactionsReconcile: the intent
// to reconcile against, and optionally what kind of candidate it is and,
// for an open item, its account (needed only when the intent left items
// on several accounts).
type ReconcileInput struct {
	IntentID        string `json:"intent_id"`
	CandidateKind   string `json:"candidate_kind,omitempty"`
	OpenItemAccount string `json:"open_item_account,omitempty"`
}

// Reconciled answers SubjectTransactionsReconcile. IntentID is the ledger
// intent that now explains the transaction: the bank booking's, or the
// clearing booking posted for an open item.
type Reconciled struct {
	OK                bool   `json:"ok"`
	Mode              string `json:"mode"`
	IntentID          string `json:"intent_id"`
	BankTransactionID string `json:"bank_transaction_id"`
	MatchedIntentID   string `json:"matched_intent_id"`
}

// Unmatched answers SubjectTransactionsUnmatch. ReversalIntentID is the
// ledger's reversal of the clearing booking, null when the transaction was
// only linked to a bank booking.
type Unmatched struct {
	OK                bool    `json:"ok"`
	BankTransactionID string  `json:"bank_transaction_id"`
	Status            string  `json:"status"`
	Mode              string  `json:"mode"`
	ReversalIntentID  *string `json:"reversal_intent_id"`
}

// BatchPair is one pair of SubjectTransactionsBatchReconcile.
type BatchPair struct {
	BankTransactionID string `json:"bank_transaction_id"`
	IntentID          string `json:"intent_id"`
	CandidateKind     string `json:"candidate_kind"`
	OpenItemAccount   string `json:"open_item_account,omitempty"`
}

// BatchReconcileInput is the body of SubjectTransactionsBatchReconcile.
type BatchReconcileInput struct {
	Pairs []BatchPair `json:"pairs"`
}

// BatchReconciled answers SubjectTransactionsBatchReconcile: each pair
// is reconciled on its own; Errors name the pairs refused.
type BatchReconciled struct {
	Reconciled int          `json:"reconciled"`
	Errors     []BatchError `json:"errors"`
}

// BatchError is one refused pair: its index in pairs (from 0), the
// machine code and the reason.
type BatchError struct {
	Index             int    `json:"index"`
	BankTransactionID string `json:"bank_transaction_id"`
	Code              string `json:"code"`
	Error             string `json:"error"`
}

// Evidence types (specification: Bank transaction evidence).
const (
	EvidenceBankStatement    = "bank_statement"
	EvidenceUploadedDocument = "uploaded_document"
	EvidenceEigenbeleg       = "eigenbeleg"
)

// EvidenceInput is the body of SubjectEvidencePut.
type EvidenceInput struct {
	EvidenceType string          `json:"evidence_type"`
	Title        *string         `json:"title,omitempty"`
	Note         *string         `json:"note,omitempty"`
	DocumentID   *string         `json:"document_id,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
}

// Evidence is the evidence stored for a bank transaction.
type Evidence struct {
	ID           string  `json:"id"`
	EvidenceType string  `json:"evidence_type"`
	Title        *string `json:"title"`
	Note         *string `json:"note"`
	DocumentID   *string `json:"document_id"`
}

// EvidenceReply answers SubjectEvidencePut and SubjectEvidenceGet;
// Evidence is null when none is stored.
type EvidenceReply struct {
	Evidence *Evidence `json:"evidence"`
}

// TransactionReconciled is the payload of EventTransactionReconciled and
// EventTransactionUnmatched.
type TransactionReconciled struct {
	TenantID          string       `json:"tenant_id"`
	ReconciliationID  string       `json:"reconciliation_id"`
	BankTransactionID string       `json:"bank_transaction_id"`
	BankAccountID     string       `json:"bank_account_id"`
	Mode              string       `json:"mode"`
	IntentID          string       `json:"intent_id"` // the intent explaining the transaction (see Reconciled)
	ReversalIntentID  string       `json:"reversal_intent_id,omitempty"`
	TxDate            string       `json:"tx_date"`
	Allocations       []Allocation `json:"allocations"`
	// MatchGroupID names the group of a transaction reconciled in one
	// (mode match_group); Allocations are then the whole group's.
	MatchGroupID string `json:"match_group_id,omitempty"`
}

// Allocation is what a reconciliation settled of one intent: Amount is
// positive, in Currency (a match group's foreign-currency item: the
// settled document amount in the document currency). BankAmount is the
// bank money a match group gave the item, when it differs from Amount
// or is in another currency.
type Allocation struct {
	IntentID        string        `json:"intent_id"`
	CandidateKind   string        `json:"candidate_kind"`
	OpenItemAccount string        `json:"open_item_account,omitempty"`
	Amount          money.Amount  `json:"amount"`
	Currency        string        `json:"currency"`
	BankAmount      *money.Amount `json:"bank_amount,omitempty"`
}

// Match groups (issue 10): several transactions of one bank account
// settle several open items with one clearing booking.
const (
	SubjectMatchGroupsCreate = "bank.v1.match-groups.create"

	// ModeMatchGroup is the mode of a transaction reconciled in a group.
	ModeMatchGroup = "match_group"
)

// Limits of a match group.
const (
	MaxGroupTransactions = 100
	MaxGroupAllocations  = 100
	MaxGroupAdjustments  = 50
)

// Posting sides of an adjustment line.
const (
	SideDebit  = "debit"
	SideCredit = "credit"
)

// MatchGroupInput is the body of SubjectMatchGroupsCreate (POST
// /v1/bank-match-groups).
type MatchGroupInput struct {
	BankTransactionIDs []string               `json:"bank_transaction_ids"`
	Allocations        []MatchGroupAllocation `json:"allocations"`
	Adjustments        []MatchGroupAdjustment `json:"adjustments,omitempty"`
}

// MatchGroupAllocation gives part of the group's bank money to one open
// item. AllocatedBankAmount is in the bank's currency (EUR);
// SettledDocumentAmount is what the item is settled by in its document
// currency: required for a foreign-currency item, optional for an EUR item,
// where it may differ from the bank amount (the difference being a cash
// discount, fee or write-off among the adjustments).
type MatchGroupAllocation struct {
	IntentID              string        `json:"intent_id"`
	CandidateKind         string        `json:"candidate_kind"`
	OpenItemAccount       string        `json:"open_item_account"`
	AllocatedBankAmount   *money.Amount `json:"allocated_bank_amount"`
	SettledDocumentAmount *money.Amount `json:"settled_document_amount,omitempty"`
}

// MatchGroupAdjustment is an extra line of the clearing booking, in EUR:
// a bank fee, a cash discount (Skonto), a write-off or a residual
// difference.
type MatchGroupAdjustment struct {
	AccountNumber string        `json:"account_number"`
	PostingSide   string        `json:"posting_side"`
	Amount        *money.Amount `json:"amount"`
	Description   *string       `json:"description,omitempty"`
}

// MatchGroupCreated answers SubjectMatchGroupsCreate (201). IntentID is
// the clearing booking's intent.
type MatchGroupCreated struct {
	OK           bool   `json:"ok"`
	MatchGroupID string `json:"match_group_id"`
	IntentID     string `json:"intent_id"`
	Mode         string `json:"mode"`
}
