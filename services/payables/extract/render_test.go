package extract

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-pdf/fpdf"
)

// A sample invoice the tests render as a PDF with a text layer and as a
// scan. Its fields are the truth the extraction is compared with.
type sample struct {
	name       string
	letterhead []string // first line in bold: the vendor
	sender     string   // the small sender line above the window
	recipient  []string // the address block
	info       [][2]string
	title      string
	head       []string   // table header
	rows       [][]string // table rows
	widths     []float64
	summary    [][2]string
	notes      []string
	footer     []string
}

var samples = []sample{
	{
		name:       "de-19-7",
		letterhead: []string{"Bürobedarf Schmidt GmbH", "Hauptstraße 12", "10115 Berlin"},
		sender:     "Bürobedarf Schmidt GmbH · Hauptstraße 12 · 10115 Berlin",
		recipient:  []string{"Muster Handel GmbH", "z. Hd. Frau Weber", "Lindenweg 5", "80331 München"},
		info: [][2]string{
			{"Rechnungsnummer:", "RE-2026-0042"}, {"Rechnungsdatum:", "15.01.2026"},
			{"Leistungsdatum:", "12.01.2026"}, {"Kundennummer:", "K-10077"},
		},
		title:  "Rechnung",
		head:   []string{"Pos.", "Bezeichnung", "Menge", "Einheit", "Einzelpreis", "USt", "Gesamt"},
		widths: []float64{12, 62, 16, 16, 26, 14, 26},
		rows: [][]string{
			{"1", "Kopierpapier A4 500 Blatt", "10", "Stk.", "4,99 €", "19 %", "49,90 €"},
			{"2", "Toner schwarz", "2", "Stk.", "59,00 €", "19 %", "118,00 €"},
			{"3", "Fachbuch Steuerrecht", "1", "Stk.", "45,00 €", "7 %", "45,00 €"},
			{"4", "Kaffee 1 kg", "3", "Stk.", "12,50 €", "7 %", "37,50 €"},
		},
		summary: [][2]string{
			{"Nettobetrag", "250,40 €"},
			{"zzgl. 19 % USt auf 167,90 €", "31,90 €"},
			{"zzgl. 7 % USt auf 82,50 €", "5,78 €"},
			{"Gesamtbetrag", "288,08 €"},
		},
		notes: []string{"Zahlbar bis 29.01.2026 ohne Abzug.", "Bitte geben Sie bei der Zahlung die Rechnungsnummer an."},
		footer: []string{
			"Bürobedarf Schmidt GmbH · Geschäftsführer: Hans Schmidt · Amtsgericht Charlottenburg HRB 123456",
			"USt-IdNr.: DE136695976 · Steuernummer: 30/123/45678",
			"Berliner Bank · IBAN: DE89 3704 0044 0532 0130 00 · BIC: COBADEFFXXX",
		},
	},
	{
		name:       "en",
		letterhead: []string{"Acme Software GmbH", "Friedrichstraße 100", "10117 Berlin"},
		sender:     "Acme Software GmbH | Friedrichstraße 100 | 10117 Berlin",
		recipient:  []string{"Contoso Trading GmbH", "Hafenstraße 7", "20457 Hamburg"},
		info: [][2]string{
			{"Invoice No.:", "INV-2026-117"}, {"Invoice date:", "January 20, 2026"},
			{"Delivery date:", "2026-01-19"}, {"Due date:", "February 19, 2026"},
		},
		title:  "Invoice",
		head:   []string{"Description", "Qty", "Unit", "Unit price", "Amount"},
		widths: []float64{80, 16, 16, 30, 30},
		rows: [][]string{
			{"Software licence, annual", "3", "pcs", "1,200.00", "3,600.00"},
			{"Onboarding workshop", "8", "hrs", "150.00", "1,200.00"},
		},
		summary: [][2]string{
			{"Subtotal", "EUR 4,800.00"},
			{"VAT 19 %", "EUR 912.00"},
			{"Total amount due", "EUR 5,712.00"},
		},
		notes: []string{"Payment terms: payable within 30 days of the invoice date."},
		footer: []string{
			"Acme Software GmbH · Managing director: Jane Doe · Registered at Amtsgericht Berlin HRB 98765",
			"VAT ID: DE811907980 · IBAN: DE02 1203 0000 0000 2020 51 · BIC: BYLADEM1001",
		},
	},
	{
		name:       "receipt",
		letterhead: []string{"Bäckerei Müller e.K.", "Marktplatz 3", "69117 Heidelberg"},
		info:       [][2]string{{"Bon-Nr.:", "8812"}, {"Datum:", "03.02.2026"}},
		title:      "Quittung",
		head:       []string{"Artikel", "Menge", "Preis", "Summe"},
		widths:     []float64{80, 20, 30, 30},
		rows: [][]string{
			{"Milchkaffee", "2", "3,20", "6,40"},
			{"Apfelkuchen", "1", "3,50", "3,50"},
		},
		summary: [][2]string{
			{"Summe EUR", "9,90"},
			{"darin enthalten 7 % MwSt", "0,65"},
			{"Netto", "9,25"},
		},
		notes:  []string{"Vielen Dank für Ihren Besuch!"},
		footer: []string{"Bäckerei Müller e.K. · St.-Nr. 32/456/78901"},
	},
	{
		name:       "reverse-charge",
		letterhead: []string{"Alpen Consulting GmbH", "Mariahilfer Straße 10", "1060 Wien", "Österreich"},
		sender:     "Alpen Consulting GmbH · Mariahilfer Straße 10 · 1060 Wien · Österreich",
		recipient:  []string{"Muster Handel GmbH", "Lindenweg 5", "80331 München", "Deutschland"},
		info: [][2]string{
			{"Rechnung Nr.", "AC-2026-007"}, {"Datum:", "05.02.2026"},
			{"Leistungszeitraum:", "01.01.2026 - 31.01.2026"}, {"Ihre USt-IdNr.:", "DE136695976"},
		},
		title:  "Rechnung",
		head:   []string{"Pos.", "Leistung", "Menge", "Einheit", "Preis", "Betrag"},
		widths: []float64{12, 78, 18, 18, 24, 28},
		rows: [][]string{
			{"1", "Beratung Projekt Alpha", "12", "Std.", "110,00", "1.320,00"},
			{"2", "Reisekosten pauschal", "1", "Psch.", "280,00", "280,00"},
		},
		summary: [][2]string{
			{"Nettobetrag", "1.600,00 EUR"},
			{"Umsatzsteuer 0 %", "0,00 EUR"},
			{"Rechnungsbetrag", "1.600,00 EUR"},
		},
		notes: []string{
			"Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).",
			"Zahlungsziel: 14 Tage netto.",
		},
		footer: []string{"Alpen Consulting GmbH · UID: ATU12345675 · FN 123456a · IBAN: AT61 1904 3002 3457 3201 · BIC: BKAUATWW"},
	},
}

