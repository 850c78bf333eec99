package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The tests run the real tools; a machine without them fails here, it
// does not skip.
func TestMain(m *testing.M) {
	for _, tool := range []string{"tesseract", "pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "extract tests: %s is not installed: run `make tools` (tesseract-ocr, tesseract-ocr-deu, tesseract-ocr-eng, poppler-utils)\n", tool)
			os.Exit(1)
		}
	}
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\ndeu") || !strings.Contains(string(out), "\neng") {
		fmt.Fprintf(os.Stderr, "extract tests: tesseract lacks the deu or eng data (%v: %s): run `make tools`\n", err, out)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// got is the part of a result a test compares.
type got struct {
	Source, Number, Date, Due, Delivery, Period string
	Net, Tax, Gross, Currency                   string
	Rates                                       []string // "S 19 198 37.62": category, rate, net, tax
	Credit                                      bool
	Vendor, VATID, TaxID, IBAN, Address, Buyer  string
	Lines                                       int
}

func project(r payablesv1.OCRResult) got {
	g := got{
		Source: r.Source, Number: r.InvoiceNumber, Date: deref(r.InvoiceDate), Due: deref(r.DueDate),
		Delivery: deref(r.DeliveryDate), Currency: r.Currency, Credit: r.IsCreditNote,
		Vendor: r.VendorName, VATID: r.VendorVATID, TaxID: r.VendorTaxID, IBAN: r.VendorIBAN, Buyer: r.BuyerName,
		Lines: len(r.LineItems),
	}
	if r.ServicePeriod != nil {
		g.Period = r.ServicePeriod.Start + ".." + r.ServicePeriod.End
	}
	if r.TotalNet != nil {
		g.Net = r.TotalNet.String()
	}
	if r.TotalTax != nil {
		g.Tax = r.TotalTax.String()
	}
	if r.TotalGross != nil {
		g.Gross = r.TotalGross.String()
	}
	for _, t := range r.TaxBreakdown {
		g.Rates = append(g.Rates, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", t.Category, t.Rate.String(), t.Net.String(), t.Tax.String())))
	}
	if a := r.VendorAddress; a != nil {
		g.Address = fmt.Sprintf("%s, %s %s, %s", a.Street, a.Zip, a.City, a.Country)
	}
	return g
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// statuses is rule → status of a check, for the rules a test names.
func statuses(c payablesv1.ComplianceCheck) map[string]string {
	m := map[string]string{}
	for _, e := range c.Checks {
		m[e.Rule] = e.Status
	}
	return m
}

// failures are the rules that failed or are missing.
func failures(c payablesv1.ComplianceCheck) []string {
	var out []string
	for _, e := range c.Checks {
		if e.Status == payablesv1.CheckFailed || e.Status == payablesv1.CheckMissing {
			out = append(out, e.Rule+" "+e.Status)
		}
	}
	return out
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "einvoice", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The values below were read by hand from the XML files (BT-1, BT-2,
// BT-9, BT-72, BT-73/74, BT-109, BT-110, BT-112, BG-23).
func TestEInvoices(t *testing.T) {
	e := New(Options{})
	cases := []struct {
		file, mime string
		want       got
		// failing are EN 16931 / §14 rules the sample really breaks.
		failing []string
	}{
		{file: "CII_example1.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "12115118", Date: "2015-01-09", Due: "2015-01-09",
			Net: "229.6", Tax: "20.73", Gross: "250.33", Currency: "EUR",
			Rates: []string{"S 6 183.23 10.99", "S 21 46.37 9.74"},
		}, failing: []string{"UStG 14(4) Nr. 6 missing"}}, // no delivery date or period
		{file: "kosit-01.01a-INVOICE_uncefact.xml", mime: "text/xml", want: got{
			// The period is given on the first line only (BG-26).
			Source: SourceCII, Number: "123456XX", Date: "2016-04-04", Period: "2016-01-01..2016-12-31",
			Net: "314.86", Tax: "22.04", Gross: "336.9", Currency: "EUR", Rates: []string{"S 7 314.86 22.04"},
		}},
		{file: "kosit-01.01a-INVOICE_ubl.xml", mime: "application/xml", want: got{
			// The period is given on the first line only (BG-26).
			Source: SourceUBL, Number: "123456XX", Date: "2016-04-04", Period: "2016-01-01..2016-12-31",
			Net: "314.86", Tax: "22.04", Gross: "336.9", Currency: "EUR", Rates: []string{"S 7 314.86 22.04"},
		}},
		{file: "kosit-01.05a-INVOICE_uncefact.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "PRG1502112", Date: "2015-04-24", Period: "2015-04-20..2015-04-24",
			Net: "8870", Tax: "1685.3", Gross: "10555.3", Currency: "EUR", Rates: []string{"S 19 8870 1685.3"},
		}},
		{file: "kosit-01.14a-INVOICE_uncefact.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "1234567", Date: "2018-04-13", Due: "2018-04-13", Delivery: "2018-04-13",
			Period: "2018-04-13..2018-04-13",
			Net:    "10781.25", Tax: "2048.44", Gross: "12829.69", Currency: "EUR", Rates: []string{"S 19 10781.25 2048.44"},
		}, failing: []string{"UStG 14(4) Nr. 2 failed"}}, // seller VAT ID ATU123456789 has 9 digits, AT has 8
		{file: "zugferd-basic-einfach.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2020-03-05", Due: "2020-04-04", Delivery: "2020-03-05",
			Net: "198", Tax: "37.62", Gross: "235.62", Currency: "EUR", Rates: []string{"S 19 198 37.62"},
		}},
		{file: "zugferd-en16931-einfach.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2018-03-05", Delivery: "2018-03-05",
			Net: "473", Tax: "56.87", Gross: "529.87", Currency: "EUR", Rates: []string{"S 7 275 19.25", "S 19 198 37.62"},
		}},
		// Type 389 is a self-billed invoice (a "Gutschrift" in the German
		// sense), not a credit note.
		{file: "zugferd-en16931-gutschrift.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2018-03-05", Delivery: "2018-03-05",
			Net: "473", Tax: "56.87", Gross: "529.87", Currency: "EUR", Rates: []string{"S 7 275 19.25", "S 19 198 37.62"},
		}},
		{file: "zugferd-en16931-rabatte.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2018-06-05", Delivery: "2018-06-03",
			Net: "193.77", Tax: "21.3", Gross: "215.07", Currency: "EUR", Rates: []string{"S 7 129.37 9.06", "S 19 64.4 12.24"},
		}},
		// MINIMUM carries no lines, no address and no VAT breakdown; its
		// gross of 235.62 makes it a small-amount invoice (§33 UStDV),
		// which still needs them.
		{file: "zugferd-minimum-rechnung.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2020-03-05",
			Net: "198", Tax: "37.62", Gross: "235.62", Currency: "EUR",
		}, failing: []string{"UStDV 33 Nr. 1 missing", "UStDV 33 Nr. 3 missing", "UStDV 33 Nr. 4 missing"}},
		{file: "zugferd-xrechnung-einfach.xml", mime: "application/xml", want: got{
			Source: SourceCII, Number: "471102", Date: "2024-11-15", Due: "2025-12-15", Delivery: "2024-11-14",
			Net: "473", Tax: "56.87", Gross: "529.87", Currency: "EUR", Rates: []string{"S 7 275 19.25", "S 19 198 37.62"},
		}},
		{file: "ubl-creditnote-noprefix.xml", mime: "application/xml", want: got{
			Source: SourceUBL, Number: "GS-2026-0042", Date: "2026-03-10", Due: "2026-03-24",
			Net: "150", Tax: "22.5", Gross: "172.5", Currency: "EUR", Rates: []string{"S 19 100 19", "S 7 50 3.5"}, Credit: true,
		}, failing: []string{"UStG 14(4) Nr. 6 missing"}},
		{file: "mustang-EN16931_Einfach.pdf", mime: "application/pdf", want: got{
			Source: SourceZUGFeRD, Number: "471102", Date: "2024-11-15", Delivery: "2024-11-14",
			Net: "473", Tax: "56.87", Gross: "529.87", Currency: "EUR", Rates: []string{"S 7 275 19.25", "S 19 198 37.62"},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			r, check, err := e.Extract(context.Background(), read(t, c.file), c.mime)
			if err != nil {
				t.Fatal(err)
			}
			g := project(r)
			// Parties and lines are compared in TestEInvoiceParties.
			g.Vendor, g.VATID, g.TaxID, g.IBAN, g.Address, g.Buyer, g.Lines = "", "", "", "", "", "", 0
			if d := cmp.Diff(c.want, g); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.failing, failures(check)); d != "" {
				t.Errorf("failed checks (-want +got):\n%s\n%+v", d, check.Checks)
			}
			if !check.IsInvoice || check.Compliant != (len(c.failing) == 0) {
				t.Errorf("check: is_invoice %v compliant %v", check.IsInvoice, check.Compliant)
			}
		})
	}
}

