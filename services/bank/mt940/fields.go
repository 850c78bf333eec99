package mt940

import (
	"fmt"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/shopspring/decimal"
)

// parseBalance reads :60F:/:60M:/:62F:/:62M: "C170914EUR12345,12": mark,
// date YYMMDD, currency, amount with a decimal comma.
func parseBalance(f field) (bank.Balance, string, error) {
	v := strings.TrimSpace(oneLine(f.val))
	if len(v) < 11 {
		return bank.Balance{}, "", lineErr(f.line, f.tag, "balance shorter than mark, date, currency and amount")
	}
	neg := false
	switch v[0] {
	case 'C':
	case 'D':
		neg = true
	default:
		return bank.Balance{}, "", lineErr(f.line, f.tag, fmt.Sprintf("debit/credit mark %q is neither C nor D", v[0]))
	}
	date, err := yymmdd(v[1:7])
	if err != nil {
		return bank.Balance{}, "", lineErr(f.line, f.tag, err.Error())
	}
	cur := v[7:10]
	if !isUpper(cur) {
		return bank.Balance{}, "", lineErr(f.line, f.tag, fmt.Sprintf("currency %q is not three letters", cur))
	}
	amt, err := amount(strings.TrimSpace(v[10:]))
	if err != nil {
		return bank.Balance{}, "", lineErr(f.line, f.tag, err.Error())
	}
	if neg {
		amt = amt.Neg()
	}
	return bank.Balance{Date: date.Format(time.DateOnly), Amount: amt}, cur, nil
}

// parseLine61 reads the statement line:
//
//	6!n value date, [4!n] entry date, 2a mark (C, D, RC, RD), [1!a] third
//	letter of the currency, 15d amount, 1!a3!c type code, 16x customer
//	reference, [//16x] bank reference, [\n34x] supplementary details
//
// Sparkassen have been seen to break the line between the mark and the
// amount; the break is skipped there.
func parseLine61(f field) (bank.Entry, error) {
	v := f.val
	bad := func(issue string) (bank.Entry, error) { return bank.Entry{}, lineErr(f.line, f.tag, issue) }
	if len(v) < 6 || !isDigits(v[:6]) {
		return bad("no value date (YYMMDD) at the start")
	}
	value, err := yymmdd(v[:6])
	if err != nil {
		return bad(err.Error())
	}
	v = v[6:]
	booking := value
	if len(v) >= 4 && isDigits(v[:4]) {
		booking, err = entryDate(value, v[:4])
		if err != nil {
			return bad(err.Error())
		}
		v = v[4:]
	}
	var e bank.Entry
	// RC reverses a credit, so money goes out; RD reverses a debit, so
	// money comes back in.
	neg := false
	switch {
	case strings.HasPrefix(v, "RC"):
		e.Reversal, neg, v = true, true, v[2:]
	case strings.HasPrefix(v, "RD"):
		e.Reversal, v = true, v[2:]
	case strings.HasPrefix(v, "C"):
		v = v[1:]
	case strings.HasPrefix(v, "D"):
		neg, v = true, v[1:]
	default:
		return bad("no debit/credit mark (C, D, RC or RD) after the dates")
	}
	if len(v) > 0 && v[0] >= 'A' && v[0] <= 'Z' {
		v = v[1:] // funds code, the currency's third letter
	}
	v = strings.TrimLeft(v, "\n ")
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == ',') {
		i++
	}
	if i < len(v) && !(v[i] >= 'A' && v[i] <= 'Z' || v[i] == '\n' || v[i] == '/') {
		// "1.50" or "1 500,00": not a SWIFT amount, and guessing could
		// book a thousandfold amount.
		i = len(v)
		if nl := strings.IndexByte(v, '\n'); nl >= 0 {
			i = nl
		}
	}
	amt, err := amount(v[:i])
	if err != nil {
		return bad(err.Error())
	}
	if neg {
		amt = amt.Neg()
	}
	v = v[i:]
	// Type code: N, F or S and three characters. Required by SWIFT; a bank
	// that leaves it out goes straight to the reference.
	if len(v) >= 4 && (v[0] == 'N' || v[0] == 'F' || v[0] == 'S') && !strings.ContainsAny(v[1:4], "/\n") {
		v = v[4:]
	}
	first := v
	if nl := strings.IndexByte(v, '\n'); nl >= 0 {
		first = v[:nl]
	}
	if k := strings.Index(first, "//"); k >= 0 {
		e.BankReference = clip(strings.TrimSpace(first[k+2:]), maxRef)
		if strings.EqualFold(e.BankReference, "NONREF") {
			e.BankReference = ""
		}
	}
	e.ValueDate = value.Format(time.DateOnly)
	e.BookingDate = booking.Format(time.DateOnly)
	e.Amount = amt
	return e, nil
}

