package mt940

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// seen is the part of an entry the real-file tests check by hand.
type seen struct {
	BookingDate, ValueDate string
	Amount                 decimal.Decimal
	CounterpartyName       string
	CounterpartyIBAN       string
	CounterpartyBIC        string
	Reference              string
	EndToEndID             string
	MandateID              string
	CreditorID             string
	BankReference          string
	BookingText            string
	GVC                    string
	Reversal               bool
}

func seenOf(e bank.Entry) seen {
	return seen{
		BookingDate: e.BookingDate, ValueDate: e.ValueDate, Amount: e.Amount,
		CounterpartyName: e.CounterpartyName, CounterpartyIBAN: e.CounterpartyIBAN, CounterpartyBIC: e.CounterpartyBIC,
		Reference: e.Reference, EndToEndID: e.EndToEndID, MandateID: e.MandateID, CreditorID: e.CreditorID,
		BankReference: e.BankReference, BookingText: e.BookingText, GVC: e.GVC, Reversal: e.Reversal,
	}
}

type stmtSeen struct {
	ID, Number, IBAN, Currency string
	Opening, Closing           *bank.Balance
	Entries                    int
	Sum                        decimal.Decimal
}

// TestRealFiles: files written for these tests in the layouts German
// banks really send (see testdata/README.md). Counts, sums and balances
// are worked out by hand from the files (comments), not taken from the
// parser.
func TestRealFiles(t *testing.T) {
	tests := []struct {
		file   string
		stmts  []stmtSeen
		count  int
		sum    string
		checks map[int]seen // entry index within the whole file
	}{{
		// Sparkasse, SWIFT blocks {1:}{2:}{4: ... -}, CRLF, :86: cut at 65
		// characters in the middle of subfields. Statement 1: 5000.00
		// - 59.90 + 1190.00 = 6130.10; the credit's value date 31.12.2024
		// is booked on 02.01. (next year). Statement 2: 6130.10 - 12.50 +
		// 0.00 (a closing without interest: no entry) + 59.90 (RD: a
		// returned debit comes back) = 6177.50.
		file: "sparkasse-swift-blocks-crlf.sta",
		stmts: []stmtSeen{
			{ID: "STARTUMS", Number: "00001/001", IBAN: "DE67500502011234567890", Currency: "EUR",
				Opening: bal("2024-12-30", "5000.00"), Closing: bal("2024-12-31", "6130.10"), Entries: 2, Sum: dec("1130.10")},
			{ID: "STARTUMS", Number: "00002/001", IBAN: "DE67500502011234567890", Currency: "EUR",
				Opening: bal("2024-12-31", "6130.10"), Closing: bal("2025-01-03", "6177.50"), Entries: 2, Sum: dec("47.40")},
		},
		count: 4, sum: "1177.50",
		checks: map[int]seen{
			0: {BookingDate: "2024-12-30", ValueDate: "2024-12-30", Amount: dec("-59.90"),
				CounterpartyName: "Stadtwerke Musterstadt Energie GmbH", CounterpartyIBAN: "DE45120300001234567890",
				CounterpartyBIC: "BYLADEM1001",
				Reference:       "EREF+4711-2412-001 KREF+KD-2024-12 MREF+M-0815 CRED+DE98ZZZ09999999999 SVWZ+Strom Abschlag Dezember 2024 Vertragskonto 123456",
				EndToEndID:      "4711-2412-001", MandateID: "M-0815", CreditorID: "DE98ZZZ09999999999",
				BankReference: "POS 2412300001", BookingText: "FOLGELASTSCHRIFT", GVC: "105"},
			1: {BookingDate: "2025-01-02", ValueDate: "2024-12-31", Amount: dec("1190.00"),
				CounterpartyName: "Mueller Bau GmbH", CounterpartyIBAN: "DE89370400440532013000", CounterpartyBIC: "COBADEFFXXX",
				Reference:  "EREF+RE-2024-0815 SVWZ+Rechnung 2024-0815 vom 15.12.2024, vielen Dank fuer den Auftrag",
				EndToEndID: "RE-2024-0815", BookingText: "GUTSCHR. UEBERWEISUNG", GVC: "166"},
			2: {BookingDate: "2025-01-02", ValueDate: "2025-01-02", Amount: dec("-12.50"),
				CounterpartyName: "Sparkasse Musterstadt", Reference: "Entgeltabrechnung siehe Anlage",
				BookingText: "ENTGELTABSCHLUSS", GVC: "805"},
			3: {BookingDate: "2025-01-03", ValueDate: "2025-01-03", Amount: dec("59.90"),
				CounterpartyName: "Stadtwerke Musterstadt Energie GmbH", CounterpartyIBAN: "DE45120300001234567890",
				CounterpartyBIC: "BYLADEM1001",
				Reference:       "EREF+4711-2412-001 MREF+M-0815 CRED+DE98ZZZ09999999999 SVWZ+Widerspruch durch Zahlungspflichtigen",
				EndToEndID:      "4711-2412-001", MandateID: "M-0815", CreditorID: "DE98ZZZ09999999999",
				BankReference: "POS 2501030007", BookingText: "RUECKLASTSCHRIFT", GVC: "109", Reversal: true},
		},
	}, {
		// Postbank, one statement over two pages: :28C:12/1 closes with
		// :62M:, 12/2 opens with :60M:. Funds code R after C and D. Page 1:
		// 1000.00 - 49.99 + 2500.00 = 3450.01. Page 2: RC (a credit
		// reversed: money out) 2500.00 and 3.50 fees: 3450.01 - 2503.50 =
		// 946.51. File: -53.49.
		file: "postbank-intermediate-reversal.sta",
		stmts: []stmtSeen{
			{ID: "MT940-2411150001", Number: "12/1", IBAN: "DE02440100460123456789", Currency: "EUR",
				Opening: bal("2024-11-14", "1000.00"), Closing: bal("2024-11-15", "3450.01"), Entries: 2, Sum: dec("2450.01")},
			{ID: "MT940-2411150001", Number: "12/2", IBAN: "DE02440100460123456789", Currency: "EUR",
				Opening: bal("2024-11-15", "3450.01"), Closing: bal("2024-11-18", "946.51"), Entries: 2, Sum: dec("-2503.50")},
		},
		count: 4, sum: "-53.49",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-15", ValueDate: "2024-11-15", Amount: dec("-49.99"),
				CounterpartyName: "Netflix International B.V.", CounterpartyIBAN: "NL91ABNA0417164300", CounterpartyBIC: "INGBNL2AXXX",
				Reference:  "EREF+ABO-112024 MREF+NFX-7788 CRED+NL12ZZZ123456780000 SVWZ+Netflix Abo November",
				EndToEndID: "ABO-112024", MandateID: "NFX-7788", CreditorID: "NL12ZZZ123456780000",
				BankReference: "PB2411150001", BookingText: "Lastschrift", GVC: "105"},
			2: {BookingDate: "2024-11-18", ValueDate: "2024-11-18", Amount: dec("-2500.00"),
				CounterpartyName: "Arbeitgeber AG", Reference: "SVWZ+Storno Gehalt 11/2024 Falsche Kontoverbindung",
				BankReference: "PB2411180001", BookingText: "Rueckueberweisung", GVC: "159", Reversal: true},
		},
	}, {
		// HypoVereinsbank: :86: free text without ?-subfields, BIC/IBAN in
		// :25:, an overdrawn opening balance. -120.00 + 1500.00 - 85.00 -
		// 1200.00 = 95.00. A statement-level :86: after :62F:/:64: belongs
		// to no entry.
		file: "hypovereinsbank-unstructured-86.sta",
		stmts: []stmtSeen{{ID: "940S241003", Number: "00196/001", IBAN: "DE46700202700015123456", Currency: "EUR",
			Opening: bal("2024-10-01", "-120.00"), Closing: bal("2024-10-03", "95.00"), Entries: 3, Sum: dec("215.00")}},
		count: 3, sum: "215.00",
		checks: map[int]seen{
			0: {BookingDate: "2024-10-01", ValueDate: "2024-10-01", Amount: dec("1500.00"),
				Reference:     "SEPA-GUTSCHRIFT Max Mustermann DE75120300001020304050 Rechnung 2024-117 EREF: RE2024117",
				BankReference: "HVB1001A"},
			1: {BookingDate: "2024-10-02", ValueDate: "2024-10-02", Amount: dec("-85.00"),
				Reference: "KARTENZAHLUNG TANKSTELLE MUENCHEN 01.10 18:22 KARTE 1234", BankReference: "HVB1002X", GVC: "999"},
			2: {BookingDate: "2024-10-03", ValueDate: "2024-10-03", Amount: dec("-1200"),
				Reference:     "DAUERAUFTRAG Miete Oktober Hausverwaltung Meier IBAN DE89370400440532013000 BIC COBADEFFXXX",
				BankReference: "HVB1003B"},
		},
	}, {
		// Volksbank: :21:, :13D:, BLZ/account with currency in :25:, type
		// codes N051/N020/N106, a :61: with a supplementary details line,
		// SVWZ over ?20-?29 and ?60-?61, BLZ and account number in ?30/?31,
		// :NS:. 2000.00 + 14875.00 - 4321.09 - 25.00 = 12528.91.
		file: "volksbank-long-svwz-blz.sta",
		stmts: []stmtSeen{{ID: "STARTUMSE", Number: "00011/001", IBAN: "DE61760501010012345678", Currency: "EUR",
			Opening: bal("2024-11-28", "2000.00"), Closing: bal("2024-11-29", "12528.91"), Entries: 3, Sum: dec("10528.91")}},
		count: 3, sum: "10528.91",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-29", ValueDate: "2024-11-29", Amount: dec("14875.00"),
				CounterpartyName: "Kunde Gross und Partner", CounterpartyIBAN: "DE72600501017406501175", CounterpartyBIC: "GENODED1KDB",
				Reference: "SVWZ+Sammelrechnung Q3/2024: RE-2024-0701, RE-2024-0702, RE-2024-0715, RE-2024-0731, RE-2024-0801, " +
					"RE-2024-0815, RE-2024-0830, RE-2024-0902, RE-2024-0916, RE-2024-0930, RE-2024-1001, RE-2024-1002, RE-2024-1003 " +
					"abzgl. Gutschrift GS-2024-0012 und GS-2024-0013 Skonto 2% gemaess Rahmenvereinbarung vom 01.01.2024",
				BookingText: "SEPA-GUTSCHRIFT", GVC: "166"},
			1: {BookingDate: "2024-11-29", ValueDate: "2024-11-29", Amount: dec("-4321.09"),
				CounterpartyName: "Lieferant Nord GmbH", CounterpartyIBAN: "DE89370400440532013000",
				Reference: "Lieferantenrechnung 7781", BookingText: "SEPA-UEBERWEISUNG", GVC: "116"},
			2: {BookingDate: "2024-11-29", ValueDate: "2024-11-29", Amount: dec("-25.00"),
				CounterpartyName: "BAUMARKT FIL 17", Reference: "Baumarkt Filiale 17 Karte 1234 29.11. 10:41",
				BankReference: "7706", BookingText: "KARTENZAHLUNG", GVC: "106"},
		},
	}, {
		// Dutch banks' :86: (Triodos NL, ABN AMRO, ING NL): /TAG/ keywords
		// instead of ?-subfields, cut at 65 characters, a "/" inside the
		// remittance text, Rabobank's "/REMI/USTD//". 1000.00 + 250.00 -
		// 45.50 = 1204.50.
		file: "triodos-nl-slash-tags.sta",
		stmts: []stmtSeen{{ID: "940S241002", Number: "00275/1", IBAN: "NL91ABNA0417164300", Currency: "EUR",
			Opening: bal("2024-10-01", "1000.00"), Closing: bal("2024-10-02", "1204.50"), Entries: 2, Sum: dec("204.50")}},
		count: 2, sum: "204.50",
		checks: map[int]seen{
			0: {BookingDate: "2024-10-01", ValueDate: "2024-10-01", Amount: dec("250.00"),
				CounterpartyName: "Muller Bau GmbH", CounterpartyIBAN: "DE89370400440532013000", CounterpartyBIC: "COBADEFFXXX",
				Reference: "Factuur 2024-0815 / project Delft", EndToEndID: "NOTPROVIDED", BookingText: "SEPA OVERBOEKING"},
			1: {BookingDate: "2024-10-02", ValueDate: "2024-10-02", Amount: dec("-45.50"),
				CounterpartyName: "KPN B.V.", CounterpartyIBAN: "NL20INGB0001234567", CounterpartyBIC: "INGBNL2A",
				Reference: "Factuur 99887766 september", EndToEndID: "KPN-2024-09-77", MandateID: "KPN-MANDAAT-77",
				CreditorID: "NL12ZZZ123456780000", BookingText: "SEPA Incasso algemeen doorlopend"},
		},
	}, {
		// Deutsche Bank: every ?2x and ?32 subfield padded to 27 characters
		// with blanks. 500.00 - 99.00 = 401.00.
		file: "deutschebank-padded-subfields.sta",
		stmts: []stmtSeen{{ID: "DEUTDEFF", Number: "00042/001", IBAN: "DE43100700000123456700", Currency: "EUR",
			Opening: bal("2024-11-05", "500.00"), Closing: bal("2024-11-05", "401.00"), Entries: 1, Sum: dec("-99.00")}},
		count: 1, sum: "-99.00",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-05", ValueDate: "2024-11-05", Amount: dec("-99.00"),
				CounterpartyName: "Versicherung AG", CounterpartyIBAN: "DE02100500000054540402", CounterpartyBIC: "DEUTDEFFXXX",
				Reference:  "EREF+VERS-2024-11 MREF+HV-0815 CRED+DE98ZZZ09999999999 SVWZ+Hausrat 11/2024",
				EndToEndID: "VERS-2024-11", MandateID: "HV-0815", CreditorID: "DE98ZZZ09999999999",
				BankReference: "DB2411050001", BookingText: "SEPA-LASTSCHRIFT", GVC: "105"},
		},
	}, {
		// ABN AMRO: a plain header (BIC, "940", BIC) before the first field,
		// Dutch /TAG/ :86:. 3236.28 - 9.00 + 120.50 = 3347.78.
		file: "abnamro-plain-header.sta",
		stmts: []stmtSeen{{ID: "ABN AMRO BANK NV", Number: "19321/1", IBAN: "NL91ABNA0417164300", Currency: "EUR",
			Opening: bal("2024-11-05", "3236.28"), Closing: bal("2024-11-05", "3347.78"), Entries: 2, Sum: dec("111.50")}},
		count: 2, sum: "111.50",
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			stmts := parseFile(t, tt.file)
			var got []stmtSeen
			var all []bank.Entry
			for _, s := range stmts {
				sum := decimal.Zero
				for _, e := range s.Entries {
					sum = sum.Add(e.Amount)
				}
				if s.End.Entries != len(s.Entries) || !s.End.Sum.Equal(sum) {
					t.Errorf("statement %q: End says %d summing %s, handed %d summing %s", s.Stmt.ID, s.End.Entries, s.End.Sum, len(s.Entries), sum)
				}
				got = append(got, stmtSeen{ID: s.Stmt.ID, Number: s.Stmt.Number, IBAN: s.Stmt.IBAN, Currency: s.Stmt.Currency,
					Opening: s.Stmt.Opening, Closing: s.End.Closing, Entries: len(s.Entries), Sum: sum})
				all = append(all, s.Entries...)
			}
			if d := cmp.Diff(tt.stmts, got, cmpDecimal); d != "" {
				t.Errorf("statements (-want +got)\n%s", d)
			}
			sum := decimal.Zero
			for _, e := range all {
				sum = sum.Add(e.Amount)
			}
			if len(all) != tt.count || !sum.Equal(dec(tt.sum)) {
				t.Errorf("%d entries summing %s, want %d summing %s", len(all), sum, tt.count, tt.sum)
			}
			for i, want := range tt.checks {
				if i >= len(all) {
					t.Errorf("entry %d missing", i)
					continue
				}
				if d := cmp.Diff(want, seenOf(all[i]), cmpDecimal); d != "" {
					t.Errorf("entry %d (-want +got)\n%s", i, d)
				}
			}
		})
	}
}
