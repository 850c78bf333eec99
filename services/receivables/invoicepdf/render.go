// Package invoicepdf renders an einvoice.Document as a readable A4 invoice
// and embeds its CII XML, producing a hybrid e-invoice (ZUGFeRD 2.x /
// Factur-X) in the structure of PDF/A-3b: embedded DejaVu Sans with a text
// layer, an sRGB output intent, XMP metadata declaring PDF/A-3B and the
// Factur-X extension schema, and the XML as an associated file (/AF) with
// /AFRelationship /Data.
//
// Layout is go-pdf/fpdf's job; fpdf cannot write the PDF/A-3 catalog
// entries, so finish (pdfa.go) rewrites its last two objects (document
// information and catalog) and appends the rest.
package invoicepdf

import (
	"bytes"
	_ "embed"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

var (
	//go:embed assets/DejaVuSans.ttf
	fontRegular []byte
	//go:embed assets/DejaVuSans-Bold.ttf
	fontBold []byte
	//go:embed assets/DejaVuSans-WinAnsi.json
	winAnsiRegular []byte
	//go:embed assets/DejaVuSans-WinAnsi.z
	winAnsiRegularFile []byte
	//go:embed assets/DejaVuSans-Bold-WinAnsi.json
	winAnsiBold []byte
	//go:embed assets/DejaVuSans-Bold-WinAnsi.z
	winAnsiBoldFile []byte
	//go:embed assets/sRGB.icc
	iccSRGB []byte
)

const (
	font       = "dejavu"
	pageW      = 210.0
	marginL    = 20.0
	marginR    = 15.0
	contentW   = pageW - marginL - marginR
	bottomLine = 270.0 // below it only the footer
	lineH      = 4.2
)

// Render computes d (the caller's document is not modified) and returns the
// PDF with xml embedded as factur-x.xml (xrechnung.xml for the XRechnung
// profile, as ZUGFeRD 2.x names it). xml must be einvoice.CII's output for
// the same document: Render checks that it names the same invoice number.
//
// The output is deterministic: its dates are the issue date (midnight UTC)
// and its file ID a hash of the XML, so rendering an archived invoice again
// gives the same bytes.
func Render(d einvoice.Document, xmlData []byte) ([]byte, error) {
	const op = "invoicepdf.Render"
	d.Lines = append([]einvoice.Line(nil), d.Lines...)
	if err := d.Compute(); err != nil {
		return nil, errs.Wrap(op, err)
	}
	if !bytes.Contains(xmlData, []byte("<ram:ID>"+escapeXML(d.Number)+"</ram:ID>")) {
		return nil, errs.Wrap(op, errs.Invalid("the XML is not the e-invoice of this document",
			errs.Field("xml", "does not contain invoice number "+d.Number)))
	}
	issued, _ := time.Parse(time.DateOnly, d.IssueDate) // Compute checked it

	body, err := layout(&d, true)
	if errors.Is(err, errNotWinAnsi) {
		body, err = layout(&d, false)
	}
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	out, err := finish(body, pdfaInfo{
		title:      title(&d) + " " + d.Number,
		author:     d.Seller.Name,
		subject:    fmt.Sprintf("%s %s vom %s an %s", title(&d), d.Number, germanDate(d.IssueDate), d.Buyer.Name),
		date:       issued.UTC(),
		xml:        xmlData,
		fileName:   AttachmentName(d.Profile),
		conformity: conformanceLevel(d.Profile),
	})
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	return out, nil
}

// errNotWinAnsi stops a layout in the WinAnsi fonts at the first character
// Windows-1252 lacks.
var errNotWinAnsi = errors.New("text outside Windows-1252")

// layout lays the invoice out with fpdf. Most invoices are written in
// Windows-1252 (WinAnsi) fonts: fpdf reads their prepared widths and
// embeds their small font programs as they are, where a Unicode font is
// parsed, hashed and subset on every document, nine tenths of the render
// time. Text beyond Windows-1252 (a Polish or Greek name, say) makes the
// WinAnsi layout fail with errNotWinAnsi, and the caller lays the document
// out again in the Unicode fonts.
func layout(d *einvoice.Document, winAnsi bool) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCompression(true)
	// Resources in a fixed order: fpdf otherwise walks its font map in Go's
	// random map order, and the same invoice would render to other bytes.
	pdf.SetCatalogSort(true)
	if winAnsi {
		pdf.AddFontFromBytes(font, "", winAnsiRegular, winAnsiRegularFile)
		pdf.AddFontFromBytes(font, "B", winAnsiBold, winAnsiBoldFile)
	} else {
		pdf.AddUTF8FontFromBytes(font, "", fontRegular)
		pdf.AddUTF8FontFromBytes(font, "B", fontBold)
	}
	pdf.SetMargins(marginL, 15, marginR)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("{nb}")
	r := &renderer{pdf: pdf, d: d, winAnsi: winAnsi}
	pdf.SetFooterFunc(r.footer)
	r.render()
	if r.notWinAnsi {
		return nil, errNotWinAnsi
	}
	if err := pdf.Error(); err != nil {
		return nil, err
	}
	var body bytes.Buffer
	if err := pdf.Output(&body); err != nil {
		return nil, err
	}
	return body.Bytes(), nil
}

