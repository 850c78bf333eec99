package extract

import (
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/iban"
	"github.com/ledgerplatform/ledger/pkg/vatid"
)

// Fields reads an invoice's fields from its text, as `pdftotext -layout`
// or Tesseract write it, with rules over German and English invoice
// wording. Fields never fails: what it does not find stays empty. The
// source is left for the caller to set; RawMarkdown is the bounded text.
func Fields(text string) payablesv1.OCRResult {
	text = bound(normalizeText(text))
	d := newDoc(text)
	r := payablesv1.OCRResult{RawMarkdown: text}

	r.InvoiceNumber = d.invoiceNumber()
	r.InvoiceDate = d.labelledDate(invoiceDateLabels, nil)
	if r.InvoiceDate == nil {
		// "Rechnung Nr. 471102 vom 15.11.2024", then a bare "Datum".
		r.InvoiceDate = d.labelledDate([]*regexp.Regexp{invoiceDateVom, genericDateLabel}, notInvoiceDate)
	}
	if r.InvoiceDate == nil {
		// A letter's date stands alone near the top ("Berlin, 12.01.2026").
		r.InvoiceDate = d.firstDate(20)
	}
	r.DeliveryDate = d.labelledDate(deliveryDateLabels, nil)
	r.ServicePeriod = d.servicePeriod()
	if r.DeliveryDate == nil && r.InvoiceDate != nil && sameAsInvoiceDate.MatchString(text) {
		v := *r.InvoiceDate
		r.DeliveryDate = &v
	}
	r.DueDate = d.labelledDate(dueDateLabels, nil)
	if r.DueDate == nil && r.InvoiceDate != nil {
		r.DueDate = d.dueFromTerms(*r.InvoiceDate)
	}
	r.Currency = currency(text)
	r.VendorVATID = d.vatID()
	r.VendorTaxID = d.taxNumber()
	r.VendorIBAN = d.iban()
	r.VendorBIC = d.bic()
	r.VendorName, r.VendorAddress = d.vendor()
	r.BuyerName, r.BuyerAddress = d.buyer(r.VendorName, r.VendorAddress)
	r.LineItems = d.lineItems()
	r.PaymentTerms = d.paymentTerms()
	r.ReferenceText = d.reference()
	r.Notes = d.notes()
	r.IsCreditNote = d.creditNote()
	d.totals(&r)
	return r
}

// normalizeText makes the text of both tools alike: no carriage returns,
// non-breaking and other spaces as spaces, no trailing blanks.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\r':
			return '\n'
		case '\u00a0', '\u2007', '\u202f', '\u2009', '\t':
			return ' '
		case '\u2013', '\u2014':
			return '-'
		case 0:
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// doc is the text split into lines and, per line, columns (runs of text
// separated by three or more spaces, as -layout keeps page columns).
type doc struct {
	text  string
	lines []string
	cols  [][]column
	// items are the lines read as line items, which totals passes over
	// (a row "Fachbuch Steuerrecht 1 45,00 7 % 45,00" is no tax line).
	items map[int]bool
}

type column struct {
	at   int // byte offset in the line
	text string
}

var colSep = regexp.MustCompile(`\s{3,}`)

func newDoc(text string) *doc {
	d := &doc{text: text, items: map[int]bool{}}
	for _, l := range strings.Split(text, "\n") {
		l = strings.ReplaceAll(l, "\f", "")
		d.lines = append(d.lines, l)
		var cs []column
		last := 0
		for _, m := range colSep.FindAllStringIndex(l, -1) {
			if t := strings.TrimSpace(l[last:m[0]]); t != "" {
				cs = append(cs, column{at: last + strings.Index(l[last:m[0]], t), text: t})
			}
			last = m[1]
		}
		if t := strings.TrimSpace(l[last:]); t != "" {
			cs = append(cs, column{at: last + strings.Index(l[last:], t), text: t})
		}
		d.cols = append(d.cols, cs)
	}
	return d
}

// after is what follows a label on its line, up to the next column, or
// — when nothing follows — the text below the label on the next line
// (tables put labels over their values).
func (d *doc) after(i int, m []int) []string {
	line := d.lines[i]
	rest := strings.TrimLeft(line[m[1]:], " :#.")
	rest = strings.TrimLeft(rest, " :")
	var out []string
	if rest != "" {
		if loc := colSep.FindStringIndex(rest); loc != nil && loc[0] > 0 {
			out = append(out, rest[:loc[0]], rest)
		} else {
			out = append(out, rest)
		}
	}
	if i+1 < len(d.lines) {
		next := d.lines[i+1]
		at := m[0] - 2
		if at < 0 {
			at = 0
		}
		if at < len(next) {
			below := strings.TrimLeft(next[at:], " ")
			if loc := colSep.FindStringIndex(below); loc != nil && loc[0] > 0 {
				below = below[:loc[0]]
			}
			out = append(out, below)
		}
	}
	return out
}

var (
	invoiceNumberLabel = regexp.MustCompile(`(?i)(?:rechnungs-?\s?(?:nummer|nr\.?)|rechnung(?:\s*\(\d{3}\))?\s+(?:nr\.?|nummer|no\.?)|re\.?-nr\.?|beleg-?\s?(?:nummer|nr\.?)|gutschrift(?:s-?\s?(?:nummer|nr\.?)|\s+nr\.?)|invoice\s*(?:no\.?|number|nr\.?|#|id)|credit\s+note\s*(?:no\.?|number|#)|bon-?\s?nr\.?|quittungs?-?\s?nr\.?|receipt\s*(?:no\.?|number|#)|document\s+no\.?)`)
	invoiceTitleNumber = regexp.MustCompile(`(?im)^\s*(?:rechnung|invoice|gutschrift)\s+(?:nr\.?\s*)?([A-Z0-9][A-Z0-9\-/._]*\d[A-Z0-9\-/._]*)\s*$`)
	numberToken        = regexp.MustCompile(`^[:#.\s]*(?:nr\.?|no\.?)?[:#.\s]*([A-Za-z0-9][A-Za-z0-9\-/._]*)`)
	hasDigit           = regexp.MustCompile(`\d`)
)

