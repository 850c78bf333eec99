package payables

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// legalForms are the tokens of legal forms (and their joining words) that
// do not tell two vendors apart: "Müller GmbH", "MUELLER GMBH" and
// "Müller" are one vendor to the person who pays them. Tokens are written
// as NameKey leaves them (lower case, umlauts transliterated, dots
// dropped: "e.K." is "ek").
var legalForms = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`
		gmbh mbh ag kg ohg ug gbr ek ekfm ekfr ev eg kgaa se partg partgmbb
		co und haftungsbeschraenkt
		ltd limited plc llp inc corp corporation llc
		bv nv sarl sas sa srl spa sro aps`) {
		m[t] = true
	}
	return m
}()

// NameKey is the form in which vendor names are compared for duplicates:
// lower case, ä ö ü ß as ae oe ue ss, other accents dropped, dots removed
// (so "e.K." stays one token), other punctuation a word break, single
// letters in a row joined ("e. K." as "ek", "A. B. C." as "abc"), and the
// legal-form tokens left out. A name of legal-form tokens only keeps them,
// so that it still has a key. The unique index on the stored key decides
// duplicates; changing this function needs a migration that recomputes
// the stored keys.
func NameKey(name string) string {
	s := strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "ae", "Ö", "oe", "Ü", "ue", "ß", "ss", "ẞ", "ss").Replace(name)
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r), r == '.':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(' ')
		}
	}
	all := joinInitials(strings.Fields(b.String()))
	var kept []string
	for _, t := range all {
		if !legalForms[t] {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	return strings.Join(kept, " ")
}

// joinInitials joins single-letter tokens in a row into one: the spaced
// abbreviations "e. K." and "e. V." are then the tokens their unspaced
// forms are, and "A B C Bau" is "ABC Bau".
func joinInitials(tokens []string) []string {
	var out []string
	initials := false
	for _, t := range tokens {
		single := utf8.RuneCountInString(t) == 1
		if single && initials {
			out[len(out)-1] += t
			continue
		}
		out = append(out, t)
		initials = single
	}
	return out
}