// AttachmentName is the name of the embedded XML: factur-x.xml, or
// xrechnung.xml for the XRechnung profile (ZUGFeRD 2.1.1 and later).
func AttachmentName(p einvoice.Profile) string {
	if p == einvoice.ProfileXRechnung {
		return "xrechnung.xml"
	}
	return "factur-x.xml"
}

func conformanceLevel(p einvoice.Profile) string {
	if p == einvoice.ProfileXRechnung {
		return "XRECHNUNG"
	}
	return "EN 16931"
}

// title names the document. A credit note (381) correcting an invoice is a
// "Rechnungskorrektur": in German VAT law "Gutschrift" means a self-billed
// invoice (§14 Abs. 2 Satz 2 UStG), which this is not.
func title(d *einvoice.Document) string {
	if d.TypeCode == einvoice.TypeCreditNote {
		return "Rechnungskorrektur"
	}
	return "Rechnung"
}

type renderer struct {
	pdf        *fpdf.Fpdf
	d          *einvoice.Document
	winAnsi    bool // text is written in Windows-1252
	notWinAnsi bool // and some did not fit
}

func (r *renderer) font(style string, size float64) { r.pdf.SetFont(font, style, size) }

// encode gives s as the current fonts take it.
func (r *renderer) encode(s string) string {
	if !r.winAnsi {
		// fpdf's Unicode fonts index their widths by a 16-bit code and
		// panic beyond it: a character outside the BMP (an emoji) shows as
		// U+FFFD. The XML keeps it.
		return strings.Map(func(c rune) rune {
			if c > 0xFFFF {
				return '\uFFFD'
			}
			return c
		}, s)
	}
	b := make([]byte, 0, len(s))
	for _, c := range s {
		e, ok := charmap.Windows1252.EncodeRune(c)
		if !ok {
			r.notWinAnsi = true
			return ""
		}
		b = append(b, e)
	}
	return string(b)
}

// cell is fpdf's CellFormat for text in UTF-8.
func (r *renderer) cell(w, h float64, s, border string, ln int, align string, fill bool) {
	r.pdf.CellFormat(w, h, r.encode(s), border, ln, align, fill, 0, "")
}

func (r *renderer) text(x, y float64, s string) {
	r.pdf.SetXY(x, y)
	r.cell(0, lineH, s, "", 0, "L", false)
}

// split breaks s into lines that fit a cell w wide in the current font: at
// spaces, inside a word only when the word alone is too wide, and at
// newlines. fpdf's SplitText measures runes, which a WinAnsi font cannot.
func (r *renderer) split(s string, w float64) []string {
	room := w - 2*r.pdf.GetCellMargin()
	fits := func(t string) bool { return r.pdf.GetStringWidth(r.encode(t)) <= room }
	var lines []string
	for _, para := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case fits(line + " " + word):
				line += " " + word
				continue
			default:
				lines = append(lines, line)
				line = word
			}
			for !fits(line) {
				head := []rune(line)
				n := max(len(head)-1, 1)
				for n > 1 && !fits(string(head[:n])) {
					n--
				}
				lines = append(lines, string(head[:n]))
				line = string(head[n:])
			}
		}
		lines = append(lines, line)
	}
	return lines
}

