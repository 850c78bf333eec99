package bank

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Matching suggestions (specification: Matching suggestion): each open
// bank transaction of a bank account against the tenant's open items and
// the bookings on the account's ledger account that no transaction
// explains yet. A suggestion names an intent, never a line.
//
// Scoring is in points out of 100 (match_score is points/100):
//
//	amount     45 exact; 30 within 0.5 % (or 1.00 EUR when that is at most
//	           2 %); 25 up to 3 % below an open item (a cash discount);
//	           10 within 5 %; a bank booking only exact (45) or close (20)
//	reference  35 the invoice number (external reference) in the remittance
//	           text; 30 a document number of the booking text there
//	party      10 the counterparty's name or IBAN in the booking text;
//	           5 part of the name
//	date       up to 10 for a payment soon after the invoice, or a bank
//	           booking within a day
//
// A candidate needs an amount, reference or party signal and 20 points;
// the date alone suggests nothing. The direction must fit: money in
// against a receivable or a booking of money in, money out against a
// payable or a booking of money out.

// SuggestionStore reads what suggestions are computed from.
type SuggestionStore interface {
	// SuggestionData reads, in one snapshot, the bank account, its open
	// transactions booked from..to ("" is unbounded), the tenant's open
	// items and the account's unexplained bank bookings; an unknown bank
	// account is NOT_FOUND.
	SuggestionData(ctx context.Context, tenantID, bankAccountID, from, to string) (SuggestionData, error)
}

// SuggestionData is the input of Suggest as the store reads it.
type SuggestionData struct {
	Account      Account
	Transactions []SuggestTx
	Items        []OpenItem
	Bookings     []LedgerBooking
}

// SuggestTx is what scoring reads of an open bank transaction. Remittance
// is the text a payer writes: the reference and the EndToEndId.
type SuggestTx struct {
	ID               string
	Date             string // YYYY-MM-DD
	Amount           decimal.Decimal
	Currency         string
	CounterpartyName string
	CounterpartyIBAN string
	Remittance       string
}

// Suggestions answers GET /v1/bank-transactions/suggestions.
func (s *Service) Suggestions(ctx context.Context, tenantID string, q bankv1.SuggestionQuery) ([]bankv1.Suggestion, error) {
	if !ValidID(q.BankAccountID) {
		return nil, notFound(q.BankAccountID)
	}
	from, to := "", ""
	if q.Period != "" {
		first, err := time.Parse("2006-01", q.Period)
		if err != nil {
			return nil, errs.Invalid("invalid period", errs.Field("period", "a month YYYY-MM"))
		}
		from, to = first.Format(time.DateOnly), first.AddDate(0, 1, -1).Format(time.DateOnly)
	}
	d, err := s.store.SuggestionData(ctx, tenantID, q.BankAccountID, from, to)
	if err != nil {
		return nil, err
	}
	return Suggest(d.Transactions, d.Items, d.Bookings, q.Limit), nil
}

// ParseSuggestionQuery checks the query of GET /v1/bank-transactions/suggestions.
func ParseSuggestionQuery(get func(string) string, limit int) (bankv1.SuggestionQuery, error) {
	q := bankv1.SuggestionQuery{BankAccountID: get("bank_account_id"), Period: get("period"), Limit: limit}
	var details []errs.Detail
	if q.BankAccountID == "" {
		details = append(details, errs.Field("bank_account_id", "required"))
	} else if !ValidID(q.BankAccountID) {
		details = append(details, errs.Field("bank_account_id", "must be a UUID"))
	}
	if q.Period != "" {
		if t, err := time.Parse("2006-01", q.Period); err != nil || t.Year() < 1900 {
			details = append(details, errs.Field("period", "a month YYYY-MM"))
		}
	}
	if len(details) > 0 {
		return bankv1.SuggestionQuery{}, errs.Invalid("invalid query", details...)
	}
	return q, nil
}

// Points of each signal.
const (
	ptsAmountExact    = 45
	ptsAmountClose    = 30
	ptsAmountDiscount = 25
	ptsAmountNear     = 10
	ptsRefExternal    = 35
	ptsRefText        = 30
	ptsParty          = 10
	ptsPartyPartial   = 5
	minPoints         = 20

	// A word found in more booking texts than this says nothing about
	// the party (the tenant's own name, "Rechnung").
	maxWordPostings = 256
	// Runs of letters or digits joined to look up a reference: RE 2026
	// 001 is RE-2026-001.
	maxRunsJoined = 6
	maxKeyLen     = 40
)

