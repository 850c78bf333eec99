// Package sepa writes SEPA credit transfer initiations (ISO 20022
// pain.001.001.09, as the EPC SCT rulebook 2023+ and the German DK
// "Datenformate" use it) for paying supplier invoices.
//
// The input is checked before anything is written, so a file that leaves
// here is one a bank accepts: IBANs by country length and mod-97 check
// digits, BICs by format, amounts positive with at most two decimals,
// references at most 35 characters of the SEPA reference set. Free text
// (names, addresses, remittance) is brought into the EPC basic Latin set:
// German umlauts and ß are transliterated (ä -> ae), other accented
// letters lose their accent, & becomes +, and what is still not allowed
// is dropped. Fields longer than the schema allows are cut at a rune
// boundary, except identifiers, which are refused: a cut reference would
// no longer match.
package sepa

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Namespace is the pain.001.001.09 namespace.
const Namespace = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"

// Payment is one pain.001 message: the debtor's transfers, grouped into
// one payment information block per (execution date, debtor account).
type Payment struct {
	// MsgID identifies the file to the bank (GrpHdr/MsgId), unique per
	// debtor; at most 35 characters of the SEPA reference set.
	MsgID string
	// CreatedAt is GrpHdr/CreDtTm.
	CreatedAt time.Time
	// Debtor is the paying company, also written as initiating party.
	Debtor    Party
	Transfers []Transfer
}

// Party is a name with a structured postal address.
type Party struct {
	Name    string
	Address Address
}

// Address is a structured postal address (EPC: town and country
// required, the rest when known); the zero Address writes none.
type Address struct {
	Street         string // StrtNm
	BuildingNumber string // BldgNb
	PostCode       string // PstCd
	Town           string // TwnNm
	Country        string // Ctry, ISO 3166 alpha-2
}

// Account is an IBAN with the optional BIC of its bank (SEPA needs no
// BIC; without one NOTPROVIDED is written for the debtor's bank and no
// creditor agent at all).
type Account struct {
	IBAN string
	BIC  string
}

// Transfer is one credit transfer to a creditor.
type Transfer struct {
	// ExecutionDate is the requested execution date (ReqdExctnDt/Dt).
	ExecutionDate time.Time
	// DebtorAccount is the account debited.
	DebtorAccount Account
	// InstrID is the optional instruction id between debtor and bank.
	InstrID string
	// EndToEndID travels to the creditor unchanged; empty is written as
	// NOTPROVIDED, as the rulebook wants.
	EndToEndID      string
	Amount          decimal.Decimal // EUR, > 0, at most 2 decimals
	Creditor        Party
	CreditorAccount Account
	// InvoiceNumbers are the creditor's invoice numbers this transfer
	// pays, written as unstructured remittance information (max 140).
	InvoiceNumbers []string
}

// Sentinels wrapped by the errors CreditTransfer returns.
var (
	ErrInvalidIBAN   = errors.New("invalid IBAN")
	ErrInvalidBIC    = errors.New("invalid BIC")
	ErrInvalidAmount = errors.New("invalid amount")
	ErrInvalidID     = errors.New("invalid identifier")
	ErrMissing       = errors.New("required field missing")
)

const op = "sepa.CreditTransfer"

// problems collects every input problem, so one answer names them all.
type problems struct {
	details []errs.Detail
	first   error
}

func (p *problems) add(sentinel error, field, format string, args ...any) {
	if p.first == nil {
		p.first = sentinel
	}
	p.details = append(p.details, errs.Field(field, fmt.Sprintf(format, args...)))
}

func (p *problems) err() error {
	if p.first == nil {
		return nil
	}
	msg := "sepa: " + p.details[0].Issue
	if n := len(p.details); n > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", n-1)
	}
	return &errs.Error{Code: errs.InvalidInput, Message: msg, Details: p.details, Op: op, Err: p.first}
}

// maxAmount is the largest amount the SCT rulebook allows.
var maxAmount = decimal.RequireFromString("999999999.99")