func (r *renderer) render() {
	d, pdf := r.d, r.pdf
	pdf.AddPage()
	s := d.Seller

	// Seller block, top right.
	y := 15.0
	r.font("B", 11)
	r.text(118, y, s.Name)
	r.font("", 8.5)
	y += 5.5
	for _, l := range []string{s.Street, s.Zip + " " + s.City, countryLine(s.Country), phoneLine(s.Phone), s.Email} {
		if l == "" {
			continue
		}
		r.text(118, y, l)
		y += lineH
	}

	// Buyer address window (DIN 5008 form B: 20 mm from the left, 45 mm
	// from the top) with the seller's return line above it.
	r.font("", 6.5)
	r.text(marginL, 45, s.Name+" · "+s.Street+" · "+s.Zip+" "+s.City)
	r.font("", 10)
	y = 51
	b := d.Buyer
	for _, l := range []string{b.Name, b.Street, strings.TrimSpace(b.Zip + " " + b.City), foreignCountry(b.Country, s.Country)} {
		if l == "" {
			continue
		}
		r.text(marginL, y, l)
		y += 4.8
	}

	// Invoice facts, right column.
	facts := [][2]string{
		{numberLabel(d), d.Number},
		{dateLabel(d), germanDate(d.IssueDate)},
	}
	if d.DeliveryDate != "" {
		facts = append(facts, [2]string{"Liefer-/Leistungsdatum", germanDate(d.DeliveryDate)})
	}
	if p := d.ServicePeriod; p != nil {
		facts = append(facts, [2]string{"Leistungszeitraum", germanDate(p.Start) + " – " + germanDate(p.End)})
	}
	if d.DueDate != "" {
		facts = append(facts, [2]string{"Fällig am", germanDate(d.DueDate)})
	}
	if d.OrderReference != "" {
		facts = append(facts, [2]string{"Ihre Bestellung", d.OrderReference})
	}
	if d.BuyerReference != "" {
		facts = append(facts, [2]string{"Leitweg-ID / Ihr Zeichen", d.BuyerReference})
	}
	if b.VATID != "" {
		facts = append(facts, [2]string{"Ihre USt-IdNr.", b.VATID})
	}
	if s.VATID != "" {
		facts = append(facts, [2]string{"Unsere USt-IdNr.", s.VATID})
	}
	if s.TaxNumber != "" {
		facts = append(facts, [2]string{"Steuernummer", s.TaxNumber})
	}
	y = 50
	for _, f := range facts {
		r.font("", 8.5)
		r.text(118, y, f[0]+":")
		r.font("B", 8.5)
		r.text(155, y, f[1])
		y += lineH
	}

	// Title.
	y = max(y, 80) + 8
	r.font("B", 14)
	r.text(marginL, y, title(d)+" "+d.Number)
	y += 7
	r.font("", 9)
	if p := d.PrecedingInvoice; p != nil {
		ref := "zur Rechnung " + p.Number
		if p.IssueDate != "" {
			ref += " vom " + germanDate(p.IssueDate)
		}
		r.text(marginL, y, ref)
		y += 6
	}
	pdf.SetY(y + 2)
	r.lines()
	r.totals()
	r.texts()
}

// Lines table columns: position, description, quantity, unit, unit price,
// VAT rate, net amount. Widths add up to contentW (175 mm).
var cols = []struct {
	w     float64
	head  string
	align string
}{
	{10, "Pos.", "L"}, {67, "Beschreibung", "L"}, {18, "Menge", "R"}, {14, "Einheit", "L"},
	{24, "Einzelpreis", "R"}, {14, "USt", "R"}, {28, "Netto", "R"},
}

