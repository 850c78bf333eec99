package extract

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/iban"
	"github.com/ledgerplatform/ledger/pkg/vatid"
)

func TestParseMoney(t *testing.T) {
	cases := map[string]string{
		"1.234,56": "1234.56", "1,234.56": "1234.56", "1234,56": "1234.56", "0,65": "0.65",
		"12.345.678,90": "12345678.9", "-5,00": "-5", "5,00-": "-5", "−3.50": "-3.5", "1'234.50": "1234.5",
	}
	for in, want := range cases {
		d, ok := parseMoney(in)
		if !ok || d.String() != want {
			t.Errorf("parseMoney(%q) = %s %v, want %s", in, d, ok, want)
		}
	}
	if got := amounts("Rechnung vom 12.01.2026 zzgl. 19,00 % MwSt auf 1.000,00 EUR: 190,00 EUR"); len(got) != 2 || got[0].String() != "1000" || got[1].String() != "190" {
		t.Errorf("amounts: %v", got)
	}
}

func TestDates(t *testing.T) {
	cases := map[string]string{
		"15.01.2026": "2026-01-15", "5.1.26": "2026-01-05", "2026-03-01": "2026-03-01",
		"3. März 2026": "2026-03-03", "3 Maerz 2026": "2026-03-03", "January 20, 2026": "2026-01-20",
		"20 January 2026": "2026-01-20", "05/02/2026": "2026-02-05", "1. Dez. 2025": "2025-12-01",
	}
	for in, want := range cases {
		ds := dates("Datum: " + in)
		if len(ds) != 1 || ds[0].t.Format(time.DateOnly) != want {
			t.Errorf("dates(%q) = %v, want %s", in, ds, want)
		}
	}
	for _, bad := range []string{"31.02.2026", "12.13.2026", "99.99.9999"} {
		if ds := dates(bad); len(ds) != 0 {
			t.Errorf("dates(%q) = %v, want none", bad, ds)
		}
	}
}

// Field rules on short texts: one wording each.
func TestFieldRules(t *testing.T) {
	cases := []struct {
		name, text string
		want       got
	}{
		{"ocr misread tax reconciled by net × rate", `Rechnung Nr. 77
Datum: 02.03.2026
Nettobetrag 250,40 €
zzgl. 19 % USt auf 167,90 € 31,90 €
zzgl. 7 % USt auf 82,50 € 3,18 €
Gesamtbetrag 288,08 €`, got{Number: "77", Date: "2026-03-02", Net: "250.4", Tax: "37.68", Gross: "288.08", Currency: "EUR",
			Rates: []string{"S 19 167.9 31.9", "S 7 82.5 5.78"}}},
		{"tax missing: derived with the rate that fits", `INVOICE
Invoice number: A-17
Invoice date: 2026-04-01
Net amount: 1,000.00 EUR
Total: 1,070.00 EUR
Payment due within 14 days`, got{Number: "A-17", Date: "2026-04-01", Due: "2026-04-15", Net: "1000", Tax: "70", Gross: "1070", Currency: "EUR", Rates: []string{"S 7 1000 70"}}},
		{"same as invoice date, period by month", `Rechnungsnummer: 2026/0815
Rechnungsdatum: 31. Januar 2026
Leistungszeitraum: Januar 2026
Das Leistungsdatum entspricht dem Rechnungsdatum.
Summe netto 100,00
Umsatzsteuer 19 % 19,00
Rechnungsbetrag 119,00
sofort fällig`, got{Number: "2026/0815", Date: "2026-01-31", Due: "2026-01-31", Delivery: "2026-01-31", Period: "2026-01-01..2026-01-31",
			Net: "100", Tax: "19", Gross: "119", Rates: []string{"S 19 100 19"}}},
		// Tesseract's reading of the rendered de-19-7 scan: the address
		// block and the info block share lines.
		{"ocr columns run together", `Hauptstraße 12

Bürobedarf Schmidt GmbH 10115 Berlin

Bürobedarf Schmidt GmbH - Hauptstraße 12 - 10115 Berlin

Muster Handel GmbH i Rechnungsnummer: RE-2026-0042

z.. Hd. Frau Weber : Rechnungsdatum: 15.01.2026

Lindenweg 5 Leistungsdatum: 12.01.2026

80331 München Kundennummer: ., K-10077

Rechnung`, got{Number: "RE-2026-0042", Date: "2026-01-15", Delivery: "2026-01-12",
			Vendor: "Bürobedarf Schmidt GmbH", Address: "Hauptstraße 12, 10115 Berlin, DE", Buyer: "Muster Handel GmbH"}},
		{"exempt", `Rechnung 4711
Datum 01.02.2026
Leistungsdatum 30.01.2026
Heilbehandlung
Betrag 80,00 EUR
Steuerfrei nach § 4 Nr. 14 UStG`, got{Number: "4711", Date: "2026-02-01", Delivery: "2026-01-30", Gross: "80", Currency: "EUR"}},
	}
	// The visualisation page of the ZUGFeRD sample, as pdftotext reads it:
	// a layout the rules were not written against.
	mustang, err := os.ReadFile(filepath.Join("testdata", "text", "mustang.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name, text string
		want       got
	}{"zugferd visualisation", string(mustang), got{
		Number: "471102", Date: "2024-11-15", Due: "2024-12-15", Delivery: "2024-11-14",
		Net: "473", Tax: "56.87", Gross: "529.87", Currency: "EUR",
		Vendor: "Lieferant GmbH", VATID: "DE123456789", TaxID: "201/113/40209", Address: "Lieferantenstraße 20, 80333 München, DE",
	}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, project(Fields(c.text))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// FuzzFieldRules feeds the rules real invoice texts and their mutations:
// they must not panic, must bound their output, and what they report as
// a VAT ID, IBAN or date must be valid.
func FuzzFieldRules(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "text", "*.txt"))
	if len(seeds) == 0 {
		f.Fatal("no seed texts in testdata/text (UPDATE_FIXTURES=1 go test -run TestTextFixtures writes them)")
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("Rechnung Nr. 1\nGesamtbetrag 1.000,00 €\nzzgl. 19 % MwSt 159,66 €")
	f.Fuzz(func(t *testing.T, text string) {
		r := Fields(text)
		if len(r.RawMarkdown) > MaxText {
			t.Fatalf("raw_markdown of %d bytes", len(r.RawMarkdown))
		}
		if utf8.ValidString(text) && !utf8.ValidString(r.RawMarkdown) {
			t.Fatal("raw_markdown is not UTF-8")
		}
		if r.VendorVATID != "" && vatid.Check(r.VendorVATID) != "" {
			t.Fatalf("invalid VAT ID %q", r.VendorVATID)
		}
		if r.VendorIBAN != "" && iban.Check(r.VendorIBAN) != "" {
			t.Fatalf("invalid IBAN %q", r.VendorIBAN)
		}
		for _, d := range []*string{r.InvoiceDate, r.DueDate, r.DeliveryDate} {
			if d != nil && !isoDate.MatchString(*d) {
				t.Fatalf("date %q", *d)
			}
		}
		if r.TotalNet != nil && r.TotalTax != nil && r.TotalGross != nil && len(r.TaxBreakdown) > 0 {
			// Whatever was chosen, the three totals are one story.
			if !r.TotalNet.Decimal.Add(r.TotalTax.Decimal).Equal(r.TotalGross.Decimal) {
				t.Fatalf("net %s + tax %s ≠ gross %s", r.TotalNet, r.TotalTax, r.TotalGross)
			}
		}
		_ = Check(r, nil)
		_ = strings.TrimSpace(r.PaymentTerms)
	})
}
