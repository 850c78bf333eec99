// Package bank is the bank service: bank accounts linked to SKR04 asset
// accounts, statement import, matching suggestions and reconciliation.
package bank

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Account is a bank account as the API shows it.
type Account = bankv1.Account

// Limits of a bank account's fields (specification: Bank account, Limits).
const (
	MaxNameLength   = 255
	DefaultCurrency = "EUR"
)

// Store keeps the service's state; postgres.Store implements it.
type Store interface {
	// Accounts lists the tenant's bank accounts by name.
	Accounts(ctx context.Context, tenantID string) ([]Account, error)
	// Account reads one; an unknown id is NOT_FOUND.
	Account(ctx context.Context, tenantID, id string) (Account, error)
	// CreateAccount inserts a, claiming and saving the request's
	// Idempotency-Key in the same transaction (pkg/idem). A ledger account
	// already linked is ACCOUNT_ALREADY_LINKED, an IBAN the tenant already
	// has DUPLICATE_IBAN: the unique indexes decide, so two requests racing
	// cannot both win.
	CreateAccount(ctx context.Context, tenantID string, a Account) (Account, error)
	// RenameAccount sets the name of one; an unknown id is NOT_FOUND.
	RenameAccount(ctx context.Context, tenantID, id, name string) (Account, error)
	TransactionStore
	FiguresStore
	SuggestionStore
	FileImportStore
}

// Chart is what the bank asks the ledger about its chart of accounts;
// ledgerv1.Client implements it. An account the chart lacks is NOT_FOUND.
type Chart interface {
	Account(ctx context.Context, tenantID, number string) (ledgerv1.Account, error)
	// AccountBalance is the balance (debit minus credit) of account number
	// over every entry booked on or before asOf (YYYY-MM-DD).
	AccountBalance(ctx context.Context, tenantID, number, asOf string) (ledgerv1.AccountBalance, error)
}

// Service holds the bank's rules.
type Service struct {
	store Store
	chart Chart
	files files
}

// New returns a Service on store that checks linked accounts in chart.
func New(store Store, chart Chart) *Service { return &Service{store: store, chart: chart} }

// Accounts lists the tenant's bank accounts by name.
func (s *Service) Accounts(ctx context.Context, tenantID string) (bankv1.AccountList, error) {
	as, err := s.store.Accounts(ctx, tenantID)
	if err != nil {
		return bankv1.AccountList{}, err
	}
	if as == nil {
		as = []Account{}
	}
	return bankv1.AccountList{BankAccounts: as}, nil
}

// Account reads one of the tenant's bank accounts; an id that is no UUID
// is as unknown as one of another tenant.
func (s *Service) Account(ctx context.Context, tenantID, id string) (Account, error) {
	if !ValidID(id) {
		return Account{}, notFound(id)
	}
	return s.store.Account(ctx, tenantID, id)
}

// CreateAccount checks in and links a new bank account to an asset
// account of the tenant's chart.
func (s *Service) CreateAccount(ctx context.Context, tenantID string, in bankv1.AccountInput) (Account, error) {
	a, err := checkInput(in)
	if err != nil {
		return Account{}, err
	}
	linked, err := s.chart.Account(ctx, tenantID, a.AccountNumber)
	if e := errs.As(err); e != nil && e.Code == errs.NotFound {
		return Account{}, &errs.Error{Code: errs.AccountNotFound, Message: "account " + a.AccountNumber + " does not exist in the chart of accounts",
			Details: []errs.Detail{errs.Field("account_number", "not in the chart of accounts")}, Err: err}
	}
	if err != nil {
		return Account{}, errs.Wrap("bank.CreateAccount: ledger", err)
	}
	if linked.Type != ledgerv1.AccountAsset {
		return Account{}, &errs.Error{Code: errs.InvalidAccountType, Message: "account " + a.AccountNumber + " is a " + linked.Type + " account; a bank account links to an asset account",
			Details: []errs.Detail{errs.Field("account_number", "must be an asset account")}}
	}
	a.ID = uuid.NewString()
	return s.store.CreateAccount(ctx, tenantID, a)
}

// UpdateAccount renames one of the tenant's bank accounts.
func (s *Service) UpdateAccount(ctx context.Context, tenantID, id string, in bankv1.AccountUpdate) (Account, error) {
	if !ValidID(id) {
		return Account{}, notFound(id)
	}
	if in.Name == nil {
		return Account{}, errs.Invalid("name is required", errs.Field("name", "required"))
	}
	name := strings.TrimSpace(*in.Name)
	if issue := checkName(name); issue != "" {
		return Account{}, errs.Invalid("invalid name", errs.Field("name", issue))
	}
	return s.store.RenameAccount(ctx, tenantID, id, name)
}

// checkInput validates and normalises a new bank account, naming every
// field at fault.
func checkInput(in bankv1.AccountInput) (Account, error) {
	a := Account{Name: strings.TrimSpace(in.Name), IBAN: NormalizeIBAN(in.IBAN), AccountNumber: in.AccountNumber, Currency: in.Currency}
	var details []errs.Detail
	if issue := checkName(a.Name); issue != "" {
		details = append(details, errs.Field("name", issue))
	}
	if a.IBAN == "" {
		details = append(details, errs.Field("iban", "required"))
	} else if issue := CheckIBAN(a.IBAN); issue != "" {
		details = append(details, errs.Field("iban", issue))
	}
	if in.BIC != nil {
		bic := NormalizeBIC(*in.BIC)
		if issue := CheckBIC(bic); issue != "" {
			details = append(details, errs.Field("bic", issue))
		}
		a.BIC = &bic
	}
	if a.AccountNumber == "" {
		details = append(details, errs.Field("account_number", "required"))
	} else if !accountNumberRe.MatchString(a.AccountNumber) {
		details = append(details, errs.Field("account_number", "an SKR04 account number of 1 to 8 digits"))
	}
	if a.Currency == "" {
		a.Currency = DefaultCurrency
	} else if !ValidCurrency(a.Currency) {
		details = append(details, errs.Field("currency", "an ISO 4217 currency code in upper case, e.g. EUR"))
	}
	if len(details) > 0 {
		return Account{}, errs.Invalid("invalid bank account", details...)
	}
	return a, nil
}

func checkName(name string) string {
	switch {
	case name == "":
		return "required"
	case utf8.RuneCountInString(name) > MaxNameLength:
		return "at most 255 characters"
	case strings.ContainsFunc(name, unicode.IsControl):
		return "no control characters"
	}
	return ""
}

var (
	accountNumberRe = regexp.MustCompile(`^[0-9]{1,8}$`)
	uuidRe          = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// ValidID reports whether s is a UUID, the form of every bank id.
func ValidID(s string) bool { return uuidRe.MatchString(s) }

func newID() string { return uuid.NewString() }

func itoa(n int) string { return strconv.Itoa(n) }

func notFound(id string) error { return errs.NotFoundf("bank account %s not found", id) }