func (d *doc) invoiceNumber() string {
	for i, l := range d.lines {
		m := invoiceNumberLabel.FindStringIndex(l)
		if m == nil {
			continue
		}
		for _, v := range d.after(i, m) {
			t := numberToken.FindStringSubmatch(v)
			if t == nil {
				continue
			}
			n := strings.TrimRight(t[1], ".-/_")
			if hasDigit.MatchString(n) && len(dates(n)) == 0 && len(n) <= 40 {
				return n
			}
		}
	}
	if m := invoiceTitleNumber.FindStringSubmatch(d.text); m != nil && len(dates(m[1])) == 0 {
		return m[1]
	}
	return ""
}

var (
	invoiceDateLabels  = []*regexp.Regexp{regexp.MustCompile(`(?i)rechnungs-?\s?datum|invoice\s+date|date\s+of\s+(?:issue|invoice)|issue\s+date|beleg-?\s?datum|ausstellungs-?\s?datum|gutschrifts-?\s?datum|credit\s+note\s+date`)}
	invoiceDateVom     = regexp.MustCompile(`(?i)(?:rechnung|invoice|gutschrift)[^\n]{0,40}?\b(?:vom|dated|of)\b`)
	genericDateLabel   = regexp.MustCompile(`(?i)\b(?:datum|date)\b`)
	notInvoiceDate     = regexp.MustCompile(`(?i)liefer|leistung|fällig|due|delivery|supply|service|bestell|order|auftrag|zahlbar`)
	deliveryDateLabels = []*regexp.Regexp{regexp.MustCompile(`(?i)(?:liefer-?\s?/\s?)?leistungs-?\s?datum|liefer-?\s?datum|liefertag|leistungstag|delivery\s+date|date\s+of\s+(?:supply|delivery|service)|service\s+date|supply\s+date|tag\s+der\s+(?:lieferung|leistung)`)}
	dueDateLabels      = []*regexp.Regexp{regexp.MustCompile(`(?i)fällig(?:keit(?:sdatum)?)?(?:\s+(?:am|bis|zum))*|zahlbar\s+(?:bis|spätestens)(?:\s+(?:zum|am))?|zahlungsziel|due\s+(?:date|by|on)|payable\s+(?:by|until|on)|payment\s+due(?:\s+date)?`)}
	sameAsInvoiceDate  = regexp.MustCompile(`(?i)(?:liefer|leistungs)[\p{L}\-/ ]*datum\s+(?:entspricht|=|gleich|ist|wie)\s+(?:dem\s+|das\s+)?rechnungsdatum|date\s+of\s+(?:supply|delivery|service)\s+(?:=|is|equals|corresponds\s+to)\s+(?:the\s+)?invoice\s+date`)
	periodLabel        = regexp.MustCompile(`(?i)leistungs-?\s?zeitraum|liefer-?\s?zeitraum|abrechnungs-?\s?zeitraum|service\s+period|billing\s+period|period\s+of\s+(?:service|supply)|\bzeitraum\b|\bperiod\b`)
	termDays           = regexp.MustCompile(`(?i)(?:innerhalb\s+(?:von\s+)?|within\s+|zahlungsziel:?\s*|net\s+|netto\s+)(\d{1,3})\s+(?:tagen|tage|days)`)
	immediately        = regexp.MustCompile(`(?i)sofort\s+(?:fällig|zahlbar)|zahlbar\s+sofort|due\s+(?:immediately|upon\s+receipt|on\s+receipt)`)
)

// labelledDate is the first date after one of labels; lines matching
// skip are passed over.
func (d *doc) labelledDate(labels []*regexp.Regexp, skip *regexp.Regexp) *string {
	for _, re := range labels {
		for i, l := range d.lines {
			m := re.FindStringIndex(l)
			if m == nil || skip != nil && skip.MatchString(l[max(0, m[0]-12):min(len(l), m[1]+2)]) {
				continue
			}
			for _, v := range d.after(i, m) {
				if ds := dates(v); len(ds) > 0 && ds[0].start < 20 {
					s := ds[0].t.Format(time.DateOnly)
					return &s
				}
			}
		}
	}
	return nil
}

func (d *doc) firstDate(lines int) *string {
	for i := 0; i < len(d.lines) && i < lines; i++ {
		if notInvoiceDate.MatchString(d.lines[i]) {
			continue
		}
		if ds := dates(d.lines[i]); len(ds) > 0 {
			s := ds[0].t.Format(time.DateOnly)
			return &s
		}
	}
	return nil
}

func (d *doc) servicePeriod() *payablesv1.Period {
	for i, l := range d.lines {
		m := periodLabel.FindStringIndex(l)
		if m == nil {
			continue
		}
		for _, v := range d.after(i, m) {
			if ds := dates(v); len(ds) >= 2 && ds[0].start < 20 && !ds[1].t.Before(ds[0].t) {
				return &payablesv1.Period{Start: ds[0].t.Format(time.DateOnly), End: ds[1].t.Format(time.DateOnly)}
			}
			if my := monthYearRe.FindStringSubmatchIndex(v); my != nil && my[0] < 20 {
				mo, y := months[strings.ToLower(v[my[2]:my[3]])], atoi(v[my[4]:my[5]])
				if start, ok := mkDate(y, int(mo), 1); ok {
					end := start.AddDate(0, 1, -1)
					return &payablesv1.Period{Start: start.Format(time.DateOnly), End: end.Format(time.DateOnly)}
				}
			}
		}
	}
	return nil
}