// amount reads the SWIFT 15d amount: digits with a decimal comma ("30,00",
// "100," or, from lax writers, "100").
func amount(s string) (decimal.Decimal, error) {
	if s == "" || len(s) > 15 || strings.Count(s, ",") > 1 || s[0] == ',' {
		return decimal.Decimal{}, fmt.Errorf("amount %q is not digits with a decimal comma", clip(s, 20))
	}
	s = strings.Replace(s, ",", ".", 1)
	s = strings.TrimSuffix(s, ".")
	if !isDigits(strings.Replace(s, ".", "", 1)) {
		return decimal.Decimal{}, fmt.Errorf("amount %q is not digits with a decimal comma", clip(s, 20))
	}
	return decimal.NewFromString(s)
}

// yymmdd reads a SWIFT date. Years 80-99 are the 1900s. German banks book
// interest on a 360-day calendar and write value dates like 30 February;
// such a day is the month's last.
func yymmdd(s string) (time.Time, error) {
	if len(s) != 6 || !isDigits(s) {
		return time.Time{}, fmt.Errorf("date %q is not YYMMDD", s)
	}
	y := 2000 + atoi(s[:2])
	if y >= 2080 {
		y -= 100
	}
	return civil(y, atoi(s[2:4]), atoi(s[4:6]), s)
}

func civil(y, m, d int, src string) (time.Time, error) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, fmt.Errorf("date %q is not a calendar date", src)
	}
	last := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if d > last {
		d = last
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), nil
}