// candidate is an open item or bank booking prepared for scoring.
type candidate struct {
	kind, intentID, account string
	date                    string
	day                     int // days since 1970
	description             string
	amount                  money.Amount // signed as the bank sees it
	cents                   int64        // |amount| in cents
	in                      bool         // money in
	refText                 string
	ibanish                 bool    // the text has something like DE44: scoring looks for the IBAN only then
	alnum                   *string // description and reference, letters and digits upper case (IBAN search), made when first needed
	order                   int
	// fxNote, for an open item in a foreign currency, tells how it is
	// settled: its amount is the EUR carrying amount, and a single
	// reconcile refuses it (the document amount settled must be given).
	fxNote string
}

type refPosting struct {
	cand     int32
	external bool
	shown    string // the reference as the booking wrote it
}

type amountPosting struct {
	cents int64
	cand  int32
}

// suggestIndex finds the candidates worth scoring for a transaction
// without looking at all of them: amounts sorted per direction, a map of
// normalised references and one of booking-text words.
type suggestIndex struct {
	cands    []candidate
	byAmount [2][]amountPosting // [0] money in, [1] money out
	byRef    map[string][]refPosting
	byWord   map[string][]int32
}

func newSuggestIndex(items []OpenItem, bookings []LedgerBooking) *suggestIndex {
	n := len(items) + len(bookings)
	ix := &suggestIndex{cands: make([]candidate, 0, n), byRef: make(map[string][]refPosting, 2*n), byWord: make(map[string][]int32, n/4)}
	add := func(c candidate, ref *string) {
		i := int32(len(ix.cands))
		c.order = int(i)
		c.day = dayNumber(c.date)
		c.in = c.amount.IsPositive()
		c.cents = toCents(c.amount.Decimal.Abs())
		refText := ""
		if ref != nil {
			refText = *ref
		}
		c.refText = refText
		c.ibanish = ibanLike(c.description) || ibanLike(refText)
		ix.cands = append(ix.cands, c)
		dir := 1
		if c.in {
			dir = 0
		}
		ix.byAmount[dir] = append(ix.byAmount[dir], amountPosting{c.cents, i})
		var seenKeys []string // a few per candidate: a slice beats a map
		seen := func(k string) bool { return slices.Contains(seenKeys, k) }
		if refText != "" {
			runs := alnumRuns(refText)
			if k := strings.Join(runs, ""); refKey(k, 3) && !(isDigits(k) && len(k) < 4) {
				seenKeys = append(seenKeys, k)
				ix.byRef[k] = append(ix.byRef[k], refPosting{i, true, strings.TrimSpace(refText)})
			}
			// The number alone: "Rechnung 2026-001" pays RE-2026-001.
			var digits strings.Builder
			letters := false
			for _, r := range runs {
				if isDigits(r) {
					digits.WriteString(r)
				} else {
					letters = true
				}
			}
			if k := digits.String(); letters && len(k) >= 5 && !seen(k) {
				seenKeys = append(seenKeys, k)
				ix.byRef[k] = append(ix.byRef[k], refPosting{i, true, strings.TrimSpace(refText)})
			}
		}
		for _, tok := range strings.Fields(c.description) {
			if !strings.ContainsAny(tok, "0123456789") {
				continue
			}
			k := strings.Join(alnumRuns(tok), "")
			if seen(k) || !refKey(k, 4) || (isDigits(k) && len(k) < 5) {
				continue
			}
			seenKeys = append(seenKeys, k)
			ix.byRef[k] = append(ix.byRef[k], refPosting{i, false, strings.Trim(tok, ".,;:()[]\"'")})
		}
		for _, w := range uniq(nameWords(c.description)) {
			ix.byWord[w] = append(ix.byWord[w], i)
		}
	}
	for _, it := range items {
		c := candidate{kind: bankv1.CandidateOpenReceivable, intentID: it.IntentID, account: it.AccountNumber, date: it.BookingDate,
			description: it.Description, amount: it.OpenAmount}
		if it.Party == Creditor {
			c.kind = bankv1.CandidateOpenLiability
		}
		if it.Direction == Payable {
			c.amount = it.OpenAmount.Neg()
		}
		if it.Currency != "" && it.Currency != DefaultCurrency && it.OriginalDocAmount != nil {
			open := it.OriginalDocAmount.Decimal.Sub(it.AllocatedDocAmount.Decimal)
			c.fxNote = fmt.Sprintf("The invoice is in %s (%s %s open, carried at %s EUR): settle it with a match group (POST /v1/bank-match-groups) giving settled_document_amount; the difference books as an exchange gain or loss.",
				it.Currency, open.StringFixed(2), it.Currency, it.OpenAmount.StringFixed(2))
		}
		add(c, it.ExternalReference)
	}
	for _, b := range bookings {
		add(candidate{kind: bankv1.CandidateBankBooking, intentID: b.IntentID, account: b.AccountNumber, date: b.BookingDate,
			description: b.Description, amount: b.Amount}, b.ExternalReference)
	}
	for d := range ix.byAmount {
		slices.SortFunc(ix.byAmount[d], func(a, b amountPosting) int {
			if a.cents != b.cents {
				return cmpInt64(a.cents, b.cents)
			}
			return int(a.cand - b.cand)
		})
	}
	return ix
}

