package vatid_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/vatid"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ in, norm, issue string }{
		{"DE123456789", "DE123456789", ""},
		{"de 123 456 789", "DE123456789", ""},
		{"DE12345678", "DE12345678", "expected format DE + 9 digits"},
		{"DE1234567890", "DE1234567890", "expected format DE + 9 digits"},
		{"ATU12345678", "ATU12345678", ""},
		{"AT12345678", "AT12345678", "expected format ATU + 8 digits"},
		{"FR40303265045", "FR40303265045", ""},
		{"FRXX123456789", "FRXX123456789", ""},
		{"FRIO123456789", "FRIO123456789", "expected format FR + 2 letters or digits (not I or O) + 9 digits"},
		{"NL123456789B01", "NL123456789B01", ""},
		{"NL123456789", "NL123456789", "expected format NL + 9 digits + B + 2 digits"},
		{"BE0123456789", "BE0123456789", ""},
		{"BE2123456789", "BE2123456789", "expected format BE + 10 digits beginning with 0 or 1"},
		{"IT12345678901", "IT12345678901", ""},
		{"ESA1234567B", "ESA1234567B", ""},
		{"ES12345678Z", "ES12345678Z", ""},
		{"ES123456789", "ES123456789", "expected format ES + a letter, 7 digits and a letter or digit, or 8 digits and a letter"},
		{"PL1234567890", "PL1234567890", ""},
		{"SE123456789001", "SE123456789001", ""},
		{"SE123456789012", "SE123456789012", "expected format SE + 12 digits ending in 01"},
		{"IE1234567WA", "IE1234567WA", ""},
		{"IE1A23456B", "IE1A23456B", ""},
		{"EL123456789", "EL123456789", ""},
		{"GR123456789", "GR123456789", "Greek VAT IDs begin with EL, not GR"},
		{"CY12345678L", "CY12345678L", ""},
		{"XI123456789", "XI123456789", ""},
		{"XIGD123", "XIGD123", ""},
		{"GB123456789", "GB123456789", "an EU VAT ID beginning with the country prefix of an EU member state (EL for Greece) or XI, e.g. DE123456789"},
		{"D", "D", "an EU VAT ID: country prefix and number, e.g. DE123456789"},
	} {
		norm := vatid.Normalize(tc.in)
		if diff := cmp.Diff([]string{tc.norm, tc.issue}, []string{norm, vatid.Check(norm)}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}
