package iban_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/iban"
)

func TestCheck(t *testing.T) {
	// The registry's example IBANs of several countries, printed and
	// electronic.
	for _, s := range []string{
		"DE89 3704 0044 0532 0130 00", "AT611904300234573201", "CH9300762011623852957", "FR1420041010050500013M02606",
		"NL91ABNA0417164300", "GB29NWBK60161331926819", "BE68539007547034", "NO9386011117947", "IT60X0542811101000000123456",
		"ES9121000418450200051332", "LC55HEMM000100010012001200023015", "MT84MALT011000012345MTLCAST001S", "pl61109010140000071219812874",
	} {
		if issue := iban.Check(iban.Normalize(s)); issue != "" {
			t.Errorf("%s: %s", s, issue)
		}
	}
	for s, want := range map[string]string{
		"DE89370400440532013001":              "check digits do not match (ISO 13616 mod 97)",
		"DE8937040044053201300":               "an IBAN of DE has 22 characters",
		"AT6119043002345732011":               "an IBAN of AT has 20 characters",
		"XX89370400440532013000":              "unknown IBAN country XX",
		"DEAB370400440532013000":              "check digits must be digits",
		"DE89370400440532013Ä0":               "letters and digits only",
		"DE8937":                              "15 to 34 letters and digits",
		"DE893704004405320130000000000000000": "15 to 34 letters and digits",
	} {
		if got := iban.Check(s); got != want {
			t.Errorf("%s: %q, want %q", s, got, want)
		}
	}
}

func TestCheckBIC(t *testing.T) {
	for _, s := range []string{"COBADEFFXXX", "COBADEFF", "DEUTDEDB110", "MARKDEF1100", "GENODEM1GLS"} {
		if issue := iban.CheckBIC(s); issue != "" {
			t.Errorf("%s: %s", s, issue)
		}
	}
	for _, s := range []string{"", "COBADEF", "COBADEFFX", "COBADEFFXX", "COBADEFFXXXX", "C0BADEFF", "COBAD3FF", "COBADEF_", "cobadeff"} {
		if iban.CheckBIC(s) == "" {
			t.Errorf("%q accepted", s)
		}
	}
}
