package csvimport

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// recorder is a RowErrorSink that keeps what it is given.
type recorder struct {
	calls   []string
	stmts   []bank.Statement
	entries []bank.Entry
	ends    []bank.StatementEnd
	rowErrs []RowError
}

func (r *recorder) Statement(s bank.Statement) error {
	r.calls = append(r.calls, "statement")
	r.stmts = append(r.stmts, s)
	return nil
}

func (r *recorder) Entry(e bank.Entry) error {
	r.calls = append(r.calls, "entry")
	r.entries = append(r.entries, e)
	return nil
}

func (r *recorder) End(e bank.StatementEnd) error {
	r.calls = append(r.calls, "end")
	r.ends = append(r.ends, e)
	return nil
}

func (r *recorder) RowError(e RowError) error {
	r.rowErrs = append(r.rowErrs, e)
	return nil
}

// plainSink takes no row errors, so Parse returns them.
type plainSink struct{ r recorder }

func (p *plainSink) Statement(s bank.Statement) error { return p.r.Statement(s) }
func (p *plainSink) Entry(e bank.Entry) error         { return p.r.Entry(e) }
func (p *plainSink) End(e bank.StatementEnd) error    { return p.r.End(e) }

var decimalEq = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFiles(t *testing.T) {
	tests := []struct {
		file      string
		encoding  Encoding
		statement bank.Statement
		count     int
		sum       string
		entries   []bank.Entry // checked when set
		rowErrs   []RowError
	}{
		{
			file:      "sparkasse-csv-camt-cp1252.csv",
			encoding:  Windows1252,
			statement: bank.Statement{Kind: "csv", IBAN: "DE89370400440532013000", Currency: "EUR"},
			count:     4, sum: "1149.85", // -89.90 + 1250.00 - 4.35 - 5.90; the "Umsatz vorgemerkt" row left out
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-24", ValueDate: "2026-09-24", Amount: dec("-89.90"), Currency: "EUR",
					EndToEndID: "E2E-0924-1", MandateID: "M-4711", CreditorID: "DE98ZZZ09999999999",
					CounterpartyName: "Stadtwerke Musterstadt GmbH", CounterpartyIBAN: "DE45120300001234567890",
					CounterpartyBIC: "BYLADEM1001", Reference: "Abschlag 09/2026 Vertragskonto 123456",
					BookingText: "FOLGELASTSCHRIFT",
				},
				{
					BookingDate: "2026-09-23", ValueDate: "2026-09-23", Amount: dec("1250"), Currency: "EUR",
					EndToEndID: "NOTPROVIDED", CounterpartyName: "Müller & Söhne GmbH",
					CounterpartyIBAN: "DE05100500000190123456", CounterpartyBIC: "BELADEBEXXX",
					Reference: "Rechnung 2026-0815 vielen Dank", BookingText: "GUTSCHR. UEBERWEISUNG",
				},
				{
					BookingDate: "2026-09-22", ValueDate: "2026-09-22", Amount: dec("-4.35"), Currency: "EUR",
					CounterpartyName: "Bäckerei Größ", Reference: "2026-09-21T18:03 Debitk.1 2029-12 Bäckerei Größ",
					BookingText: "KARTENZAHLUNG",
				},
				{
					BookingDate: "2026-09-21", ValueDate: "2026-09-30", Amount: dec("-5.90"), Currency: "EUR",
					Reference: "Entgeltabrechnung siehe Anlage Gebühr 5,90 €", BookingText: "ENTGELTABSCHLUSS",
				},
			},
		},
		{
			file:      "dkb-preamble-utf8-bom.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", IBAN: "DE42100110012620000001", Currency: "EUR"}, // from the preamble
			count:     3, sum: "3002.78",                                                            // 3100.00 - 39.99 - 57.23; "Vorgemerkt" left out
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-30", ValueDate: "2026-09-30", Amount: dec("3100"), Currency: "EUR",
					CounterpartyName: "ACME Software GmbH", CounterpartyIBAN: "DE10200411550123456789",
					Reference: "Gehalt September 2026", BookingText: "Eingang",
				},
				{
					BookingDate: "2026-09-29", ValueDate: "2026-09-29", Amount: dec("-39.99"), Currency: "EUR",
					EndToEndID: "VF-2026-09", MandateID: "MR-0815", CreditorID: "DE61ZZZ00000012345",
					CounterpartyName: "Vodafone GmbH", CounterpartyIBAN: "DE18430609671234567800",
					Reference: "Kundennr. 4711 Rechnung 09/26", BookingText: "Ausgang",
				},
				{
					BookingDate: "2026-09-28", ValueDate: "2026-09-28", Amount: dec("-57.23"), Currency: "EUR",
					CounterpartyName: "REWE Markt GmbH", Reference: "Einkauf", BookingText: "Ausgang",
				},
			},
		},
		{
			file:      "ing-saldo-cp1252.csv",
			encoding:  Windows1252,
			statement: bank.Statement{Kind: "csv", IBAN: "DE41500105170123456789", Currency: "EUR"},
			count:     3, sum: "348.01", // -78.00 + 450.00 - 23.99; the Saldo column is not the amount
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-30", ValueDate: "2026-09-30", Amount: dec("-78"), Currency: "EUR",
					CounterpartyName: "Stadtwerke München", Reference: "Strom Abschlag September", BookingText: "Lastschrift",
				},
				{
					BookingDate: "2026-09-15", ValueDate: "2026-09-15", Amount: dec("450"), Currency: "EUR",
					CounterpartyName: "Max Müller", Reference: "Miete Anteil Oktober", BookingText: "Gutschrift",
				},
				{
					BookingDate: "2026-09-02", ValueDate: "2026-09-01", Amount: dec("-23.99"), Currency: "EUR",
					CounterpartyName: "VISA AMAZON EU", Reference: "NR XXXX 1234 AMAZON.DE", BookingText: "Lastschrift",
				},
			},
		},
		{
			file:      "volksbank-iso8859-15-euro.csv",
			encoding:  ISO885915,
			statement: bank.Statement{Kind: "csv", IBAN: "DE84760100850012345678", Currency: "EUR"},
			count:     3, sum: "-1053.45", // -950.00 + 20.00 - 123.45
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-30", ValueDate: "2026-09-30", Amount: dec("-950"), Currency: "EUR",
					CounterpartyName: "Hausverwaltung Schäfer", CounterpartyIBAN: "DE45120300001234567890",
					CounterpartyBIC: "BYLADEM1001", Reference: "Miete Oktober 950,00 €", BookingText: "Dauerauftrag",
				},
				{
					BookingDate: "2026-09-29", ValueDate: "2026-09-29", Amount: dec("20"), Currency: "EUR",
					CounterpartyName: "Jürgen Weiß", CounterpartyIBAN: "DE05100500000190123456",
					CounterpartyBIC: "BELADEBEXXX", Reference: "Rückzahlung Auslage 20 €", BookingText: "Gutschrift",
				},
				{
					BookingDate: "2026-09-28", ValueDate: "2026-09-28", Amount: dec("-123.45"), Currency: "EUR",
					CounterpartyName: "Kfz-Versicherung", CounterpartyIBAN: "DE10200411550123456789",
					CreditorID: "DE98ZZZ09999999999", MandateID: "KFZ-123",
					Reference: "Beitrag 4. Quartal", BookingText: "Basislastschrift",
				},
			},
		},
		{
			file:      "n26-point-decimal.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     3, sum: "5.95", // -9.99 + 1250.50 - 1234.56
			entries: []bank.Entry{
				{BookingDate: "2026-09-30", Amount: dec("-9.99"), Currency: "EUR", CounterpartyName: "Spotify AB", BookingText: "MasterCard Zahlung"},
				{
					BookingDate: "2026-09-15", Amount: dec("1250.5"), Currency: "EUR", CounterpartyName: "Erika Mustermann",
					CounterpartyIBAN: "DE45120300001234567890", Reference: "Rückzahlung, Urlaub", BookingText: "Gutschrift",
				},
				{BookingDate: "2026-09-02", Amount: dec("-1234.56"), Currency: "EUR", CounterpartyName: "Hotel Paris", BookingText: "MasterCard Zahlung"},
			},
		},
		{
			file:      "commerzbank-utf8.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", IBAN: "DE81300500000000123456", Currency: "EUR"},
			count:     2, sum: "2450.05", // -49.95 + 2500
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-30", ValueDate: "2026-09-30", Amount: dec("-49.95"), Currency: "EUR",
					Reference: "Telekom Deutschland GmbH Kundennummer 123 Rechnung 09/2026", BookingText: "Lastschrift",
				},
				{
					BookingDate: "2026-09-29", ValueDate: "2026-09-29", Amount: dec("2500"), Currency: "EUR",
					Reference: "ACME GmbH Gehalt 09/2026", BookingText: "Gutschrift",
				},
			},
		},
		{
			file:      "deutschebank-soll-haben-cp1252.csv",
			encoding:  Windows1252,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     3, sum: "3583.70", // -156.30 - 1020.00 + 4760.00; the closing "Kontostand" line left out
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-29", ValueDate: "2026-09-29", Amount: dec("-156.30"), Currency: "EUR",
					EndToEndID: "AZ-2026-77", MandateID: "MR-77", CreditorID: "DE98ZZZ09999999999",
					CounterpartyName: "Allianz Versicherungs-AG", CounterpartyIBAN: "DE10200411550123456789",
					CounterpartyBIC: "DRESDEFF100", Reference: "Beitrag Hausrat 2026", BookingText: "SEPA-Lastschrift",
				},
				{
					BookingDate: "2026-09-15", ValueDate: "2026-09-15", Amount: dec("-1020"), Currency: "EUR",
					CounterpartyName: "Finanzamt München", CounterpartyIBAN: "DE45120300001234567890",
					CounterpartyBIC: "BYLADEM1001", Reference: "St.-Nr. 143/123/45678 USt 08/2026", BookingText: "SEPA-Überweisung an",
				},
				{
					BookingDate: "2026-09-01", ValueDate: "2026-09-01", Amount: dec("4760"), Currency: "EUR",
					CounterpartyName: "Kunde Schmidt GmbH", CounterpartyIBAN: "DE05100500000190123456",
					CounterpartyBIC: "BELADEBEXXX", Reference: "RE-2026-0042", BookingText: "SEPA-Gutschrift von",
				},
			},
		},
		{
			file:      "comdirect-offen-cp1252.csv",
			encoding:  Windows1252,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     2, sum: "460.05", // -39.95 + 500.00; the "offen" row and the balance lines left out
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-28", ValueDate: "2026-09-28", Amount: dec("-39.95"), Currency: "EUR",
					Reference: "Auftraggeber: Telekom Buchungstext: Rechnung 09 Ref. 123", BookingText: "Lastschrift / Belastung",
				},
				{
					BookingDate: "2026-09-27", ValueDate: "2026-09-27", Amount: dec("500"), Currency: "EUR",
					Reference: "Auftraggeber: Erika Mustermann Buchungstext: Sparen", BookingText: "Übertrag / Überweisung",
				},
			},
		},
		{
			file:      "volksbank-old-tab-soll-haben.tsv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     2, sum: "24.60", // S 87,40 + H 112,00
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-30", ValueDate: "2026-09-30", Amount: dec("-87.40"), Currency: "EUR",
					CounterpartyName: "Bauhaus GmbH", CounterpartyIBAN: "DE45120300001234567890",
					CounterpartyBIC: "BYLADEM1001", Reference: "Kartenzahlung Baumarkt",
				},
				{
					BookingDate: "2026-09-20", ValueDate: "2026-09-20", Amount: dec("112"), Currency: "EUR",
					CounterpartyName: "Gemeinde Musterdorf", CounterpartyIBAN: "DE05100500000190123456",
					CounterpartyBIC: "BELADEBEXXX", Reference: "Erstattung Grundsteuer",
				},
			},
		},
		{
			file:      "multiline-quoted.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     2, sum: "-1237.76",
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-01", Amount: dec("-1234.56"), Currency: "EUR",
					CounterpartyName: "Müller; Meier & Co.", Reference: "Rechnung 4711 Kundennummer 0815; vielen Dank",
				},
				{
					BookingDate: "2026-09-02", Amount: dec("-3.20"), Currency: "EUR",
					CounterpartyName: `Schulze "Der Bäcker"`, Reference: "Brötchen",
				},
			},
		},
		{
			file:      "english-comma-point.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     3, sum: "1133.16", // 1234.56 - 99.90 - 1.50
			entries: []bank.Entry{
				{
					BookingDate: "2026-09-01", ValueDate: "2026-09-01", Amount: dec("1234.56"), Currency: "EUR",
					CounterpartyName: "Acme, Inc.", CounterpartyIBAN: "DE45120300001234567890", CounterpartyBIC: "BYLADEM1001",
					Reference: "Invoice 17",
				},
				{BookingDate: "2026-09-02", ValueDate: "2026-09-03", Amount: dec("-99.90"), Currency: "EUR", CounterpartyName: "Shop", Reference: "Order 99"},
				{BookingDate: "2026-09-03", ValueDate: "2026-09-03", Amount: dec("-1.50"), Currency: "EUR", CounterpartyName: "Bank", Reference: "Fee"},
			},
		},
		{
			file:      "bad-rows.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv", Currency: "EUR"},
			count:     3, sum: "8.50", // 10.00 - 2.50 + 1.00
			rowErrs: []RowError{
				{Row: 2, Line: 3, Field: "tx_date", Value: "32.09.2026", Reason: "is no day of the calendar"},
				{Row: 3, Line: 4, Field: "amount", Value: "zehn", Reason: "is not an amount"},
				{Row: 4, Line: 5, Field: "amount", Value: "0,00", Reason: "is zero"},
				{Row: 5, Line: 6, Field: "value_date", Value: "31.02.2026", Reason: "is no day of the calendar"},
				{Row: 7, Line: 8, Reason: `malformed CSV: bare " in non-quoted-field`},
			},
		},
		{
			file:      "header-only.csv",
			encoding:  UTF8,
			statement: bank.Statement{Kind: "csv"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readFile(t, tt.file)
			if got := DetectEncoding(data); got != tt.encoding {
				t.Errorf("encoding %s, want %s", got, tt.encoding)
			}
			var r recorder
			if err := Parse(bytes.NewReader(data), &r); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			wantCalls := append([]string{"statement"}, append(slicesRepeat("entry", tt.count), "end")...)
			if diff := cmp.Diff(wantCalls, r.calls); diff != "" {
				t.Errorf("sink calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]bank.Statement{tt.statement}, r.stmts); diff != "" {
				t.Errorf("statement (-want +got):\n%s", diff)
			}
			sum := decimal.Zero
			if tt.sum != "" {
				sum = dec(tt.sum)
			}
			var got decimal.Decimal
			for _, e := range r.entries {
				got = got.Add(e.Amount)
			}
			if !got.Equal(sum) || len(r.ends) != 1 || !r.ends[0].Sum.Equal(sum) || r.ends[0].Entries != tt.count || r.ends[0].Closing != nil {
				t.Errorf("entries sum %s, end %+v; want %d entries summing to %s", got, r.ends, tt.count, sum)
			}
			if tt.entries != nil {
				if diff := cmp.Diff(tt.entries, r.entries, decimalEq); diff != "" {
					t.Errorf("entries (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.rowErrs, r.rowErrs); diff != "" {
				t.Errorf("row errors (-want +got):\n%s", diff)
			}
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestRowErrorsReturnedWithoutRowErrorSink(t *testing.T) {
	var s plainSink
	err := Parse(bytes.NewReader(readFile(t, "bad-rows.csv")), &s)
	var re *RowErrors
	if !errors.As(err, &re) {
		t.Fatalf("Parse: %v, want *RowErrors", err)
	}
	if len(re.Errors) != 5 || re.Omitted != 0 || len(s.r.entries) != 3 || len(s.r.ends) != 1 {
		t.Fatalf("%d row errors, %d entries, %d ends", len(re.Errors), len(s.r.entries), len(s.r.ends))
	}
	if got, want := re.Errors[1].Error(), `row 3 (line 4), field amount: "zehn" is not an amount`; got != want {
		t.Errorf("row error %q, want %q", got, want)
	}
}

func TestMissingColumns(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		missing []string
		message string
	}{
		{
			name:    "file unknown-layout.csv",
			data:    string(readFile(t, "unknown-layout.csv")),
			missing: []string{"the amount"},
			message: "csv: no column for the amount: expected one of Betrag, Umsatz, Amount, Betrag (EUR), Umsatz in EUR, or Soll and Haben",
		},
		{
			name:    "nothing recognised",
			data:    "Foo;Bar;Baz\n1;2;3\n",
			missing: []string{"the booking date", "the amount"},
			message: "csv: no column for the booking date: expected one of Buchungstag, Buchungsdatum, Buchung, Datum, Date, Booking Date; " +
				"no column for the amount: expected one of Betrag, Umsatz, Amount, Betrag (EUR), Umsatz in EUR, or Soll and Haben",
		},
		{name: "empty file", data: "", missing: []string{"the booking date", "the amount"}},
		{name: "Soll without Haben", data: "Buchungstag;Soll\n01.01.2026;1,00\n", missing: []string{"the amount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			err := Parse(strings.NewReader(tt.data), &r)
			var me *MissingColumnsError
			if !errors.As(err, &me) {
				t.Fatalf("Parse: %v, want *MissingColumnsError", err)
			}
			var got []string
			for _, m := range me.Missing {
				got = append(got, m.What)
			}
			if diff := cmp.Diff(tt.missing, got); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if tt.message != "" && err.Error() != tt.message {
				t.Errorf("message %q\nwant    %q", err.Error(), tt.message)
			}
			if len(r.calls) != 0 {
				t.Errorf("sink got %v before the error", r.calls)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in, want, currency string
	}{
		{"1.234,56", "1234.56", ""},
		{"-1234,56", "-1234.56", ""},
		{"1,234.56", "1234.56", ""},
		{"1234.56", "1234.56", ""},
		{"-1.234.567,89", "-1234567.89", ""},
		{"12,5", "12.5", ""},
		{"+12,00", "12", ""},
		{"12,00-", "-12", ""},
		{"-12,50 EUR", "-12.5", "EUR"},
		{"EUR -12,50", "-12.5", "EUR"},
		{"3.100,00 €", "3100", "EUR"},
		{"€1,234.56", "1234.56", "EUR"},
		{"1 234,56", "1234.56", ""},
		{"1\u00a0234,56", "1234.56", ""},
		{"1.234", "1234", ""},
		{"0,125", "0.125", ""},
		{"2500", "2500", ""},
		{"−7,10", "-7.1", ""},
	}
	for _, tt := range tests {
		got, cur, err := parseAmount(tt.in)
		if err != nil || !got.Equal(dec(tt.want)) || cur != tt.currency {
			t.Errorf("parseAmount(%q) = %s, %q, %v; want %s, %q", tt.in, got, cur, err, tt.want, tt.currency)
		}
	}
	for _, in := range []string{"", "abc", "1,2,3", "1.23.4", "12,", ",50", "1.234,5.6", "--1", "1e5", "12,34,56.7.8", "EUR", "1..2"} {
		if got, _, err := parseAmount(in); err == nil {
			t.Errorf("parseAmount(%q) = %s, want an error", in, got)
		}
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"24.09.2026": "2026-09-24", "24.09.26": "2026-09-24", "2026-09-24": "2026-09-24", "1.2.2026": "2026-02-01",
		"29.02.2028": "2028-02-29",
	} {
		if got, err := parseDate(in); err != nil || got != want {
			t.Errorf("parseDate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "offen", "29.02.2026", "2026-13-01", "24.09.2026 12:00", "24/09/2026", "240926", "1.2.3"} {
		if got, err := parseDate(in); err == nil {
			t.Errorf("parseDate(%q) = %q, want an error", in, got)
		}
	}
}

func TestDetectEncoding(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want Encoding
	}{
		{"BOM", []byte("\xef\xbb\xbfDatum;Betrag"), UTF8},
		{"valid UTF-8", []byte("Empfänger;€"), UTF8},
		{"1252 euro", []byte("Geb\xfchr 5,90 \x80"), Windows1252},
		{"8859-15 euro", []byte("Geb\xfchr 5,90 \xa4"), ISO885915},
		{"1252 euro wins over 0xA4", []byte("\x80 \xa4"), Windows1252},
		{"Latin umlauts only", []byte("M\xfcller"), Windows1252},
		{"UTF-8 cut at 64 KB", append(bytes.Repeat([]byte("a"), peekSize-1), 0xc3), UTF8},
	}
	for _, tt := range tests {
		if got := DetectEncoding(tt.head); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestHeaderAfterLongPreambleBeyond64KB(t *testing.T) {
	data := strings.Repeat("Hinweis;bitte beachten\n", peekSize/20) + "Datum;Betrag\n01.01.2026;1,00\n"
	var me *MissingColumnsError
	if err := Parse(strings.NewReader(data), &recorder{}); !errors.As(err, &me) {
		t.Fatalf("Parse: %v, want *MissingColumnsError", err)
	}
}

func TestRowTooLong(t *testing.T) {
	// An unterminated quote: the rest of the file would be one field.
	data := "Datum;Betrag;Verwendungszweck\n01.01.2026;1,00;\"" + strings.Repeat("x", 4*MaxRecordBytes) + "\n"
	var r recorder
	if err := Parse(strings.NewReader(data), &r); !errors.Is(err, ErrRowTooLong) {
		t.Fatalf("Parse: %v, want ErrRowTooLong", err)
	}
}

func TestLongFieldsAreCut(t *testing.T) {
	long := strings.Repeat("ä", MaxTextBytes) // two bytes each
	data := "Datum;Betrag;Verwendungszweck\n01.01.2026;1,00;" + long + "\n"
	var r recorder
	if err := Parse(strings.NewReader(data), &r); err != nil {
		t.Fatal(err)
	}
	if got := r.entries[0].Reference; got != long[:MaxTextBytes] {
		t.Errorf("reference of %d bytes, want %d", len(got), MaxTextBytes)
	}
}

func TestOtherAccountRowReported(t *testing.T) {
	data := "Auftragskonto;Buchungstag;Betrag\n" +
		"DE89370400440532013000;01.01.2026;1,00\n" +
		"DE45120300001234567890;02.01.2026;2,00\n"
	var r recorder
	if err := Parse(strings.NewReader(data), &r); err != nil {
		t.Fatal(err)
	}
	want := []RowError{{Row: 2, Line: 3, Field: "account", Value: "DE45120300001234567890",
		Reason: "is another account than the file's first row (DE89370400440532013000)"}}
	if diff := cmp.Diff(want, r.rowErrs); diff != "" || len(r.entries) != 1 {
		t.Errorf("%d entries; row errors (-want +got):\n%s", len(r.entries), diff)
	}
}

func TestSinkErrorStops(t *testing.T) {
	stop := errors.New("stop")
	s := &failingSink{err: stop}
	if err := Parse(bytes.NewReader(readFile(t, "ing-saldo-cp1252.csv")), s); err != stop {
		t.Fatalf("Parse: %v, want the sink's error", err)
	}
	if s.entries != 1 {
		t.Errorf("%d entries handed on after the error", s.entries)
	}
}

type failingSink struct {
	err     error
	entries int
}

func (f *failingSink) Statement(bank.Statement) error { return nil }
func (f *failingSink) Entry(bank.Entry) error         { f.entries++; return f.err }
func (f *failingSink) End(bank.StatementEnd) error    { return nil }
