package csvimport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// TestRealFiles: files written for these tests in the layouts banks
// really export (see testdata/README.md). Counts and sums are worked out
// by hand from the files (comments), not taken from the parser.
func TestRealFiles(t *testing.T) {
	tests := []struct {
		file      string
		encoding  Encoding
		statement bank.Statement
		count     int
		sum       string
		rowErrs   []RowError
		checks    map[int]bank.Entry // entry index -> the whole entry
	}{{
		// Revolut (personal): comma, point decimal, "Completed Date" with a
		// time, State. PENDING and REVERTED rows are no bookings. The fee
		// is taken on top of the amount (Balance 476.53 - 100.00 - 1.00 =
		// 375.53). Two equal card payments of 2.40 on one day are two.
		// 500.00 - 23.47 - 101.00 - 50.00 + 23.47 - 2.40 - 2.40 = 344.20,
		// the last Balance.
		file: "revolut-personal-fee-state.csv", encoding: UTF8,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     7, sum: "344.20",
		checks: map[int]bank.Entry{
			0: {BookingDate: "2024-10-01", Amount: dec("500.00"), Currency: "EUR", Reference: "Top-up by *1234", BookingText: "TOPUP"},
			2: {BookingDate: "2024-10-03", Amount: dec("-101.00"), Currency: "EUR", Reference: "Cash at Sparkasse Am Markt",
				BookingText: "ATM", Charges: dec("1.00")},
			4: {BookingDate: "2024-10-08", Amount: dec("23.47"), Currency: "EUR", Reference: "Lidl", BookingText: "CARD_REFUND"},
		},
	}, {
		// Sparkasse CSV-MT940: Windows-1252, CRLF, DD.MM.YY, the own account
		// as account number (no IBAN for the statement), the counterparty's
		// IBAN under "Kontonummer" and BIC under "BLZ". The "Umsatz
		// vorgemerkt" row is left out: -12.50 + 1499.00 - 67.89 = 1418.61.
		file: "sparkasse-csv-mt940-cp1252.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     3, sum: "1418.61",
		checks: map[int]bank.Entry{
			0: {BookingDate: "2024-09-30", ValueDate: "2024-09-30", Amount: dec("-12.50"), Currency: "EUR",
				Reference: "Abrechnung 30.09.2024 siehe Anlage", BookingText: "ABSCHLUSS"},
			1: {BookingDate: "2024-09-27", ValueDate: "2024-09-27", Amount: dec("1499.00"), Currency: "EUR",
				CounterpartyName: "Lieschen Müller", CounterpartyIBAN: "DE89370400440532013000", CounterpartyBIC: "COBADEFFXXX",
				Reference: "Miete Oktober Whg. 3 OG links", BookingText: "GUTSCHR. UEBERW. DAUERAUFTR"},
			2: {BookingDate: "2024-09-25", ValueDate: "2024-09-24", Amount: dec("-67.89"), Currency: "EUR",
				CounterpartyName: "ARAL Station 1234//Köln/DE", CounterpartyIBAN: "DE12500105170648489890", CounterpartyBIC: "INGDDEFFXXX",
				Reference: "2024-09-23T13:45 Debitk.7 2027-12", BookingText: "KARTENZAHLUNG"},
		},
	}, {
		// Consorsbank: Windows-1252, "Sender / Empfänger", "IBAN / Konto-Nr.",
		// "BIC / BLZ", "Betrag in EUR". A closing row of 0,00 is no
		// booking and is reported. -34.99 + 2000.00 - 1187.00 = 778.01.
		file: "consorsbank-cp1252.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     3, sum: "778.01",
		rowErrs: []RowError{{Row: 4, Line: 5, Field: "amount", Value: "-0,00", Reason: "is zero"}},
		checks: map[int]bank.Entry{
			0: {BookingDate: "2024-12-02", ValueDate: "2024-12-02", Amount: dec("-34.99"), Currency: "EUR",
				CounterpartyName: "Amazon Payments Europe S.C.A.", CounterpartyIBAN: "DE87300308801908262006", CounterpartyBIC: "TUBDDEDD",
				Reference: "305-1234567-7654321 Amazon.de 1A2B3C4D5E", BookingText: "LASTSCHRIFT"},
			2: {BookingDate: "2024-11-28", ValueDate: "2024-11-28", Amount: dec("-1187.00"), Currency: "EUR",
				CounterpartyName: "Finanzamt Nürnberg-Süd", CounterpartyIBAN: "DE94760000000076001601", CounterpartyBIC: "MARKDEF1760",
				Reference: "St.-Nr. 240/123/45678 ESt Vorauszahlung IV/24", BookingText: "ÜBERWEISUNG"},
		},
	}, {
		// Volksbank's older export: a preamble, the S/H mark in a column
		// whose header is a blank, multi-line Vorgang/Verwendungszweck, and
		// "Anfangssaldo"/"Endsaldo" rows with a date and an amount after
		// the bookings. S 89.00, H 150.00, S 4.95 = 56.05 (1000.00 + 56.05
		// = 1056.05, the Endsaldo).
		file: "volksbank-old-unnamed-sh-saldo-rows.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     3, sum: "56.05",
		checks: map[int]bank.Entry{
			0: {BookingDate: "2024-09-30", ValueDate: "2024-09-30", Amount: dec("-89.00"), Currency: "EUR",
				CounterpartyName: "Stadtwerke Gießen AG", CounterpartyIBAN: "DE45120300001234567890", CounterpartyBIC: "BYLADEM1001",
				EndToEndID: "2024-09-4711",
				Reference:  "Basislastschrift Abschlag September Vertragskonto 4711 EREF: 2024-09-4711 MREF: SWG-4711 CRED: DE98ZZZ09999999999"},
			1: {BookingDate: "2024-09-16", ValueDate: "2024-09-16", Amount: dec("150.00"), Currency: "EUR",
				CounterpartyName: "Max Mustermann", CounterpartyIBAN: "DE75120300001020304050", CounterpartyBIC: "BYLADEM1001",
				Reference: "Gutschrift Anteil Nebenkosten"},
			2: {BookingDate: "2024-09-02", ValueDate: "2024-09-02", Amount: dec("-4.95"), Currency: "EUR",
				Reference: "Abschluss Entgelt Kontoführung"},
		},
	}, {
		// Wise: comma, DD-MM-YYYY, signed point amounts, "Description" (the
		// booking text here) beside "Payment Reference", payer and payee
		// names apart, the Wise ID as bank reference. Running balance 13.40
		// - 0.41 + 5000.00 - 12.99 - 1200.00 = 3800.00; the rows: 3786.60.
		file: "wise-statement-dd-mm-yyyy.csv", encoding: UTF8,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     4, sum: "3786.60",
		checks: map[int]bank.Entry{
			0: {BookingDate: "2024-10-31", Amount: dec("-1200.00"), Currency: "EUR", BankReference: "TRANSFER-1234567890",
				CounterpartyName: "Hausverwaltung Meier GmbH", CounterpartyIBAN: "DE89370400440532013000",
				Reference: "Miete November", BookingText: "Sent money to Hausverwaltung Meier GmbH"},
			2: {BookingDate: "2024-10-29", Amount: dec("5000.00"), Currency: "EUR", BankReference: "TRANSFER-1234500000",
				CounterpartyName: "Kunde AG", Reference: "RE-2024-77",
				BookingText: "Received money from Kunde AG with reference RE-2024-77"},
		},
	}, {
		// HypoVereinsbank: the own account number first, the name in
		// "Empfaenger 1" and "Empfaenger 2". -120.00 + 2380.00 - 9.90 = 2250.10.
		file: "hypovereinsbank-empfaenger12-cp1252.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     3, sum: "2250.10",
		checks: map[int]bank.Entry{
			1: {BookingDate: "2024-11-01", ValueDate: "2024-11-01", Amount: dec("2380.00"), Currency: "EUR",
				CounterpartyName: "Kunde Schmidt und Partner Steuerberatungsgesellschaft", Reference: "RE 2024-0099 Beratung Oktober"},
			2: {BookingDate: "2024-10-31", ValueDate: "2024-10-31", Amount: dec("-9.90"), Currency: "EUR",
				Reference: "Abrechnung Kontoführung"},
		},
	}, {
		// DKB's older Visa export: a preamble, no booking date but
		// "Wertstellung" (and "Belegdatum", the receipt's day), amounts in
		// "Betrag (EUR)", the foreign amount aside. -45.99 - 189.00 +
		// 150.00 - 17.98 = -102.97, the Saldo of the preamble.
		file: "dkb-visa-wertstellung-cp1252.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     4, sum: "-102.97",
		checks: map[int]bank.Entry{
			3: {BookingDate: "2024-10-03", ValueDate: "2024-10-03", Amount: dec("-17.98"), Currency: "EUR",
				Reference: "UBER *TRIP HELP.UBER.COM"},
		},
	}, {
		// bunq: the own IBAN under "Account", the counterparty's IBAN under
		// "Counterparty" and its name under "Name". -12.50 + 2500.00 - 3.99
		// = 2483.51.
		file: "bunq-counterparty-iban.csv", encoding: UTF8,
		statement: bank.Statement{Kind: "csv", IBAN: "NL91ABNA0417164300", Currency: "EUR"},
		count:     3, sum: "2483.51",
		checks: map[int]bank.Entry{
			1: {BookingDate: "2024-10-04", ValueDate: "2024-10-04", Amount: dec("2500.00"), Currency: "EUR",
				CounterpartyName: "Kunde Schmidt GmbH", CounterpartyIBAN: "DE75120300001020304050", Reference: "RE-2024-301"},
			2: {BookingDate: "2024-10-03", ValueDate: "2024-10-03", Amount: dec("-3.99"), Currency: "EUR",
				CounterpartyName: "bunq", Reference: "Abonnement Oktober"},
		},
	}, {
		// Commerzbank since 2024: the own account under "IBAN
		// Auftraggeberkonto", the remittance text under "Buchungstext".
		// -49.95 + 1785.00 - 9.90 = 1725.15.
		file: "commerzbank-2024-auftraggeberkonto.csv", encoding: UTF8,
		statement: bank.Statement{Kind: "csv", IBAN: "DE89370400440532013000", Currency: "EUR"},
		count:     3, sum: "1725.15",
		checks: map[int]bank.Entry{
			1: {BookingDate: "2024-10-28", ValueDate: "2024-10-28", Amount: dec("1785.00"), Currency: "EUR",
				Reference: "Kunde Weber OHG RE 2024-88", BookingText: "Gutschrift"},
		},
	}, {
		// comdirect's export of all accounts: the Girokonto's section
		// (its "offen" row left out), then the Visa card's and the
		// Tagesgeld's, each with a title, balances and its own header row,
		// which are other accounts and not this statement's.
		// -156.30 + 85.00 - 43.58 = -114.88 (2960.00 - 114.88 = 2845.12).
		file: "comdirect-all-accounts-sections-cp1252.csv", encoding: Windows1252,
		statement: bank.Statement{Kind: "csv", Currency: "EUR"},
		count:     3, sum: "-114.88",
		checks: map[int]bank.Entry{
			2: {BookingDate: "2024-10-25", ValueDate: "2024-10-25", Amount: dec("-43.58"), Currency: "EUR",
				Reference: "Buchungstext: Edeka Hamburg Ref. 5KL2", BookingText: "Kartenverfügung"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := readFile(t, tt.file)
			if got := DetectEncoding(b); got != tt.encoding {
				t.Errorf("encoding %s, want %s", got, tt.encoding)
			}
			r := &recorder{}
			if err := Parse(bytes.NewReader(b), r); err != nil {
				t.Fatal(err)
			}
			if len(r.stmts) != 1 || len(r.ends) != 1 {
				t.Fatalf("%d statements, %d ends", len(r.stmts), len(r.ends))
			}
			if d := cmp.Diff(tt.statement, r.stmts[0]); d != "" {
				t.Errorf("statement (-want +got)\n%s", d)
			}
			sum := decimal.Zero
			for _, e := range r.entries {
				sum = sum.Add(e.Amount)
			}
			if len(r.entries) != tt.count || !sum.Equal(dec(tt.sum)) {
				t.Errorf("%d entries summing %s, want %d summing %s", len(r.entries), sum, tt.count, tt.sum)
			}
			if r.ends[0].Entries != len(r.entries) || !r.ends[0].Sum.Equal(sum) {
				t.Errorf("End %+v, handed %d summing %s", r.ends[0], len(r.entries), sum)
			}
			if d := cmp.Diff(tt.rowErrs, r.rowErrs); d != "" {
				t.Errorf("row errors (-want +got)\n%s", d)
			}
			for i, want := range tt.checks {
				if i >= len(r.entries) {
					t.Errorf("entry %d missing", i)
					continue
				}
				if d := cmp.Diff(want, r.entries[i], decimalEq); d != "" {
					t.Errorf("entry %d (-want +got)\n%s", i, d)
				}
			}
		})
	}
}

// Revolut's dates carry the time after an ISO date, Wise's are
// DD-MM-YYYY.
func TestParseDateRealForms(t *testing.T) {
	for in, want := range map[string]string{
		"2024-10-01 08:00:15": "2024-10-01", "2024-10-01T08:00:15": "2024-10-01", "2024-10-01 08:00:15.123": "2024-10-01",
		"31-10-2024": "2024-10-31", "1-2-2024": "2024-02-01",
	} {
		if got, err := parseDate(in); err != nil || got != want {
			t.Errorf("parseDate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"2024-10-01 abc", "2024-10-01 08", "2024-10-01 08:00 Uhr", "31-02-2024", "10-31-2024"} {
		if got, err := parseDate(in); err == nil {
			t.Errorf("parseDate(%q) = %q, want an error", in, got)
		}
	}
}

// The preamble names the account in words, the IBAN in groups.
func TestIBANInPreambleCell(t *testing.T) {
	for cell, want := range map[string]string{
		"Girokonto DE12 5001 0517 0648 4898 90":         "DE12500105170648489890",
		"Girokonto DE12500105170648489890":              "DE12500105170648489890",
		"Konto DE12 5001 0517 0648 4898 90 (Girokonto)": "DE12500105170648489890",
		"DE12 5001 0517 0648 4898 90 / Girokonto":       "DE12500105170648489890",
		"Girokonto DE12 5001 0517 0648 4898 91":         "",
		"Zeitraum 01.10.2024 - 31.10.2024":              "",
	} {
		if got := ibanIn(cell); got != want {
			t.Errorf("ibanIn(%q) = %q, want %q", cell, got, want)
		}
	}
}

// A long Sparkasse export whose first Windows-1252 umlaut comes after the
// 64 KB the encoding is told from: read as UTF-8, the umlaut stays one.
func TestLateWindows1252Umlaut(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`"Auftragskonto";"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";"Beguenstigter/Zahlungspflichtiger";"Betrag";"Waehrung";"Info"` + "\r\n")
	n := 0
	for b.Len() < 80<<10 {
		b.WriteString(`"DE89370400440532013000";"01.10.24";"01.10.24";"KARTENZAHLUNG";"Einkauf";"Baecker";"-1,00";"EUR";"Umsatz gebucht"` + "\r\n")
		n++
	}
	b.WriteString("\"DE89370400440532013000\";\"02.10.24\";\"02.10.24\";\"GUTSCHRIFT\";\"R\xfcckzahlung\";\"M\xfcller & S\xf6hne\";\"5,00\";\"EUR\";\"Umsatz gebucht\"\r\n")
	r := &recorder{}
	if err := Parse(bytes.NewReader(b.Bytes()), r); err != nil {
		t.Fatal(err)
	}
	if len(r.entries) != n+1 {
		t.Fatalf("%d entries, want %d", len(r.entries), n+1)
	}
	last := r.entries[n]
	if last.CounterpartyName != "Müller & Söhne" || last.Reference != "Rückzahlung" {
		t.Errorf("name %q, reference %q", last.CounterpartyName, last.Reference)
	}
}

// A row without a date is still reported when bookings follow it: only
// rows before another section's header row are that section's title.
func TestUndatedRowBeforeBookings(t *testing.T) {
	in := "Buchungstag;Betrag;Verwendungszweck\n01.10.2024;1,00;a\nkein Datum;2,00;b\n02.10.2024;3,00;c\nwieder keins;4,00;d\n"
	r := &recorder{}
	if err := Parse(strings.NewReader(in), r); err != nil {
		t.Fatal(err)
	}
	if len(r.entries) != 2 || len(r.rowErrs) != 2 || r.rowErrs[0].Row != 2 || r.rowErrs[1].Row != 4 {
		t.Errorf("%d entries, row errors %+v", len(r.entries), r.rowErrs)
	}
	if got := strings.Join(r.calls, " "); got != "statement entry entry end" {
		t.Errorf("calls %s", got)
	}
}
