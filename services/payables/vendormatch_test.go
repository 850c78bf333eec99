package payables_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables"
)

func TestMatchVendor(t *testing.T) {
	ptr := func(s string) *string { return &s }
	vendors := []payables.Vendor{
		{ID: "v-bau", Name: "Müller Bau GmbH", VATID: ptr("DE123456789"), IBAN: ptr("DE89370400440532013000"), IsActive: true},
		{ID: "v-buero", Name: "Bürobedarf Nord GmbH", IBAN: ptr("DE02120300000000202051"), IsActive: true},
		{ID: "v-old", Name: "Altlieferant KG", VATID: ptr("DE999999999"), IBAN: ptr("DE02500105170137075030"), IsActive: false},
		{ID: "v-stahl", Name: "Stahlhandel Schmidt & Söhne e.K.", IsActive: true},
	}
	// match is what a test case expects: status, vendor, confidence and
	// method in one line.
	type match struct{ Status, VendorID, Confidence, Method string }
	of := func(m payablesv1.VendorMatch) match {
		out := match{Status: m.Status, Confidence: m.Confidence.String()}
		if m.VendorID != nil {
			out.VendorID = *m.VendorID
		}
		if m.MatchMethod != nil {
			out.Method = *m.MatchMethod
		}
		return out
	}
	none := match{Status: "unmatched", Confidence: "0"}
	tests := []struct {
		name string
		in   payablesv1.OCRResult
		want match
	}{
		{"VAT ID exact", payablesv1.OCRResult{VendorName: "Irgendwer", VendorVATID: "DE123456789"}, match{"matched", "v-bau", "1", "vat_id"}},
		{"VAT ID as printed, with spaces and lower case", payablesv1.OCRResult{VendorVATID: "de 123 456 789"}, match{"matched", "v-bau", "1", "vat_id"}},
		{"VAT ID wins over an IBAN of another vendor", payablesv1.OCRResult{VendorVATID: "DE123456789", VendorIBAN: "DE02120300000000202051"}, match{"matched", "v-bau", "1", "vat_id"}},
		{"unknown VAT ID falls back to the IBAN", payablesv1.OCRResult{VendorVATID: "DE111111111", VendorIBAN: "DE02 1203 0000 0000 2020 51"}, match{"matched", "v-buero", "0.95", "iban"}},
		{"IBAN exact", payablesv1.OCRResult{VendorIBAN: "DE89370400440532013000"}, match{"matched", "v-bau", "0.95", "iban"}},
		{"name key exact: umlaut spelling, case and legal form", payablesv1.OCRResult{VendorName: "MUELLER BAU AG"}, match{"matched", "v-bau", "0.9", "name"}},
		{"name key exact: punctuation", payablesv1.OCRResult{VendorName: "Stahlhandel Schmidt und Soehne"}, match{"matched", "v-stahl", "0.9", "name"}},
		// Trigrams: 17 common of 25 and 17 (words: 2 of 3).
		{"similar name is only suggested", payablesv1.OCRResult{VendorName: "Buerobedarf Nord Hamburg"}, match{"suggested", "v-buero", "0.68", "name"}},
		{"words in another order", payablesv1.OCRResult{VendorName: "Bau Müller"}, match{"suggested", "v-bau", "1", "name"}},
		// Trigrams: 13 common of 17 and 17, 13/21 cut to 0.61.
		{"a typo", payablesv1.OCRResult{VendorName: "Bürobedarf Nrod GmbH"}, match{"suggested", "v-buero", "0.61", "name"}},
		{"too different", payablesv1.OCRResult{VendorName: "Bäckerei Nord"}, none},
		{"inactive vendor by VAT ID", payablesv1.OCRResult{VendorVATID: "DE999999999"}, none},
		{"inactive vendor by IBAN", payablesv1.OCRResult{VendorIBAN: "DE02500105170137075030"}, none},
		{"inactive vendor by name", payablesv1.OCRResult{VendorName: "Altlieferant"}, none},
		{"nothing read", payablesv1.OCRResult{}, none},
		{"only a legal form", payablesv1.OCRResult{VendorName: "GmbH"}, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, of(payables.MatchVendor(tt.in, vendors))); diff != "" {
				t.Errorf("MatchVendor (-want +got):\n%s", diff)
			}
		})
	}
	if got := of(payables.MatchVendor(payablesv1.OCRResult{VendorName: "Müller Bau"}, nil)); got != none {
		t.Errorf("no vendors: %+v", got)
	}
}

func TestNameSimilarity(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"mueller bau", "mueller bau", "1"},
		{"mueller bau", "bau mueller", "1"},
		{"mueller baustoffe", "mueller bausoffe", "0.75"}, // 15 trigrams common of 18 and 17
		{"abc", "xyz", "0"},
		{"", "abc", "0"},
	}
	for _, tt := range tests {
		if got := payables.NameSimilarity(tt.a, tt.b).String(); got != tt.want {
			t.Errorf("NameSimilarity(%q, %q) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}
