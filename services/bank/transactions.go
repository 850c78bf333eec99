package bank

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Transaction is a bank transaction as the API shows it.
type Transaction = bankv1.Transaction

// Limits of the transaction list (the specification names none for it;
// these are those of the other lists of documents).
const (
	DefaultTransactionsLimit = 100
	MaxTransactionsLimit     = 500
	MaxSearchLength          = 200
)

// Lengths of the texts of a JSON import item, in characters: a camt
// name is at most 140, an AcctSvcrRef 35, an unstructured remittance
// line 140 (a statement joins several).
const (
	maxNameLen      = 255
	maxReferenceLen = 2000
	maxBankRefLen   = 140
	maxTxTypeLen    = 100
)

// maxAmount bounds an amount far above any real transaction, so that a
// typing mistake never reaches NUMERIC arithmetic as a 400-digit number.
var maxAmount = decimal.New(1, 15)

// Import sources (imports.source).
const (
	SourceJSON  = "json"
	SourceCAMT  = "camt"
	SourceMT940 = "mt940"
	SourceCSV   = "csv"
)

// ImportMeta describes an import for Store.ImportStatements.
type ImportMeta struct {
	ID     string // new import (batch) id
	Source string // SourceJSON, SourceCAMT, ...
	// FileSHA256 is the hex SHA-256 of a statement file, "" for a JSON
	// import. A file the bank account imported before imports nothing.
	FileSHA256 string
	// Refused counts rows refused before the import (Errors name them);
	// they count in TotalRows.
	Refused int
	Errors  []bankv1.RowError
	// Answer, when set, turns the result into the answer the request's
	// Idempotency-Key stores (pkg/idem), saved in the import's transaction.
	Answer func(ImportResult) any
}

// ParsedStatement is one statement of a file as a parser streamed it. A
// JSON import is one statement with an empty Kind: its transactions have
// no statement row.
type ParsedStatement struct {
	Statement Statement
	Entries   []Entry
	End       StatementEnd
}

// ImportResult is what an import did.
type ImportResult struct {
	ImportID          string
	TotalRows         int
	Imported          int
	SkippedDuplicates int
	// DuplicateFile: the bank account imported this file before; nothing
	// was written and every row counts as skipped.
	DuplicateFile bool
	Statements    []StatementResult
	Errors        []bankv1.RowError
}

// StatementResult is one imported statement: its counts and the balance
// check (opening + entries = closing) when it carries both balances.
type StatementResult struct {
	ID                string
	Kind              string
	StatementRef      string
	Entries           int
	Imported          int
	SkippedDuplicates int
	BalanceMismatch   bool
	ExpectedClosing   *decimal.Decimal
	Closing           *decimal.Decimal
}

// API is the result in the shape of POST /v1/bank-transactions.
func (r ImportResult) API() bankv1.ImportResult {
	errors := r.Errors
	if errors == nil {
		errors = []bankv1.RowError{}
	}
	return bankv1.ImportResult{BatchID: r.ImportID, TotalRows: r.TotalRows, Imported: r.Imported, SkippedDuplicates: r.SkippedDuplicates, Errors: errors}
}

// TransactionStore is the part of Store that keeps transactions.
type TransactionStore interface {
	// ImportStatements writes one import: its imports row, a statements
	// row per statement with a Kind, and each entry not yet stored for the
	// bank account under its dedup key (Deduper), all in one transaction,
	// claiming and saving the request's Idempotency-Key in it. The bank
	// account must be the tenant's (NOT_FOUND).
	ImportStatements(ctx context.Context, tenantID, accountID string, imp ImportMeta, stmts []ParsedStatement) (ImportResult, error)
	// Transactions lists a page of the tenant's transactions.
	Transactions(ctx context.Context, tenantID string, f bankv1.TransactionFilter) ([]Transaction, error)
	// Transaction reads one; an unknown id is NOT_FOUND.
	Transaction(ctx context.Context, tenantID, id string) (Transaction, error)
}

// ImportTransactions imports a JSON batch: rows that break a rule are
// reported with their index and field, the others import in one
// transaction, duplicates of stored ones skipped.
func (s *Service) ImportTransactions(ctx context.Context, tenantID string, in bankv1.ImportInput) (bankv1.ImportResult, error) {
	switch {
	case in.BankAccountID == "":
		return bankv1.ImportResult{}, errs.Invalid("bank_account_id is required", errs.Field("bank_account_id", "required"))
	case !ValidID(in.BankAccountID):
		return bankv1.ImportResult{}, errs.Invalid("invalid bank_account_id", errs.Field("bank_account_id", "must be a UUID"))
	case len(in.Transactions) == 0:
		return bankv1.ImportResult{}, errs.Invalid("transactions is required", errs.Field("transactions", "at least one transaction"))
	case len(in.Transactions) > bankv1.MaxImportItems:
		return bankv1.ImportResult{}, errs.Invalid("too many transactions", errs.Field("transactions", "at most 1000 transactions per import"))
	}
	acc, err := s.store.Account(ctx, tenantID, in.BankAccountID)
	if err != nil {
		return bankv1.ImportResult{}, err
	}
	var (
		entries []Entry
		rowErrs []bankv1.RowError
		refused int
	)
	for i, item := range in.Transactions {
		e, issues := checkItem(item, acc.Currency)
		if len(issues) > 0 {
			refused++
			for _, d := range issues {
				rowErrs = append(rowErrs, bankv1.RowError{Index: i, Field: d.Field, Issue: d.Issue})
			}
			continue
		}
		entries = append(entries, e)
	}
	meta := ImportMeta{ID: newID(), Source: SourceJSON, Refused: refused, Errors: rowErrs,
		Answer: func(r ImportResult) any { return r.API() }}
	r, err := s.store.ImportStatements(ctx, tenantID, acc.ID, meta, []ParsedStatement{{Entries: entries}})
	if err != nil {
		return bankv1.ImportResult{}, err
	}
	return r.API(), nil
}

