package invoicepdf_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

func init() { api.DisableConfigDir() } // pdfcpu would write a config file under $HOME

func conf() *model.Configuration { return model.NewDefaultConfiguration() }

type rendered struct {
	name string
	doc  einvoice.Document // computed
	xml  []byte
	pdf  []byte
}

func renderAll(t testing.TB) []rendered {
	t.Helper()
	var out []rendered
	for _, s := range einvoicetest.Samples() {
		x, err := einvoice.CII(s.Doc)
		if err != nil {
			t.Fatalf("%s: CII: %v", s.Name, err)
		}
		p, err := invoicepdf.Render(s.Doc, x)
		if err != nil {
			t.Fatalf("%s: Render: %v", s.Name, err)
		}
		d := s.Doc
		if err := d.Compute(); err != nil {
			t.Fatal(err)
		}
		out = append(out, rendered{s.Name, d, x, p})
	}
	if dir := os.Getenv("EINVOICE_KEEP"); dir != "" {
		for _, r := range out {
			_ = os.WriteFile(filepath.Join(dir, r.name+".pdf"), r.pdf, 0o644)
		}
	}
	return out
}

// TestRenderEmbedsTheXML extracts the attachment again with pdfcpu: it must
// be the XML byte for byte, under the Factur-X file name.
func TestRenderEmbedsTheXML(t *testing.T) {
	for _, r := range renderAll(t) {
		t.Run(r.name, func(t *testing.T) {
			aa, err := api.ExtractAttachmentsRaw(bytes.NewReader(r.pdf), "", nil, conf())
			if err != nil {
				t.Fatal(err)
			}
			if len(aa) != 1 {
				t.Fatalf("%d attachments, want 1", len(aa))
			}
			if want := invoicepdf.AttachmentName(r.doc.Profile); aa[0].FileName != want {
				t.Errorf("attachment %q, want %q", aa[0].FileName, want)
			}
			got, err := io.ReadAll(aa[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, r.xml) {
				t.Errorf("extracted XML differs from the input (%d vs %d bytes)", len(got), len(r.xml))
			}
		})
	}
}

// TestRenderPDFAStructure checks what PDF/A-3b and Factur-X require of the
// file's structure, reading it back with pdfcpu (which also validates it).
func TestRenderPDFAStructure(t *testing.T) {
	for _, r := range renderAll(t) {
		t.Run(r.name, func(t *testing.T) {
			ctx, err := api.ReadContext(bytes.NewReader(r.pdf), conf())
			if err != nil {
				t.Fatal(err)
			}
			if err := api.ValidateContext(ctx); err != nil {
				t.Fatalf("pdfcpu validation: %v", err)
			}
			if !bytes.HasPrefix(r.pdf, []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")) {
				t.Errorf("header %q is not PDF 1.7 with a binary comment", r.pdf[:16])
			}
			if len(ctx.ID) != 2 {
				t.Errorf("trailer /ID %v", ctx.ID)
			}
			if ctx.Encrypt != nil {
				t.Errorf("encrypted; PDF/A forbids it")
			}
			// PDF/A: every font is embedded. Text in Windows-1252 is set in
			// simple TrueType fonts, which PDF/A wants non-symbolic and
			// WinAnsi-encoded; other text in Unicode (Type0, Identity-H).
			fonts := 0
			wantFont := "TrueType WinAnsiEncoding"
			if r.name == "intra-community-pl" {
				wantFont = "Type0 Identity-H"
			}
			for nr, e := range ctx.Table {
				d, ok := e.Object.(types.Dict)
				if !ok {
					continue
				}
				if ty := d.NameEntry("Type"); ty != nil && *ty == "Font" {
					if sub := d.NameEntry("Subtype"); sub != nil && *sub != "CIDFontType2" {
						got := *sub + " " + d["Encoding"].String()
						if got != wantFont {
							t.Errorf("font %d is %s, want %s", nr, got, wantFont)
						}
					}
				}
				if ty := d.NameEntry("Type"); ty != nil && *ty == "FontDescriptor" && wantFont == "TrueType WinAnsiEncoding" {
					if f := d.IntEntry("Flags"); f == nil || *f&32 == 0 || *f&4 != 0 {
						t.Errorf("font descriptor %d: /Flags %v, want non-symbolic", nr, f)
					}
				}
				if ty := d.NameEntry("Type"); ty != nil && *ty == "FontDescriptor" {
					fonts++
					if d["FontFile"] == nil && d["FontFile2"] == nil && d["FontFile3"] == nil {
						t.Errorf("font descriptor %d without an embedded font program", nr)
					}
				}
				if d["JS"] != nil || d["JavaScript"] != nil {
					t.Errorf("object %d has JavaScript", nr)
				}
			}
			if fonts == 0 {
				t.Errorf("no font descriptors found")
			}
			root, err := ctx.Catalog()
			if err != nil {
				t.Fatal(err)
			}

			af, err := ctx.DereferenceArray(root["AF"])
			if err != nil || len(af) != 1 {
				t.Fatalf("/AF %v: %v", root["AF"], err)
			}
			spec, err := ctx.DereferenceDict(af[0])
			if err != nil {
				t.Fatal(err)
			}
			name := invoicepdf.AttachmentName(r.doc.Profile)
			checks := map[string]string{
				"Type": "Filespec", "AFRelationship": "Data",
			}
			for k, want := range checks {
				if got := spec.NameEntry(k); got == nil || *got != want {
					t.Errorf("filespec /%s %v, want /%s", k, got, want)
				}
			}
			for _, k := range []string{"F", "UF"} {
				if got := spec.StringEntry(k); got == nil || *got != name {
					t.Errorf("filespec /%s %v, want %s", k, got, name)
				}
			}
			ef := spec.DictEntry("EF")
			if ef == nil {
				t.Fatal("filespec without /EF")
			}
			file, _, err := ctx.DereferenceStreamDict(ef["F"])
			if err != nil || file == nil {
				t.Fatalf("/EF /F: %v", err)
			}
			if got := file.NameEntry("Subtype"); got == nil || *got != "text/xml" {
				t.Errorf("embedded file /Subtype %v, want /text#2Fxml", got)
			}
			params := file.DictEntry("Params")
			if params == nil || params["ModDate"] == nil {
				t.Errorf("embedded file /Params %v lacks /ModDate", params)
			} else if size := params.IntEntry("Size"); size == nil || *size != len(r.xml) {
				t.Errorf("/Params /Size %v, want %d", size, len(r.xml))
			}

			intents, err := ctx.DereferenceArray(root["OutputIntents"])
			if err != nil || len(intents) != 1 {
				t.Fatalf("/OutputIntents %v: %v", root["OutputIntents"], err)
			}
			intent, err := ctx.DereferenceDict(intents[0])
			if err != nil {
				t.Fatal(err)
			}
			if s := intent.NameEntry("S"); s == nil || *s != "GTS_PDFA1" {
				t.Errorf("output intent /S %v", s)
			}
			icc, _, err := ctx.DereferenceStreamDict(intent["DestOutputProfile"])
			if err != nil || icc == nil {
				t.Fatalf("no ICC profile: %v", err)
			}
			if n := icc.IntEntry("N"); n == nil || *n != 3 {
				t.Errorf("ICC /N %v, want 3 (RGB)", n)
			}

			meta, _, err := ctx.DereferenceStreamDict(root["Metadata"])
			if err != nil || meta == nil {
				t.Fatalf("no /Metadata: %v", err)
			}
			if meta.FilterPipeline != nil {
				t.Errorf("metadata stream is filtered (%v); PDF/A forbids it", meta.FilterPipeline)
			}
			if err := meta.Decode(); err != nil {
				t.Fatal(err)
			}
			x := string(meta.Content)
			title := map[string]string{einvoice.TypeInvoice: "Rechnung", einvoice.TypeCreditNote: "Rechnungskorrektur"}[r.doc.TypeCode] + " " + r.doc.Number
			level := map[einvoice.Profile]string{einvoice.ProfileEN16931: "EN 16931", einvoice.ProfileXRechnung: "XRECHNUNG"}[r.doc.Profile]
			for _, want := range []string{
				"<pdfaid:part>3</pdfaid:part>", "<pdfaid:conformance>B</pdfaid:conformance>",
				"<pdfaSchema:prefix>fx</pdfaSchema:prefix>",
				"<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>",
				"<fx:DocumentType>INVOICE</fx:DocumentType>",
				"<fx:DocumentFileName>" + name + "</fx:DocumentFileName>",
				"<fx:Version>1.0</fx:Version>",
				"<fx:ConformanceLevel>" + level + "</fx:ConformanceLevel>",
				`<rdf:li xml:lang="x-default">` + title + "</rdf:li>",
			} {
				if !strings.Contains(x, want) {
					t.Errorf("XMP lacks %s", want)
				}
			}
			// The document information must equal its XMP counterparts.
			info, err := ctx.DereferenceDict(*ctx.Info)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := types.StringOrHexLiteral(info["Title"]); err != nil || got == nil || *got != title {
				t.Errorf("/Info /Title %v, want %q (%v)", got, title, err)
			}
			if !strings.Contains(x, "<xmp:CreateDate>"+r.doc.IssueDate+"T00:00:00+00:00</xmp:CreateDate>") {
				t.Errorf("XMP create date is not the issue date")
			}
			if got := info["CreationDate"].String(); !strings.Contains(got, "D:"+strings.ReplaceAll(r.doc.IssueDate, "-", "")+"000000+00'00'") {
				t.Errorf("/Info /CreationDate %s does not match the XMP", got)
			}
		})
	}
}

// TestRenderTextLayer reads the text the PDF shows with a PDF text
// extractor and looks for what §14 Abs. 4 UStG asks of an invoice.
func TestRenderTextLayer(t *testing.T) {
	for _, r := range renderAll(t) {
		t.Run(r.name, func(t *testing.T) {
			text := pdfText(t, r.pdf)
			d := r.doc
			cur := "€"
			if d.Currency != "EUR" {
				cur = d.Currency
			}
			want := []string{
				d.Number, "20.11.2026", d.Seller.Name, d.Seller.Street, d.Seller.Zip + " " + d.Seller.City,
				d.Buyer.Name, d.Buyer.Street, "USt-IdNr.", d.Seller.VATID, d.Seller.TaxNumber,
				"Summe netto", "Summe USt",
			}
			for _, l := range d.Lines {
				want = append(want, l.Description)
			}
			if d.DeliveryDate != "" {
				want = append(want, "18.11.2026")
			}
			if d.ServicePeriod != nil {
				want = append(want, "01.10.2026 – 31.10.2026")
			}
			switch r.name {
			case "invoice-19":
				want = append(want, "2.500,00 "+cur, "475,00 "+cur, "2.975,00 "+cur, "19 %", "333,3333", "12,5", "Std.",
					"DE02 1203 0000 0000 2020 51", "Fällig am", "20.12.2026")
			case "mixed-19-7-0":
				want = append(want, "USt 19 % auf 454,94 €", "86,44 €", "USt 7 % auf 94,14 €", "6,59 €",
					"Nullsteuersatz (0 %) auf 420,00 €", "1.062,11 €", "abzgl. Rabatt 50,00 €", "0,755")
			case "credit-note":
				want = append(want, "Rechnungskorrektur GS-2026-0001", "zur Rechnung RE-2026-0001 vom 20.11.2026",
					"Korrekturnummer", "Korrekturbetrag zu Ihren Gunsten", "357,00 €")
			case "foreign-usd":
				want = append(want, "7.640,00 USD", "1.451,60 USD", "9.091,60 USD", "Summe USt in EUR (Kurs 0,9214)",
					"1.337,50 €", "Umrechnungskurs: 1 USD = 0,9214 EUR")
			case "intra-community-pl":
				want = append(want, "Innergemeinschaftliche Lieferung", "POLEN", "Łódź", "ul. Żółkiewskiego 12",
					"Dostawa wewnątrzwspólnotowa", "2.498,00 €")
			case "intra-community":
				want = append(want, "Innergemeinschaftliche Lieferung", "FRANKREICH", d.Buyer.VATID, "5.676,40 €")
			case "reverse-charge":
				want = append(want, "Steuerschuldnerschaft des Leistungsempfängers", d.Buyer.VATID, "2.880,00 €")
			case "xrechnung":
				want = append(want, "04011000-12345-34", "xrechnung.xml")
			case "export":
				want = append(want, "Ausfuhrlieferung", "SCHWEIZ", "4.900,00 €")
			case "exempt":
				want = append(want, "Steuerfrei nach § 4 Nr. 21 UStG")
			}
			// Wrapped text continues on the next line: search it as one.
			flat := strings.ReplaceAll(text, "\n", " ")
			for _, w := range want {
				if !strings.Contains(flat, w) {
					t.Errorf("text layer lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("text layer:\n%s", text)
			}
		})
	}
}

// TestRenderCharactersBeyondTheFonts: a character outside the BMP (an
// emoji) once made fpdf index past its width table and panic; it shows as
// U+FFFD. Characters in the BMP the fonts lack (Chinese) keep their code in
// the text layer.
func TestRenderCharactersBeyondTheFonts(t *testing.T) {
	d := einvoicetest.Invoice19()
	d.Buyer.Name = "北京贸易有限公司 😀"
	d.Lines[0].Description = "Beratung 🚀 " + strings.Repeat("Ωμέγα ", 20)
	x, p := render(t, d)
	text := strings.ReplaceAll(pdfText(t, p), "\n", " ")
	for _, w := range []string{"北京贸易有限公司 \uFFFD", "Beratung \uFFFD Ωμέγα Ωμέγα", d.Number} {
		if !strings.Contains(text, w) {
			t.Errorf("text layer lacks %q:\n%s", w, text)
		}
	}
	if !bytes.Contains(x, []byte("😀")) {
		t.Errorf("the XML lost the emoji")
	}
}

// TestRenderPagesBreak renders a long invoice: every line must still show,
// and the pages count themselves.
func TestRenderPagesBreak(t *testing.T) {
	d := einvoicetest.Invoice19()
	line := d.Lines[0]
	d.Lines = nil
	for i := 1; i <= 60; i++ {
		l := line
		l.ID = strconv.Itoa(i)
		l.Description = "Beratung, Teil " + strconv.Itoa(i) + " mit einer längeren Beschreibung, die in der Spalte umbrechen muss"
		d.Lines = append(d.Lines, l)
	}
	_, p := render(t, d)
	ctx := readContext(t, p)
	if ctx.PageCount < 3 {
		t.Fatalf("%d pages for 60 two-line items", ctx.PageCount)
	}
	if dir := os.Getenv("EINVOICE_KEEP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "long.pdf"), p, 0o644)
	}
	text := pdfText(t, p)
	for _, w := range []string{"Beratung, Teil 60", "Seite 1 von " + strconv.Itoa(ctx.PageCount), "Seite " + strconv.Itoa(ctx.PageCount) + " von " + strconv.Itoa(ctx.PageCount), "Gesamtbetrag"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q", w)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a, b := renderAll(t), renderAll(t)
	for i := range a {
		if !bytes.Equal(a[i].pdf, b[i].pdf) {
			t.Errorf("%s: two renderings differ", a[i].name)
		}
	}
}

func TestRenderRejects(t *testing.T) {
	d := einvoicetest.Invoice19()
	other := d
	other.Number = "RE-2026-9999"
	x, err := einvoice.CII(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := invoicepdf.Render(d, x); !errs.Is(err, errs.InvalidInput) {
		t.Errorf("XML of another invoice: want %s, got %v", errs.InvalidInput, err)
	}
	bad := d
	bad.Lines = nil
	if _, err := invoicepdf.Render(bad, x); !errs.Is(err, errs.InvalidInput) {
		t.Errorf("invalid document: want %s, got %v", errs.InvalidInput, err)
	}
}

// TestValidatorAcceptsThePDF runs the official rules on the XML as the
// validator itself unpacks it from the PDF (poppler's pdfdetach): another
// reader than pdfcpu finds the attachment.
func TestValidatorAcceptsThePDF(t *testing.T) {
	dir := t.TempDir()
	var en, xr []string
	for _, r := range renderAll(t) {
		if r.name != "invoice-19" && r.name != "xrechnung" {
			continue
		}
		f := filepath.Join(dir, r.name+".pdf")
		if err := os.WriteFile(f, r.pdf, 0o644); err != nil {
			t.Fatal(err)
		}
		if r.doc.Profile == einvoice.ProfileXRechnung {
			xr = append(xr, f)
		} else {
			en = append(en, f)
		}
	}
	for f, findings := range einvoicetest.RunValidator(t, false, en...) {
		t.Errorf("%s rejected: %q", f, findings)
	}
	for f, findings := range einvoicetest.RunValidator(t, true, xr...) {
		t.Errorf("%s rejected: %q", f, findings)
	}
}

// BenchmarkRender renders an invoice of five lines in three VAT groups,
// once all in Windows-1252 (the WinAnsi fonts) and once to a buyer whose
// name needs the Unicode fonts.
func BenchmarkRender(b *testing.B) {
	sample := func(name string) einvoice.Document {
		for _, s := range einvoicetest.Samples() {
			if s.Name == name {
				return s.Doc
			}
		}
		b.Fatalf("no sample %s", name)
		return einvoice.Document{}
	}
	unicode := sample("mixed-19-7-0")
	unicode.Buyer = sample("intra-community-pl").Buyer
	for _, c := range []struct {
		name string
		doc  einvoice.Document
	}{{"winansi", sample("mixed-19-7-0")}, {"unicode", unicode}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := einvoice.CII(c.doc)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := invoicepdf.Render(c.doc, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// render gives d's XML and PDF.
func render(t testing.TB, d einvoice.Document) (xml, pdf []byte) {
	t.Helper()
	xml, err := einvoice.CII(d)
	if err != nil {
		t.Fatal(err)
	}
	if pdf, err = invoicepdf.Render(d, xml); err != nil {
		t.Fatal(err)
	}
	return xml, pdf
}

func readContext(t testing.TB, pdf []byte) *model.Context {
	t.Helper()
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf())
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.EnsurePageCount(); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// pdfText is the text layer as poppler's pdftotext reads it, in the order
// the content streams write it.
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-raw", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, stderr.String())
	}
	return string(out)
}