func (r *renderer) tableHead() {
	pdf := r.pdf
	r.font("B", 8.5)
	pdf.SetFillColor(235, 235, 235)
	pdf.SetX(marginL)
	for _, c := range cols {
		r.cell(c.w, 6, c.head, "B", 0, c.align, true)
	}
	pdf.Ln(7)
}

func (r *renderer) needSpace(h float64, repeatHead bool) {
	if r.pdf.GetY()+h > bottomLine {
		r.pdf.AddPage()
		r.font("", 8.5)
		r.text(marginL, 15, title(r.d)+" "+r.d.Number+" vom "+germanDate(r.d.IssueDate)+" (Fortsetzung)")
		r.pdf.SetY(22)
		if repeatHead {
			r.tableHead()
		}
	}
}

func (r *renderer) lines() {
	d, pdf := r.d, r.pdf
	r.tableHead()
	cur := currencyLabel(d.Currency)
	for _, l := range d.Lines {
		r.font("", 8.5)
		desc := r.split(l.Description, cols[1].w-1)
		extra := ""
		if l.Discount.IsPositive() {
			extra = "abzgl. Rabatt " + germanAmount(l.Discount) + " " + cur
		}
		n := len(desc)
		if extra != "" {
			n++
		}
		h := float64(n) * lineH
		r.needSpace(h+1, true)
		r.font("", 8.5) // the repeated table head leaves bold set
		y := pdf.GetY()
		cells := []string{l.ID, "", germanQuantity(l.Quantity), unitLabel(l.UnitCode),
			germanPrice(l.UnitPrice), germanRate(l.TaxRate) + " %", germanAmount(l.NetAmount)}
		x := marginL
		for i, c := range cols {
			if i == 1 {
				for j, t := range desc {
					pdf.SetXY(x, y+float64(j)*lineH)
					r.cell(c.w, lineH, t, "", 0, "L", false)
				}
				if extra != "" {
					r.font("", 7.5)
					pdf.SetXY(x, y+float64(len(desc))*lineH)
					r.cell(c.w, lineH, extra, "", 0, "L", false)
					r.font("", 8.5)
				}
			} else {
				pdf.SetXY(x, y)
				r.cell(c.w, lineH, cells[i], "", 0, c.align, false)
			}
			x += c.w
		}
		pdf.SetY(y + h + 1)
		pdf.SetDrawColor(220, 220, 220)
		pdf.Line(marginL, pdf.GetY()-0.5, marginL+contentW, pdf.GetY()-0.5)
		pdf.SetDrawColor(0, 0, 0)
	}
}

func (r *renderer) totals() {
	d, pdf := r.d, r.pdf
	cur := currencyLabel(d.Currency)
	t := d.Totals
	rows := [][2]string{{"Summe netto", germanAmount(t.LineTotal) + " " + cur}}
	for _, g := range d.TaxBreakdown {
		label := "USt " + germanRate(g.Rate) + " % auf " + germanAmount(g.Basis) + " " + cur
		if g.Category != einvoice.CategoryStandard {
			label = categoryLabel(g.Category) + " (" + germanRate(g.Rate) + " %) auf " + germanAmount(g.Basis) + " " + cur
		}
		rows = append(rows, [2]string{label, germanAmount(g.Tax) + " " + cur})
	}
	rows = append(rows, [2]string{"Summe USt", germanAmount(t.Tax) + " " + cur})
	if d.TaxCurrency != "" {
		rows = append(rows, [2]string{"Summe USt in " + d.TaxCurrency + " (Kurs " + germanRate(d.ExchangeRate) + ")",
			germanAmount(t.TaxInTaxCurrency) + " " + currencyLabel(d.TaxCurrency)})
	}
	r.needSpace(float64(len(rows)+2)*5+4, false)
	pdf.Ln(2)
	for _, row := range rows {
		r.font("", 8.5)
		pdf.SetX(marginL + 60)
		r.cell(85, 5, row[0], "", 0, "R", false)
		r.cell(30, 5, row[1], "", 1, "R", false)
	}
	total := "Gesamtbetrag"
	if d.TypeCode == einvoice.TypeCreditNote {
		total = "Korrekturbetrag zu Ihren Gunsten"
	}
	r.font("B", 10)
	pdf.SetX(marginL + 60)
	r.cell(85, 7, total, "T", 0, "R", false)
	r.cell(30, 7, germanAmount(t.Grand)+" "+cur, "T", 1, "R", false)
	pdf.Ln(3)
}

