package payables

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
)

// The accounts and rules an extracted invoice is normalised with.
const (
	// DefaultExpenseAccount is where a line goes when its vendor has no
	// default account: SKR04 6300 "Sonstige betriebliche Aufwendungen",
	// the neutral expense account a reviewer re-assigns when it should be
	// more specific (6815 Bürobedarf, 5900 Fremdleistungen ...).
	DefaultExpenseAccount = "6300"
	// CreditorAccount is the liability an incoming invoice is posted
	// against: SKR04 3300 "Verbindlichkeiten aus Lieferungen und
	// Leistungen". The bank sees it as an open liability to settle.
	CreditorAccount = "3300"
	// DefaultPaymentDays is the due date's distance from the invoice date
	// when the invoice states neither a due date nor payment terms in
	// days: 30 days, the period after which § 286 Abs. 3 BGB puts a
	// debtor in default.
	DefaultPaymentDays = 30
	MaxInvoiceNumber   = 100
	MaxLineDescription = 500
	MaxReviewLines     = 200
	MaxRejectReason    = 1000
)

var (
	dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	// termsDaysRe finds "30 Tage", "innerhalb von 14 Tagen", "net 30 days",
	// "Zahlungsziel: 10 Tage" in payment terms.
	termsDaysRe = regexp.MustCompile(`(?i)(\d{1,3})\s*(tage|tagen|days)\b|(?i)net\s*(\d{1,3})\b`)
	// reverseChargeRe finds the note §14a Abs. 5 UStG requires on an
	// invoice whose VAT the recipient owes.
	reverseChargeRe = regexp.MustCompile(`(?i)steuerschuldnerschaft des leistungsempf|reverse[ -]charge|§\s*13b|13b\s*ustg`)
	hundred         = decimal.NewFromInt(100)
	rates           = []decimal.Decimal{decimal.NewFromInt(19), decimal.NewFromInt(7), decimal.Zero}
)

// ValidDate reports whether s is a calendar date YYYY-MM-DD.
func ValidDate(s string) bool {
	if !dateRe.MatchString(s) {
		return false
	}
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Format(time.DateOnly) == s
}

// DueDate is the due date of an invoice that states none: the invoice
// date plus the days its payment terms name ("zahlbar innerhalb von 14
// Tagen"), else plus DefaultPaymentDays.
func DueDate(invoiceDate, terms string) string {
	d, err := time.Parse(time.DateOnly, invoiceDate)
	if err != nil {
		return ""
	}
	days := DefaultPaymentDays
	if m := termsDaysRe.FindStringSubmatch(terms); m != nil {
		s := m[1]
		if s == "" {
			s = m[3]
		}
		if n, err := strconv.Atoi(s); err == nil && n <= 365 {
			days = n
		}
	}
	return d.AddDate(0, 0, days).Format(time.DateOnly)
}