// entryDate gives the booking date MMDD the year that puts it nearest the
// value date: a value date of 31 December booked on 2 January is booked in
// the next year, one of 2 January booked on 31 December in the year before.
func entryDate(value time.Time, mmdd string) (time.Time, error) {
	var best time.Time
	for _, y := range []int{value.Year() - 1, value.Year(), value.Year() + 1} {
		t, err := civil(y, atoi(mmdd[:2]), atoi(mmdd[2:]), mmdd)
		if err != nil {
			return time.Time{}, fmt.Errorf("entry date %q is not MMDD", mmdd)
		}
		if best.IsZero() || absDur(t.Sub(value)) < absDur(best.Sub(value)) {
			best = t
		}
	}
	return best, nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// applyDetails reads :86:. Structured, as German banks write it: the
// three-digit Geschaeftsvorfallcode, then subfields introduced by a
// separator (the fourth character, usually "?") and two digits; a code
// not followed by a subfield is free text after all. Dutch banks' /TAG/
// form (/NAME/, /IBAN/, /REMI/, ...) is read by its keywords. Free text is
// kept as the reference.
func applyDetails(e *bank.Entry, v string) {
	// The bank wraps lines anywhere, even inside a subfield's text or
	// right after the code: in structured details the breaks carry no
	// meaning.
	if c := strings.ReplaceAll(v, "\n", ""); len(c) >= 6 && isDigits(c[:3]) && isSeparator(c[3]) && isDigits(c[4:6]) {
		applySubfields(e, c)
		return
	}
	if c := strings.ReplaceAll(v, "\n", ""); slashTagged(c) {
		applySlashTags(e, c)
		return
	}
	if len(v) >= 3 && isDigits(v[:3]) && (len(v) == 3 || v[:3] == "999") {
		// 999 is the code of unstructured text, which follows it directly.
		e.GVC, v = v[:3], v[3:]
	}
	e.Reference = clip(strings.TrimSpace(joinLines(strings.Split(v, "\n"), 65)), maxReference)
	e.EndToEndID, e.MandateID, e.CreditorID = sepaKeys(e.Reference)
}

func isSeparator(c byte) bool {
	return c > ' ' && c < 0x7f && !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')
}

func applySubfields(e *bank.Entry, v string) {
	e.GVC = v[:3]
	sep := v[3]
	v = v[3:]
	var remit, name []string
	var bic, acct string
	for len(v) > 0 {
		// v starts with the separator.
		if len(v) < 3 || !isDigits(v[1:3]) {
			// A separator not followed by two digits is text of the subfield
			// before; there is none here, so skip to the next subfield.
			next := nextSubfield(v[1:], sep)
			if next < 0 {
				break
			}
			v = v[1+next:]
			continue
		}
		code := v[1:3]
		body := v[3:]
		end := nextSubfield(body, sep)
		text := body
		if end >= 0 {
			text, v = body[:end], body[end:]
		} else {
			v = ""
		}
		switch c := atoi(code); {
		case c == 0:
			e.BookingText = clip(strings.TrimSpace(text), maxName)
		case c >= 20 && c <= 29, c >= 60 && c <= 63:
			remit = append(remit, text)
		case c == 30:
			bic = strings.ToUpper(strings.ReplaceAll(text, " ", ""))
		case c == 31:
			acct = strings.ToUpper(strings.ReplaceAll(text, " ", ""))
		case c == 32, c == 33:
			name = append(name, text)
		}
		// ?10 primanota and ?34 text key addition carry nothing the import
		// keeps; other codes are not in use.
	}
	// Some banks pad each subfield to 27 characters with blanks.
	e.Reference = clip(squeeze(joinLines(remit, 27)), maxReference)
	e.CounterpartyName = clip(squeeze(joinLines(name, 27)), maxName)
	if isBIC(bic) {
		e.CounterpartyBIC = bic
	}
	switch {
	case validIBAN(acct):
		e.CounterpartyIBAN = acct
	case isDigits(bic) && len(bic) == 8 && isDigits(acct) && acct != "" && len(acct) <= 10:
		e.CounterpartyIBAN = germanIBAN(bic, acct)
	}
	e.EndToEndID, e.MandateID, e.CreditorID = sepaKeys(e.Reference)
}

// squeeze trims s and makes each run of blanks inside it one.
func squeeze(s string) string {
	if !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// slashTags are the keywords of the :86: that Dutch banks (ABN AMRO, ING,
// Rabobank, Triodos) write: "/TRTP/SEPA OVERBOEKING/IBAN/NL.../NAME/.../REMI/...".
var slashTags = map[string]bool{
	"TRTP": true, "IBAN": true, "BIC": true, "NAME": true, "REMI": true, "EREF": true, "MARF": true,
	"CSID": true, "ORDP": true, "BENM": true, "ULTC": true, "ULTD": true, "PREF": true, "RTRN": true,
	"ADDR": true, "ID": true, "PURP": true, "ISDT": true, "CDTRREF": true, "CDTRREFTP": true,
}

// slashTagged says whether v is such a :86:: it starts with a known tag
// and names a party or remittance text.
func slashTagged(v string) bool {
	if !strings.HasPrefix(v, "/") {
		return false
	}
	end := strings.IndexByte(v[1:], '/')
	return end > 0 && slashTags[v[1:1+end]] &&
		(strings.Contains(v, "/NAME/") || strings.Contains(v, "/REMI/") || strings.Contains(v, "/IBAN/"))
}

// applySlashTags reads a Dutch :86:. A value runs to the next "/TAG/" of
// a known tag, so a "/" inside a name or remittance text stays text.
func applySlashTags(e *bank.Entry, v string) {
	type hit struct{ at, end int }
	var hits []hit // positions of "/TAG/"
	var tags []string
	for i := 0; i < len(v); i++ {
		if v[i] != '/' {
			continue
		}
		j := strings.IndexByte(v[i+1:], '/')
		if j <= 0 || !slashTags[v[i+1:i+1+j]] {
			continue
		}
		hits = append(hits, hit{i, i + 2 + j})
		tags = append(tags, v[i+1:i+1+j])
		i += j
	}
	for k, h := range hits {
		end := len(v)
		if k+1 < len(hits) {
			end = hits[k+1].at
		}
		// "/ID/REMI/...": the tag's closing slash opens the next one, so
		// its value is empty.
		end = max(end, h.end)
		val := strings.TrimSpace(strings.TrimSuffix(v[h.end:end], "/"))
		switch tags[k] {
		case "TRTP":
			e.BookingText = clip(val, maxName)
		case "NAME":
			if e.CounterpartyName == "" {
				e.CounterpartyName = clip(squeeze(val), maxName)
			}
		case "IBAN":
			if iban := strings.ToUpper(strings.ReplaceAll(val, " ", "")); validIBAN(iban) {
				e.CounterpartyIBAN = iban
			}
		case "BIC":
			if bic := strings.ToUpper(val); isBIC(bic) {
				e.CounterpartyBIC = bic
			}
		case "REMI":
			// Rabobank: "/REMI/USTD//text"; structured: "/REMI/STRD/CUR/ref".
			val = strings.TrimPrefix(strings.TrimPrefix(val, "USTD//"), "STRD/CUR/")
			e.Reference = clip(squeeze(val), maxReference)
		case "EREF":
			e.EndToEndID = clip(val, maxRef)
		case "MARF":
			e.MandateID = clip(val, maxRef)
		case "CSID":
			e.CreditorID = clip(strings.ReplaceAll(val, " ", ""), maxRef)
		}
	}
}

// nextSubfield is the index of the next separator followed by two digits.
func nextSubfield(s string, sep byte) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == sep && isDigits(s[i+1:i+3]) {
			return i
		}
	}
	return -1
}

