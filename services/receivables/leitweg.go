package receivables

import (
	"regexp"
	"strings"
)

// leitwegRe is the form of a Leitweg-ID (XRechnung buyer reference of a
// German public authority, KoSIT Leitweg-ID format specification 2.0):
// the coarse address of 2 to 12 digits, an optional fine address of up to
// 30 letters and digits, and two check digits, joined by hyphens.
var leitwegRe = regexp.MustCompile(`^[0-9]{2,12}(-[A-Za-z0-9]{1,30})?-[0-9]{2}$`)

// CheckLeitwegID returns what is wrong with a Leitweg-ID, "" when nothing.
// The check digits are ISO 7064 MOD 97-10 over the coarse and fine address
// without hyphens, letters counted as A=10 … Z=35: the whole, check digits
// included, leaves remainder 1 when divided by 97, as an IBAN does.
func CheckLeitwegID(id string) string {
	if !leitwegRe.MatchString(id) {
		return "a Leitweg-ID: 2 to 12 digits, optionally a hyphen and up to 30 letters or digits, a hyphen and 2 check digits, e.g. 04011000-1234512345-06"
	}
	if leitwegRemainder(id) != 1 {
		return "check digits do not match (ISO 7064 MOD 97-10)"
	}
	return ""
}

// LeitwegCheckDigits computes the two check digits of a Leitweg-ID's
// coarse and fine address (e.g. "04011000-1234512345" → "06").
func LeitwegCheckDigits(address string) string {
	r := leitwegRemainder(address + "-00")
	d := 98 - r
	return string([]byte{byte('0' + d/10), byte('0' + d%10)})
}

// leitwegRemainder is the MOD 97 remainder of the ID's digits, letters
// replaced by their numbers, taken digit by digit (the ID has up to 74
// digits, beyond any integer type); the regular expression admits only
// ASCII letters and digits besides the hyphens skipped here.
func leitwegRemainder(id string) int {
	rem := 0
	add := func(d int) { rem = (rem*10 + d) % 97 }
	for _, r := range strings.ToUpper(id) {
		switch {
		case r >= '0' && r <= '9':
			add(int(r - '0'))
		case r >= 'A' && r <= 'Z':
			n := int(r-'A') + 10
			add(n / 10)
			add(n % 10)
		}
	}
	return rem
}