// Normalise turns an extraction into the invoice a review case proposes.
// vendor is the matched vendor (nil when the extraction matched none):
// its id and name are the invoice's, its default account the lines'.
//
// Lines come from the document's line items when each has a total (the
// net of the line); else one line per VAT rate of its tax breakdown; else
// one line of its total net, the rate read from total tax / total net.
// A line without a rate takes the document's only rate. The tax of a rate
// is the document's tax of that rate when its net agrees, else computed
// (rounded half away from zero to cents).
func Normalise(ocr payablesv1.OCRResult, vendor *Vendor) payablesv1.ReviewInvoice {
	inv := payablesv1.ReviewInvoice{
		VendorName:    strings.TrimSpace(ocr.VendorName),
		InvoiceNumber: strings.TrimSpace(ocr.InvoiceNumber),
		Currency:      strings.ToUpper(strings.TrimSpace(ocr.Currency)),
		StatedGross:   ocr.TotalGross,
		Lines:         []payablesv1.ReviewLine{},
	}
	account := DefaultExpenseAccount
	if vendor != nil {
		id := vendor.ID
		inv.VendorID, inv.VendorName = &id, vendor.Name
		if vendor.DefaultAccount != nil {
			account = *vendor.DefaultAccount
		}
	}
	if inv.Currency == "" {
		inv.Currency = "EUR"
	}
	if ocr.InvoiceDate != nil && ValidDate(*ocr.InvoiceDate) {
		d := *ocr.InvoiceDate
		inv.InvoiceDate = &d
	}
	switch {
	case ocr.DueDate != nil && ValidDate(*ocr.DueDate):
		d := *ocr.DueDate
		inv.DueDate = &d
	case inv.InvoiceDate != nil:
		d := DueDate(*inv.InvoiceDate, ocr.PaymentTerms)
		inv.DueDate = &d
	}
	for _, g := range ocr.TaxBreakdown {
		if strings.EqualFold(g.Category, "AE") {
			inv.ReverseCharge = true
		}
	}
	if reverseChargeRe.MatchString(strings.Join(append(append([]string{}, ocr.Notes...), ocr.PaymentTerms), "\n")) {
		inv.ReverseCharge = true
	}

	// The document's only rate, for lines that do not say theirs.
	var onlyRate *money.Amount
	if len(ocr.TaxBreakdown) == 1 {
		r := ocr.TaxBreakdown[0].Rate
		onlyRate = &r
	}
	// The lines are taken when each has its total and together they make
	// the stated net: a scan's table is often read in part (a line lost
	// to a smudge), and then the totals per rate, which the reading
	// checked against the gross, are the better source.
	withTotals := len(ocr.LineItems) > 0
	sum := decimal.Zero
	for _, l := range ocr.LineItems {
		if l.LineTotal == nil {
			withTotals = false
			continue
		}
		sum = sum.Add(l.LineTotal.Decimal.Round(2))
	}
	if ocr.TotalNet != nil && !sum.Equal(ocr.TotalNet.Decimal.Round(2)) && len(ocr.TaxBreakdown) > 0 {
		withTotals = false
	}
	switch {
	case withTotals:
		for _, l := range ocr.LineItems {
			rate := l.TaxRate
			if rate == nil {
				rate = onlyRate
			}
			inv.Lines = append(inv.Lines, payablesv1.ReviewLine{Description: clip(l.Description, MaxLineDescription), Account: account,
				TaxRate: rateOr(rate, inv.ReverseCharge), Net: money.New(l.LineTotal.Decimal.Round(2))})
		}
	case len(ocr.TaxBreakdown) > 0:
		for _, g := range ocr.TaxBreakdown {
			r := g.Rate
			inv.Lines = append(inv.Lines, payablesv1.ReviewLine{Description: clip(strings.TrimSpace("Rechnung "+inv.InvoiceNumber), MaxLineDescription),
				Account: account, TaxRate: rateOr(&r, inv.ReverseCharge), Net: money.New(g.Net.Decimal.Round(2))})
		}
	case ocr.TotalNet != nil:
		var rate *money.Amount
		if ocr.TotalTax != nil && !ocr.TotalNet.IsZero() {
			r := money.New(ocr.TotalTax.Decimal.Mul(hundred).Div(ocr.TotalNet.Decimal).Round(0))
			rate = &r
		}
		inv.Lines = append(inv.Lines, payablesv1.ReviewLine{Description: clip(strings.TrimSpace("Rechnung "+inv.InvoiceNumber), MaxLineDescription),
			Account: account, TaxRate: rateOr(rate, inv.ReverseCharge), Net: money.New(ocr.TotalNet.Decimal.Round(2))})
	}
	Compute(&inv, ocr.TaxBreakdown)
	return inv
}

