package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// The chart of accounts and the tax codes.
//
// Accounts are never deleted and never change type: a tenant's journal
// references them by number for good, and no route edits an account once
// created (there is no PATCH /v1/accounts). Tax codes are the seeded system
// set; PATCH /v1/tax-codes/:code changes their label, description, rate,
// accounts and whether they are active. Every change invalidates this
// process's chart cache; other replicas see it within chartTTL, while the
// foreign keys of the journal hold regardless.

// Limits of the chart routes (specification: Limits).
const (
	MaxAccountNumber     = 8   // digits
	MaxAccountName       = 255 // characters
	MaxAccountCategory   = 100
	MaxAccountReportGrp  = 40
	DefaultAccountsLimit = 500
	MaxAccountsLimit     = 500
	DefaultSearchLimit   = 20
	MaxSearchLimit       = 100
	DefaultEntriesLimit  = 200
	MaxEntriesLimit      = 1000
	MaxSearchText        = 100
	MaxTaxLabel          = 100
	MaxTaxDescription    = 500
)

// ChartStore reads and changes the chart of accounts and the tax codes.
type ChartStore interface {
	// ListAccounts returns one page of the accounts matching f, ordered by
	// number, and how many match in all.
	ListAccounts(ctx context.Context, tenant string, f AccountFilter) ([]Account, int, error)
	// CreateAccount inserts a; a number already taken is ACCOUNT_EXISTS. With
	// an idempotency key it stores the response, or replays it (non-nil
	// IdemRecord) for a repeated request.
	CreateAccount(ctx context.Context, tenant string, a Account, idem IdemRequest) (Account, *IdemRecord, error)
	// SearchAccounts returns active accounts whose number starts with, or
	// whose name contains, f.Q: number matches first, then names starting
	// with it, each by number.
	SearchAccounts(ctx context.Context, tenant string, f AccountSearch) ([]AccountHit, error)
	// AccountEntries returns the account, one page of the journal events
	// that debit or credit it and the totals over every matching event; an
	// unknown account is NOT_FOUND.
	AccountEntries(ctx context.Context, tenant string, f EntriesFilter) (*AccountEntries, error)
	// ListTaxCodes returns the tax codes by code, the inactive ones only
	// when asked.
	ListTaxCodes(ctx context.Context, tenant string, includeInactive bool) ([]TaxCode, error)
	// UpdateTaxCode applies p to the code under a row lock: an unknown code
	// is TAX_CODE_NOT_FOUND, Apply's errors (NO_CHANGES, INVALID_INPUT) pass
	// through, and accounts the result names must exist (ACCOUNT_NOT_FOUND).
	UpdateTaxCode(ctx context.Context, tenant, code string, p TaxCodePatch, idem IdemRequest) (TaxCode, *IdemRecord, error)
}

// IdemRequest identifies an idempotent request: who sent it (Scope), the
// client's Idempotency-Key and the hash of what was asked. A zero value
// means the request carries no key.
type IdemRequest struct {
	Scope, Key, Hash string
}

// idemRequest derives the idempotency identity of r for the operation op;
// op is part of the hash, so one key reused for another route is refused.
func idemRequest(r Request, op string) IdemRequest {
	if r.IdempotencyKey == "" {
		return IdemRequest{}
	}
	scope := r.Claims.Actor()
	if scope == "" {
		scope = "system"
	}
	return IdemRequest{Scope: scope, Key: r.IdempotencyKey, Hash: RequestHash([]byte(op), r.Body)}
}

// AccountFilter selects accounts for GET /v1/accounts.
type AccountFilter struct {
	Q        string // number prefix or part of the name, case-insensitive
	Category string // exact category, case-insensitive
	Type     string
	Limit    int
	Offset   int
}

// AccountSearch selects accounts for GET /v1/accounts/search.
type AccountSearch struct {
	Q     string
	Type  string
	Limit int
}

// AccountHit is one result of an account search.
type AccountHit struct {
	Number string `json:"number"`
	Name   string `json:"name"`
	Type   string `json:"type"`
}

// EntriesQuery is the query of GET /v1/accounts/:number/entries as sent.
type EntriesQuery struct {
	StartDate, EndDate string // YYYY-MM-DD, optional
	Limit, Offset      int
}

// EntriesFilter is a validated EntriesQuery for the store.
type EntriesFilter struct {
	Number        string
	From, To      *time.Time
	Limit, Offset int
}