// render draws s on an A4 page with a text layer.
func (s sample) render(t testing.TB) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(20, 15, 20)
	pdf.SetAutoPageBreak(false, 10)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 16)
	pdf.Text(20, 22, tr(s.letterhead[0]))
	pdf.SetFont("Helvetica", "", 10)
	for i, l := range s.letterhead[1:] {
		pdf.Text(140, 17+float64(i)*5, tr(l))
	}
	y := 50.0
	if s.sender != "" {
		pdf.SetFont("Helvetica", "", 7)
		pdf.Text(20, y-5, tr(s.sender))
	}
	pdf.SetFont("Helvetica", "", 10)
	for i, l := range s.recipient {
		pdf.Text(20, y+float64(i)*5, tr(l))
	}
	for i, kv := range s.info {
		pdf.Text(120, y+float64(i)*5, tr(kv[0]))
		pdf.Text(158, y+float64(i)*5, tr(kv[1]))
	}
	y = 90
	pdf.SetFont("Helvetica", "B", 14)
	pdf.Text(20, y, tr(s.title))
	y += 8
	pdf.SetXY(20, y)
	pdf.SetFont("Helvetica", "B", 9)
	for i, h := range s.head {
		align := "R"
		if i == 0 || h == s.head[1] && len(s.head) > 5 {
			align = "L"
		}
		pdf.CellFormat(s.widths[i], 7, tr(h), "B", 0, align, false, 0, "")
	}
	pdf.SetFont("Helvetica", "", 9)
	for _, r := range s.rows {
		pdf.Ln(7)
		pdf.SetX(20)
		for i, c := range r {
			align := "R"
			if i == 0 || i == 1 && len(s.head) > 5 {
				align = "L"
			}
			pdf.CellFormat(s.widths[i], 7, tr(c), "", 0, align, false, 0, "")
		}
	}
	y = pdf.GetY() + 14
	pdf.SetFont("Helvetica", "", 10)
	for i, kv := range s.summary {
		if i == len(s.summary)-1 && s.name != "receipt" {
			pdf.SetFont("Helvetica", "B", 10)
		}
		pdf.Text(100, y, tr(kv[0]))
		pdf.SetXY(150, y-4)
		pdf.CellFormat(40, 5, tr(kv[1]), "", 0, "R", false, 0, "")
		y += 6
	}
	pdf.SetFont("Helvetica", "", 10)
	y += 6
	for _, n := range s.notes {
		pdf.Text(20, y, tr(n))
		y += 5
	}
	pdf.SetFont("Helvetica", "", 7)
	for i, f := range s.footer {
		pdf.Text(20, 275+float64(i)*4, tr(f))
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		t.Fatalf("render %s: %v", s.name, err)
	}
	return b.Bytes()
}

// scan renders s, rasterises it with pdftoppm at 200 dpi and degrades
// it like a cheap office scanner: grey, noise, a slight skew.
func (s sample) scan(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, s.render(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pdftoppm", "-r", "200", "-gray", "-png", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s (run make tools)", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bounds()
	dst := image.NewGray(b)
	rnd := rand.New(rand.NewPCG(1, 2))
	// Rotate by 0.4° around the centre (nearest neighbour) and add noise.
	sin, cos := math.Sincos(0.4 * math.Pi / 180)
	cx, cy := float64(b.Dx())/2, float64(b.Dy())/2
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			sx, sy := int(cos*dx+sin*dy+cx), int(-sin*dx+cos*dy+cy)
			v := 255.0
			if (image.Point{sx, sy}).In(b) {
				v = float64(color.GrayModel.Convert(src.At(sx, sy)).(color.Gray).Y)
			}
			v += rnd.NormFloat64() * 12
			if rnd.IntN(400) == 0 {
				v = 60 // speckle
			}
			dst.SetGray(x, y, color.Gray{Y: uint8(math.Max(0, math.Min(255, v)))})
		}
	}
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// imagePDF is a PDF holding only the scans, one a page, as scanners
// write them.
func imagePDF(t testing.TB, scans ...[]byte) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	for i, scan := range scans {
		name := fmt.Sprintf("scan%d", i)
		pdf.AddPage()
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(scan))
		pdf.ImageOptions(name, 0, 0, 210, 297, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		t.Fatal(fmt.Errorf("image pdf: %w", err))
	}
	return b.Bytes()
}
