package payables

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
)

// Confidences of the vendor match methods, and the least name similarity
// that is offered as a suggestion.
var (
	confidenceVATID = decimal.NewFromInt(1)
	confidenceIBAN  = decimal.RequireFromString("0.95")
	confidenceName  = decimal.RequireFromString("0.9")
	minSimilarity   = decimal.RequireFromString("0.6")
)

// MatchVendor finds the vendor of an extracted document among the
// tenant's active vendors: the VAT ID (normalised) decides first, as it
// names exactly one business; then the IBAN the document asks to pay to;
// then the name, compared as NameKey leaves it (exact: matched;
// similar enough: only suggested, a person decides). Inactive vendors are
// never matched.
func MatchVendor(r payablesv1.OCRResult, vendors []Vendor) payablesv1.VendorMatch {
	if vat := NormalizeVATID(r.VendorVATID); vat != "" {
		for _, v := range vendors {
			if v.IsActive && v.VATID != nil && NormalizeVATID(*v.VATID) == vat {
				return matched(payablesv1.MatchMatched, v.ID, confidenceVATID, payablesv1.MatchByVATID)
			}
		}
	}
	if iban := NormalizeIBAN(r.VendorIBAN); iban != "" {
		for _, v := range vendors {
			if v.IsActive && v.IBAN != nil && NormalizeIBAN(*v.IBAN) == iban {
				return matched(payablesv1.MatchMatched, v.ID, confidenceIBAN, payablesv1.MatchByIBAN)
			}
		}
	}
	key := NameKey(r.VendorName)
	if strings.TrimSpace(key) == "" {
		return unmatched()
	}
	var best *Vendor
	bestScore := decimal.Zero
	for i, v := range vendors {
		if !v.IsActive {
			continue
		}
		vk := NameKey(v.Name)
		if vk == key {
			return matched(payablesv1.MatchMatched, v.ID, confidenceName, payablesv1.MatchByName)
		}
		// Ties go to the first vendor: the store lists them by name, so
		// the answer does not depend on the order rows come back in.
		if s := NameSimilarity(key, vk); s.GreaterThan(bestScore) {
			best, bestScore = &vendors[i], s
		}
	}
	if best == nil || bestScore.LessThan(minSimilarity) {
		return unmatched()
	}
	return matched(payablesv1.MatchSuggested, best.ID, bestScore, payablesv1.MatchByName)
}

func matched(status, id string, c decimal.Decimal, method string) payablesv1.VendorMatch {
	return payablesv1.VendorMatch{Status: status, VendorID: &id, Confidence: money.New(c), MatchMethod: &method}
}

func unmatched() payablesv1.VendorMatch {
	return payablesv1.VendorMatch{Status: payablesv1.MatchNone, Confidence: money.New(decimal.Zero)}
}

// NormalizeVATID is a VAT ID as stored: upper case, without the spaces,
// dots and dashes people and documents write into it.
func NormalizeVATID(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '\t', '\u00a0':
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(s)))
}

// NormalizeIBAN is an IBAN in its electronic form: upper case, no spaces.
func NormalizeIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// NameSimilarity compares two name keys (NameKey) from 0 to 1: the
// better of the share of common words and the share of common trigrams
// (as pg_trgm counts them, each word padded with two spaces in front and
// one behind), so that "Mueller Bau" and "Bau Mueller" are alike by their
// words and "Mueller Baustoffe" and "Mueller Bausoffe" by their letters.
// It is cut to two places, the confidence a suggestion shows.
func NameSimilarity(a, b string) decimal.Decimal {
	return decimal.Max(jaccard(tokens(a), tokens(b)), jaccard(trigrams(a), trigrams(b)))
}

func tokens(s string) map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(s) {
		m[t] = true
	}
	return m
}

func trigrams(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		r := []rune("  " + w + " ")
		for i := 0; i+3 <= len(r); i++ {
			m[string(r[i:i+3])] = true
		}
	}
	return m
}

func jaccard(a, b map[string]bool) decimal.Decimal {
	if len(a) == 0 || len(b) == 0 {
		return decimal.Zero
	}
	common := 0
	for k := range a {
		if b[k] {
			common++
		}
	}
	// Cut, not rounded: 0.599 is below the 0.6 a suggestion needs.
	return decimal.NewFromInt(int64(common)).DivRound(decimal.NewFromInt(int64(len(a)+len(b)-common)), 6).Truncate(2)
}