// AccountEntry is a journal entry seen from one account.
type AccountEntry struct {
	JournalEntry
	Side          string `json:"side"`           // debit or credit: the side the account is on
	ContraAccount string `json:"contra_account"` // the other account of the event
}

// AccountEntries is the answer of GET /v1/accounts/:number/entries. The
// totals and the balance (debit minus credit) cover every entry in the date
// range, not just the page returned.
type AccountEntries struct {
	Account     Account        `json:"account"`
	Entries     []AccountEntry `json:"entries"`
	EntryCount  int64          `json:"entry_count"`
	DebitTotal  money.Amount   `json:"debit_total"`
	CreditTotal money.Amount   `json:"credit_total"`
	Balance     money.Amount   `json:"balance"`
	StartDate   *string        `json:"start_date"`
	EndDate     *string        `json:"end_date"`
	Limit       int            `json:"limit"`
	Offset      int            `json:"offset"`
}

// AccountInput is the body of POST /v1/accounts.
type AccountInput struct {
	Number      string `json:"number"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Category    string `json:"category"`
	ReportGroup string `json:"report_group"`
}

var accountNumberRe = regexp.MustCompile(`^[0-9]{1,8}$`)

// ValidAccountNumber reports whether s is an account number: 1 to 8 digits.
func ValidAccountNumber(s string) bool { return accountNumberRe.MatchString(s) }

// hasControl reports control characters, which no chart text may hold.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// checkText validates a free-text field: at most max characters, no
// control characters, and present when required.
func checkText(details *[]errs.Detail, field, s string, max int, required bool) {
	switch {
	case s == "" && required:
		*details = append(*details, errs.Field(field, "required"))
	case !utf8.ValidString(s):
		*details = append(*details, errs.Field(field, "must be valid UTF-8"))
	case utf8.RuneCountInString(s) > max:
		*details = append(*details, errs.Field(field, fmt.Sprintf("at most %d characters", max)))
	case hasControl(s):
		*details = append(*details, errs.Field(field, "must not contain control characters"))
	}
}

// checkFormat validates a required field that valid must accept; required
// and invalid are the issues reported for a missing and a malformed value.
func checkFormat(details *[]errs.Detail, field, s string, valid func(string) bool, required, invalid string) {
	switch {
	case s == "":
		*details = append(*details, errs.Field(field, required))
	case !valid(s):
		*details = append(*details, errs.Field(field, invalid))
	}
}

// normalizeAccount validates the body of POST /v1/accounts and returns the
// account to insert.
func normalizeAccount(in AccountInput) (Account, error) {
	a := Account{
		Number: strings.TrimSpace(in.Number), Name: strings.TrimSpace(in.Name), Type: strings.TrimSpace(in.Type),
		Category: strings.TrimSpace(in.Category), ReportGroup: strings.TrimSpace(in.ReportGroup), IsActive: true,
	}
	var details []errs.Detail
	checkFormat(&details, "number", a.Number, ValidAccountNumber, "required", "must be 1 to 8 digits")
	checkText(&details, "name", a.Name, MaxAccountName, true)
	checkFormat(&details, "type", a.Type, ValidAccountType,
		"required: asset, liability, equity, revenue or expense", "must be asset, liability, equity, revenue or expense")
	checkText(&details, "category", a.Category, MaxAccountCategory, false)
	checkText(&details, "report_group", a.ReportGroup, MaxAccountReportGrp, false)
	if len(details) > 0 {
		return Account{}, errs.Invalid("the account is invalid; nothing was created", details...)
	}
	return a, nil
}

// CreateAccount adds an account to the tenant's chart (POST /v1/accounts).
func (s *Service) CreateAccount(ctx context.Context, r Request, in AccountInput) (Account, *IdemRecord, error) {
	tenant := r.Claims.TenantID
	a, err := normalizeAccount(in)
	if err != nil {
		return Account{}, nil, err
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return Account{}, nil, err
	}
	created, replay, err := s.store.CreateAccount(ctx, tenant, a, idemRequest(r, "accounts.create"))
	if err != nil {
		return Account{}, nil, err
	}
	s.invalidateChart(tenant)
	return created, replay, nil
}

// searchText validates q: trimmed, at most MaxSearchText characters.
func searchText(q string, required bool) (string, error) {
	q = strings.TrimSpace(q)
	var details []errs.Detail
	checkText(&details, "q", q, MaxSearchText, required)
	if len(details) > 0 {
		return "", errs.Invalid("invalid query parameter q", details...)
	}
	return q, nil
}

func checkTypeParam(t string) error {
	if t != "" && !ValidAccountType(t) {
		return errs.Invalid("invalid query parameter type", errs.Field("type", "must be asset, liability, equity, revenue or expense"))
	}
	return nil
}

func checkPage(limit, def, max, offset int) (int, error) {
	if limit == 0 {
		limit = def
	}
	if limit < 1 || limit > max {
		return 0, errs.Invalid("invalid query parameter limit", errs.Field("limit", fmt.Sprintf("must be an integer from 1 to %d", max)))
	}
	if offset < 0 {
		return 0, errs.Invalid("invalid query parameter offset", errs.Field("offset", "must not be negative"))
	}
	return limit, nil
}

// Accounts lists the chart (GET /v1/accounts). A zero Limit means the default.
func (s *Service) Accounts(ctx context.Context, tenant string, f AccountFilter) (AccountPage, error) {
	var err error
	if f.Limit, err = checkPage(f.Limit, DefaultAccountsLimit, MaxAccountsLimit, f.Offset); err != nil {
		return AccountPage{}, err
	}
	if f.Q, err = searchText(f.Q, false); err != nil {
		return AccountPage{}, err
	}
	f.Category = strings.TrimSpace(f.Category)
	var details []errs.Detail
	checkText(&details, "category", f.Category, MaxAccountCategory, false)
	if len(details) > 0 {
		return AccountPage{}, errs.Invalid("invalid query parameter category", details...)
	}
	if err := checkTypeParam(f.Type); err != nil {
		return AccountPage{}, err
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return AccountPage{}, err
	}
	accounts, total, err := s.store.ListAccounts(ctx, tenant, f)
	if err != nil {
		return AccountPage{}, err
	}
	if accounts == nil {
		accounts = []Account{}
	}
	return AccountPage{Accounts: accounts, Total: total, Limit: f.Limit, Offset: f.Offset}, nil
}

// AccountFor reads one account of the tenant's chart for another service
// (SubjectAccountGet). Accounts are never deleted and never change type, so
// a cached one is current; a miss reloads the chart once, since another
// replica may have added the account a moment ago.
func (s *Service) AccountFor(ctx context.Context, tenant, number string) (Account, error) {
	if !ValidAccountNumber(number) {
		return Account{}, errs.Invalid("invalid account number", errs.Field("number", "1 to 8 digits"))
	}
	for reloaded := false; ; reloaded = true {
		c, err := s.chart(ctx, tenant)
		if err != nil {
			return Account{}, err
		}
		if a, ok := c.Account(number); ok {
			return a, nil
		}
		if reloaded {
			return Account{}, errs.NotFoundf("account %s is not in the chart", number)
		}
		s.invalidateChart(tenant)
	}
}

// SearchAccounts finds accounts by number prefix or name part
// (GET /v1/accounts/search). A zero Limit means the default.
func (s *Service) SearchAccounts(ctx context.Context, tenant string, f AccountSearch) ([]AccountHit, error) {
	var err error
	if f.Q, err = searchText(f.Q, true); err != nil {
		return nil, err
	}
	if err := checkTypeParam(f.Type); err != nil {
		return nil, err
	}
	if f.Limit, err = checkPage(f.Limit, DefaultSearchLimit, MaxSearchLimit, 0); err != nil {
		return nil, err
	}
	return tenantList(ctx, s, tenant, func() ([]AccountHit, error) { return s.store.SearchAccounts(ctx, tenant, f) })
}

// AccountEntries lists the journal entries touching an account with its
// totals (GET /v1/accounts/:number/entries). A zero Limit means the default.
func (s *Service) AccountEntries(ctx context.Context, tenant, number string, q EntriesQuery) (*AccountEntries, error) {
	if !ValidAccountNumber(number) {
		return nil, errs.NotFoundf("account %q not found", number)
	}
	f := EntriesFilter{Number: number, Offset: q.Offset}
	var err error
	if f.Limit, err = checkPage(q.Limit, DefaultEntriesLimit, MaxEntriesLimit, q.Offset); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name, value string
		dst         **time.Time
	}{{"startDate", q.StartDate, &f.From}, {"endDate", q.EndDate, &f.To}} {
		if d.value == "" {
			continue
		}
		t, ok := ParseDate(d.value)
		if !ok {
			return nil, errs.Invalid("invalid query parameter "+d.name, errs.Field(d.name, "must be a date YYYY-MM-DD"))
		}
		*d.dst = &t
	}
	if f.From != nil && f.To != nil && f.To.Before(*f.From) {
		return nil, errs.Invalid("endDate is before startDate", errs.Field("endDate", "must not be before startDate"))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	res, err := s.store.AccountEntries(ctx, tenant, f)
	if err != nil {
		return nil, err
	}
	if res.Entries == nil {
		res.Entries = []AccountEntry{}
	}
	if f.From != nil {
		d := f.From.Format(time.DateOnly)
		res.StartDate = &d
	}
	if f.To != nil {
		d := f.To.Format(time.DateOnly)
		res.EndDate = &d
	}
	res.Limit, res.Offset = f.Limit, f.Offset
	return res, nil
}

// TaxCodes lists the tenant's tax codes (GET /v1/tax-codes).
func (s *Service) TaxCodes(ctx context.Context, tenant string, includeInactive bool) ([]TaxCode, error) {
	return tenantList(ctx, s, tenant, func() ([]TaxCode, error) { return s.store.ListTaxCodes(ctx, tenant, includeInactive) })
}

// tenantList reads a list of tenant's after making sure the tenant has its
// chart; the list is never nil, so it encodes as [].
func tenantList[T any](ctx context.Context, s *Service, tenant string, read func() ([]T, error)) ([]T, error) {
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	out, err := read()
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// Optional is a field of a partial update: Set tells an absent field from
// one sent as null (Value is then the zero value, e.g. a nil pointer).
type Optional[T any] struct {
	Set   bool
	Value T
}

// TaxCodePatch is the body of PATCH /v1/tax-codes/:code.
type TaxCodePatch struct {
	Label             Optional[string]
	Description       Optional[*string] // null or "" removes the description
	Rate              Optional[money.Amount]
	VATAccount        Optional[string]
	SelfAssessAccount Optional[*string] // null removes self-assessment
	IsActive          Optional[bool]
}

var taxCodeRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,20}$`)