// dueFromTerms derives the due date from "zahlbar innerhalb von 14
// Tagen" or "sofort fällig".
func (d *doc) dueFromTerms(invoiceDate string) *string {
	t, err := time.Parse(time.DateOnly, invoiceDate)
	if err != nil {
		return nil
	}
	if m := termDays.FindStringSubmatch(d.text); m != nil {
		s := t.AddDate(0, 0, atoi(m[1])).Format(time.DateOnly)
		return &s
	}
	if immediately.MatchString(d.text) {
		return &invoiceDate
	}
	return nil
}

var (
	eurRe = regexp.MustCompile(`€|\bEUR\b`)
	chfRe = regexp.MustCompile(`\bCHF\b`)
	gbpRe = regexp.MustCompile(`£|\bGBP\b`)
	usdRe = regexp.MustCompile(`\$|\bUSD\b`)
)

func currency(text string) string {
	switch {
	case eurRe.MatchString(text):
		return "EUR"
	case chfRe.MatchString(text):
		return "CHF"
	case gbpRe.MatchString(text):
		return "GBP"
	case usdRe.MatchString(text):
		return "USD"
	}
	return ""
}

var (
	vatIDRe      = regexp.MustCompile(`\b([A-Z]{2})\s?((?:[0-9A-Z][ .]?){8,12})`)
	vatIDLabel   = regexp.MustCompile(`(?i)ust\.?-?\s?id|umsatzsteuer-?\s?id|vat\s*(?:id|no|reg|number)|mwst\.?-?nr|tva|steuer-?id|uid`)
	buyerContext = regexp.MustCompile(`(?i)\b(?:ihre|kunden|customer|your|empfänger|leistungsempfänger|buyer|client|käufer)`)
	ibanRe       = regexp.MustCompile(`\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)\b`)
	bicRe        = regexp.MustCompile(`(?i)\b(?:bic|swift(?:-?code)?)\b[:\s]*([A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?)\b`)
	taxNumberRe  = regexp.MustCompile(`(?i)(?:st\.?-?\s?nr\.?|steuer-?\s?nummer|steuernr\.?|tax\s+(?:no\.?|number))\s*[:.]?\s*(\d{2,3}/\d{3,4}/\d{4,5}|\d{10,13})`)
)

// vatID is the supplier's VAT ID: a valid one (pkg/vatid), not in a line
// naming the customer's, a labelled one first.
func (d *doc) vatID() string {
	var unlabelled string
	ibans := d.ibans()
	for _, l := range d.lines {
		if buyerContext.MatchString(l) {
			continue
		}
		for _, m := range vatIDRe.FindAllStringSubmatch(l, -1) {
			id := vatid.Normalize(m[1] + m[2])
			// Trailing words glued by the spaces: shorten until valid.
			for len(id) > 8 && vatid.Check(id) != "" {
				id = id[:len(id)-1]
			}
			if vatid.Check(id) != "" || partOfIBAN(id, ibans) {
				continue
			}
			if vatIDLabel.MatchString(l) {
				return id
			}
			if unlabelled == "" {
				unlabelled = id
			}
		}
	}
	return unlabelled
}

func partOfIBAN(id string, ibans []string) bool {
	for _, i := range ibans {
		if strings.Contains(i, id) {
			return true
		}
	}
	return false
}

func (d *doc) taxNumber() string {
	if m := taxNumberRe.FindStringSubmatch(d.text); m != nil {
		return m[1]
	}
	return ""
}

// ibans are the valid IBANs of the text (ISO 13616 check digits).
func (d *doc) ibans() []string {
	var out []string
	for _, l := range d.lines {
		for _, m := range ibanRe.FindAllStringSubmatch(l, -1) {
			s := iban.Normalize(m[1])
			// The greedy match may take a following word's letters: try
			// the lengths down to the shortest IBAN.
			for n := len(s); n >= 15; n-- {
				if iban.Check(s[:n]) == "" {
					out = append(out, s[:n])
					break
				}
			}
		}
	}
	return out
}

// iban is the supplier's IBAN, the first valid one not in a line about the
// customer's account (a direct debit mandate names the payer's).
func (d *doc) iban() string {
	for _, l := range d.lines {
		if buyerContext.MatchString(l) {
			continue
		}
		for _, m := range ibanRe.FindAllStringSubmatch(l, -1) {
			s := iban.Normalize(m[1])
			for n := len(s); n >= 15; n-- {
				if iban.Check(s[:n]) == "" {
					return s[:n]
				}
			}
		}
	}
	return ""
}

func (d *doc) bic() string {
	for _, m := range bicRe.FindAllStringSubmatch(d.text, -1) {
		b := iban.NormalizeBIC(m[1])
		if iban.CheckBIC(b) == "" {
			return b
		}
	}
	return ""
}