// hit is what a transaction's look-ups found for one candidate.
type hit struct {
	gen      int32
	ref      int8 // 0 none, 1 booking text, 2 external reference
	refShown string
	words    int
}

// Suggest scores every open transaction against the open items and bank
// bookings and answers the best first: at most
// bankv1.MaxSuggestionsPerTransaction per transaction, at most limit in
// all (limit <= 0 is bankv1.DefaultSuggestionsLimit).
func Suggest(txs []SuggestTx, items []OpenItem, bookings []LedgerBooking, limit int) []bankv1.Suggestion {
	if limit <= 0 {
		limit = bankv1.DefaultSuggestionsLimit
	}
	ix := newSuggestIndex(items, bookings)
	hits := make([]hit, len(ix.cands))
	type scored struct {
		tx     int
		cand   int32
		points int
		diff   int64
		days   int
		why    []string
	}
	var all []scored
	var touched []int32
	var keyBuf [maxKeyLen + 64]byte
	for ti, tx := range txs {
		gen := int32(ti + 1)
		touched = touched[:0]
		touch := func(c int32) *hit {
			h := &hits[c]
			if h.gen != gen {
				*h = hit{gen: gen}
				touched = append(touched, c)
			}
			return h
		}
		in := tx.Amount.IsPositive()
		cents := toCents(tx.Amount.Abs())
		dir := 1
		if in {
			dir = 0
		}
		if tx.Currency == "" || tx.Currency == "EUR" {
			lo, hi := amountWindow(cents)
			list := ix.byAmount[dir]
			for k, _ := slices.BinarySearchFunc(list, lo, func(p amountPosting, v int64) int { return cmpInt64(p.cents, v) }); k < len(list) && list[k].cents <= hi; k++ {
				touch(list[k].cand)
			}
		}
		runs := alnumRuns(tx.Remittance)
		for i := range runs {
			key := keyBuf[:0]
			for j := i; j < len(runs) && j < i+maxRunsJoined; j++ {
				key = append(key, runs[j]...)
				if len(key) > maxKeyLen {
					break
				}
				// m[string(b)] looks up without allocating.
				for _, p := range ix.byRef[string(key)] {
					if ix.cands[p.cand].in != in {
						continue
					}
					h := touch(p.cand)
					if r := refLevel(p.external); r > h.ref {
						h.ref, h.refShown = r, p.shown
					}
				}
			}
		}
		txWords := uniq(nameWords(tx.CounterpartyName))
		for _, w := range txWords {
			list := ix.byWord[w]
			if len(list) > maxWordPostings {
				continue
			}
			for _, c := range list {
				if ix.cands[c].in == in {
					touch(c).words++
				}
			}
		}
		iban := NormalizeIBAN(tx.CounterpartyIBAN)
		txDay := dayNumber(tx.Date)
		// The best few by insertion: most candidates never make it, so a
		// sort of all of them is wasted.
		better := func(a, b *scored) bool {
			switch {
			case a.points != b.points:
				return a.points > b.points
			case a.diff != b.diff:
				return a.diff < b.diff
			case a.days != b.days:
				return a.days < b.days
			}
			return ix.cands[a.cand].order < ix.cands[b.cand].order
		}
		best := make([]scored, 0, bankv1.MaxSuggestionsPerTransaction+1)
		for _, c := range touched {
			cd := &ix.cands[c]
			if cd.in != in {
				continue
			}
			pts, diff, days, _ := score(tx, txDay, cents, cd, &hits[c], len(txWords), iban, false)
			if pts < minPoints {
				continue
			}
			s := scored{ti, c, pts, diff, days, nil}
			if len(best) == bankv1.MaxSuggestionsPerTransaction && !better(&s, &best[len(best)-1]) {
				continue
			}
			i := len(best)
			for i > 0 && better(&s, &best[i-1]) {
				i--
			}
			best = slices.Insert(best, i, s)
			if len(best) > bankv1.MaxSuggestionsPerTransaction {
				best = best[:bankv1.MaxSuggestionsPerTransaction]
			}
		}
		for i := range best {
			_, _, _, best[i].why = score(tx, txDay, cents, &ix.cands[best[i].cand], &hits[best[i].cand], len(txWords), iban, true)
		}
		all = append(all, best...)
	}
	// Best first across transactions; equal scores in statement order.
	slices.SortStableFunc(all, func(a, b scored) int {
		if a.points != b.points {
			return b.points - a.points
		}
		if txs[a.tx].Date != txs[b.tx].Date {
			return strings.Compare(txs[a.tx].Date, txs[b.tx].Date)
		}
		return a.tx - b.tx
	})
	if len(all) > limit {
		all = all[:limit]
	}
	out := make([]bankv1.Suggestion, len(all))
	for i, s := range all {
		c := &ix.cands[s.cand]
		out[i] = bankv1.Suggestion{BankTransactionID: txs[s.tx].ID, LedgerIntentID: c.intentID, CandidateKind: c.kind,
			MatchScore: float64(s.points) / 100, MatchReasons: s.why, LedgerDescription: c.description, LedgerAmount: c.amount, LedgerDate: c.date}
		if c.kind != bankv1.CandidateBankBooking {
			acc := c.account
			out[i].OpenItemAccount = &acc
		}
	}
	return out
}

