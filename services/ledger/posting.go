package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Limits of a booking request.
const (
	MaxLines          = 500
	MaxDescription    = 500
	MaxExternalRef    = 255
	MaxCustomMetadata = 4096
)

// Chart is what validation needs of a tenant's accounts and tax codes.
type Chart interface {
	Account(number string) (Account, bool)
	TaxCode(code string) (TaxCode, bool)
}

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

// maxFXAmount bounds a foreign-currency amount as money.Amount bounds EUR:
// anything larger is a typing mistake, not an invoice.
var maxFXAmount = decimal.New(1, 15)

// ParseDate parses a real calendar date in YYYY-MM-DD.
func ParseDate(s string) (time.Time, bool) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1900 || t.Year() > 2999 {
		return time.Time{}, false
	}
	return t, true
}

// Expand validates a booking against the chart and turns its lines into
// journal events: a line with a tax code becomes a net and a tax event.
// Any invalid line rejects the whole booking with a detail per problem.
func Expand(b Booking, chart Chart) (time.Time, []Event, error) {
	var details []errs.Detail
	bad := func(field, issue string) { details = append(details, errs.Field(field, issue)) }

	date, ok := ParseDate(b.BookingDate)
	if !ok {
		bad("booking_date", "must be a real calendar date YYYY-MM-DD")
	}
	desc := strings.TrimSpace(b.Description)
	switch {
	case desc == "":
		bad("description", "required")
	case utf8.RuneCountInString(desc) > MaxDescription:
		bad("description", fmt.Sprintf("at most %d characters", MaxDescription))
	}
	switch {
	case len(b.Lines) == 0:
		bad("lines", "at least one line is required")
	case len(b.Lines) > MaxLines:
		bad("lines", fmt.Sprintf("at most %d lines", MaxLines))
	}
	var events []Event
	for i, l := range b.Lines {
		if len(details) > 50 {
			break
		}
		f := func(name string) string { return fmt.Sprintf("lines[%d].%s", i, name) }
		n := len(details)
		checkAccount := func(field, number string) {
			a, ok := chart.Account(number)
			switch {
			case number == "":
				bad(f(field), "required")
			case !ok:
				bad(f(field), "account "+number+" does not exist")
			case !a.IsActive:
				bad(f(field), "account "+number+" is inactive")
			}
		}
		checkAccount("account_debit", l.AccountDebit)
		checkAccount("account_credit", l.AccountCredit)
		if l.AccountDebit != "" && l.AccountDebit == l.AccountCredit {
			bad(f("account_credit"), "must differ from account_debit")
		}
		if !l.Amount.ValidEUR() {
			bad(f("amount"), "must be a positive EUR amount with at most 2 decimals")
		}
		var tc TaxCode
		if l.TaxCode != "" {
			var ok bool
			tc, ok = chart.TaxCode(l.TaxCode)
			switch {
			case !ok:
				bad(f("tax_code"), "tax code "+l.TaxCode+" does not exist")
			case !tc.IsActive:
				bad(f("tax_code"), "tax code "+l.TaxCode+" is inactive")
			}
		}
		if utf8.RuneCountInString(l.Description) > MaxDescription {
			bad(f("description"), fmt.Sprintf("at most %d characters", MaxDescription))
		}
		if (l.FXCurrency == "") != (l.FXAmount == nil) {
			bad(f("fx_currency"), "fx_currency and fx_amount go together")
		}
		if l.FXCurrency != "" && !currencyRe.MatchString(l.FXCurrency) {
			bad(f("fx_currency"), "must be an ISO 4217 code such as USD")
		}
		if l.FXAmount != nil && (!l.FXAmount.IsPositive() || l.FXAmount.Places() > 6 || !l.FXAmount.LessThan(maxFXAmount)) {
			bad(f("fx_amount"), "must be positive, less than 10^15, with at most 6 decimals")
		}
		if len(l.ExternalReference) > MaxExternalRef {
			bad(f("external_reference"), fmt.Sprintf("at most %d characters", MaxExternalRef))
		}
		if len(l.CustomMetadata) > 0 {
			trimmed := bytes.TrimSpace(l.CustomMetadata)
			switch {
			case len(trimmed) > MaxCustomMetadata:
				bad(f("custom_metadata"), fmt.Sprintf("at most %d bytes", MaxCustomMetadata))
			case bytes.Equal(trimmed, []byte("null")):
				l.CustomMetadata = nil
			case trimmed[0] != '{':
				bad(f("custom_metadata"), "must be a JSON object")
			}
		}
		if len(details) > n {
			continue
		}
		events = append(events, expandLine(l, tc, desc, correction(l, tc, chart))...)
	}
	if len(details) > 0 {
		return time.Time{}, nil, errs.Invalid("the booking is invalid; nothing was posted", details...)
	}
	return date, events, nil
}