// rateOr is a line's rate: the given one, else 0 on a reverse-charge
// invoice (which states no VAT) and 19 otherwise (the standard rate; a
// reviewer corrects a reduced one).
func rateOr(r *money.Amount, reverseCharge bool) money.Amount {
	switch {
	case r != nil:
		return *r
	case reverseCharge:
		return money.Zero
	}
	return money.MustParse("19")
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Compute sets the tax breakdown and totals of inv from its lines: per
// rate the lines' net, the tax (stated's tax of that rate when its net is
// the same, else net × rate rounded to cents; none on a reverse-charge
// invoice, whose VAT the tenant self-assesses) and their sum, in the
// order the rates first appear.
func Compute(inv *payablesv1.ReviewInvoice, stated []payablesv1.TaxLine) {
	inv.TaxBreakdown = []payablesv1.ReviewTaxGroup{}
	at := map[string]int{}
	for _, l := range inv.Lines {
		k := l.TaxRate.Decimal.String()
		i, ok := at[k]
		if !ok {
			i = len(inv.TaxBreakdown)
			at[k] = i
			inv.TaxBreakdown = append(inv.TaxBreakdown, payablesv1.ReviewTaxGroup{Rate: l.TaxRate, Net: money.Zero})
		}
		inv.TaxBreakdown[i].Net = inv.TaxBreakdown[i].Net.Add(l.Net)
	}
	net, tax := money.Zero, money.Zero
	for i := range inv.TaxBreakdown {
		g := &inv.TaxBreakdown[i]
		g.Tax = money.Zero
		if !inv.ReverseCharge {
			g.Tax = money.New(g.Net.Decimal.Mul(g.Rate.Decimal).Div(hundred).Round(2))
			for _, s := range stated {
				if s.Rate.Equal(g.Rate.Decimal) && s.Net.Equal(g.Net.Decimal) && s.Tax.Decimal.Sub(g.Tax.Decimal).Abs().LessThanOrEqual(decimal.New(1, -2)) {
					g.Tax = money.New(s.Tax.Decimal.Round(2))
				}
			}
		}
		g.Gross = g.Net.Add(g.Tax)
		net, tax = net.Add(g.Net), tax.Add(g.Tax)
	}
	inv.TotalNet, inv.TotalTax, inv.TotalGross = net, tax, net.Add(tax)
}

// Issues are what keeps inv from being booked: missing or invalid fields
// (their field named as a correction names it). A compliance check the
// extraction failed is an issue of field "compliance_check" until a
// reviewer has corrected the case.
func Issues(inv payablesv1.ReviewInvoice, cc *payablesv1.ComplianceCheck, isCreditNote, corrected bool) []payablesv1.Issue {
	out := []payablesv1.Issue{}
	add := func(f, issue string) { out = append(out, payablesv1.Issue{Field: f, Issue: issue}) }
	if inv.VendorID == nil {
		add("vendor_id", "no vendor matched: choose one of the vendor candidates or create the vendor")
	}
	if inv.InvoiceNumber == "" {
		add("invoice_number", "missing")
	}
	if inv.InvoiceDate == nil {
		add("invoice_date", "missing")
	}
	if inv.DueDate == nil {
		add("due_date", "missing")
	} else if inv.InvoiceDate != nil && *inv.DueDate < *inv.InvoiceDate {
		add("due_date", "before the invoice date")
	}
	if inv.Currency != "EUR" {
		add("currency", "only EUR invoices are booked from the review queue")
	}
	if isCreditNote {
		add("invoice", "a credit note: book it by hand, the review queue books invoices")
	}
	if len(inv.Lines) == 0 {
		add("lines", "no amounts could be read: give the lines")
	}
	for i, l := range inv.Lines {
		f := "lines[" + strconv.Itoa(i) + "]"
		if _, ok := TaxCode(l.TaxRate, inv.ReverseCharge); !ok {
			add(f+".tax_rate", "19, 7 or 0")
		}
		if l.Net.IsZero() {
			add(f+".net", "must not be zero")
		}
		if l.Account == "" {
			add(f+".account", "missing")
		}
	}
	if len(inv.Lines) > 0 && !inv.TotalGross.IsPositive() {
		add("lines", "the invoice's gross must be positive")
	}
	if inv.StatedGross != nil && !inv.StatedGross.Equal(inv.TotalGross.Decimal) {
		add("total_gross", "the lines add up to "+inv.TotalGross.StringFixed(2)+", the document states "+inv.StatedGross.StringFixed(2))
	}
	if cc != nil && !corrected && cc.IsInvoice && !cc.Compliant {
		for _, c := range cc.Checks {
			if c.Status == payablesv1.CheckFailed || c.Status == payablesv1.CheckMissing {
				add("compliance_check", strings.TrimSpace(c.Rule+": "+c.Label+" ("+c.Status+")"))
			}
		}
	}
	return out
}

// Blocking are the issues approval refuses: all but the §14 findings,
// which a reviewer may accept.
func Blocking(issues []payablesv1.Issue) []payablesv1.Issue {
	var out []payablesv1.Issue
	for _, i := range issues {
		if i.Field != "compliance_check" {
			out = append(out, i)
		}
	}
	return out
}

// QueueState is the state a case in review is put in: exception when its
// document is no invoice or a strong duplicate hint names another invoice
// of the vendor with the same number; correction when something is
// missing, wrong or not §14-compliant (or no vendor is known); approval
// otherwise.
func QueueState(issues []payablesv1.Issue, cc *payablesv1.ComplianceCheck, corrected bool, hints []payablesv1.DuplicateHint) string {
	if cc != nil && !cc.IsInvoice && !corrected {
		return payablesv1.QueueException
	}
	for _, h := range hints {
		if h.Kind == payablesv1.HintSameVendorNumber {
			return payablesv1.QueueException
		}
	}
	if len(issues) > 0 {
		return payablesv1.QueueCorrection
	}
	return payablesv1.QueueApproval
}

// TaxCode is the ledger's system tax code of an incoming invoice's line
// of rate: input VAT (VSt19, VSt7), or on a reverse-charge invoice the
// self-assessed §13b code (RC19, RC7; a line stating 0 % is self-assessed
// at 19 %); "" for a line without VAT. ok is false for another rate.
func TaxCode(rate money.Amount, reverseCharge bool) (code string, ok bool) {
	switch {
	case rate.Equal(rates[0]):
		if reverseCharge {
			return "RC19", true
		}
		return "VSt19", true
	case rate.Equal(rates[1]):
		if reverseCharge {
			return "RC7", true
		}
		return "VSt7", true
	case rate.IsZero():
		if reverseCharge {
			return "RC19", true
		}
		return "", true
	}
	return "", false
}

// PostingLines are the ledger lines of an approved invoice: per account
// and rate, the expense (or asset) account debited against the creditor
// account. With input VAT the line carries the gross of the group and the
// tax code, and the ledger splits off the input VAT (to 1406 or 1401); a
// reverse-charge line carries the net, the ledger adding the self-assessed
// pair (1407/3837). The group's tax is apportioned by its share of the
// rate's net, the last group taking the rest, so the lines add up to the
// invoice's gross exactly.
func PostingLines(inv payablesv1.ReviewInvoice, creditor, number string) []ledgerv1.Line {
	type key struct{ account, rate string }
	var order []key
	nets := map[key]decimal.Decimal{}
	for _, l := range inv.Lines {
		k := key{l.Account, l.TaxRate.Decimal.String()}
		if _, ok := nets[k]; !ok {
			order = append(order, k)
		}
		nets[k] = nets[k].Add(l.Net.Decimal)
	}
	taxLeft := map[string]decimal.Decimal{}
	netLeft := map[string]decimal.Decimal{}
	for _, g := range inv.TaxBreakdown {
		taxLeft[g.Rate.Decimal.String()], netLeft[g.Rate.Decimal.String()] = g.Tax.Decimal, g.Net.Decimal
	}
	var out []ledgerv1.Line
	for _, k := range order {
		net := nets[k]
		tax := decimal.Zero
		if left := netLeft[k.rate]; !left.IsZero() {
			tax = taxLeft[k.rate].Mul(net).Div(left).Round(2)
			if net.Equal(left) {
				tax = taxLeft[k.rate]
			}
		}
		netLeft[k.rate] = netLeft[k.rate].Sub(net)
		taxLeft[k.rate] = taxLeft[k.rate].Sub(tax)
		rate, _ := decimal.NewFromString(k.rate)
		code, _ := TaxCode(money.New(rate), inv.ReverseCharge)
		amount := net.Add(tax)
		if amount.IsZero() {
			continue
		}
		l := ledgerv1.Line{AccountDebit: k.account, AccountCredit: creditor, Amount: money.New(amount), TaxCode: code,
			ExternalReference: clip(number, 100)}
		if amount.IsNegative() {
			// A negative group (a discount larger than its rate's other
			// lines) is posted the other way round.
			l.AccountDebit, l.AccountCredit, l.Amount = creditor, k.account, money.New(amount.Neg())
		}
		out = append(out, l)
	}
	return out
}
