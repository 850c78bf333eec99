package csvimport

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// parseDate reads DD.MM.YYYY, D.M.YYYY, DD.MM.YY (20YY: bank exports
// carry no earlier two-digit years), YYYY-MM-DD and DD-MM-YYYY, and answers
// YYYY-MM-DD.
func parseDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	// Revolut writes the time after an ISO date: "2024-10-01 08:00:15"
	// (or with a T); the day is what counts. A German date with a time
	// stays refused: no bank writes one in a booking column.
	if i := strings.IndexAny(s, " T"); i == 10 && strings.Count(s[:i], "-") == 2 && isClock(strings.TrimSpace(s[i+1:])) {
		s = s[:i]
	}
	var y, m, d string
	switch {
	case strings.Count(s, ".") == 2:
		p := strings.Split(s, ".")
		d, m, y = p[0], p[1], p[2]
		if len(y) == 2 {
			y = "20" + y
		}
	case strings.Count(s, "-") == 2:
		p := strings.Split(s, "-")
		y, m, d = p[0], p[1], p[2]
		if len(p[2]) == 4 && len(p[0]) <= 2 {
			d, y = p[0], p[2] // DD-MM-YYYY, as Wise and Dutch banks write it
		}
	default:
		return "", errors.New("is not a date (DD.MM.YYYY, DD.MM.YY or YYYY-MM-DD)")
	}
	if len(y) != 4 || len(m) < 1 || len(m) > 2 || len(d) < 1 || len(d) > 2 || !digits(y+m+d) {
		return "", errors.New("is not a date (DD.MM.YYYY, DD.MM.YY or YYYY-MM-DD)")
	}
	if len(m) == 1 {
		m = "0" + m
	}
	if len(d) == 1 {
		d = "0" + d
	}
	iso := y + "-" + m + "-" + d
	if _, err := time.Parse(time.DateOnly, iso); err != nil {
		return "", errors.New("is no day of the calendar")
	}
	return iso, nil
}

// isClock reports whether s is a time of day such as "08:00", "08:00:15"
// or "08:00:15.123".
func isClock(s string) bool {
	if len(s) < 4 || strings.Count(s, ":") < 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != ':' && c != '.' {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseAmount reads a signed amount as German and English exports write
// it: "1.234,56", "-1234,56", "1,234.56", "1234.56", "+12,00", "12,00-",
// with a currency before or after ("EUR", "€"), spaces or non-breaking
// spaces as grouping. currency is the code found in the cell, "" when
// none. A single separator followed by exactly three digits ("1.234",
// "1,234") groups thousands: no bank writes euro amounts with three
// decimals.
func parseAmount(s string) (amount decimal.Decimal, currency string, err error) {
	bad := func() (decimal.Decimal, string, error) {
		return decimal.Decimal{}, "", errors.New("is not an amount")
	}
	s = strings.TrimSpace(s)
	neg, signs := false, 0
	for range 2 {
		s, currency = stripCurrency(s, currency)
		before := s
		switch {
		case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "−"):
			neg = true
			_, n := utf8.DecodeRuneInString(s)
			s = strings.TrimSpace(s[n:])
		case strings.HasPrefix(s, "+"):
			s = strings.TrimSpace(s[1:])
		case strings.HasSuffix(s, "-"):
			neg = true
			s = strings.TrimSpace(s[:len(s)-1])
		case strings.HasSuffix(s, "+"):
			s = strings.TrimSpace(s[:len(s)-1])
		}
		if s != before {
			signs++
		}
	}
	if signs > 1 {
		return bad()
	}
	s = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "").Replace(s)
	if s == "" || len(s) > 40 {
		return bad()
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != '.' && c != ',' {
			return bad()
		}
	}
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	var intPart, frac string
	var group byte
	switch {
	case lastDot >= 0 && lastComma >= 0:
		dec := max(lastDot, lastComma)
		intPart, frac = s[:dec], s[dec+1:]
		group = ','
		if s[dec] == ',' {
			group = '.'
		}
		if strings.ContainsAny(frac, ".,") || strings.IndexByte(intPart, s[dec]) >= 0 {
			return bad()
		}
	case lastDot >= 0 || lastComma >= 0:
		sep := byte('.')
		if lastComma >= 0 {
			sep = ','
		}
		i := strings.IndexByte(s, sep)
		after := s[i+1:]
		if strings.IndexByte(after, sep) >= 0 || (len(after) == 3 && i >= 1 && i <= 3 && s[0] != '0') {
			intPart, group = s, sep // grouping only: "1.234.567", "1.234"
		} else {
			intPart, frac = s[:i], after
		}
	default:
		intPart = s
	}
	if group != 0 {
		groups := strings.Split(intPart, string(group))
		for k, g := range groups {
			if (k == 0 && (len(g) < 1 || len(g) > 3)) || (k > 0 && len(g) != 3) {
				return bad()
			}
		}
		intPart = strings.Join(groups, "")
	}
	if !digits(intPart) || (frac != "" && !digits(frac)) || (frac == "" && strings.ContainsAny(s, ".,") && group == 0) {
		return bad()
	}
	num := intPart
	if frac != "" {
		num += "." + frac
	}
	amount, err = decimal.NewFromString(num)
	if err != nil {
		return bad()
	}
	if neg {
		amount = amount.Neg()
	}
	return amount, currency, nil
}

