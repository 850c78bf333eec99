package extract

import (
	"bytes"
	"context"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
)

// The truth of each rendered sample (see samples in render_test.go).
var sampleWants = map[string]struct {
	want    got
	docType string
	checks  map[string]string
}{
	"de-19-7": {want: got{
		Number: "RE-2026-0042", Date: "2026-01-15", Due: "2026-01-29", Delivery: "2026-01-12",
		Net: "250.4", Tax: "37.68", Gross: "288.08", Currency: "EUR", Rates: []string{"S 19 167.9 31.9", "S 7 82.5 5.78"},
		Vendor: "Bürobedarf Schmidt GmbH", VATID: "DE136695976", TaxID: "30/123/45678", IBAN: "DE89370400440532013000",
		Address: "Hauptstraße 12, 10115 Berlin, DE", Buyer: "Muster Handel GmbH", Lines: 4,
	}, docType: "invoice", checks: map[string]string{RuleDelivery: payablesv1.CheckPassed, RuleNetByRate: payablesv1.CheckPassed, RuleReverse: payablesv1.CheckNA}},
	"en": {want: got{
		Number: "INV-2026-117", Date: "2026-01-20", Due: "2026-02-19", Delivery: "2026-01-19",
		Net: "4800", Tax: "912", Gross: "5712", Currency: "EUR", Rates: []string{"S 19 4800 912"},
		Vendor: "Acme Software GmbH", VATID: "DE811907980", IBAN: "DE02120300000000202051",
		Address: "Friedrichstraße 100, 10117 Berlin, DE", Buyer: "Contoso Trading GmbH", Lines: 2,
	}, docType: "invoice", checks: map[string]string{RuleTaxID: payablesv1.CheckPassed}},
	"receipt": {want: got{
		Number: "8812", Date: "2026-02-03",
		Net: "9.25", Tax: "0.65", Gross: "9.9", Currency: "EUR", Rates: []string{"S 7 9.25 0.65"},
		Vendor: "Bäckerei Müller e.K.", TaxID: "32/456/78901", Address: "Marktplatz 3, 69117 Heidelberg, DE", Lines: 2,
	}, docType: "small_amount_invoice", checks: map[string]string{RuleSmallAmount: payablesv1.CheckPassed, RuleRecipient: payablesv1.CheckNA, RuleDelivery: payablesv1.CheckNA}},
	"reverse-charge": {want: got{
		Number: "AC-2026-007", Date: "2026-02-05", Due: "2026-02-19", Period: "2026-01-01..2026-01-31",
		Net: "1600", Tax: "0", Gross: "1600", Currency: "EUR", Rates: []string{"AE 0 1600 0"},
		Vendor: "Alpen Consulting GmbH", VATID: "ATU12345675", IBAN: "AT611904300234573201",
		Address: "Mariahilfer Straße 10, 1060 Wien, AT", Buyer: "Muster Handel GmbH", Lines: 2,
	}, docType: "invoice", checks: map[string]string{RuleReverse: payablesv1.CheckPassed, RuleTax: payablesv1.CheckPassed, RuleDelivery: payablesv1.CheckPassed}},
}

func TestRenderedPDFs(t *testing.T) {
	e := New(Options{})
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			w := sampleWants[s.name]
			r, check, err := e.Extract(context.Background(), s.render(t), "application/pdf")
			if err != nil {
				t.Fatal(err)
			}
			want := w.want
			want.Source = SourcePDFText
			if d := cmp.Diff(want, project(r)); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if check.DocumentType != w.docType || !check.Compliant {
				t.Errorf("check: %s compliant %v, want %s compliant: %v", check.DocumentType, check.Compliant, w.docType, failures(check))
			}
			got := statuses(check)
			for rule, st := range w.checks {
				if got[rule] != st {
					t.Errorf("%s: %s, want %s", rule, got[rule], st)
				}
			}
			if r.RawMarkdown == "" || len(r.RawMarkdown) > MaxText {
				t.Errorf("raw_markdown of %d bytes", len(r.RawMarkdown))
			}
		})
	}
}

