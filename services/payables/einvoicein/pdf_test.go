package einvoicein

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// attachment is one file to embed in a test PDF.
type attachment struct {
	name string
	data []byte
}

// buildPDF makes a one-page-tree PDF with the given embedded files. With
// afOnly the files are reachable only through the catalog's AF array (as
// some PDF/A-3 writers do), not through the EmbeddedFiles name tree.
func buildPDF(t testing.TB, afOnly bool, files ...attachment) []byte {
	t.Helper()
	disableConfigDir.Do(api.DisableConfigDir)
	ctx, err := pdfcpu.CreateContextWithXRefTable(model.NewDefaultConfiguration(), types.PaperSize["A4"])
	if err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var af types.Array
	for _, f := range files {
		if err := ctx.AddAttachment(model.Attachment{Reader: bytes.NewReader(f.data), ID: f.name, Desc: "invoice", ModTime: &mod}, false); err != nil {
			t.Fatal(err)
		}
		o, ok := ctx.Names["EmbeddedFiles"].Value(f.name)
		if !ok {
			t.Fatalf("attachment %s not in the name tree", f.name)
		}
		af = append(af, o)
	}
	if afOnly {
		root, err := ctx.XRefTable.Catalog()
		if err != nil {
			t.Fatal(err)
		}
		root.Insert("AF", af)
	}
	var buf bytes.Buffer
	if err := api.WriteContext(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if afOnly {
		// pdfcpu writes only the objects it reaches through entries it
		// knows, and AF is not one of them, so the files are written
		// through the name tree and the catalog's /Names key is renamed
		// afterwards (same length: the xref offsets stay right).
		re := regexp.MustCompile(`/Names( [0-9]+ 0 R)`)
		if len(re.FindAll(out, -1)) != 1 {
			t.Fatal("catalog /Names entry not found exactly once")
		}
		out = re.ReplaceAll(out, []byte("/Xames$1"))
	}
	return out
}

func TestReadZUGFeRDPDF(t *testing.T) {
	xmlData, err := os.ReadFile(filepath.Join("testdata", "zugferd-xrechnung-einfach.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want := samples["zugferd-xrechnung-einfach.xml"]
	want.Format = FormatZUGFeRDPDF
	other := attachment{"notes.txt", []byte("not the invoice")}

	tests := []struct {
		name     string
		afOnly   bool
		files    []attachment
		wantName string
	}{
		{"factur-x.xml in the name tree", false, []attachment{other, {"factur-x.xml", xmlData}}, "factur-x.xml"},
		{"ZUGFeRD-invoice.xml", false, []attachment{{"ZUGFeRD-invoice.xml", xmlData}}, "ZUGFeRD-invoice.xml"},
		{"zugferd-invoice.xml", false, []attachment{{"zugferd-invoice.xml", xmlData}}, "zugferd-invoice.xml"},
		{"xrechnung.xml", false, []attachment{{"xrechnung.xml", xmlData}}, "xrechnung.xml"},
		{"factur-x.xml only in AF", true, []attachment{other, {"factur-x.xml", xmlData}}, "factur-x.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := buildPDF(t, tt.afOnly, tt.files...)
			inv, err := Read(bytes.NewReader(pdf))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if diff := cmp.Diff(want, summarize(inv)); diff != "" {
				t.Errorf("invoice (-want +got):\n%s", diff)
			}
			if inv.Attachment != tt.wantName || inv.Syntax != SyntaxCII {
				t.Errorf("attachment %q syntax %q, want %q cii", inv.Attachment, inv.Syntax, tt.wantName)
			}
		})
	}
}

func TestReadPDFRefuses(t *testing.T) {
	malformedXML, err := os.ReadFile(filepath.Join("testdata", "invalid-malformed-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files []attachment
		want  error
	}{
		{"no attachments", nil, ErrNoEmbeddedXML},
		{"only other attachments", []attachment{{"invoice.csv", []byte("a;b")}}, ErrNoEmbeddedXML},
		{"embedded XML is no invoice", []attachment{{"factur-x.xml", malformedXML}}, ErrNotInvoice},
		// pdfcpu deflates the 11 MB of spaces into a small PDF: the
		// decompressed size is what is bounded.
		{"embedded XML over 10 MB", []attachment{{"factur-x.xml", bytes.Repeat([]byte(" "), MaxSize+1<<20)}}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := buildPDF(t, false, tt.files...)
			if len(pdf) > MaxSize {
				t.Fatalf("test PDF of %d bytes is itself too large", len(pdf))
			}
			_, err := ReadBytes(pdf)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadBytes = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestReadRealZUGFeRDPDF reads a PDF/A-3 that another tool (Mustang)
// wrote, not pdfcpu.
func TestReadRealZUGFeRDPDF(t *testing.T) {
	inv := mustRead(t, "mustang-EN16931_Einfach.pdf")
	want := summary{
		Format: FormatZUGFeRDPDF, Profile: "urn:cen.eu:en16931:2017", TypeCode: "380", Number: "471102",
		IssueDate: day(2024, 11, 15), DeliveryDate: day(2024, 11, 14), Currency: "EUR",
		SellerName: "Lieferant GmbH", SellerVATID: "DE123456789", SellerTaxNumber: "201/113/40209",
		BuyerName: "Kunden AG Mitte", Lines: 2,
		Tax:      []TaxBreakdown{tax("S", "7.00", "275.00", "19.25"), tax("S", "19.00", "198.00", "37.62")},
		TotalNet: dec("473.00"), TotalTax: dec("56.87"), TotalGross: dec("529.87"), Prepaid: dec("0.00"), DuePayable: dec("529.87"),
		PaymentTerms: "Zahlbar innerhalb 30 Tagen netto bis 15.12.2024, 3% Skonto innerhalb 10 Tagen bis 25.11.2024",
	}
	if diff := cmp.Diff(want, summarize(inv)); diff != "" {
		t.Errorf("invoice (-want +got):\n%s", diff)
	}
	if inv.Attachment != "factur-x.xml" {
		t.Errorf("attachment %q, want factur-x.xml", inv.Attachment)
	}
}
