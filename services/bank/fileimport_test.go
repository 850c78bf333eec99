package bank

import "testing"

func TestSniff(t *testing.T) {
	for in, want := range map[string]string{
		"\xef\xbb\xbf<?xml version=\"1.0\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">": FormatCAMT,
		"<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.054.001.08\">":                                      FormatCAMT,
		"<?xml version=\"1.0\"?><Invoice/>":                                                                        "",
		"{1:F01DEUTDEFFAXXX0000000000}{2:I940}{4:\n:20:X":                                                          FormatMT940,
		"ABNANL2A\r\n940\r\nABNANL2A\r\n:20:ABN AMRO BANK NV":                                                      FormatMT940,
		"Buchungstag;Betrag\r\n940;1\r\n":                                                                          FormatCSV,
		"\r\n:20:STARTUMS\r\n:25:12345678/1020304050":                                                              FormatMT940,
		":61:1811261126CR30,00N062NONREF":                                                                          FormatMT940,
		"Buchungstag;Valuta;Betrag\n01.01.2026;01.01.2026;1,00":                                                    FormatCSV,
		"%PDF-1.4\n":  "",
		"PK\x03\x04x": formatZIP,
		"a\x00b":      "",
		"  \n":        "",
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%.30q) = %q, want %q", in, got, want)
		}
	}
}