// texts writes what §14 and §14a UStG want said in words: exemption and
// reverse-charge notes, the payment terms and bank details, free notes.
func (r *renderer) texts() {
	d, pdf := r.d, r.pdf
	var paras []string
	for _, g := range d.TaxBreakdown {
		if g.ExemptionReason != "" {
			paras = append(paras, categoryLabel(g.Category)+": "+g.ExemptionReason+".")
		}
	}
	if hasCategory(d, einvoice.CategoryReverseCharge) {
		paras = append(paras, "Die Umsatzsteuer schuldet der Leistungsempfänger (USt-IdNr. "+d.Buyer.VATID+").")
	}
	if d.TaxCurrency != "" {
		paras = append(paras, "Umrechnungskurs: 1 "+d.Currency+" = "+germanRate(d.ExchangeRate)+" "+d.TaxCurrency+
			"; die Umsatzsteuer beträgt "+germanAmount(d.Totals.TaxInTaxCurrency)+" "+currencyLabel(d.TaxCurrency)+
			" (§ 16 Abs. 6 UStG).")
	}
	paras = append(paras, d.Notes...)
	if d.PaymentTerms != "" {
		paras = append(paras, d.PaymentTerms)
	}
	if pm := d.PaymentMeans; pm != nil {
		pay := "Bitte überweisen Sie den Betrag unter Angabe der Rechnungsnummer " + d.Number +
			" auf das Konto IBAN " + groupIBAN(pm.IBAN)
		if d.TypeCode == einvoice.TypeCreditNote {
			// A credit note's payment account is the one the seller pays to.
			pay = "Wir überweisen den Betrag unter Angabe der Nummer " + d.Number +
				" auf das Konto IBAN " + groupIBAN(pm.IBAN)
		}
		if pm.BIC != "" {
			pay += ", BIC " + pm.BIC
		}
		if pm.AccountName != "" {
			pay += ", Kontoinhaber " + pm.AccountName
		}
		paras = append(paras, pay+".")
		if pm.Information != "" {
			paras = append(paras, pm.Information)
		}
	}
	r.font("", 8.5)
	for _, p := range paras {
		ls := r.split(p, contentW)
		r.needSpace(float64(len(ls))*lineH+2, false)
		r.font("", 8.5)
		for _, l := range ls {
			pdf.SetX(marginL)
			r.cell(contentW, lineH, l, "", 1, "L", false)
		}
		pdf.Ln(1.5)
	}
}

func (r *renderer) footer() {
	d, pdf := r.d, r.pdf
	s := d.Seller
	pdf.SetDrawColor(180, 180, 180)
	pdf.Line(marginL, 276, marginL+contentW, 276)
	pdf.SetDrawColor(0, 0, 0)
	r.font("", 6.5)
	parts := []string{s.Name, s.Street + ", " + s.Zip + " " + s.City}
	if s.VATID != "" {
		parts = append(parts, "USt-IdNr. "+s.VATID)
	}
	if s.TaxNumber != "" {
		parts = append(parts, "St.-Nr. "+s.TaxNumber)
	}
	r.text(marginL, 277.5, strings.Join(parts, " · "))
	r.text(marginL, 281, "Diese "+title(d)+" enthält die strukturierte E-Rechnung "+AttachmentName(d.Profile)+
		" ("+conformanceLevel(d.Profile)+"); maßgeblich sind deren Daten.")
	pdf.SetXY(marginL, 281)
	r.cell(contentW, lineH, fmt.Sprintf("Seite %d von {nb}", pdf.PageNo()), "", 0, "R", false)
}