func refLevel(external bool) int8 {
	if external {
		return 2
	}
	return 1
}

// score weighs one transaction against one candidate of its direction:
// points, the amount difference in cents and the date distance in days
// (for ordering equal scores), and the reasons in words.
//
// Ranking calls it with explain false, which formats nothing: only the
// few suggestions kept are explained.
func score(tx SuggestTx, txDay int, cents int64, c *candidate, h *hit, nameWords int, iban string, explain bool) (int, int64, int, []string) {
	var why []string
	// say formats only when explaining: ranking scores many pairs.
	say := func(f func() string) {
		if explain {
			why = append(why, f())
		}
	}
	pts, signals := 0, 0
	cur := tx.Currency
	if cur == "" {
		cur = "EUR"
	}
	var what, open string
	if explain {
		what, open = describe(c), c.amount.Decimal.Abs().StringFixed(2)+" "+cur
	}
	diff := cents - c.cents
	absDiff := diff
	if absDiff < 0 {
		absDiff = -absDiff
	}
	booking := c.kind == bankv1.CandidateBankBooking
	if cur == "EUR" {
		rel := float64(absDiff) / float64(max(c.cents, 1))
		switch {
		case diff == 0:
			pts += ptsAmountExact
			say(func() string { return fmt.Sprintf("The amount matches %s exactly (%s).", what, open) })
		// A euro off is close for an invoice of hundreds, not for one of 5.00.
		case rel <= 0.005 || absDiff <= 100 && rel <= 0.02:
			if booking {
				pts += ptsAmountClose - 10
			} else {
				pts += ptsAmountClose
			}
			say(func() string {
				return fmt.Sprintf("The amount differs by only %s %s from %s (%s).", centsText(absDiff), cur, what, open)
			})
		case !booking && diff < 0 && rel <= 0.03:
			pts += ptsAmountDiscount
			say(func() string {
				return fmt.Sprintf("The payment is %s %% (%s %s) below %s (%s), as with a cash discount (Skonto).", percent(rel), centsText(absDiff), cur, what, open)
			})
		case !booking && rel <= 0.05:
			pts += ptsAmountNear
			say(func() string { return fmt.Sprintf("The amount is within 5 %% of %s (%s).", what, open) })
		}
		if pts > 0 {
			signals++
		}
	}
	amountPts := pts
	switch h.ref {
	case 2:
		pts += ptsRefExternal
		signals++
		say(func() string {
			return fmt.Sprintf("The invoice number %s appears in the payment reference.", h.refShown)
		})
	case 1:
		pts += ptsRefText
		signals++
		say(func() string {
			return fmt.Sprintf("The reference %s from the booking text appears in the payment reference.", h.refShown)
		})
	}
	// With a reference but no amount signal, say how the amounts relate:
	// a partial or a collective payment.
	if h.ref > 0 && amountPts == 0 {
		if cur == "EUR" && diff < 0 {
			say(func() string {
				return fmt.Sprintf("The payment covers %s of %s (a partial payment).", centsText(cents), open)
			})
		} else if cur == "EUR" && diff > 0 {
			say(func() string {
				return fmt.Sprintf("The payment exceeds %s (%s) by %s %s.", what, open, centsText(diff), cur)
			})
		}
	}
	switch {
	case len(iban) >= 15 && c.ibanish && strings.Contains(c.alnumText(), iban):
		pts += ptsParty
		signals++
		say(func() string { return "The counterparty's IBAN appears in the booking text." })
	case nameWords > 0 && h.words >= nameWords:
		pts += ptsParty
		signals++
		say(func() string {
			return fmt.Sprintf("The counterparty %s appears in the booking text.", strings.TrimSpace(tx.CounterpartyName))
		})
	case h.words > 0:
		pts += ptsPartyPartial
		say(func() string {
			return fmt.Sprintf("Part of the counterparty name %s appears in the booking text.", strings.TrimSpace(tx.CounterpartyName))
		})
	}
	days := txDay - c.day
	datePts, dateWhy := dateScore(days, booking, c.date, explain)
	pts += datePts
	if dateWhy != "" {
		why = append(why, dateWhy)
	}
	if signals == 0 {
		return 0, 0, 0, nil
	}
	if c.fxNote != "" {
		say(func() string { return c.fxNote })
	}
	if days < 0 {
		days = -days
	}
	return min(pts, 100), absDiff, days, why
}