var (
	legalForm    = regexp.MustCompile(`(?i)(?:^|[\s,])(?:gmbh(?:\s*&\s*co\.?\s*kg)?|ag|ug(?:\s*\(haftungsbeschränkt\))?|kg|ohg|gbr|mbh|e\.\s?k\.|e\.\s?kfm\.|e\.\s?v\.|ltd\.?|limited|llc|inc\.?|b\.v\.|se|sarl|s\.a\.r\.l\.|s\.r\.l\.|s\.a\.|kgaa|partg(?:\s*mbb)?|eg|plc|corp\.?)(?:$|[\s,·|])`)
	vendorMarker = regexp.MustCompile(`(?i)ust\.?-?\s?id|steuer-?\s?n|iban|hrb|hra|amtsgericht|registergericht|geschäftsführ|handelsregister|sitz\s+der|vat|managing\s+director|registered`)
	buyerMarker  = regexp.MustCompile(`(?i)^(?:an\b|rechnungs(?:empfänger|adresse)\b|kunde\b|bill\s+to\b|invoice\s+to\b|sold\s+to\b|customer\b|empfänger\b|käufer(?:\s*/\s*leistungsempfänger)?\b)\s*:?`)
	segSep       = regexp.MustCompile(`\s+[·•|]\s+|\s*[·•|]\s*|\s{3,}|,\s+|\s+-\s+`)
	zipCity      = regexp.MustCompile(`^(?:([A-Z]{1,2})[- ])?(\d{4,5})\s+(\p{L}[\p{L}.\-/() ]{1,40})$`)
	zipCityTail  = regexp.MustCompile(`^(?:(.*?)\s)?(\d{5})\s+(\p{L}[\p{L}.\-]+)$`)
	street       = regexp.MustCompile(`(?i)^(?:\p{L}[\p{L}.\-' ]*\s\d+\s?[a-z]?(?:\s?[-/]\s?\d+\s?[a-z]?)?|postfach\s+\d+|\d+\s+\p{L}[\p{L}.\-' ]+)$`)
	labelish     = regexp.MustCompile(`(?i)^(?:rechnung|invoice|gutschrift|credit\s+note|quittung|receipt|seite|page|datum|date)\b`)
)