// Attachments without a useful type are read by their bytes; a ZUGFeRD
// PDF keeps its visible text for the reviewer.
func TestSniffedType(t *testing.T) {
	e := New(Options{})
	for name, mime := range map[string]string{"zugferd-basic-einfach.xml": "application/octet-stream", "mustang-EN16931_Einfach.pdf": ""} {
		r, _, err := e.Extract(context.Background(), read(t, name), mime)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.InvoiceNumber != "471102" {
			t.Errorf("%s: number %q", name, r.InvoiceNumber)
		}
		if r.Source == SourceZUGFeRD && !strings.Contains(r.RawMarkdown, "Lieferant GmbH") {
			t.Errorf("%s: raw_markdown without the page text: %q", name, r.RawMarkdown)
		}
	}
	if _, _, err := e.Extract(context.Background(), []byte("just some bytes"), "application/octet-stream"); errs.CodeOf(err) != errs.InvalidInput {
		t.Errorf("unknown bytes: %v", err)
	}
}

// Every party field of an e-invoice lands in the result.
func TestEInvoiceParties(t *testing.T) {
	r, check, err := New(Options{}).Extract(context.Background(), read(t, "ubl-creditnote-noprefix.xml"), "application/xml")
	if err != nil {
		t.Fatal(err)
	}
	want := payablesv1.OCRResult{
		VendorName: "Bürobedarf Müller GmbH", VendorVATID: "DE811111111", VendorIBAN: "DE02120300000000202051", VendorBIC: "BYLADEM1001",
		VendorAddress: &payablesv1.Address{Street: "Hauptstraße 5", Zip: "50667", City: "Köln", Country: "DE"},
		BuyerName:     "Kunde KG",
		BuyerAddress:  &payablesv1.Address{Street: "Am Markt 1", Zip: "53111", City: "Bonn", Country: "DE"},
		PaymentTerms:  "Wird mit der nächsten Rechnung verrechnet.",
		ReferenceText: "GS-2026-0042",
		IsCreditNote:  true,
		Source:        SourceUBL,
	}
	r.InvoiceNumber, r.InvoiceDate, r.DueDate, r.TotalNet, r.TotalTax, r.TotalGross, r.Currency, r.TaxBreakdown, r.Notes = "", nil, nil, nil, nil, nil, "", nil, nil
	lines := r.LineItems
	r.LineItems = nil
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("parties (-want +got):\n%s", d)
	}
	if len(lines) == 0 || lines[0].Description == "" || lines[0].Quantity == nil || lines[0].LineTotal == nil {
		t.Errorf("lines: %+v", lines)
	}
	if check.DocumentType != "credit_note" {
		t.Errorf("document type %q, want credit_note", check.DocumentType)
	}
}