// CreditTransfer writes the pain.001.001.09 document for p.
func CreditTransfer(p Payment) ([]byte, error) {
	var pr problems
	checkID(&pr, "msg_id", p.MsgID, true)
	if p.CreatedAt.IsZero() {
		pr.add(ErrMissing, "created_at", "created_at is required")
	}
	debtor := party(&pr, "debtor", p.Debtor)
	if len(p.Transfers) == 0 {
		pr.add(ErrMissing, "transfers", "at least one transfer is required")
	}

	type groupKey struct {
		date string
		iban string
		bic  string
	}
	groups := map[groupKey][]cdtTrfTxInf{}
	var keys []groupKey
	total := decimal.Zero
	for i, t := range p.Transfers {
		f := fmt.Sprintf("transfers[%d]", i)
		if t.ExecutionDate.IsZero() {
			pr.add(ErrMissing, f+".execution_date", "execution_date is required")
		}
		dIBAN := checkIBAN(&pr, f+".debtor_account.iban", t.DebtorAccount.IBAN)
		dBIC := checkBIC(&pr, f+".debtor_account.bic", t.DebtorAccount.BIC)
		cIBAN := checkIBAN(&pr, f+".creditor_account.iban", t.CreditorAccount.IBAN)
		cBIC := checkBIC(&pr, f+".creditor_account.bic", t.CreditorAccount.BIC)
		checkID(&pr, f+".instr_id", t.InstrID, false)
		e2e := t.EndToEndID
		if e2e == "" {
			e2e = "NOTPROVIDED"
		}
		checkID(&pr, f+".end_to_end_id", e2e, true)
		switch {
		case !t.Amount.IsPositive():
			pr.add(ErrInvalidAmount, f+".amount", "amount must be greater than 0, is %s", t.Amount)
		case !t.Amount.Equal(t.Amount.Truncate(2)):
			pr.add(ErrInvalidAmount, f+".amount", "amount %s has more than 2 decimals", t.Amount)
		case t.Amount.GreaterThan(maxAmount):
			pr.add(ErrInvalidAmount, f+".amount", "amount %s exceeds the SEPA maximum %s", t.Amount, maxAmount)
		}
		total = total.Add(t.Amount)

		tx := cdtTrfTxInf{
			PmtID:    pmtID{InstrID: t.InstrID, EndToEndID: e2e},
			Amt:      amt{InstdAmt: instdAmt{Ccy: "EUR", Value: t.Amount.StringFixed(2)}},
			Cdtr:     party(&pr, f+".creditor", t.Creditor),
			CdtrAcct: account{ID: accountID{IBAN: cIBAN}},
		}
		if cBIC != "" {
			tx.CdtrAgt = &agent{FinInstnID: finInstnID{BICFI: cBIC}}
		}
		if r := Remittance(t.InvoiceNumbers); r != "" {
			tx.RmtInf = &rmtInf{Ustrd: r}
		}
		k := groupKey{date: t.ExecutionDate.Format("2006-01-02"), iban: dIBAN, bic: dBIC}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], tx)
	}
	if err := pr.err(); err != nil {
		return nil, err
	}

	// Blocks in date, then account order, so the same payment run always
	// gives the same file.
	slices.SortStableFunc(keys, func(a, b groupKey) int {
		return strings.Compare(a.date+a.iban+a.bic, b.date+b.iban+b.bic)
	})
	doc := document{
		Xmlns: Namespace,
		Init: cstmrCdtTrfInitn{
			GrpHdr: grpHdr{
				MsgID:    p.MsgID,
				CreDtTm:  p.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
				NbOfTxs:  strconv.Itoa(len(p.Transfers)),
				CtrlSum:  total.StringFixed(2),
				InitgPty: initgPty{Nm: debtor.Nm},
			},
		},
	}
	for i, k := range keys {
		txs := groups[k]
		sum := decimal.Zero
		for _, tx := range txs {
			sum = sum.Add(decimal.RequireFromString(tx.Amt.InstdAmt.Value))
		}
		suffix := "-" + strconv.Itoa(i+1)
		dAgt := agent{FinInstnID: finInstnID{BICFI: k.bic}}
		if k.bic == "" {
			dAgt.FinInstnID = finInstnID{Othr: &othr{ID: "NOTPROVIDED"}}
		}
		doc.Init.PmtInf = append(doc.Init.PmtInf, pmtInf{
			PmtInfID:    cut(p.MsgID, 35-len(suffix)) + suffix,
			PmtMtd:      "TRF",
			BtchBookg:   "true",
			NbOfTxs:     strconv.Itoa(len(txs)),
			CtrlSum:     sum.StringFixed(2),
			PmtTpInf:    pmtTpInf{SvcLvl: svcLvl{Cd: "SEPA"}},
			ReqdExctnDt: reqdExctnDt{Dt: k.date},
			Dbtr:        debtor,
			DbtrAcct:    account{ID: accountID{IBAN: k.iban}},
			DbtrAgt:     dAgt,
			ChrgBr:      "SLEV",
			CdtTrfTxInf: txs,
		})
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: marshal: %w", op, err)
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// party checks and converts a name and structured address.
func party(pr *problems, field string, p Party) partyXML {
	name := cut(Text(p.Name), 70)
	if name == "" {
		pr.add(ErrMissing, field+".name", "%s.name is required (after conversion to the SEPA character set)", field)
	}
	a := p.Address
	// No address at all is written as none: within the EEA the rulebook
	// asks for none (a party's address is needed only for transfers
	// leaving it), and a tenant or vendor may not have told theirs.
	if a == (Address{}) {
		return partyXML{Nm: name}
	}
	adr := &postalAddress{
		StrtNm: cut(Text(a.Street), 70),
		BldgNb: cut(Text(a.BuildingNumber), 16),
		PstCd:  cut(Text(a.PostCode), 16),
		TwnNm:  cut(Text(a.Town), 35),
		Ctry:   strings.ToUpper(strings.TrimSpace(a.Country)),
	}
	if adr.TwnNm == "" {
		pr.add(ErrMissing, field+".address.town", "%s.address.town is required for a structured address", field)
	}
	if !countryRE.MatchString(adr.Ctry) {
		pr.add(ErrMissing, field+".address.country", "%s.address.country must be an ISO 3166 alpha-2 code, is %q", field, a.Country)
	}
	return partyXML{Nm: name, PstlAdr: adr}
}

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// idRE is the EPC reference character set; an id must not start or end
// with / nor contain //.
var idRE = regexp.MustCompile(`^[A-Za-z0-9/\-?:().,'+ ]+$`)

func checkID(pr *problems, field, id string, required bool) {
	switch {
	case id == "":
		if required {
			pr.add(ErrMissing, field, "%s is required", field)
		}
	case len(id) > 35:
		pr.add(ErrInvalidID, field, "%s is longer than 35 characters", field)
	case !idRE.MatchString(id):
		pr.add(ErrInvalidID, field, "%s %q has characters outside the SEPA set (a-z A-Z 0-9 / - ? : ( ) . , ' + space)", field, id)
	case strings.HasPrefix(id, "/") || strings.HasSuffix(id, "/") || strings.Contains(id, "//"):
		pr.add(ErrInvalidID, field, "%s %q must not start or end with / nor contain //", field, id)
	}
}

var bicRE = regexp.MustCompile(`^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// checkBIC validates an optional BIC and returns it normalised.
func checkBIC(pr *problems, field, bic string) string {
	b := strings.ToUpper(strings.Join(strings.Fields(bic), ""))
	if b != "" && !bicRE.MatchString(b) {
		pr.add(ErrInvalidBIC, field, "%s %q is not a BIC (8 or 11 characters: bank, country, location, branch)", field, bic)
	}
	return b
}

// checkIBAN validates an IBAN of a SEPA country and returns it without
// spaces, upper case.
func checkIBAN(pr *problems, field, iban string) string {
	s := strings.ToUpper(strings.Join(strings.Fields(iban), ""))
	if err := ValidIBAN(s); err != nil {
		pr.add(ErrInvalidIBAN, field, "%s %q: %v", field, iban, err)
	}
	return s
}

// ValidIBAN checks a compact (no spaces, upper case) IBAN: a SEPA
// country, that country's length, and check digits by ISO 7064 mod 97-10.
func ValidIBAN(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	if len(s) < 5 {
		return errors.New("too short")
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return errors.New("has characters other than A-Z and 0-9")
		}
	}
	cc := s[:2]
	want, ok := ibanLength[cc]
	if !ok {
		return fmt.Errorf("country %q has no IBAN", cc)
	}
	if !sepaCountries[cc] {
		return fmt.Errorf("country %s is outside the SEPA area", cc)
	}
	if len(s) != want {
		return fmt.Errorf("has %d characters, a %s IBAN has %d", len(s), cc, want)
	}
	if s[2] < '0' || s[2] > '9' || s[3] < '0' || s[3] > '9' {
		return errors.New("check digits are not digits")
	}
	rem := 0
	for _, r := range s[4:] + s[:4] {
		if r >= 'A' {
			v := int(r-'A') + 10
			rem = (rem*100 + v) % 97
		} else {
			rem = (rem*10 + int(r-'0')) % 97
		}
	}
	if rem != 1 {
		return errors.New("check digits do not match")
	}
	return nil
}

// ibanLength is the IBAN length per country (SWIFT IBAN registry).
var ibanLength = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// sepaCountries are the IBAN countries of the SEPA scheme area (EEA,
// Switzerland, the UK, the microstates and the 2024/25 accessions);
// French and other overseas territories bank with their parent's IBAN.
var sepaCountries = map[string]bool{
	"AT": true, "BE": true, "BG": true, "HR": true, "CY": true, "CZ": true, "DK": true, "EE": true,
	"FI": true, "FR": true, "DE": true, "GR": true, "HU": true, "IE": true, "IT": true, "LV": true,
	"LT": true, "LU": true, "MT": true, "NL": true, "PL": true, "PT": true, "RO": true, "SK": true,
	"SI": true, "ES": true, "SE": true, "IS": true, "LI": true, "NO": true, "CH": true, "GB": true,
	"SM": true, "VA": true, "MC": true, "AD": true, "GI": true, "AL": true, "MD": true, "ME": true,
	"MK": true, "RS": true,
}

// Remittance joins invoice numbers into unstructured remittance
// information of at most 140 characters. Numbers are never cut in the
// middle: what does not fit is counted instead, as in
// "RE-1, RE-2 (+3)". A single number longer than 140 characters is cut.
func Remittance(invoiceNumbers []string) string {
	var nums []string
	for _, n := range invoiceNumbers {
		if t := Text(n); t != "" {
			nums = append(nums, t)
		}
	}
	if len(nums) == 0 {
		return ""
	}
	if all := strings.Join(nums, ", "); len(all) <= 140 {
		return all
	}
	// Take as many whole numbers as leave room for the count of the
	// rest (Text is ASCII, so bytes are characters).
	for k := len(nums) - 1; k >= 1; k-- {
		s := strings.Join(nums[:k], ", ") + " (+" + strconv.Itoa(len(nums)-k) + ")"
		if len(s) <= 140 {
			return s
		}
	}
	return cut(nums[0], 140)
}

// Text brings s into the EPC basic Latin character set: umlauts and ß
// are transliterated, other letters lose their diacritics, & becomes +,
// anything else outside the set is dropped and runs of spaces collapse.
func Text(s string) string {
	var b strings.Builder
	for _, r := range norm.NFC.String(s) {
		if t, ok := translit[r]; ok {
			b.WriteString(t)
			continue
		}
		if allowed(r) {
			b.WriteRune(r)
			continue
		}
		if unicode.IsSpace(r) {
			b.WriteByte(' ')
			continue
		}
		// Decompose (é -> e + ´) and keep the allowed base letters.
		for _, d := range norm.NFD.String(string(r)) {
			if allowed(d) && d != ' ' {
				b.WriteRune(d)
			}
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// translit are the conversions the German banking industry applies
// before the generic removal of diacritics would lose information.
var translit = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss", 'ẞ': "SS",
	'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE", 'ø': "o", 'Ø': "O", 'å': "a", 'Å': "A",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'þ': "th", 'Þ': "TH", 'ð': "d", 'Ð': "D",
	'&': "+", '€': "EUR", '–': "-", '—': "-", '‘': "'", '’': "'", '‚': "'", '´': "'", '`': "'",
	'"': "'", '„': "'", '“': "'", '”': "'", '_': "-", ';': ",", '!': ".",
}

// allowed is the EPC basic Latin set: a-z A-Z 0-9 / - ? : ( ) . , ' + space.
func allowed(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("/-?:().,'+ ", r)
}

// cut shortens s to at most n runes.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n]))
	}
	return s
}