var hundred = decimal.NewFromInt(100)

// correction says whether a taxed line runs against its code's usual
// direction: output VAT belongs with the revenue, input VAT with the
// expense or asset. An invoice credits revenue, so its VAT is credited; a
// credit note debits revenue (or, for a purchase, credits the expense),
// so the VAT it corrects sits on that side too and the tax base of the
// code shrinks with it.
func correction(l Line, tc TaxCode, chart Chart) bool {
	typeOf := func(n string) string { a, _ := chart.Account(n); return a.Type }
	switch tc.Kind {
	case TaxOutput:
		return typeOf(l.AccountDebit) == Revenue && typeOf(l.AccountCredit) != Revenue
	case TaxInput:
		d, c := typeOf(l.AccountDebit), typeOf(l.AccountCredit)
		return c == Expense && d != Expense || c == Asset && d == Liability
	}
	return false
}

// expandLine splits a taxed line. The gross amount of input and output codes
// is split into net and tax (rounded half away from zero to cents, the tax
// being the remainder so the parts add up exactly); self-assessed codes
// (§13b, intra-EU acquisition) post the amount as net plus a tax pair. The
// VAT account takes the side of the revenue (output) or expense (input)
// account: the credit side for output VAT and the debit side for input
// VAT, the other way round for a correction.
func expandLine(l Line, tc TaxCode, bookingDesc string, correction bool) []Event {
	desc := l.Description
	if desc == "" {
		desc = bookingDesc
	}
	base := Event{
		AccountDebit: l.AccountDebit, AccountCredit: l.AccountCredit, Amount: l.Amount,
		Description: desc, CustomMetadata: l.CustomMetadata,
	}
	if l.TaxCode != "" {
		code := l.TaxCode
		base.TaxCode = &code
	}
	if l.FXCurrency != "" {
		cur := l.FXCurrency
		base.FXCurrency, base.FXAmount = &cur, l.FXAmount
	}
	if l.ExternalReference != "" {
		ref := l.ExternalReference
		base.ExternalReference = &ref
	}
	if l.TaxCode == "" || tc.Rate.IsZero() || tc.Kind == TaxExempt {
		return []Event{base}
	}
	tax := base
	tax.FXCurrency, tax.FXAmount = nil, nil
	switch tc.Kind {
	case TaxReverseCharge, TaxICAcquisition:
		amt := money.New(l.Amount.Mul(tc.Rate.Decimal).Div(hundred)).RoundEUR()
		if amt.IsZero() || tc.SelfAssessAccount == nil {
			return []Event{base}
		}
		tax.Amount = amt
		tax.AccountDebit, tax.AccountCredit = tc.VATAccount, *tc.SelfAssessAccount
		return []Event{base, tax}
	}
	net := money.New(l.Amount.Mul(hundred).Div(hundred.Add(tc.Rate.Decimal))).RoundEUR()
	tax.Amount = l.Amount.Sub(net)
	if tax.Amount.IsZero() {
		return []Event{base}
	}
	base.Amount = net
	if (tc.Kind == TaxOutput) != correction {
		tax.AccountCredit = tc.VATAccount
	} else {
		tax.AccountDebit = tc.VATAccount
	}
	return []Event{base, tax}
}

// Fingerprint identifies a booking for the duplicate check: same date,
// description, accounts and amounts.
func Fingerprint(date time.Time, desc string, events []Event) string {
	parts := make([]string, 0, len(events))
	for _, e := range events {
		parts = append(parts, e.AccountDebit+">"+e.AccountCredit+":"+e.Amount.StringFixed(2))
	}
	slices.Sort(parts)
	h := sha256.Sum256([]byte(date.Format(time.DateOnly) + "\x00" + strings.ToLower(strings.TrimSpace(desc)) + "\x00" + strings.Join(parts, "|")))
	return hex.EncodeToString(h[:16])
}

// RequestHash identifies a request body for idempotency: the same key with
// another body is refused.
func RequestHash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		var buf bytes.Buffer
		if json.Compact(&buf, p) == nil {
			p = buf.Bytes()
		}
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