// stripCurrency takes a currency code or sign off either end of s.
func stripCurrency(s, currency string) (string, string) {
	if strings.HasPrefix(s, "€") {
		return strings.TrimSpace(s[len("€"):]), "EUR"
	}
	if strings.HasSuffix(s, "€") {
		return strings.TrimSpace(s[:len(s)-len("€")]), "EUR"
	}
	if len(s) > 3 && letters(s[:3]) {
		return strings.TrimSpace(s[3:]), strings.ToUpper(s[:3])
	}
	if len(s) > 3 && letters(s[len(s)-3:]) {
		return strings.TrimSpace(s[:len(s)-3]), strings.ToUpper(s[len(s)-3:])
	}
	return s, currency
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// currencyCode answers the ISO 4217 code a currency cell names, "" when
// it names none.
func currencyCode(s string) string {
	s = strings.TrimSpace(s)
	if s == "€" {
		return "EUR"
	}
	if len(s) == 3 && letters(s) {
		return strings.ToUpper(s)
	}
	return ""
}

// MaxTextBytes bounds each text field of an entry (name, reference,
// booking text, references); longer text is cut at a character boundary.
const MaxTextBytes = 1024

// clean makes a cell a single line of valid UTF-8: control characters
// and line breaks (a multi-line Verwendungszweck) become spaces, runs of
// spaces one, and the result is cut to MaxTextBytes.
func clean(s string) string {
	if plain(s) {
		return s
	}
	if len(s) > MaxRecordBytes {
		s = s[:MaxRecordBytes]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) > MaxTextBytes {
		cut := MaxTextBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// plain reports whether s is already what clean makes of it: printable
// ASCII, short, no leading, trailing or double spaces.
func plain(s string) bool {
	if len(s) > MaxTextBytes || (s != "" && (s[0] == ' ' || s[len(s)-1] == ' ')) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || (c == ' ' && s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// normIBAN answers s as an IBAN (upper case, no spaces) when it has the
// shape and the ISO 13616 check digits of one, else "".
func normIBAN(s string) string {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "\u00a0", "").Replace(strings.TrimSpace(s)))
	if len(s) < 15 || len(s) > 34 || !letters(s[:2]) || !digits(s[2:4]) {
		return ""
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return ""
		}
	}
	if rem != 1 {
		return ""
	}
	return s
}

// normBIC answers s as a BIC (8 or 11 letters and digits, upper case),
// else "".
func normBIC(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if (len(s) != 8 && len(s) != 11) || !letters(s[:4]) || !letters(s[4:6]) {
		return ""
	}
	for i := 6; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return ""
		}
	}
	return s
}

// ibanIn finds an IBAN in a preamble cell such as "DE12 3456 ... /
// Girokonto" or "Kontonummer: DE12...".
func ibanIn(cell string) string {
	if len(cell) > 200 {
		return ""
	}
	for _, part := range strings.FieldsFunc(cell, func(r rune) bool { return r == '/' || r == ':' || r == ',' || r == ';' }) {
		if iban := normIBAN(part); iban != "" {
			return iban
		}
	}
	// "Girokonto DE12 3456 ...": words around the IBAN, which may be
	// written in groups of four.
	for _, m := range ibanLike.FindAllString(strings.ToUpper(cell), -1) {
		// The match may run into a word after the IBAN ("... 90 EUR"):
		// the longest run of its groups that is an IBAN wins.
		groups := strings.Fields(m)
		for n := len(groups); n > 0; n-- {
			if iban := normIBAN(strings.Join(groups[:n], "")); iban != "" {
				return iban
			}
		}
	}
	return ""
}

var ibanLike = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b`)

func quote(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", strings.ToValidUTF8(s, "\uFFFD"))
}