func (c *candidate) alnumText() string {
	if c.alnum == nil {
		a := alnumUpper(c.description + " " + c.refText)
		c.alnum = &a
	}
	return *c.alnum
}

func describe(c *candidate) string {
	switch c.kind {
	case bankv1.CandidateOpenReceivable:
		return "the open receivable on " + c.account
	case bankv1.CandidateOpenLiability:
		return "the open payable on " + c.account
	}
	return "the booking on " + c.account
}

// dateScore: days is the transaction's date less the candidate's. A
// payment follows its invoice; a bank booking carries the bank's date.
func dateScore(days int, booking bool, date string, explain bool) (int, string) {
	r := func(pts int, format string, args ...any) (int, string) {
		if !explain {
			return pts, ""
		}
		return pts, fmt.Sprintf(format, args...)
	}
	if booking {
		switch a := abs(days); {
		case a == 0:
			return r(10, "Booked on the same day.")
		case a <= 1:
			return r(10, "Booked one day apart (%s).", date)
		case a <= 5:
			return r(6, "Booked %d days apart (%s).", a, date)
		case a <= 15:
			return r(3, "Booked %d days apart (%s).", a, date)
		}
		return 0, ""
	}
	switch {
	case days == 0:
		return r(10, "Paid on the invoice date (%s).", date)
	case days > 0 && days <= 14:
		return r(10, "Paid %d days after the invoice date (%s).", days, date)
	case days > 0 && days <= 45:
		return r(6, "Paid %d days after the invoice date (%s).", days, date)
	case days > 0 && days <= 120:
		return r(3, "Paid %d days after the invoice date (%s).", days, date)
	case days < 0 && days >= -7:
		return r(5, "Paid %d days before the invoice date (%s).", -days, date)
	}
	return 0, ""
}

