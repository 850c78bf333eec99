// Package vatid checks EU VAT identification numbers (USt-IdNr.) by the
// format of their country, as the EU's VIES service describes them. It is
// shared by the services that keep business partners (receivables'
// debtors, payables' vendors), since services never import each other.
package vatid

import (
	"regexp"
	"strings"
)

// vatFormat is the form of one country's VAT identification number after
// its two-letter prefix, as the EU's VIES service describes them, with the
// form written out for the client that got it wrong.
type vatFormat struct {
	re   *regexp.Regexp
	form string
}

// vatFormats holds every EU member state (Greece as EL, its VIES prefix)
// and XI, Northern Ireland, which stays in the EU VAT area for goods.
var vatFormats = map[string]vatFormat{
	"AT": {regexp.MustCompile(`^U[0-9]{8}$`), "ATU + 8 digits"},
	"BE": {regexp.MustCompile(`^[01][0-9]{9}$`), "BE + 10 digits beginning with 0 or 1"},
	"BG": {regexp.MustCompile(`^[0-9]{9,10}$`), "BG + 9 or 10 digits"},
	"CY": {regexp.MustCompile(`^[0-9]{8}[A-Z]$`), "CY + 8 digits + 1 letter"},
	"CZ": {regexp.MustCompile(`^[0-9]{8,10}$`), "CZ + 8 to 10 digits"},
	"DE": {regexp.MustCompile(`^[0-9]{9}$`), "DE + 9 digits"},
	"DK": {regexp.MustCompile(`^[0-9]{8}$`), "DK + 8 digits"},
	"EE": {regexp.MustCompile(`^[0-9]{9}$`), "EE + 9 digits"},
	"EL": {regexp.MustCompile(`^[0-9]{9}$`), "EL + 9 digits"},
	"ES": {regexp.MustCompile(`^([A-Z][0-9]{7}[A-Z0-9]|[0-9]{8}[A-Z])$`), "ES + a letter, 7 digits and a letter or digit, or 8 digits and a letter"},
	"FI": {regexp.MustCompile(`^[0-9]{8}$`), "FI + 8 digits"},
	"FR": {regexp.MustCompile(`^[0-9A-HJ-NP-Z]{2}[0-9]{9}$`), "FR + 2 letters or digits (not I or O) + 9 digits"},
	"HR": {regexp.MustCompile(`^[0-9]{11}$`), "HR + 11 digits"},
	"HU": {regexp.MustCompile(`^[0-9]{8}$`), "HU + 8 digits"},
	"IE": {regexp.MustCompile(`^([0-9]{7}[A-W][A-I]?|[0-9][A-Z+*][0-9]{5}[A-W])$`), "IE + 7 digits and 1 or 2 letters, or digit, letter, 5 digits, letter"},
	"IT": {regexp.MustCompile(`^[0-9]{11}$`), "IT + 11 digits"},
	"LT": {regexp.MustCompile(`^([0-9]{9}|[0-9]{12})$`), "LT + 9 or 12 digits"},
	"LU": {regexp.MustCompile(`^[0-9]{8}$`), "LU + 8 digits"},
	"LV": {regexp.MustCompile(`^[0-9]{11}$`), "LV + 11 digits"},
	"MT": {regexp.MustCompile(`^[0-9]{8}$`), "MT + 8 digits"},
	"NL": {regexp.MustCompile(`^[0-9]{9}B[0-9]{2}$`), "NL + 9 digits + B + 2 digits"},
	"PL": {regexp.MustCompile(`^[0-9]{10}$`), "PL + 10 digits"},
	"PT": {regexp.MustCompile(`^[0-9]{9}$`), "PT + 9 digits"},
	"RO": {regexp.MustCompile(`^[1-9][0-9]{1,9}$`), "RO + 2 to 10 digits"},
	"SE": {regexp.MustCompile(`^[0-9]{10}01$`), "SE + 12 digits ending in 01"},
	"SI": {regexp.MustCompile(`^[0-9]{8}$`), "SI + 8 digits"},
	"SK": {regexp.MustCompile(`^[0-9]{10}$`), "SK + 10 digits"},
	"XI": {regexp.MustCompile(`^([0-9]{9}|[0-9]{12}|GD[0-4][0-9]{2}|HA[5-9][0-9]{2})$`), "XI + 9 or 12 digits, GD + 3 digits or HA + 3 digits"},
}

// Normalize writes a VAT ID as VIES does: upper case, without the
// spaces, dots and hyphens people group it with.
func Normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-':
			return -1
		}
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

// Check returns what is wrong with a normalised VAT ID, "" when
// nothing: its prefix must be an EU member state's (EL for Greece) or XI,
// and the rest that country's format.
func Check(id string) string {
	if len(id) < 2 {
		return "an EU VAT ID: country prefix and number, e.g. DE123456789"
	}
	f, ok := vatFormats[id[:2]]
	if !ok {
		if id[:2] == "GR" {
			return "Greek VAT IDs begin with EL, not GR"
		}
		return "an EU VAT ID beginning with the country prefix of an EU member state (EL for Greece) or XI, e.g. DE123456789"
	}
	if !f.re.MatchString(id[2:]) {
		return "expected format " + f.form
	}
	return ""
}