// The EN 16931 rules catch totals that do not add up.
func TestEN16931Rules(t *testing.T) {
	data := strings.Replace(string(read(t, "zugferd-en16931-einfach.xml")), "<ram:GrandTotalAmount>529.87</ram:GrandTotalAmount>", "<ram:GrandTotalAmount>529.88</ram:GrandTotalAmount>", 1)
	data = strings.Replace(data, "<ram:CalculatedAmount>37.62</ram:CalculatedAmount>", "<ram:CalculatedAmount>37.63</ram:CalculatedAmount>", 1)
	_, check, err := New(Options{}).Extract(context.Background(), []byte(data), "application/xml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"EN16931 BR-CO-14 failed", "EN16931 BR-CO-15 failed", "EN16931 BR-CO-16 failed", "EN16931 BR-S-09 failed"}
	if d := cmp.Diff(want, failures(check)); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	if check.Compliant {
		t.Error("compliant with broken totals")
	}
}

func TestRefused(t *testing.T) {
	e := New(Options{})
	blank := sample{name: "blank", letterhead: []string{" "}}
	cases := []struct {
		name, mime string
		data       []byte
		code       string
	}{
		{"malformed e-invoice", "application/xml", read(t, "invalid-malformed-1.xml"), errs.InvalidInput},
		{"xml that is no invoice", "text/xml", []byte(`<?xml version="1.0"?><order><id>1</id></order>`), errs.InvalidInput},
		{"not a pdf", "application/pdf", []byte("hello, this is text"), errs.InvalidInput},
		{"broken pdf", "application/pdf", []byte("%PDF-1.4\n1 0 obj garbage\n%%EOF"), errs.InvalidInput},
		{"pdf without pages", "application/pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" +
			"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"), errs.InvalidInput},
		{"not an image", "image/png", []byte("\x89PNG but not really"), errs.InvalidInput},
		{"jpeg claimed, text given", "image/jpeg", []byte("plain text"), errs.InvalidInput},
		{"unsupported type", "application/msword", []byte("doc"), errs.InvalidInput},
		{"empty", "application/pdf", nil, errs.InvalidInput},
		{"blank page", "application/pdf", blank.render(t), errs.InvalidInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := e.Extract(context.Background(), c.data, c.mime)
			if got := errs.CodeOf(err); got != c.code {
				t.Fatalf("code %s, want %s (%v)", got, c.code, err)
			}
		})
	}
}

// A failure of the tools is OCR_FAILED with the public message; the
// scratch files are gone afterwards, also when the context is cancelled.
func TestToolFailures(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	scan := samples[2].scan(t)

	_, _, err := New(Options{Tesseract: filepath.Join(tmp, "no-such-tesseract")}).Extract(context.Background(), scan, "image/png")
	if e := errs.As(err); e == nil || e.Code != errs.OCRFailed || e.Message != "the document could not be read" {
		t.Errorf("missing tesseract: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = New(Options{}).Extract(ctx, scan, "image/png")
	if errs.CodeOf(err) != errs.OCRFailed || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	_, _, err = New(Options{Timeout: time.Millisecond}).Extract(context.Background(), imagePDF(t, scan), "application/pdf")
	if errs.CodeOf(err) != errs.OCRFailed || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}

	left, _ := filepath.Glob(filepath.Join(tmp, "extract-*"))
	if len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}