// amountWindow is the range of candidate amounts (cents) worth scoring
// against a transaction of cents: within 5 % or 1.00 EUR.
func amountWindow(cents int64) (lo, hi int64) {
	lo, hi = cents*100/105, (cents*100+94)/95
	if cents-100 < lo {
		lo = cents - 100
	}
	if cents+100 > hi {
		hi = cents + 100
	}
	return max(lo, 0), hi
}

func toCents(d decimal.Decimal) int64 { return d.Shift(2).Round(0).IntPart() }

func centsText(c int64) string {
	return decimal.New(c, -2).StringFixed(2)
}

func percent(rel float64) string {
	return strconv.FormatFloat(math.Round(rel*1000)/10, 'f', 1, 64)
}

// dayNumber is the days since 1970-01-01 of a date YYYY-MM-DD (0 for
// anything else), computed without time.Parse: scoring needs it for
// every candidate.
func dayNumber(date string) int {
	if len(date) != 10 || date[4] != '-' || date[7] != '-' {
		return 0
	}
	num := func(s string) int {
		n := 0
		for _, r := range s {
			if r < '0' || r > '9' {
				return -1
			}
			n = n*10 + int(r-'0')
		}
		return n
	}
	y, m, d := num(date[:4]), num(date[5:7]), num(date[8:])
	if y < 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0
	}
	// Days from civil (H. Hinnant): March-based years put the leap day last.
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// alnumRuns splits s into runs of letters and digits, upper case: "Re-Nr.
// 2026/001" is RE, NR, 2026, 001. Joining runs ignores case, spaces and
// dashes alike.
func alnumRuns(s string) []string {
	var runs []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			runs = append(runs, strings.ToUpper(s[start:end]))
			start = -1
		}
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return runs
}

func alnumUpper(s string) string { return strings.Join(alnumRuns(s), "") }

// refKey: a normalised reference that can name one document: long enough
// and holding a digit.
func refKey(k string, minLen int) bool {
	return len(k) >= minLen && len(k) <= maxKeyLen && strings.ContainsFunc(k, unicode.IsDigit)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// nameWords are the words of a name or booking text that can name a
// party: lower case, umlauts spelt out as banks do (Müller, MUELLER),
// without legal forms and filler words.
func nameWords(s string) []string {
	var out []string
	var buf [64]byte
	w := buf[:0]
	emit := func() {
		if len(w) >= 3 && !stopWords[string(w)] && !isDigits(string(w)) {
			out = append(out, string(w))
		}
		w = buf[:0]
	}
	// One pass, lower case and umlauts spelt out as it goes: this runs for
	// every candidate's booking text.
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			w = append(w, byte(r+'a'-'A'))
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			w = append(w, byte(r))
		case r == 'ä' || r == 'Ä':
			w = append(w, 'a', 'e')
		case r == 'ö' || r == 'Ö':
			w = append(w, 'o', 'e')
		case r == 'ü' || r == 'Ü':
			w = append(w, 'u', 'e')
		case r == 'ß':
			w = append(w, 's', 's')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w = utf8.AppendRune(w, unicode.ToLower(r))
		default:
			emit()
		}
	}
	emit()
	return out
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`gmbh mbh ohg gbr ltd inc llc corp und the and for von vom der die das den dem des bei mit fuer
		aus auf zur zum haftungsbeschraenkt sepa gutschrift lastschrift ueberweisung rechnung rechnungen zahlung zahlungseingang
		ausgangsrechnung eingangsrechnung gmbhco kgaa invoice payment nr. nummer kunde kunden lieferant`) {
		stopWords[w] = true
	}
}

// ibanLike: two letters and two digits in a row, as an IBAN starts.
func ibanLike(s string) bool {
	letter := func(b byte) bool { return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }
	digit := func(b byte) bool { return b >= '0' && b <= '9' }
	for i := 0; i+3 < len(s); i++ {
		if letter(s[i]) && letter(s[i+1]) && digit(s[i+2]) && digit(s[i+3]) {
			return true
		}
	}
	return false
}

func uniq(ws []string) []string {
	slices.Sort(ws)
	return slices.Compact(ws)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
