package ledger

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The adjust instruction parser: a small, deterministic language in German
// and English for correcting a review item's booking draft. It never
// guesses: an instruction it does not fully understand is refused with the
// list of supported forms, and nothing is changed.

// MaxInstruction bounds the length of an adjust instruction.
const MaxInstruction = 1000

const maxClauses = 20

// AdjustChart is what the parser needs of the chart: accounts and tax codes
// to look up, and every tax code to choose a replacement rate from.
type AdjustChart interface {
	Chart
	TaxCodes() []TaxCode
}

// AdjustForms are the supported instruction forms, shown when an
// instruction is not understood.
var AdjustForms = []string{
	`"Konto 6805 statt 6815" / "account 6805 instead of 6815": replace an account on any side`,
	`"7 % statt 19 %" / "7% instead of 19%": switch tax codes to the same kind with the other rate (VSt19 → VSt7)`,
	`"Datum 2025-03-31" / "date 31.03.2025": set the booking date`,
	`"Betrag 119,00" / "amount 119.00": set the amount of a single-line draft`,
	`"Text Büromaterial März" / "description Office supplies": set the booking text`,
	`"aufteilen 60/40 auf 6805 und 6815" / "split 60/40 between 6805 and 6815": split a single-line draft across accounts`,
	`combine instructions with ";", "und" or "and"`,
}

var (
	reVerb    = regexp.MustCompile(`(?i)^(?:bitte\s+)?(?:use|set|change|nimm|nehme|verwende|setze|ändere|aendere)\s+`)
	reAccount = regexp.MustCompile(`(?i)^(?:(?:gegen|sach)?konto|account|acct\.?)\s+(\d{1,8})\s+(?:statt|anstatt|anstelle\s+von|instead\s+of|rather\s+than|for)\s+(?:(?:gegen|sach)?konto\s+|account\s+)?(\d{1,8})$`)
	// Old account first: "Konto 6815 durch 6805 ersetzen", "replace account 6815 with 6805".
	reReplace = regexp.MustCompile(`(?i)^(?:ersetze\s+)?(?:(?:gegen|sach)?konto\s+)(\d{1,8})\s+durch\s+(?:konto\s+)?(\d{1,8})(?:\s+ersetzen)?$|^replace\s+(?:account\s+)?(\d{1,8})\s+(?:with|by)\s+(?:account\s+)?(\d{1,8})$`)
	reRate    = regexp.MustCompile(`(?i)^(?:(?:steuer(?:satz)?|ust|mwst|vst|vat|tax(?:\s+rate)?)\s+)?(\d{1,2}(?:[.,]\d{1,2})?)\s*%\s+(?:statt|anstatt|instead\s+of|rather\s+than|for)\s+(?:(?:steuer(?:satz)?|ust|mwst|vst|vat|tax(?:\s+rate)?)\s+)?(\d{1,2}(?:[.,]\d{1,2})?)\s*%$`)
	reDate    = regexp.MustCompile(`(?i)^(?:buchungsdatum|datum|booking\s+date|date)(?:\s*[:=]\s*|\s+(?:auf|to|on)\s+|\s+)(\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.\d{4})$`)
	reAmount  = regexp.MustCompile(`(?i)^(?:betrag|bruttobetrag|summe|amount|gross\s+amount|total)(?:\s*[:=]\s*|\s+(?:auf|to)\s+|\s+)(?:€|eur)?\s*([0-9][0-9.,]*)\s*(?:€|eur)?$`)
	reText    = regexp.MustCompile(`(?i)^(?:buchungstext|beschreibung|text|description)(?:\s*[:=]\s*|\s+to\s+|\s+)(.+)$`)
	reSplit   = regexp.MustCompile(`(?i)^(?:aufteilen|aufteilung|split)\s+(?:in\s+)?(\d+(?:[.,]\d+)?\s*%?(?:\s*/\s*\d+(?:[.,]\d+)?\s*%?)+)\s+(?:auf|zwischen|between|across|into|among|on|to)\s+(?:(?:die\s+)?konten\s+|(?:the\s+)?accounts\s+)?(\d{1,8}(?:\s*[,/]\s*\d{1,8})*)\s+(?:und|and|&)\s+(\d{1,8})$`)
	// A clause starts with one of these; anything else after a separator
	// continues the clause before it ("auf 6805 und 6815").
	reClauseStart = regexp.MustCompile(`(?i)^(?:(?:bitte\s+)?(?:use|set|change|nimm|nehme|verwende|setze|ändere|aendere|replace|ersetze)\b|(?:gegen|sach)?konto\b|account\b|acct\b|buchungsdatum\b|datum\b|booking\s+date\b|date\b|betrag\b|bruttobetrag\b|summe\b|amount\b|gross\s+amount\b|total\b|buchungstext\b|beschreibung\b|text\b|description\b|aufteilen\b|aufteilung\b|split\b|steuer|ust\b|mwst\b|vst\b|vat\b|tax\b|\d{1,2}(?:[.,]\d{1,2})?\s*%)`)
	reSeparator   = regexp.MustCompile(`(?i)\s*,\s+|\s+(?:und|and|&)\s+`)
	reSplitAccts  = regexp.MustCompile(`\s*[,/]\s*`)
)

