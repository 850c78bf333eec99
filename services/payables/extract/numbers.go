package extract

import (
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// numberRun is a maximal run of digits and separators, an amount
// candidate; moneyRe then requires two decimals in German (1.234,56) or
// English (1,234.56) notation. Two decimals tell an amount from a
// quantity, a year or a postcode.
var (
	numberRun = regexp.MustCompile(`(?:[-−]\s?)?\d[\d.,']*\d-?`)
	moneyRe   = regexp.MustCompile(`^(?:[-−]\s?)?(?:\d{1,3}(?:[.,']\d{3})+|\d+)[.,]\d{2}-?$`)
)

// percentRe is a tax rate: "19 %", "7%", "19,00 %", "7.0%".
var percentRe = regexp.MustCompile(`(\d{1,2}(?:[.,]\d{1,2})?)\s?%`)

// parseMoney reads one amount; the last separator is the decimal one.
func parseMoney(s string) (decimal.Decimal, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "−") {
		neg = true
		s = strings.TrimLeft(s, "-− ")
	}
	if strings.HasSuffix(s, "-") {
		neg = true
		s = strings.TrimRight(s, "- ")
	}
	i := strings.LastIndexAny(s, ".,")
	var b strings.Builder
	for j, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case j == i:
			b.WriteByte('.')
		case r == '.' || r == ',' || r == '\'':
		default:
			return decimal.Decimal{}, false
		}
	}
	d, err := decimal.NewFromString(b.String())
	if err != nil {
		return decimal.Decimal{}, false
	}
	if neg {
		d = d.Neg()
	}
	return d, true
}

// parseQuantity reads a quantity or a rate: 3, 1,5, 2.25, 1.000 (a
// thousand when three digits follow a single separator and the other
// separator is absent is ambiguous; quantities take it as a decimal
// only with a comma, as German invoices write 1,000 kg).
func parseQuantity(s string) (decimal.Decimal, bool) {
	s = strings.TrimSpace(s)
	if strings.Count(s, ",")+strings.Count(s, ".") > 1 {
		return parseMoney(s)
	}
	d, err := decimal.NewFromString(strings.ReplaceAll(s, ",", "."))
	return d, err == nil
}

// amounts are the money amounts of a line, left to right, with dates and
// percentages taken out first so "12.01.2026" or "19,00 %" are not read
// as amounts.
func amounts(line string) []decimal.Decimal {
	line = dateRe.ReplaceAllString(line, " ")
	line = percentRe.ReplaceAllString(line, " ")
	var out []decimal.Decimal
	for _, m := range numberRun.FindAllString(line, -1) {
		if !moneyRe.MatchString(m) {
			continue
		}
		if d, ok := parseMoney(strings.ReplaceAll(m, " ", "")); ok {
			out = append(out, d)
		}
	}
	return out
}

var months = map[string]time.Month{
	"januar": 1, "jänner": 1, "jan": 1, "january": 1,
	"februar": 2, "feb": 2, "february": 2,
	"märz": 3, "maerz": 3, "mär": 3, "mrz": 3, "march": 3, "mar": 3,
	"april": 4, "apr": 4,
	"mai": 5, "may": 5,
	"juni": 6, "jun": 6, "june": 6,
	"juli": 7, "jul": 7, "july": 7,
	"august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9,
	"oktober": 10, "okt": 10, "october": 10, "oct": 10,
	"november": 11, "nov": 11,
	"dezember": 12, "dez": 12, "december": 12, "dec": 12,
}

const monthAlt = `januar|jänner|january|februar|february|märz|maerz|march|april|mai|may|juni|june|juli|july|august|september|oktober|october|november|dezember|december|jan|feb|mär|mrz|mar|apr|jun|jul|aug|sept|sep|okt|oct|nov|dez|dec`

// dateRe is a date as invoices write it: 05.01.2026, 5.1.26, 2026-01-05,
// 5. Januar 2026, 5 January 2026, January 5, 2026, 05/01/2026.
var dateRe = regexp.MustCompile(`(?i)\b(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4}|\d{2})\b` +
	`|\b(\d{4})-(\d{2})-(\d{2})\b` +
	`|\b(\d{1,2})\.?\s+(` + monthAlt + `)\.?\s+(\d{4})\b` +
	`|\b(` + monthAlt + `)\.?\s+(\d{1,2}),?\s+(\d{4})\b` +
	`|\b(\d{1,2})/(\d{1,2})/(\d{4})\b`)

// monthYearRe is a month alone: "Januar 2026", a service period.
var monthYearRe = regexp.MustCompile(`(?i)\b(` + monthAlt + `)\.?\s+(\d{4})\b`)

type foundDate struct {
	t          time.Time
	start, end int
}

// dates are the valid dates in s, left to right.
func dates(s string) []foundDate {
	var out []foundDate
	for _, m := range dateRe.FindAllStringSubmatchIndex(s, -1) {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		var y, mo, d int
		switch {
		case g(1) != "":
			d, mo, y = atoi(g(1)), atoi(g(2)), atoi(g(3))
			if y < 100 {
				y += 2000
			}
		case g(4) != "":
			y, mo, d = atoi(g(4)), atoi(g(5)), atoi(g(6))
		case g(7) != "":
			d, mo, y = atoi(g(7)), int(months[strings.ToLower(g(8))]), atoi(g(9))
		case g(10) != "":
			mo, d, y = int(months[strings.ToLower(g(10))]), atoi(g(11)), atoi(g(12))
		case g(13) != "":
			d, mo, y = atoi(g(13)), atoi(g(14)), atoi(g(15))
			if mo > 12 && d <= 12 { // US order
				d, mo = mo, d
			}
		}
		t, ok := mkDate(y, mo, d)
		if ok {
			out = append(out, foundDate{t: t, start: m[0], end: m[1]})
		}
	}
	return out
}

func mkDate(y, mo, d int) (time.Time, bool) {
	if y < 1990 || y > 2100 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false // 31.02.
	}
	return t, true
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 1e6 {
			return -1
		}
		n = n*10 + int(r-'0')
	}
	return n
}
