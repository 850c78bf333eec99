package receivables

import (
	"fmt"
	"regexp"
)

// DefaultInvoicePrefix begins a tenant's invoice numbers until it sets its
// own.
const DefaultInvoicePrefix = "RE-"

var invoicePrefixRe = regexp.MustCompile(`^[A-Za-z0-9_/.-]{0,10}$`)

// CheckInvoicePrefix returns what is wrong with an invoice number prefix,
// "" when nothing: up to 10 letters, digits or - _ / ., so that a number
// stays readable in a payment reference; empty means none.
func CheckInvoicePrefix(p string) string {
	if !invoicePrefixRe.MatchString(p) {
		return "at most 10 letters, digits or the characters - _ / ."
	}
	return ""
}

// FormatInvoiceNumber writes the n-th invoice number of a year:
// RE-2025-00001; past 99999 the number just grows.
func FormatInvoiceNumber(prefix string, year int, n int64) string {
	return fmt.Sprintf("%s%04d-%05d", prefix, year, n)
}