// Adjust applies an instruction to a draft and returns the adjusted draft
// and a description of each change. The input draft is not modified.
func Adjust(s Suggestion, instruction string, chart AdjustChart) (Suggestion, []string, error) {
	instruction = strings.TrimSpace(instruction)
	switch {
	case instruction == "":
		return s, nil, unsupported("instruction is required")
	case len([]rune(instruction)) > MaxInstruction:
		return s, nil, errs.Invalid("the instruction is too long", errs.Field("instruction", fmt.Sprintf("at most %d characters", MaxInstruction)))
	}
	clauses := splitClauses(instruction)
	if len(clauses) > maxClauses {
		return s, nil, errs.Invalid("too many instructions at once", errs.Field("instruction", fmt.Sprintf("at most %d", maxClauses)))
	}
	out := s.clone()
	var applied []string
	for _, c := range clauses {
		msg, err := applyClause(&out, c, chart)
		if err != nil {
			return s, nil, err
		}
		applied = append(applied, msg)
	}
	return out, applied, nil
}

// splitClauses splits at ";" and new lines, then at ", ", "und", "and" and
// "&" wherever the next part starts a new instruction.
func splitClauses(s string) []string {
	var out []string
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		seps := reSeparator.FindAllStringIndex(seg, -1)
		start, cur := 0, ""
		for _, sep := range seps {
			piece := seg[start:sep[0]]
			next := seg[sep[1]:]
			cur += piece
			if reClauseStart.MatchString(next) && cur != "" {
				out = append(out, strings.TrimSpace(cur))
				cur = ""
			} else {
				cur += seg[sep[0]:sep[1]]
			}
			start = sep[1]
		}
		cur += seg[start:]
		if c := strings.TrimSpace(cur); c != "" {
			out = append(out, c)
		}
	}
	return out
}

func unsupported(msg string) error {
	details := make([]errs.Detail, 0, len(AdjustForms))
	for _, f := range AdjustForms {
		details = append(details, errs.Field("instruction", "supported: "+f))
	}
	return errs.Invalid(msg+"; supported are: Konto/account X statt/instead of Y, N % statt/instead of M %, Datum/date, Betrag/amount, Text/description, aufteilen/split P/Q auf/between A und/and B", details...)
}

// bad is a refusal of an understood clause that cannot be applied.
func bad(clause, format string, args ...any) error {
	return errs.Invalid(fmt.Sprintf("%q: ", clause)+fmt.Sprintf(format, args...), errs.Field("instruction", fmt.Sprintf(format, args...)))
}

func applyClause(s *Suggestion, clause string, chart AdjustChart) (string, error) {
	c := strings.TrimRight(strings.TrimSpace(clause), ".!")
	c = strings.Join(strings.Fields(c), " ")
	body := reVerb.ReplaceAllString(c, "")
	if m := reAccount.FindStringSubmatch(body); m != nil {
		return replaceAccount(s, clause, m[2], m[1], chart)
	}
	if m := reReplace.FindStringSubmatch(body); m != nil {
		if m[1] != "" {
			return replaceAccount(s, clause, m[1], m[2], chart)
		}
		return replaceAccount(s, clause, m[3], m[4], chart)
	}
	if m := reRate.FindStringSubmatch(body); m != nil {
		return switchRate(s, clause, m[2], m[1], chart)
	}
	if m := reDate.FindStringSubmatch(body); m != nil {
		return setDate(s, clause, m[1])
	}
	if m := reAmount.FindStringSubmatch(body); m != nil {
		return setAmount(s, clause, m[1])
	}
	if m := reSplit.FindStringSubmatch(body); m != nil {
		accounts := append(reSplitAccts.Split(strings.TrimSpace(m[2]), -1), m[3])
		return split(s, clause, m[1], accounts, chart)
	}
	if m := reText.FindStringSubmatch(body); m != nil {
		return setText(s, clause, m[1])
	}
	return "", unsupported(fmt.Sprintf("the instruction %q was not understood", truncate(clause, 100)))
}

func checkAccount(clause, number string, chart Chart) error {
	a, ok := chart.Account(number)
	switch {
	case !ok:
		return bad(clause, "account %s does not exist in the chart of accounts", number)
	case !a.IsActive:
		return bad(clause, "account %s is inactive", number)
	}
	return nil
}