// checkItem turns a JSON import item into an entry, or names each field
// that breaks a rule.
func checkItem(in bankv1.ImportItem, accountCurrency string) (Entry, []errs.Detail) {
	var issues []errs.Detail
	bad := func(field, issue string) { issues = append(issues, errs.Field(field, issue)) }
	e := Entry{BookingDate: in.TxDate, ValueDate: in.ValueDate, Currency: in.Currency,
		CounterpartyName: strings.TrimSpace(in.CounterpartyName), CounterpartyIBAN: NormalizeIBAN(in.CounterpartyIBAN),
		Reference: strings.TrimSpace(in.Reference), BankReference: strings.TrimSpace(in.BankReference), BookingText: strings.TrimSpace(in.TxType)}
	if in.TxDate == "" {
		bad("tx_date", "required")
	} else if !validDate(in.TxDate) {
		bad("tx_date", "must be a date YYYY-MM-DD")
	}
	switch {
	case in.Amount == nil:
		bad("amount", "required")
	case in.Amount.IsZero():
		bad("amount", "must not be zero: positive is incoming, negative outgoing")
	case in.Amount.Places() > 2:
		bad("amount", "at most 2 decimals")
	case in.Amount.Abs().GreaterThanOrEqual(maxAmount):
		bad("amount", "must be below 1,000,000,000,000,000 in size")
	default:
		e.Amount = in.Amount.Decimal
	}
	if e.Currency == "" {
		e.Currency = accountCurrency
	} else if !ValidCurrency(e.Currency) {
		bad("currency", "an ISO 4217 currency code in upper case, e.g. EUR")
	} else if e.Currency != accountCurrency {
		bad("currency", "must be the bank account's currency "+accountCurrency)
	}
	if in.ValueDate != "" && !validDate(in.ValueDate) {
		bad("value_date", "must be a date YYYY-MM-DD")
	}
	if e.CounterpartyIBAN != "" {
		if issue := CheckIBAN(e.CounterpartyIBAN); issue != "" {
			bad("counterparty_iban", issue)
		}
	}
	for _, t := range []struct {
		field, v string
		max      int
	}{{"counterparty_name", e.CounterpartyName, maxNameLen}, {"reference", e.Reference, maxReferenceLen},
		{"bank_reference", e.BankReference, maxBankRefLen}, {"tx_type", e.BookingText, maxTxTypeLen}} {
		if issue := checkText(t.v, t.max); issue != "" {
			bad(t.field, issue)
		}
	}
	return e, issues
}

func checkText(s string, max int) string {
	switch {
	case utf8.RuneCountInString(s) > max:
		return "at most " + itoa(max) + " characters"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "no control characters"
	}
	return ""
}

// validDate: a real calendar date YYYY-MM-DD from 1900 to 9999.
func validDate(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Year() >= 1900
}

// Transactions lists a page of the tenant's bank transactions; a bank
// account filter names one of the tenant's accounts.
func (s *Service) Transactions(ctx context.Context, tenantID string, f bankv1.TransactionFilter) (bankv1.TransactionList, error) {
	if f.BankAccountID != "" {
		if _, err := s.Account(ctx, tenantID, f.BankAccountID); err != nil {
			return bankv1.TransactionList{}, err
		}
	}
	ts, err := s.store.Transactions(ctx, tenantID, f)
	if err != nil {
		return bankv1.TransactionList{}, err
	}
	if ts == nil {
		ts = []Transaction{}
	}
	return bankv1.TransactionList{Transactions: ts}, nil
}

// Transaction reads one of the tenant's bank transactions.
func (s *Service) Transaction(ctx context.Context, tenantID, id string) (Transaction, error) {
	if !ValidID(id) {
		return Transaction{}, errs.NotFoundf("bank transaction %s not found", id)
	}
	return s.store.Transaction(ctx, tenantID, id)
}

// ParseTransactionFilter checks the query of GET /v1/bank-transactions.
func ParseTransactionFilter(get func(string) string, limit, offset int) (bankv1.TransactionFilter, error) {
	f := bankv1.TransactionFilter{BankAccountID: get("bank_account_id"), From: get("from"), To: get("to"),
		Status: get("status"), Search: strings.TrimSpace(get("search")), Limit: limit, Offset: offset}
	var details []errs.Detail
	if f.BankAccountID != "" && !ValidID(f.BankAccountID) {
		details = append(details, errs.Field("bank_account_id", "must be a UUID"))
	}
	for _, d := range []struct{ name, v string }{{"from", f.From}, {"to", f.To}} {
		if d.v != "" && !validDate(d.v) {
			details = append(details, errs.Field(d.name, "must be a date YYYY-MM-DD"))
		}
	}
	if len(details) == 0 && f.From != "" && f.To != "" && f.To < f.From {
		details = append(details, errs.Field("to", "must not be before from"))
	}
	switch f.Status {
	case "", bankv1.StatusOpen, bankv1.StatusReconciled, bankv1.StatusEvidenced:
	default:
		details = append(details, errs.Field("status", "open, reconciled or evidenced"))
	}
	if issue := checkText(f.Search, MaxSearchLength); issue != "" {
		details = append(details, errs.Field("search", issue))
	}
	if len(details) > 0 {
		return bankv1.TransactionFilter{}, errs.Invalid("invalid query", details...)
	}
	return f, nil
}