// segments are a line's parts as letterheads separate them.
func segments(l string) []string {
	var out []string
	for _, s := range segSep.Split(strings.TrimSpace(l), -1) {
		if s = strings.Trim(s, " -·•|,:"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// vendor finds the supplier: the text with a legal form that the
// letterhead, the footer (register, VAT ID, bank) or the sender line
// shows, else the first line of the letterhead; the address is the
// street and zip city next to it.
func (d *doc) vendor() (string, *payablesv1.Address) {
	type cand struct {
		name  string
		line  int
		score int
	}
	var cands []cand
	buyerUntil := -1
	for i, l := range d.lines {
		if buyerMarker.MatchString(strings.TrimSpace(l)) {
			buyerUntil = i + 4
		}
		for _, s := range segments(l) {
			if !legalForm.MatchString(s) || len(s) > 80 || labelish.MatchString(s) || zipCity.MatchString(s) {
				continue
			}
			// OCR runs columns together: the name ends with its legal
			// form ("Muster GmbH 10115 Berlin").
			if m := legalForm.FindStringIndex(s); m != nil && m[1] < len(s) {
				s = strings.TrimRight(s[:m[1]], " ,·|")
			}
			c := cand{name: s, line: i}
			if i < 6 {
				c.score++
			}
			if vendorMarker.MatchString(l) {
				c.score += 2
			}
			if i <= buyerUntil {
				c.score -= 3
			}
			cands = append(cands, c)
		}
	}
	// A name the text repeats (letterhead and footer) is the sender's.
	count := map[string]int{}
	for _, c := range cands {
		count[strings.ToLower(c.name)]++
	}
	best := -1
	for i := range cands {
		if count[strings.ToLower(cands[i].name)] > 1 {
			cands[i].score += 2
		}
		if best < 0 || cands[i].score > cands[best].score {
			best = i
		}
	}
	var name string
	var lines []int
	if best >= 0 {
		name = cands[best].name
		for _, c := range cands {
			if strings.EqualFold(c.name, name) {
				lines = append(lines, c.line)
			}
		}
	} else {
		// No legal form: the letterhead's first line, if the text starts
		// with one (a name, not a sentence or a label).
		seen := 0
		for i, l := range d.lines {
			s := segments(l)
			if len(s) == 0 {
				continue
			}
			if seen++; seen > 3 {
				break
			}
			if !labelish.MatchString(s[0]) && !hasDigit.MatchString(s[0]) && !strings.ContainsAny(s[0], ":.!?") && len(s[0]) <= 60 {
				name, lines = s[0], []int{i}
				break
			}
		}
	}
	// The letterhead may give the city only; the sender line or the
	// footer usually has the full address: the first complete one wins.
	var partial *payablesv1.Address
	for _, i := range lines {
		a := d.addressNear(i, name)
		if a != nil && a.Street != "" {
			return name, a
		}
		if partial == nil {
			partial = a
		}
	}
	return name, partial
}

// addressNear finds street and zip city on line i after name, or in the
// lines below (a letterhead block).
func (d *doc) addressNear(i int, name string) *payablesv1.Address {
	col := strings.Index(d.lines[i], name)
	var segs []string
	if i > 0 {
		// A letterhead's right column may start a line above the name.
		segs = segments(d.lines[i-1])
	}
	for j := i; j < len(d.lines) && j <= i+4; j++ {
		l := d.lines[j]
		if j == i && col >= 0 {
			l = l[col+len(name):]
		} else if col > 0 && len(l) > col-2 {
			// The block below the name, from its column.
			l = l[max(0, col-2):]
		} else if col > 0 {
			continue
		}
		s := segments(l)
		if j > i && len(s) > 0 {
			s = s[:1]
		}
		segs = append(segs, s...)
		if a := addressIn(segs); a != nil {
			// The country may stand on the line below ("Österreich").
			if a.Country == "" && j+1 < len(d.lines) {
				next := d.lines[j+1]
				if col > 0 && len(next) > col-2 {
					next = next[max(0, col-2):]
				}
				if ns := segments(next); len(ns) > 0 {
					a.Country = countryNames[strings.ToLower(ns[0])]
				}
			}
			return a
		}
	}
	return nil
}

// addressIn is the first zip city in segs with the street before it.
func addressIn(segs []string) *payablesv1.Address {
	for k, s := range segs {
		m := zipCity.FindStringSubmatch(s)
		if m == nil {
			// OCR text without column gaps: "Hauptstraße 12 10115 Berlin".
			t := zipCityTail.FindStringSubmatch(s)
			if t == nil {
				continue
			}
			st := strings.TrimSpace(t[1])
			if !street.MatchString(st) {
				st = ""
				if k > 0 && street.MatchString(segs[k-1]) {
					st = segs[k-1]
				}
			}
			return &payablesv1.Address{Street: st, Zip: t[2], City: t[3], Country: "DE"}
		}
		a := &payablesv1.Address{Zip: m[2], City: strings.TrimSpace(m[3]), Country: countryOf(m[1], m[2])}
		for b := k - 1; b >= 0 && b >= k-2; b-- {
			if street.MatchString(segs[b]) {
				a.Street = segs[b]
				break
			}
		}
		if k+1 < len(segs) {
			if c, ok := countryNames[strings.ToLower(segs[k+1])]; ok {
				a.Country = c
			}
		}
		return a
	}
	return nil
}

var countryNames = map[string]string{
	"deutschland": "DE", "germany": "DE", "österreich": "AT", "austria": "AT", "schweiz": "CH", "switzerland": "CH",
	"frankreich": "FR", "france": "FR", "niederlande": "NL", "netherlands": "NL", "belgien": "BE", "belgium": "BE",
	"italien": "IT", "italy": "IT", "spanien": "ES", "spain": "ES", "polen": "PL", "poland": "PL", "dänemark": "DK",
	"denmark": "DK", "luxemburg": "LU", "luxembourg": "LU", "irland": "IE", "ireland": "IE", "schweden": "SE", "sweden": "SE",
	"tschechien": "CZ", "czech republic": "CZ", "united kingdom": "GB", "großbritannien": "GB", "vereinigtes königreich": "GB",
}

func countryOf(prefix, zip string) string {
	switch prefix {
	case "D", "DE":
		return "DE"
	case "A", "AT":
		return "AT"
	case "CH":
		return "CH"
	case "":
		if len(zip) == 5 {
			return "DE"
		}
	}
	return prefix
}

// buyer is the recipient: the address block after a "Rechnungsempfänger"
// or "Bill to" label, else the first name, street and zip city in the
// left column that are not the vendor's.
func (d *doc) buyer(vendorName string, vendorAddr *payablesv1.Address) (string, *payablesv1.Address) {
	start := 0
	for i, l := range d.lines {
		if buyerMarker.MatchString(strings.TrimSpace(l)) {
			start = i
			break
		}
	}
	for i := start; i < len(d.lines) && i < start+40; i++ {
		cs := d.cols[i]
		if len(cs) == 0 {
			continue
		}
		first := cs[0].text
		m := zipCity.FindStringSubmatch(first)
		if m == nil || strings.Contains(d.lines[i], vendorName) && vendorName != "" {
			continue
		}
		if vendorAddr != nil && vendorAddr.Zip == m[2] && vendorAddr.City == strings.TrimSpace(m[3]) {
			continue
		}
		// Walk up the block: street, then the name lines.
		var block []string
		for j := i - 1; j >= 0 && j >= i-4; j-- {
			if len(d.cols[j]) == 0 || d.cols[j][0].at > cs[0].at+4 {
				break
			}
			t := d.cols[j][0].text
			if buyerMarker.MatchString(t) {
				if rest := strings.TrimSpace(buyerMarker.ReplaceAllString(t, "")); rest != "" {
					block = append([]string{rest}, block...)
				}
				break
			}
			if len(segments(t)) > 2 { // a sender line above the window
				break
			}
			block = append([]string{t}, block...)
		}
		a := &payablesv1.Address{Zip: m[2], City: strings.TrimSpace(m[3]), Country: countryOf(m[1], m[2])}
		if i+1 < len(d.lines) && len(d.cols[i+1]) > 0 {
			if c, ok := countryNames[strings.ToLower(d.cols[i+1][0].text)]; ok {
				a.Country = c
			}
		}
		var name string
		for _, t := range block {
			if street.MatchString(t) {
				a.Street = t
				continue
			}
			if name == "" && !strings.HasSuffix(t, ":") && !strings.HasPrefix(strings.ToLower(t), "z. hd") && !strings.HasPrefix(strings.ToLower(t), "z.hd") && !strings.HasPrefix(strings.ToLower(t), "attn") {
				name = t
			}
		}
		if name == "" {
			continue
		}
		if vendorAddr != nil && name == vendorName {
			continue
		}
		return name, a
	}
	return d.buyerRunTogether(start, vendorName, vendorAddr)
}

var (
	unitRe     = regexp.MustCompile(`(?i)^(?:stk\.?|stück|st\.?|std\.?|h|stunden?|pcs\.?|pc\.?|x|kg|g|m|m2|m²|l|liter|psch\.?|pauschal|pauschale|tage?|monate?|monat|units?|hrs?\.?|hours?|days?|months?|lizenz(?:en)?|paket|set|km|lfm|mal)$`)
	qtyRe      = regexp.MustCompile(`^\d{1,6}(?:[.,]\d{1,3})?$`)
	moneyTok   = regexp.MustCompile(`^[-−]?(?:\d{1,3}(?:[.,]\d{3})+|\d+)[.,]\d{2}-?$`)
	rateTok    = regexp.MustCompile(`^(\d{1,2}(?:[.,]\d{1,2})?)\s?%$`)
	posRe      = regexp.MustCompile(`^\d{1,3}\.?$`)
	curTok     = regexp.MustCompile(`^(?:€|EUR)$`)
	twoLetters = regexp.MustCompile(`\p{L}{2}`)
)

// lineItems reads table rows, right to left: total, [rate %], unit
// price, [unit], quantity, description. A row counts only when quantity
// × unit price is its total (to the cent), which keeps totals, addresses
// and bank lines out.
func (d *doc) lineItems() []payablesv1.OCRLine {
	var out []payablesv1.OCRLine
	for i, l := range d.lines {
		toks := strings.Fields(strings.NewReplacer("€", " € ", " %", "%").Replace(l))
		var cleaned []string
		for _, t := range toks {
			if !curTok.MatchString(t) {
				cleaned = append(cleaned, t)
			}
		}
		toks = cleaned
		if len(toks) < 4 {
			continue
		}
		var rate *money.Amount
		k := len(toks) - 1
		if m := rateTok.FindStringSubmatch(toks[k]); m != nil {
			if r, ok := parseQuantity(m[1]); ok {
				rate = &money.Amount{Decimal: r}
			}
			k--
		}
		if k < 3 || !moneyTok.MatchString(toks[k]) {
			continue
		}
		total, _ := parseMoney(toks[k])
		k--
		if m := rateTok.FindStringSubmatch(toks[k]); m != nil && rate == nil {
			if r, ok := parseQuantity(m[1]); ok {
				rate = &money.Amount{Decimal: r}
			}
			k--
		}
		if k < 2 || !moneyTok.MatchString(toks[k]) {
			continue
		}
		price, _ := parseMoney(toks[k])
		k--
		unit := ""
		if unitRe.MatchString(toks[k]) {
			unit = toks[k]
			k--
		}
		if k < 1 || !qtyRe.MatchString(toks[k]) {
			continue
		}
		qty, ok := parseQuantity(toks[k])
		if !ok || qty.IsZero() {
			continue
		}
		if unit == "" && k-1 >= 1 && unitRe.MatchString(toks[k-1]) && !qtyRe.MatchString(toks[k-1]) {
			// "Stk. 3" order.
			unit = toks[k-1]
			k--
		}
		desc := toks[:k]
		if len(desc) > 1 && posRe.MatchString(desc[0]) {
			desc = desc[1:]
		}
		text := strings.Join(desc, " ")
		if !twoLetters.MatchString(text) {
			continue
		}
		if qty.Mul(price).Round(2).Sub(total).Abs().GreaterThan(decimal.New(1, -2)) {
			continue
		}
		d.items[i] = true
		q, p, t := money.New(qty), money.New(price), money.New(total)
		out = append(out, payablesv1.OCRLine{Description: text, Quantity: &q, Unit: unit, UnitPrice: &p, TaxRate: rate, LineTotal: &t})
	}
	return out
}

var termsRe = regexp.MustCompile(`(?i)zahlungsziel|zahlbar|skonto|payment\s+terms|payable|due\s+within|fällig|zahlungsbedingung|netto\s+kasse|ohne\s+abzug|within\s+\d+\s+days`)

func (d *doc) paymentTerms() string {
	var out []string
	for _, l := range d.lines {
		if termsRe.MatchString(l) {
			out = append(out, strings.Join(strings.Fields(l), " "))
			if len(out) == 3 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

var referenceRe = regexp.MustCompile(`(?i)(?:verwendungszweck|zahlungsreferenz|payment\s+reference|remittance\s+information)\s*:?\s*(.+)`)

func (d *doc) reference() string {
	for _, l := range d.lines {
		if m := referenceRe.FindStringSubmatch(l); m != nil {
			v := m[1]
			if loc := colSep.FindStringIndex(v); loc != nil {
				v = v[:loc[0]]
			}
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (d *doc) notes() []string {
	var out []string
	for _, l := range d.lines {
		if reverseChargeNote.MatchString(l) || exemptionNote.MatchString(l) {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return out
}

var creditNoteRe = regexp.MustCompile(`(?i)\b(?:gutschrift|credit\s+note|rechnungskorrektur|stornorechnung)\b`)

func (d *doc) creditNote() bool {
	for i, l := range d.lines {
		if i > 25 {
			break
		}
		if creditNoteRe.MatchString(l) {
			return true
		}
	}
	return false
}

var (
	taxWord     = regexp.MustCompile(`(?i)mwst|mehrwertsteuer|\bust\b|ust\.|umsatzsteuer|\bvat\b|\btax\b|\bsteuer\b|steuerbetrag`)
	netLabel    = regexp.MustCompile(`(?i)netto|\bnet\b|zwischensumme|sub-?\s?total|warenwert|summe\s+positionen|excl\.?\s|exkl|ohne\s+(?:mwst|ust|umsatzsteuer)|before\s+tax`)
	grossStrong = regexp.MustCompile(`(?i)gesamtbetrag|bruttobetrag|rechnungsbetrag|endbetrag|gesamtsumme|zahlbetrag|bruttosumme|brutto|rechnungssumme|zu\s+zahlen|total\s+(?:amount|due|gross|payable|incl)|amount\s+(?:due|payable)|grand\s+total|invoice\s+total|balance\s+due|gutschriftsbetrag`)
	grossWeak   = regexp.MustCompile(`(?i)\btotal\b|\bgesamt\b|\bsumme\b|\bbetrag\b|\bbar\b|\bec-?karte\b`)
	inclusive   = regexp.MustCompile(`(?i)inkl|incl|enthalten|included|darin`)
	taxIDWords  = regexp.MustCompile(`(?i)ust\.?-?\s?id|steuer-?\s?nr|steuernummer|vat\s+(?:id|no|reg)|tax\s+(?:id|no)`)
)

type taxFound struct {
	rate    decimal.Decimal
	hasRate bool
	net     *decimal.Decimal
	tax     decimal.Decimal
}

// totals reads net, tax per rate and gross and makes them agree: of the
// candidates the text offers, the combination where net + tax = gross
// wins; missing parts are derived from the others.
func (d *doc) totals(r *payablesv1.OCRResult) {
	var nets, grossS, grossW, taxTotals []decimal.Decimal
	var taxes []taxFound
	seenRate := map[string]bool{}
	for i, l := range d.lines {
		if taxIDWords.MatchString(l) || d.items[i] {
			continue
		}
		as := amounts(l)
		if len(as) == 0 {
			continue
		}
		last := as[len(as)-1]
		pm := percentRe.FindStringSubmatch(l)
		// "zzgl. 19 % MwSt auf netto 100,00 19,00" is a tax line, "Netto
		// (ohne MwSt) 100,00" and "Gesamt inkl. MwSt 119,00" are not.
		isTax := taxWord.MatchString(l) && !grossStrong.MatchString(l) &&
			(pm != nil || !netLabel.MatchString(l) && !grossWeak.MatchString(l) && !inclusive.MatchString(l))
		switch {
		case isTax && pm == nil:
			// "Steuerbetrag 56,87", "MwSt gesamt": the total tax.
			taxTotals = append(taxTotals, last)
		case isTax:
			t := taxFound{tax: last}
			if rt, ok := parseQuantity(pm[1]); ok {
				t.rate, t.hasRate = rt, true
			}
			if len(as) >= 2 {
				n := as[len(as)-2]
				t.net = &n
			}
			// A summary repeats a rate's line: the first counts.
			if seenRate[t.rate.String()] {
				continue
			}
			seenRate[t.rate.String()] = true
			taxes = append(taxes, t)
		case grossStrong.MatchString(l) && !netLabel.MatchString(l):
			grossS = append(grossS, last)
		case netLabel.MatchString(l):
			nets = append(nets, last)
		case grossWeak.MatchString(l):
			grossW = append(grossW, last)
		}
	}
	// A tax line inside the line items table (a rate column) is no
	// tax total: it has a total, a price and a quantity; those were read
	// as line items already and are rare with a tax word anyway.
	lineSum := decimal.Zero
	for _, li := range r.LineItems {
		lineSum = lineSum.Add(li.LineTotal.Decimal)
	}
	if len(r.LineItems) > 0 {
		nets = append(nets, lineSum)
	}
	taxSum := decimal.Zero
	for _, t := range taxes {
		taxSum = taxSum.Add(t.tax)
	}
	// Later gross lines are the final sum; the strong labels before the
	// weak ones.
	gross := append(reverse(grossS), reverse(grossW)...)

	var taxOptions []decimal.Decimal
	if len(taxes) > 0 {
		taxOptions = append(taxOptions, taxSum)
	}
	// OCR misreads digits ("5,78" as "3,18"): where a rate line states
	// its net, net × rate is the tax it should have; that sum is the
	// next choice, taken only if it makes the totals add up.
	fixed, fixedSum, canFix := make([]taxFound, len(taxes)), decimal.Zero, len(taxes) > 0
	for i, t := range taxes {
		fixed[i] = t
		if t.net == nil {
			canFix = false
			break
		}
		fixed[i].tax = t.net.Mul(t.rate).Div(decimal.NewFromInt(100)).Round(2)
		fixedSum = fixedSum.Add(fixed[i].tax)
	}
	canFix = canFix && !fixedSum.Equal(taxSum)
	if canFix {
		taxOptions = append(taxOptions, fixedSum)
	}
	taxOptions = append(taxOptions, taxTotals...)

	var net, tax, total *decimal.Decimal
	pick := func(v decimal.Decimal) *decimal.Decimal { return &v }
found:
	for _, g := range gross {
		for _, tx := range taxOptions {
			for _, n := range nets {
				if n.Add(tx).Equal(g) {
					net, tax, total = pick(n), pick(tx), pick(g)
					break found
				}
			}
		}
		// A tax line whose net is on it ("19 % auf 100,00").
		if len(taxes) > 0 {
			netOfLines := decimal.Zero
			all := true
			for _, t := range taxes {
				if t.net == nil {
					all = false
					break
				}
				netOfLines = netOfLines.Add(*t.net)
			}
			if all && netOfLines.Add(taxSum).Equal(g) {
				net, tax, total = pick(netOfLines), pick(taxSum), pick(g)
				break found
			}
		}
	}
	if total == nil {
		switch {
		case len(gross) > 0 && len(taxOptions) > 0:
			total, tax = pick(gross[0]), pick(taxOptions[0])
			net = pick(gross[0].Sub(taxOptions[0]))
		case len(gross) > 0 && len(nets) > 0:
			// No tax line: the difference is the tax.
			total, net = pick(gross[0]), pick(nets[0])
			tax = pick(gross[0].Sub(nets[0]))
		case len(gross) > 0:
			total = pick(gross[0])
		case len(nets) > 0 && len(taxOptions) > 0:
			net, tax = pick(nets[0]), pick(taxOptions[0])
			total = pick(nets[0].Add(taxOptions[0]))
		}
	}
	if total != nil {
		r.TotalGross = amt(*total)
	}
	if net != nil {
		r.TotalNet = amt(*net)
	}
	if tax != nil {
		r.TotalTax = amt(*tax)
	}
	if canFix && tax != nil && tax.Equal(fixedSum) {
		taxes = fixed
	}
	r.TaxBreakdown = breakdown(taxes, net, tax, r)
}

func reverse(ds []decimal.Decimal) []decimal.Decimal {
	out := make([]decimal.Decimal, len(ds))
	for i, d := range ds {
		out[len(ds)-1-i] = d
	}
	return out
}

// standardRates are tried when a tax is known without its rate.
var standardRates = []int64{19, 7, 20, 10, 16, 5, 21, 9, 13, 0}

// breakdown is the net and tax per rate.
func breakdown(taxes []taxFound, net, tax *decimal.Decimal, r *payablesv1.OCRResult) []payablesv1.TaxLine {
	notes := strings.Join(r.Notes, "\n")
	category := func(rate decimal.Decimal) string {
		switch {
		case rate.IsPositive():
			return "S"
		case reverseChargeNote.MatchString(notes):
			return "AE"
		case exemptionNote.MatchString(notes):
			return "E"
		}
		return "Z"
	}
	hundred := decimal.NewFromInt(100)
	var out []payablesv1.TaxLine
	if net == nil {
		return nil
	}
	// No tax line with a rate: find the rate that gives the tax.
	if len(taxes) == 0 {
		t := decimal.Zero
		if tax != nil {
			t = *tax
		}
		if t.IsZero() && notes == "" {
			return nil
		}
		for _, rt := range standardRates {
			rate := decimal.NewFromInt(rt)
			if net.Mul(rate).Div(hundred).Round(2).Equal(t) {
				return []payablesv1.TaxLine{{Rate: money.New(rate), Net: money.New(*net), Tax: money.New(t), Category: category(rate)}}
			}
		}
		return nil
	}
	if len(taxes) == 1 {
		n := *net
		return []payablesv1.TaxLine{{Rate: money.New(taxes[0].rate), Net: money.New(n), Tax: money.New(taxes[0].tax), Category: category(taxes[0].rate)}}
	}
	// Several rates: the net per rate from the tax line, else from the
	// line items of that rate, else from tax / rate; the last takes the
	// rest so the nets add up to the total net.
	byRate := map[string]decimal.Decimal{}
	for _, li := range r.LineItems {
		if li.TaxRate != nil {
			k := li.TaxRate.Decimal.String()
			byRate[k] = byRate[k].Add(li.LineTotal.Decimal)
		}
	}
	sort.SliceStable(taxes, func(i, j int) bool { return taxes[i].rate.GreaterThan(taxes[j].rate) })
	rest := *net
	for i, t := range taxes {
		var n decimal.Decimal
		switch {
		case t.net != nil:
			n = *t.net
		case byRate[t.rate.String()].IsPositive():
			n = byRate[t.rate.String()]
		case i == len(taxes)-1:
			n = rest
		case t.rate.IsPositive():
			n = t.tax.Mul(hundred).Div(t.rate).Round(2)
		}
		rest = rest.Sub(n)
		out = append(out, payablesv1.TaxLine{Rate: money.New(t.rate), Net: money.New(n), Tax: money.New(t.tax), Category: category(t.rate)})
	}
	return out
}

var (
	zipCityHead = regexp.MustCompile(`^(?:([A-Z]{1,2})[- ])?(\d{5})\s+(\p{Lu}[\p{L}\-.]+)`)
	streetHead  = regexp.MustCompile(`^(\p{L}[\p{L}.\-']*(?:\s\p{L}[\p{L}.\-']*)*\s\d+\s?[a-z]?)(?:\s|$)`)
	// labelCut is where a right-hand column begins when OCR ran the
	// columns together: a separator OCR made of the gap, or a label.
	labelCut = regexp.MustCompile(`(?i)\s+(?:[|:!i]\s|(?:rechnung|invoice|datum|date|kunden|customer|leistung|liefer|bestell|order|ihre|your|seite|page|due|fällig)\S*)`)
	attnRe   = regexp.MustCompile(`(?i)^(?:z\.*\s?hd|attn|c/o)`)
)

// buyerRunTogether is buyer for OCR text, whose address block shares its
// lines with the info block on the right: "80331 München Kundennummer:
// K-1". The zip city starts the line; the street and the name above it
// are cut where the right column begins.
func (d *doc) buyerRunTogether(start int, vendorName string, vendorAddr *payablesv1.Address) (string, *payablesv1.Address) {
	for i := start; i < len(d.lines) && i < start+40; i++ {
		l := strings.TrimSpace(d.lines[i])
		m := zipCityHead.FindStringSubmatch(l)
		if m == nil || vendorName != "" && strings.Contains(l, vendorName) {
			continue
		}
		if vendorAddr != nil && vendorAddr.Zip == m[2] {
			continue
		}
		a := &payablesv1.Address{Zip: m[2], City: m[3], Country: countryOf(m[1], m[2])}
		name := ""
		// OCR puts blank lines between the lines of a block.
		for j := i - 1; j >= 0 && j >= i-10; j-- {
			t := strings.TrimSpace(d.lines[j])
			if t == "" {
				continue
			}
			if vendorName != "" && strings.Contains(t, vendorName) || buyerMarker.MatchString(t) {
				break
			}
			if a.Street == "" {
				if sm := streetHead.FindStringSubmatch(t); sm != nil {
					a.Street = strings.TrimSpace(sm[1])
					continue
				}
			}
			if attnRe.MatchString(t) {
				continue
			}
			if lf := legalForm.FindStringIndex(t); lf != nil {
				name = strings.TrimRight(t[:lf[1]], " ,·|")
			} else if c := labelCut.FindStringIndex(t); c != nil {
				name = t[:c[0]]
			} else {
				name = t
			}
			break
		}
		if name != "" && a.Street != "" {
			return name, a
		}
	}
	return "", nil
}