// joinLines joins the parts of a text the bank cut to width: a full part
// was cut mid-word and continues without a space; a shorter one ended
// where the writer ended it.
func joinLines(parts []string, width int) string {
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 && len([]rune(parts[i-1])) < width {
			sb.WriteByte(' ')
		}
		sb.WriteString(p)
	}
	return sb.String()
}

// SEPA keywords in the remittance text; a value runs to the next keyword.
var sepaKeywords = []string{"EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "SVWZ+", "ABWA+", "ABWE+", "COAM+", "OAMT+"}

func sepaKeys(ref string) (eref, mref, cred string) {
	type hit struct {
		at  int
		key string
	}
	var hits []hit
	for _, k := range sepaKeywords {
		for from := 0; ; {
			i := strings.Index(ref[from:], k)
			if i < 0 {
				break
			}
			hits = append(hits, hit{from + i, k})
			from += i + len(k)
		}
	}
	value := func(key string) string {
		for _, h := range hits {
			if h.key != key {
				continue
			}
			start, end := h.at+len(key), len(ref)
			for _, o := range hits {
				if o.at >= start && o.at < end {
					end = o.at
				}
			}
			return clip(strings.TrimSpace(ref[start:end]), maxRef)
		}
		return ""
	}
	return value("EREF+"), value("MREF+"), strings.ReplaceAll(value("CRED+"), " ", "")
}

// accountIBAN reads :25:, "BLZ/account" or an IBAN, either with a currency
// after it ("12345678/1234567890EUR") or a BIC before it
// ("COBADEFFXXX/DE89..."). For a German BLZ and account it computes the
// IBAN, by which the import finds the bank account; "" when neither fits.
func accountIBAN(v string) string {
	v = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
	parts := strings.Split(v, "/")
	for _, p := range parts {
		for _, c := range []string{p, trimCurrency(p)} {
			if validIBAN(c) {
				return c
			}
		}
	}
	if len(parts) == 2 && len(parts[0]) == 8 && isDigits(parts[0]) {
		acct := trimCurrency(parts[1])
		if acct != "" && len(acct) <= 10 && isDigits(acct) {
			return germanIBAN(parts[0], acct)
		}
	}
	return ""
}

func trimCurrency(s string) string {
	if len(s) > 3 && isUpper(s[len(s)-3:]) {
		return s[:len(s)-3]
	}
	return s
}

// germanIBAN is DE, the ISO 13616 check digits, the BLZ and the account
// left-padded to ten digits.
func germanIBAN(blz, acct string) string {
	bban := blz + strings.Repeat("0", 10-len(acct)) + acct
	check := 98 - mod97(bban+"131400") // D=13, E=14, check digits 00
	return fmt.Sprintf("DE%02d%s", check, bban)
}

// validIBAN checks the form and the mod-97 check digits.
func validIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 || !isUpper(s[:2]) || !isDigits(s[2:4]) {
		return false
	}
	for i := 4; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	if s[:2] == "DE" && len(s) != 22 {
		return false
	}
	// ISO 13616: the first four characters moved to the end, letters as
	// 10-35, the number mod 97 is 1.
	r := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		if c >= 'A' && c <= 'Z' {
			r = (r*100 + int(c-'A'+10)) % 97
		} else {
			r = (r*10 + int(c-'0')) % 97
		}
	}
	return r == 1
}

func mod97(digits string) int {
	r := 0
	for i := 0; i < len(digits); i++ {
		r = (r*10 + int(digits[i]-'0')) % 97
	}
	return r
}

func isBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	if !isUpper(s[:6]) {
		return false
	}
	for i := 6; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return s != ""
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
