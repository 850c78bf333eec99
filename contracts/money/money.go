// Package money holds exact decimal amounts. JSON numbers are parsed from
// their text, never through float64, and EUR amounts carry two decimals.
package money

import (
	"bytes"
	"fmt"

	"github.com/shopspring/decimal"
)

// Amount is an exact decimal that marshals as a JSON number.
type Amount struct{ decimal.Decimal }

// Parse reads a decimal from text.
func Parse(s string) (Amount, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Amount{}, fmt.Errorf("money.Parse: %q is not a decimal number", s)
	}
	return Amount{d}, nil
}

// MustParse is Parse for constants in code and tests.
func MustParse(s string) Amount {
	a, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return a
}

// New wraps a decimal.
func New(d decimal.Decimal) Amount { return Amount{d} }

// Zero is 0.
var Zero = Amount{decimal.Zero}

// UnmarshalJSON accepts a JSON number or a numeric string, parsed exactly.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return fmt.Errorf("amount must not be null")
	}
	if len(b) > 0 && b[0] == '"' {
		b = bytes.Trim(b, `"`)
	}
	if len(b) == 0 || len(b) > 40 {
		return fmt.Errorf("amount %q is not a decimal number", b)
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return fmt.Errorf("amount %q is not a decimal number", b)
	}
	a.Decimal = d
	return nil
}

// MarshalJSON writes a JSON number with at least two decimals.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Exponent() >= -2 {
		return []byte(a.StringFixed(2)), nil
	}
	return []byte(a.String()), nil
}

// Places is the number of decimal places the value needs.
func (a Amount) Places() int32 {
	n := a.Decimal
	if n.IsZero() {
		return 0
	}
	// Strip trailing zeros: 1.50 needs one place, 100 needs none.
	s := n.String()
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return int32(len(s) - 1 - i)
		}
	}
	return 0
}

// ValidEUR reports whether a is a positive EUR amount with at most two
// decimals and below a sanity bound that keeps it inside NUMERIC(18,2).
func (a Amount) ValidEUR() bool {
	return a.IsPositive() && a.Places() <= 2 && a.LessThan(maxEUR)
}

var maxEUR = decimal.New(1, 15) // 1e15 EUR

// Add, Sub and Neg keep Amount closed under arithmetic.
func (a Amount) Add(b Amount) Amount { return Amount{a.Decimal.Add(b.Decimal)} }
func (a Amount) Sub(b Amount) Amount { return Amount{a.Decimal.Sub(b.Decimal)} }
func (a Amount) Neg() Amount         { return Amount{a.Decimal.Neg()} }

// RoundEUR rounds half away from zero to cents, the commercial rule for VAT.
func (a Amount) RoundEUR() Amount { return Amount{a.Decimal.Round(2)} }
