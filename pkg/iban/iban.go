// Package iban checks IBANs (ISO 13616) and BICs (ISO 9362), shared by the
// services that keep bank details (bank's accounts and transactions,
// payables' vendors), since services never import each other.
package iban

import (
	"strconv"
	"strings"
)

// ibanLength is the IBAN length of every country in the SWIFT IBAN
// registry (ISO 13616). French overseas departments and territories,
// Monaco's neighbours and the like use their parent's code.
var ibanLength = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// Normalize removes spaces and upper-cases s, the form an IBAN is
// stored and compared in (printed IBANs come in groups of four).
func Normalize(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// Check explains why a normalised IBAN is not valid, or returns "":
// a registry country, that country's length, letters and digits only, and
// the ISO 13616 check digits (the number read with A=10 … Z=35 after
// moving the first four characters to the end is 1 modulo 97).
func Check(iban string) string {
	if len(iban) < 15 || len(iban) > 34 {
		return "15 to 34 letters and digits"
	}
	for i := 0; i < len(iban); i++ {
		c := iban[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return "letters and digits only"
		}
	}
	want, ok := ibanLength[iban[:2]]
	if !ok {
		return "unknown IBAN country " + iban[:2]
	}
	if len(iban) != want {
		return "an IBAN of " + iban[:2] + " has " + strconv.Itoa(want) + " characters"
	}
	if iban[2] > '9' || iban[3] > '9' {
		return "check digits must be digits"
	}
	rem := 0
	for _, c := range iban[4:] + iban[:4] {
		if c >= 'A' {
			rem = (rem*100 + int(c-'A') + 10) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	if rem != 1 {
		return "check digits do not match (ISO 13616 mod 97)"
	}
	return ""
}

// NormalizeBIC trims and upper-cases s.
func NormalizeBIC(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// CheckBIC explains why a normalised BIC (ISO 9362) is not valid, or
// returns "": 4 letters of the bank, 2 letters of the country, 2 letters or
// digits of the location and optionally 3 of the branch.
func CheckBIC(bic string) string {
	const issue = "8 or 11 characters: 4 letters (bank), 2 letters (country), 2 letters or digits (location), optionally 3 letters or digits (branch)"
	if len(bic) != 8 && len(bic) != 11 {
		return issue
	}
	for i := 0; i < len(bic); i++ {
		c := bic[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if i < 6 && !letter || i >= 6 && !letter && !digit {
			return issue
		}
	}
	return ""
}