func numberLabel(d *einvoice.Document) string {
	if d.TypeCode == einvoice.TypeCreditNote {
		return "Korrekturnummer"
	}
	return "Rechnungsnummer"
}

func dateLabel(d *einvoice.Document) string {
	if d.TypeCode == einvoice.TypeCreditNote {
		return "Korrekturdatum"
	}
	return "Rechnungsdatum"
}

func countryLine(c string) string {
	if c == "DE" {
		return "Deutschland"
	}
	return c
}

// foreignCountry names the buyer's country only when it is not the
// seller's, as a postal address does.
func foreignCountry(c, home string) string {
	if c == home {
		return ""
	}
	if name, ok := countryNames[c]; ok {
		return name
	}
	return c
}

var countryNames = map[string]string{
	"AT": "ÖSTERREICH", "BE": "BELGIEN", "CH": "SCHWEIZ", "CZ": "TSCHECHIEN", "DE": "DEUTSCHLAND",
	"DK": "DÄNEMARK", "ES": "SPANIEN", "FR": "FRANKREICH", "GB": "VEREINIGTES KÖNIGREICH", "IT": "ITALIEN",
	"LU": "LUXEMBURG", "NL": "NIEDERLANDE", "PL": "POLEN", "SE": "SCHWEDEN", "US": "USA",
}

func phoneLine(p string) string {
	if p == "" {
		return ""
	}
	return "Tel. " + p
}

func categoryLabel(c einvoice.TaxCategory) string {
	switch c {
	case einvoice.CategoryZero:
		return "Nullsteuersatz"
	case einvoice.CategoryExempt:
		return "Steuerfrei"
	case einvoice.CategoryReverseCharge:
		return "Steuerschuldnerschaft des Leistungsempfängers"
	case einvoice.CategoryIntraCommunity:
		return "Innergemeinschaftliche Lieferung"
	case einvoice.CategoryExportOutsideEU:
		return "Ausfuhrlieferung"
	}
	return "USt"
}

var units = map[string]string{
	"C62": "Stk.", "H87": "Stk.", "HUR": "Std.", "DAY": "Tag", "KGM": "kg", "MTR": "m", "LTR": "l",
	"MON": "Monat", "ANN": "Jahr", "WEE": "Woche", "MIN": "Min.", "LS": "pauschal", "KMT": "km", "MTK": "m²",
}

func unitLabel(code string) string {
	if u, ok := units[code]; ok {
		return u
	}
	return code
}

func currencyLabel(c string) string {
	if c == "EUR" {
		return "€"
	}
	return c
}

func germanDate(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("02.01.2006")
}

// germanNumber writes v with exactly places decimals (v already has at most
// that many), a decimal comma and dots between thousands.
func germanNumber(v decimal.Decimal, places int32) string {
	s := v.StringFixed(places)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "," + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

func germanAmount(v decimal.Decimal) string { return germanNumber(v, 2) }

// germanPrice shows 2 decimals, or up to 4 when the price has them.
func germanPrice(v decimal.Decimal) string {
	return germanNumber(v, min(max(2, -v.Exponent()), 4))
}

// germanQuantity shows as many decimals as the quantity has (none for 3).
func germanQuantity(v decimal.Decimal) string {
	places := int32(0)
	if t := strings.TrimRight(v.String(), "0"); strings.Contains(v.String(), ".") {
		_, frac, _ := strings.Cut(strings.TrimSuffix(t, "."), ".")
		places = int32(len(frac))
	}
	return germanNumber(v, places)
}

func germanRate(v decimal.Decimal) string {
	return germanQuantity(v)
}

func groupIBAN(iban string) string {
	var b strings.Builder
	for i, c := range iban {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// escapeXML escapes s the way einvoice.CII does (encoding/xml).
func escapeXML(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func hasCategory(d *einvoice.Document, c einvoice.TaxCategory) bool {
	for _, l := range d.Lines {
		if l.TaxCategory == c {
			return true
		}
	}
	return false
}