var hundredRate = money.MustParse("100")

// ParseTaxCodePatch decodes and validates a PATCH body. Unknown fields,
// wrong types and null where null means nothing are INVALID_INPUT; an empty
// body is a patch without fields (NO_CHANGES once the code is found).
func ParseTaxCodePatch(body []byte) (TaxCodePatch, error) {
	var p TaxCodePatch
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return p, nil
	}
	// Checked strictly first: the members read below are then exactly the
	// ones sent, once each, in valid text.
	if err := natsx.CheckJSON(body); err != nil {
		return p, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return p, errs.Invalid("malformed request body", errs.Field("", "must be one JSON object"))
	}
	var details []errs.Detail
	bad := func(field, issue string) { details = append(details, errs.Field(field, issue)) }
	isNull := func(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
	str := func(field string, v json.RawMessage) (string, bool) {
		var s string
		if isNull(v) || json.Unmarshal(v, &s) != nil {
			bad(field, "must be a string")
			return "", false
		}
		return strings.TrimSpace(s), true
	}
	account := func(field string, v json.RawMessage) (string, bool) {
		s, ok := str(field, v)
		if ok && !ValidAccountNumber(s) {
			bad(field, "must be an account number of 1 to 8 digits")
			return "", false
		}
		return s, ok
	}
	// nullable marks o as sent; null leaves its value nil, anything else
	// is read with read.
	nullable := func(o *Optional[*string], field string, v json.RawMessage, read func(string, json.RawMessage) (string, bool)) (string, bool) {
		o.Set = true
		if isNull(v) {
			return "", false
		}
		return read(field, v)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		switch k {
		case "label":
			if s, ok := str(k, v); ok {
				checkText(&details, k, s, MaxTaxLabel, true)
				p.Label = Optional[string]{true, s}
			}
		case "description":
			if s, ok := nullable(&p.Description, k, v, str); ok {
				checkText(&details, k, s, MaxTaxDescription, false)
				if s != "" {
					p.Description.Value = &s
				}
			}
		case "rate":
			var a money.Amount
			if isNull(v) || json.Unmarshal(v, &a) != nil {
				bad(k, "must be a number")
				break
			}
			if a.IsNegative() || !a.LessThan(hundredRate.Decimal) || a.Places() > 2 {
				bad(k, "must be at least 0 and below 100, with at most 2 decimals")
				break
			}
			p.Rate = Optional[money.Amount]{true, a}
		case "vat_account":
			if s, ok := account(k, v); ok {
				p.VATAccount = Optional[string]{true, s}
			}
		case "self_assess_account":
			if s, ok := nullable(&p.SelfAssessAccount, k, v, account); ok {
				p.SelfAssessAccount.Value = &s
			}
		case "is_active":
			var b bool
			if isNull(v) || json.Unmarshal(v, &b) != nil {
				bad(k, "must be true or false")
				break
			}
			p.IsActive = Optional[bool]{true, b}
		default:
			bad(k, "unknown field")
		}
	}
	if len(details) > 0 {
		return TaxCodePatch{}, errs.Invalid("the tax code change is invalid; nothing was changed", details...)
	}
	return p, nil
}

func eqPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// Apply returns cur changed by p. It is NO_CHANGES when no given field
// differs from cur, and INVALID_INPUT when the result could not post: a
// taxed code without a VAT account, a rate on a tax-free code, or a
// self-assessment account on a code that does not self-assess.
func (p TaxCodePatch) Apply(cur TaxCode) (TaxCode, error) {
	next := cur
	changed := false
	if p.Label.Set && p.Label.Value != cur.Label {
		next.Label, changed = p.Label.Value, true
	}
	if p.Description.Set && !eqPtr(p.Description.Value, cur.Description) {
		next.Description, changed = p.Description.Value, true
	}
	if p.Rate.Set && !p.Rate.Value.Equal(cur.Rate.Decimal) {
		next.Rate, changed = p.Rate.Value, true
	}
	if p.VATAccount.Set && p.VATAccount.Value != cur.VATAccount {
		next.VATAccount, changed = p.VATAccount.Value, true
	}
	if p.SelfAssessAccount.Set && !eqPtr(p.SelfAssessAccount.Value, cur.SelfAssessAccount) {
		next.SelfAssessAccount, changed = p.SelfAssessAccount.Value, true
	}
	if p.IsActive.Set && p.IsActive.Value != cur.IsActive {
		next.IsActive, changed = p.IsActive.Value, true
	}
	if !changed {
		return cur, errs.E(errs.NoChanges, "the request changes nothing: no field was given or every value equals the current one")
	}
	var details []errs.Detail
	switch next.Kind {
	case TaxExempt:
		if !next.Rate.IsZero() {
			details = append(details, errs.Field("rate", "a tax-free code ("+TaxExempt+") has rate 0"))
		}
	default:
		if !next.Rate.IsZero() && next.VATAccount == "" {
			details = append(details, errs.Field("vat_account", "a taxed code needs a VAT account"))
		}
	}
	if next.SelfAssessAccount != nil && next.Kind != TaxReverseCharge && next.Kind != TaxICAcquisition {
		details = append(details, errs.Field("self_assess_account", "only reverse_charge and ic_acquisition codes self-assess"))
	}
	if next.SelfAssessAccount != nil && *next.SelfAssessAccount == next.VATAccount {
		details = append(details, errs.Field("self_assess_account", "must differ from vat_account"))
	}
	if len(details) > 0 {
		return cur, errs.Invalid("the tax code change is invalid; nothing was changed", details...)
	}
	return next, nil
}

// UpdateTaxCode changes a tax code (PATCH /v1/tax-codes/:code).
func (s *Service) UpdateTaxCode(ctx context.Context, r Request, code string, p TaxCodePatch) (TaxCodeChanged, *IdemRecord, error) {
	tenant := r.Claims.TenantID
	if !taxCodeRe.MatchString(code) {
		return TaxCodeChanged{}, nil, errs.E(errs.TaxCodeNotFound, "tax code %q not found", code)
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return TaxCodeChanged{}, nil, err
	}
	updated, replay, err := s.store.UpdateTaxCode(ctx, tenant, code, p, idemRequest(r, "tax_codes.update:"+code))
	if err != nil {
		return TaxCodeChanged{}, nil, err
	}
	s.invalidateChart(tenant)
	return updated.Changed(), replay, nil
}