// Scans of the samples, as PNG and as a PDF holding only the image, are
// read by OCR with the same totals.
func TestScans(t *testing.T) {
	e := New(Options{})
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			scan := s.scan(t)
			inputs := map[string][]byte{"image/png": scan}
			switch s.name {
			case "de-19-7":
				inputs["application/pdf"] = imagePDF(t, scan)
			case "receipt":
				inputs["image/jpeg"] = toJPEG(t, scan)
			}
			for mime, data := range inputs {
				r, check, err := e.Extract(context.Background(), data, mime)
				if err != nil {
					t.Fatalf("%s: %v", mime, err)
				}
				w := sampleWants[s.name].want
				want := got{Source: SourceOCR, Number: w.Number, Date: w.Date, Net: w.Net, Tax: w.Tax, Gross: w.Gross, Currency: w.Currency, Rates: w.Rates,
					VATID: w.VATID, Vendor: w.Vendor, Buyer: w.Buyer}
				g := project(r)
				g = got{Source: g.Source, Number: g.Number, Date: g.Date, Net: g.Net, Tax: g.Tax, Gross: g.Gross, Currency: g.Currency, Rates: g.Rates,
					VATID: g.VATID, Vendor: g.Vendor, Buyer: g.Buyer}
				if d := cmp.Diff(want, g); d != "" {
					t.Errorf("%s (-want +got):\n%s", mime, d)
				}
				if check.DocumentType != sampleWants[s.name].docType {
					t.Errorf("%s: document type %s", mime, check.DocumentType)
				}
			}
		})
	}
}

// A two-page scan is read page by page, in order: a cover letter, then
// the receipt.
func TestScanPages(t *testing.T) {
	cover := sample{
		name:       "cover",
		letterhead: []string{"Bäckerei Müller e.K.", "Marktplatz 3", "69117 Heidelberg"},
		title:      "Anschreiben",
		head:       []string{"Betreff"},
		widths:     []float64{100},
		notes:      []string{"Sehr geehrte Damen und Herren,", "anbei erhalten Sie die Quittung Ihres Einkaufs."},
	}
	r, _, err := New(Options{}).Extract(context.Background(), imagePDF(t, cover.scan(t), samples[2].scan(t)), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalGross == nil || r.TotalGross.String() != "9.9" || r.InvoiceNumber != "8812" {
		t.Errorf("gross %v number %q", r.TotalGross, r.InvoiceNumber)
	}
	first, second := strings.Index(r.RawMarkdown, "Anschreiben"), strings.Index(r.RawMarkdown, "Quittung\n")
	if first < 0 || second < 0 || first > second || !strings.Contains(r.RawMarkdown, "\f") {
		t.Errorf("pages out of order or not separated (%d, %d):\n%s", first, second, r.RawMarkdown)
	}
}

func toJPEG(t *testing.T, pngData []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A readable PDF that is no invoice is classified, not refused.
func TestNotAnInvoice(t *testing.T) {
	letter := sample{
		name:       "letter",
		letterhead: []string{"Verein der Freunde e.V.", "Parkweg 1", "50667 Köln"},
		recipient:  []string{"Muster Handel GmbH", "Lindenweg 5", "80331 München"},
		title:      "Einladung zur Mitgliederversammlung",
		head:       []string{"Tagesordnung"},
		widths:     []float64{100},
		notes:      []string{"Sehr geehrte Damen und Herren,", "wir laden Sie herzlich zu unserer Versammlung am 12.03.2026 ein."},
	}
	_, check, err := New(Options{}).Extract(context.Background(), letter.render(t), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	want := payablesv1.ComplianceCheck{DocumentType: "not_an_invoice"}
	if d := cmp.Diff(want, check); d != "" {
		t.Errorf("check (-want +got):\n%s", d)
	}
}

// The text fixtures of the fuzz seeds are the rendered samples' and the
// ZUGFeRD sample's pdftotext output; this keeps them current.
func TestTextFixtures(t *testing.T) {
	e := New(Options{})
	texts := map[string][]byte{}
	for _, s := range samples {
		texts[s.name] = s.render(t)
	}
	texts["mustang"] = read(t, "mustang-EN16931_Einfach.pdf")
	for name, pdf := range texts {
		text, err := e.pdfText(context.Background(), pdf)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "text", name+".txt")
		if os.Getenv("UPDATE_FIXTURES") != "" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (UPDATE_FIXTURES=1 writes it)", err)
		}
		if d := cmp.Diff(string(old), text); d != "" {
			t.Errorf("%s changed (UPDATE_FIXTURES=1 rewrites it):\n%s", path, d)
		}
	}
}