func lineCount(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

func replaceAccount(s *Suggestion, clause, old, repl string, chart Chart) (string, error) {
	if old == repl {
		return "", bad(clause, "both accounts are %s", old)
	}
	if err := checkAccount(clause, repl, chart); err != nil {
		return "", err
	}
	n := 0
	for i := range s.Lines {
		l := &s.Lines[i]
		hit := false
		if l.AccountDebit == old {
			l.AccountDebit, hit = repl, true
		}
		if l.AccountCredit == old {
			l.AccountCredit, hit = repl, true
		}
		if hit {
			if l.AccountDebit == l.AccountCredit {
				return "", bad(clause, "line %d would book %s against itself", i+1, repl)
			}
			n++
		}
	}
	if n == 0 {
		return "", bad(clause, "account %s does not appear in the draft", old)
	}
	return fmt.Sprintf("account %s replaced by %s on %s", old, repl, lineCount(n)), nil
}

func parseRate(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(strings.ReplaceAll(s, ",", "."))
	return d
}

func switchRate(s *Suggestion, clause, oldS, newS string, chart AdjustChart) (string, error) {
	oldR, newR := parseRate(oldS), parseRate(newS)
	if oldR.Equal(newR) {
		return "", bad(clause, "both rates are %s %%", oldR.String())
	}
	codes := chart.TaxCodes()
	type change struct{ from, to string }
	var changes []change
	for i := range s.Lines {
		l := &s.Lines[i]
		if l.TaxCode == "" {
			continue
		}
		tc, ok := chart.TaxCode(l.TaxCode)
		if !ok || !tc.Rate.Equal(oldR) {
			continue
		}
		repl, ok := replacementCode(tc, newR, codes)
		if !ok {
			return "", bad(clause, "there is no active %s tax code with %s %% in the chart", tc.Kind, newR.String())
		}
		if !slices.Contains(changes, change{tc.Code, repl.Code}) {
			changes = append(changes, change{tc.Code, repl.Code})
		}
		l.TaxCode = repl.Code
	}
	if len(changes) == 0 {
		return "", bad(clause, "no line of the draft uses a tax code with %s %%", oldR.String())
	}
	var parts []string
	for _, c := range changes {
		parts = append(parts, c.from+" → "+c.to)
	}
	return fmt.Sprintf("tax %s %% replaced by %s %%: %s", oldR.String(), newR.String(), strings.Join(parts, ", ")), nil
}

// replacementCode picks the tax code of the same kind with the new rate:
// the one named like the old with the rate changed (VSt19 → VSt7) if it
// exists, else the first by code that also agrees on self-assessment.
func replacementCode(old TaxCode, rate decimal.Decimal, codes []TaxCode) (TaxCode, bool) {
	var cands []TaxCode
	for _, c := range codes {
		if c.IsActive && c.Kind == old.Kind && c.Rate.Equal(rate) && (c.SelfAssessAccount == nil) == (old.SelfAssessAccount == nil) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return TaxCode{}, false
	}
	want := strings.Replace(old.Code, old.Rate.String(), rate.String(), 1)
	for _, c := range cands {
		if strings.EqualFold(c.Code, want) {
			return c, true
		}
	}
	slices.SortFunc(cands, func(a, b TaxCode) int { return strings.Compare(a.Code, b.Code) })
	return cands[0], true
}

var reDMY = regexp.MustCompile(`^(\d{1,2})\.(\d{1,2})\.(\d{4})$`)

func setDate(s *Suggestion, clause, v string) (string, error) {
	if m := reDMY.FindStringSubmatch(v); m != nil {
		day, _ := strconv.Atoi(m[1])
		month, _ := strconv.Atoi(m[2])
		v = fmt.Sprintf("%s-%02d-%02d", m[3], month, day)
	}
	if _, ok := ParseDate(v); !ok {
		return "", bad(clause, "%s is not a real calendar date", v)
	}
	s.BookingDate = v
	return "booking date set to " + v, nil
}

var (
	reAmountDE = regexp.MustCompile(`^(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d{1,2})?$`)
	reAmountEN = regexp.MustCompile(`^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?$`)
)

// ParseAmountText reads a EUR amount written the German (1.234,56) or the
// English way (1,234.56); at most two decimals, so 1.234 and 1,234 are both
// one thousand two hundred thirty-four.
func ParseAmountText(v string) (money.Amount, bool) {
	v = strings.TrimSpace(v)
	var norm string
	switch {
	case reAmountEN.MatchString(v):
		norm = strings.ReplaceAll(v, ",", "")
	case reAmountDE.MatchString(v):
		norm = strings.ReplaceAll(strings.ReplaceAll(v, ".", ""), ",", ".")
	default:
		return money.Amount{}, false
	}
	a, err := money.Parse(norm)
	if err != nil || !a.ValidEUR() {
		return money.Amount{}, false
	}
	return a, true
}

func setAmount(s *Suggestion, clause, v string) (string, error) {
	if len(s.Lines) != 1 {
		return "", bad(clause, "the amount can only be set on a draft with exactly one line (this one has %d); edit the draft instead", len(s.Lines))
	}
	a, ok := ParseAmountText(v)
	if !ok {
		return "", bad(clause, "%s is not a positive EUR amount with at most two decimals", v)
	}
	s.Lines[0].Amount = a
	return "amount set to " + a.StringFixed(2), nil
}

func setText(s *Suggestion, clause, v string) (string, error) {
	v = strings.TrimSpace(v)
	v = strings.TrimSpace(strings.Trim(v, `"'„“”‚‘’«»`))
	switch {
	case v == "":
		return "", bad(clause, "the text is empty")
	case len([]rune(v)) > MaxDescription:
		return "", bad(clause, "the text is longer than %d characters", MaxDescription)
	}
	s.Description = v
	return fmt.Sprintf("description set to %q", v), nil
}

var hundredPct = decimal.NewFromInt(100)

func split(s *Suggestion, clause, pctS string, accounts []string, chart Chart) (string, error) {
	var pcts []decimal.Decimal
	sum := decimal.Zero
	for _, p := range strings.Split(pctS, "/") {
		d := parseRate(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p), "%")))
		if !d.IsPositive() {
			return "", bad(clause, "every share must be above 0 %%")
		}
		pcts = append(pcts, d)
		sum = sum.Add(d)
	}
	switch {
	case !sum.Equal(hundredPct):
		return "", bad(clause, "the shares add up to %s %%, not 100 %%", sum.String())
	case len(pcts) != len(accounts):
		return "", bad(clause, "%d shares but %d accounts", len(pcts), len(accounts))
	case len(s.Lines) != 1:
		return "", bad(clause, "only a draft with exactly one line can be split (this one has %d); edit the draft instead", len(s.Lines))
	}
	l := s.Lines[0]
	if l.FXCurrency != "" {
		return "", bad(clause, "a foreign-currency line cannot be split; edit the draft instead")
	}
	if !l.Amount.ValidEUR() {
		return "", bad(clause, "the draft's amount is not a valid EUR amount")
	}
	for i, a := range accounts {
		if slices.Contains(accounts[:i], a) {
			return "", bad(clause, "account %s is named twice", a)
		}
		if err := checkAccount(clause, a, chart); err != nil {
			return "", err
		}
	}
	credit := splitsCredit(l, chart)
	other := l.AccountCredit
	if credit {
		other = l.AccountDebit
	}
	lines := make([]Line, 0, len(pcts))
	rest := l.Amount
	var parts []string
	for i, p := range pcts {
		part := rest
		if i < len(pcts)-1 {
			part = money.New(l.Amount.Mul(p).Div(hundredPct)).RoundEUR()
			rest = rest.Sub(part)
		}
		if !part.IsPositive() {
			return "", bad(clause, "%s %% of %s is less than one cent", p.String(), l.Amount.StringFixed(2))
		}
		if accounts[i] == other {
			return "", bad(clause, "account %s is already the other side of the line", other)
		}
		nl := l
		nl.Amount = part
		if credit {
			nl.AccountCredit = accounts[i]
		} else {
			nl.AccountDebit = accounts[i]
		}
		lines = append(lines, nl)
		parts = append(parts, part.StringFixed(2)+" on "+accounts[i])
	}
	s.Lines = lines
	return fmt.Sprintf("amount %s split %s: %s", l.Amount.StringFixed(2), strings.ReplaceAll(pctS, " ", ""), strings.Join(parts, ", ")), nil
}

// splitsCredit says which side a split replaces: the revenue side (credit)
// of sales drafts, otherwise the expense side (debit).
func splitsCredit(l Line, chart Chart) bool {
	if l.TaxCode != "" {
		if tc, ok := chart.TaxCode(l.TaxCode); ok {
			return tc.Kind == TaxOutput
		}
	}
	d, _ := chart.Account(l.AccountDebit)
	c, _ := chart.Account(l.AccountCredit)
	return c.Type == Revenue && d.Type != Expense
}

// TaxCodes lists the cached tax codes by code.
func (c *chartCache) TaxCodes() []TaxCode {
	out := make([]TaxCode, 0, len(c.codes))
	for _, t := range c.codes {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b TaxCode) int { return strings.Compare(a.Code, b.Code) })
	return out
}
