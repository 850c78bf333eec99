package camt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// seen is the part of an entry the real-file tests check by hand.
type seen struct {
	BookingDate      string
	Amount           decimal.Decimal
	CounterpartyName string
	CounterpartyIBAN string
	CounterpartyBIC  string
	Reference        string
	EndToEndID       string
	MandateID        string
	CreditorID       string
	BankReference    string
	BatchRef         string
	Charges          decimal.Decimal
	Reversal         bool
}

func seenOf(e bank.Entry) seen {
	return seen{
		BookingDate: e.BookingDate, Amount: e.Amount,
		CounterpartyName: e.CounterpartyName, CounterpartyIBAN: e.CounterpartyIBAN, CounterpartyBIC: e.CounterpartyBIC,
		Reference: e.Reference, EndToEndID: e.EndToEndID, MandateID: e.MandateID, CreditorID: e.CreditorID,
		BankReference: e.BankReference, BatchRef: e.BatchRef, Charges: e.Charges, Reversal: e.Reversal,
	}
}

// TestRealFiles: files written for these tests in the layouts banks
// really send (see testdata/README.md), never seen by the parser's
// author. Counts, sums and balances are worked out by hand from the
// files (comments), not taken from the parser.
func TestRealFiles(t *testing.T) {
	zero := decimal.Zero
	tests := []struct {
		file  string
		stmts []summary
		count int
		sum   string
		// checks: entry index within the whole file -> what it must say.
		checks map[int]seen
	}{{
		// Sparkasse camt.053.001.02: PRCD 5000.00, CLBD 4509.11.
		// +1190.00, batch -1740.49 = 450.00 + 1200.50 + 89.99 (three
		// entries), -59.90 direct debit, -123.00 return (RvslInd, with 3.00
		// charges inside), -7.50 fees, a closing of 0.00 (no entry), +250.00
		// (Strd reference):
		// 1190 - 1740.49 - 59.90 - 123 - 7.50 + 250 = -490.89; 5000 - 490.89 = 4509.11.
		file: "camt053.v2.sparkasse-batch-return.xml",
		stmts: []summary{{Kind: "camt.053", ID: "camt53_20240315_1234567890_00052", Number: "52",
			IBAN: "DE67500502011234567890", Currency: "EUR",
			Opening: bal("2024-03-14", "5000.00"), Closing: bal("2024-03-15", "4509.11"),
			Entries: 8, Sum: dec("-490.89")}},
		count: 8, sum: "-490.89",
		checks: map[int]seen{
			0: {BookingDate: "2024-03-15", Amount: dec("1190.00"), CounterpartyName: "Müller Bau GmbH",
				CounterpartyIBAN: "DE89370400440532013000", CounterpartyBIC: "COBADEFFXXX",
				Reference: "Rechnung 2024-0815 vom 01.03.2024 Kunde 4711", EndToEndID: "RE-2024-0815",
				BankReference: "2024031500001", Charges: zero},
			1: {BookingDate: "2024-03-15", Amount: dec("-450.00"), CounterpartyName: "Papier Schulz e.K.",
				CounterpartyIBAN: "DE75120300001020304050", CounterpartyBIC: "BYLADEM1001", Reference: "RG 88001",
				EndToEndID: "LIEF-88001", BatchRef: "2024031500002", Charges: zero},
			2: {BookingDate: "2024-03-15", Amount: dec("-1200.50"), CounterpartyName: "Spedition Kraus GmbH & Co. KG",
				CounterpartyIBAN: "DE34200505501234567890", Reference: "RG 88002 Fracht Februar",
				EndToEndID: "LIEF-88002", BatchRef: "2024031500002", Charges: zero},
			3: {BookingDate: "2024-03-15", Amount: dec("-89.99"), CounterpartyName: "Büromarkt Weiß",
				CounterpartyIBAN: "DE96100205000001234500", Reference: "Kd 5531 Toner",
				EndToEndID: "NOTPROVIDED", BatchRef: "2024031500002", Charges: zero},
			4: {BookingDate: "2024-03-15", Amount: dec("-59.90"), CounterpartyName: "Telekom Deutschland GmbH",
				CounterpartyIBAN: "DE37430609674000123400", Reference: "Kundenkonto 1234567 Rechnung vom 05.03.2024 Mobilfunk Maerz",
				EndToEndID: "TK-2024-03-0099", MandateID: "TK-MANDAT-7788", CreditorID: "DE62ZZZ00000064125",
				BankReference: "2024031500003", Charges: zero},
			// A return of a direct debit we collected: the customer (the
			// debtor of the original collection) is the counterparty.
			5: {BookingDate: "2024-03-15", Amount: dec("-123.00"), CounterpartyName: "Erika Mustermann",
				CounterpartyIBAN: "DE02440100460123456789", Reference: "Beitrag Februar Kd 0042",
				EndToEndID: "LS-2024-02-0042", MandateID: "KD-0042", BankReference: "2024031500004",
				Charges: dec("3.00"), Reversal: true},
			6: {BookingDate: "2024-03-15", Amount: dec("-7.50"), BankReference: "2024031500005", Charges: zero},
			7: {BookingDate: "2024-03-15", Amount: dec("250.00"), CounterpartyName: "Jan de Vries",
				CounterpartyIBAN: "NL91ABNA0417164300", CounterpartyBIC: "ABNANL2A", Reference: "RF18539007547034",
				EndToEndID: "NOTPROVIDED", BankReference: "2024031500006", Charges: zero},
		},
	}, {
		// camt.052.001.08 intraday: BOOK +300.00, PDNG -45.00 (Sts/Cd),
		// INFO +12.00, BOOK -19.99, PDNG -1500.00 (Sts/Prtry). Only the
		// booked ones count: 300 - 19.99 = 280.01. ITBD/ITAV are no
		// opening or closing.
		file: "camt052.v8.intraday-pending.xml",
		stmts: []summary{{Kind: "camt.052", ID: "C52241126115902000001-0001", Number: "331",
			IBAN: "DE61760501010012345678", Currency: "EUR", Entries: 2, Sum: dec("280.01")}},
		count: 2, sum: "280.01",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-26", Amount: dec("300.00"), CounterpartyName: "Bauherrengemeinschaft Am Hang GbR",
				CounterpartyIBAN: "DE72600501017406501175", CounterpartyBIC: "SOLADEST600", Reference: "Abschlag 3 Statik Haus B",
				EndToEndID: "ABSCHLAG-11-2024", BankReference: "2024112607350001", Charges: zero},
			1: {BookingDate: "2024-11-26", Amount: dec("-19.99"), CounterpartyName: "CAD Software Vertrieb GmbH",
				CounterpartyIBAN: "DE13250501800000900512", Reference: "Lizenz November 2024",
				EndToEndID: "2024-11-CAD-77", MandateID: "CAD-LIZ-0015", CreditorID: "DE11ZZZ00000123456",
				BankReference: "2024112609120002", Charges: zero},
		},
	}, {
		// camt.054.001.04, GLS: payroll batch -6236.79 = 2345.67 + 1890.12
		// + 2001.00 (three entries); direct debit collection +124.30 = 29.90
		// + 29.90 + 49.00 + 15.50 (four entries); a foreign batch of 600 +
		// 400 booked as 1005.00 with 5.00 charges, which the details do not
		// explain, so one entry of -1005.00.
		// -6236.79 + 124.30 - 1005.00 = -7117.49.
		file: "camt054.v4.gls-batches.xml",
		stmts: []summary{{Kind: "camt.054", ID: "054-20241129-0001", Number: "7781",
			IBAN: "DE37430609674000123400", Currency: "EUR", Entries: 8, Sum: dec("-7117.49")}},
		count: 8, sum: "-7117.49",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-29", Amount: dec("-2345.67"), CounterpartyName: "Anna Becker",
				CounterpartyIBAN: "DE44500105175407324931", Reference: "Lohn/Gehalt 11/2024 PersNr 001",
				EndToEndID: "LOHN-2024-11-001", BatchRef: "GLS2411290000417", Charges: zero},
			2: {BookingDate: "2024-11-29", Amount: dec("-2001.00"), CounterpartyName: "Selin Kaya",
				CounterpartyIBAN: "DE02120300000000202051", Reference: "Lohn/Gehalt 11/2024 PersNr 003",
				EndToEndID: "LOHN-2024-11-003", BatchRef: "GLS2411290000417", Charges: zero},
			5: {BookingDate: "2024-11-29", Amount: dec("49.00"), CounterpartyName: "Familie Öztürk",
				CounterpartyIBAN: "DE96100205000001234500", Reference: "Beitrag 12/2024 Mitgl 1003 Familie",
				EndToEndID: "SEPA-DD-88-0003", BatchRef: "GLS2411290000418", Charges: zero},
			7: {BookingDate: "2024-11-29", Amount: dec("-1005.00"), BankReference: "GLS2411290000419", Charges: dec("5.00")},
		},
	}, {
		// camt.053.001.04 of the same day and account: PRCD 20000.00,
		// the three batches as booked (Btch without TxDtls), +1500.00 ->
		// 14382.51 = CLBD. A booking keeps the batch's AcctSvcrRef as its
		// bank reference, under which the import finds its parts.
		file: "camt053.v4.gls-batch-totals.xml",
		stmts: []summary{{Kind: "camt.053", ID: "053-20241129-0233", Number: "233", IBAN: "DE37430609674000123400", Currency: "EUR",
			Opening: bal("2024-11-28", "20000.00"), Closing: bal("2024-11-29", "14382.51"), Entries: 4, Sum: dec("-5617.49")}},
		count: 4, sum: "-5617.49",
		checks: map[int]seen{
			0: {BookingDate: "2024-11-29", Amount: dec("-6236.79"),
				BankReference: "GLS2411290000417", Charges: zero},
			3: {BookingDate: "2024-11-29", Amount: dec("1500.00"), CounterpartyName: "Hofladen Sonnenberg GbR",
				CounterpartyIBAN: "DE89370400440532013000", Reference: "Rechnung RE-2024-0815 vom 15.11.2024",
				EndToEndID: "RE-2024-0815", BankReference: "GLS2411290000420", Charges: zero},
		},
	}, {
		// camt.053.001.13, two days. 30.12.: OPBD 10000.00, +2500.00,
		// -42.37 -> 12457.63 = CLBD. 31.12.: OPBD 12457.63, -915.40 (a USD
		// payment of 900.40 EUR plus 15.00 charges), +0.52 interest,
		// +42.37 card chargeback (RvslInd) -> 11585.12 = CLBD.
		// File: 2457.63 - 872.51 = 1585.12.
		file: "camt053.v13.two-days-fx-chargeback.xml",
		stmts: []summary{
			{Kind: "camt.053", ID: "HASPDEHHXXX-053-20241230", Number: "250", IBAN: "DE34200505501234567890", Currency: "EUR",
				Opening: bal("2024-12-30", "10000.00"), Closing: bal("2024-12-30", "12457.63"), Entries: 2, Sum: dec("2457.63")},
			{Kind: "camt.053", ID: "HASPDEHHXXX-053-20241231", Number: "251", IBAN: "DE34200505501234567890", Currency: "EUR",
				Opening: bal("2024-12-31", "12457.63"), Closing: bal("2024-12-31", "11585.12"), Entries: 3, Sum: dec("-872.51")},
		},
		count: 5, sum: "1585.12",
		checks: map[int]seen{
			0: {BookingDate: "2024-12-30", Amount: dec("2500.00"), CounterpartyName: "Nordlicht Immobilien GmbH",
				CounterpartyIBAN: "DE11300107000987654321", CounterpartyBIC: "BHFBDEFF500",
				Reference: "Anzahlung Entwurf Quartier Ost gem. Vertrag vom 02.12.2024", EndToEndID: "ANZ-2024-12",
				BankReference: "HASP2412300000001", Charges: zero},
			2: {BookingDate: "2024-12-31", Amount: dec("-915.40"), CounterpartyName: "Render Farm Inc.",
				CounterpartyBIC: "CHASUS33XXX", Reference: "Invoice 118 rendering Dec 2024", EndToEndID: "PO-US-2024-118",
				BankReference: "HASP2412310000001", Charges: dec("15.00")},
			// The chargeback names the shop as creditor of the payment it undoes.
			4: {BookingDate: "2024-12-31", Amount: dec("42.37"), CounterpartyName: "Online Shop GmbH",
				Reference: "Storno Kartenzahlung Bestellung 556677", BankReference: "HASP2412310000003",
				Charges: zero, Reversal: true},
		},
	}, {
		// camt.053.001.06 with an ns2: prefix, ISO-8859-1, IBANs written
		// with spaces. OPBD 0.00; +75.00 batch of 50.00 + 25.00 (amounts
		// only in AmtDtls/TxAmt), -1234.56, +.01 (no ValDt, BookgDt/DtTm):
		// 75 - 1234.56 + 0.01 = -1159.55 = CLBD 1159.55 DBIT.
		file: "camt053.v6.prefixed-latin1.xml",
		stmts: []summary{{Kind: "camt.053", ID: "20240705000193", Number: "193",
			IBAN: "DE11300107000987654321", Currency: "EUR",
			Opening: bal("2024-07-04", "0.00"), Closing: bal("2024-07-05", "-1159.55"), Entries: 4, Sum: dec("-1159.55")}},
		count: 4, sum: "-1159.55",
		checks: map[int]seen{
			0: {BookingDate: "2024-07-05", Amount: dec("50.00"), CounterpartyName: "Jürgen Groß",
				CounterpartyIBAN: "DE88370100500555667788", Reference: "Spende Jugendarbeit", EndToEndID: "SPENDE-0705-1",
				BankReference: "DB0705A0001-1", BatchRef: "DB0705A0001", Charges: zero},
			1: {BookingDate: "2024-07-05", Amount: dec("25.00"), CounterpartyName: "Hélène Dubois",
				CounterpartyIBAN: "FR1420041010050500013M02606", Reference: "Don / Spende", EndToEndID: "NOTPROVIDED",
				BankReference: "DB0705A0001-2", BatchRef: "DB0705A0001", Charges: zero},
			2: {BookingDate: "2024-07-05", Amount: dec("-1234.56"), CounterpartyName: "Bäckerei Müller & Söhne",
				CounterpartyIBAN: "DE02120300000000202051", CounterpartyBIC: "BYLADEM1001",
				Reference: "Rechnung Nr. 4711 Sommerfest Kuchen und Brötchen", EndToEndID: "RG 4711/2024",
				BankReference: "DB0705A0002", Charges: zero},
			3: {BookingDate: "2024-07-05", Amount: dec("0.01"), CounterpartyName: "PayPal Europe S.a.r.l. et Cie S.C.A",
				CounterpartyIBAN: "LU89751000135104200E", Reference: "PP VERIFIZIERUNG 4K7QZ",
				BankReference: "DB0705A0003", Charges: zero},
		},
	}, {
		// Commerzbank camt.053.001.04 with a byte order mark and CRLF: a
		// payment of two invoices named in structured remittance
		// (RfrdDocInf/Nb, AddtlRmtInf) as an ERP sends it, and a batch
		// whose two details sit in two NtryDtls. 1000.00 + 3570.00 -
		// (800.00 + 200.00) = 3570.00 = CLBD.
		file: "camt053.v4.commerzbank-strd-invoices.xml",
		stmts: []summary{{Kind: "camt.053", ID: "COBA2024062800177", Number: "177",
			IBAN: "DE89370400440532013000", Currency: "EUR",
			Opening: bal("2024-06-27", "1000.00"), Closing: bal("2024-06-28", "3570.00"), Entries: 3, Sum: dec("2570.00")}},
		count: 3, sum: "2570.00",
		checks: map[int]seen{
			0: {BookingDate: "2024-06-28", Amount: dec("3570.00"), CounterpartyName: "Grosshandel Nord AG",
				CounterpartyIBAN: "DE02120300000000202051", Reference: "RE-2024-0451 RE-2024-0452 Zahlungsavis 5100004711",
				EndToEndID: "5100004711", BankReference: "COBA0628000001", Charges: zero},
			2: {BookingDate: "2024-06-28", Amount: dec("-200.00"), CounterpartyName: "Schrauben Maier KG",
				CounterpartyIBAN: "DE34200505501234567890", Reference: "Rg 77812", EndToEndID: "ZAHLLAUF-0628-2",
				BatchRef: "COBA0628000002", Charges: zero},
		},
	}, {
		// HypoVereinsbank camt.054.001.10: two notifications of instant
		// credits in one file, booking date as DtTm. 49.90 and 1249.00.
		file: "camt054.v10.instant-credits.xml",
		stmts: []summary{
			{Kind: "camt.054", ID: "INST-01", IBAN: "DE46700202700015123456", Currency: "EUR", Entries: 1, Sum: dec("49.90")},
			{Kind: "camt.054", ID: "INST-02", IBAN: "DE46700202700015123456", Currency: "EUR", Entries: 1, Sum: dec("1249.00")},
		},
		count: 2, sum: "1298.90",
		checks: map[int]seen{
			1: {BookingDate: "2025-01-14", Amount: dec("1249.00"), CounterpartyName: "Atelier Vogel UG (haftungsbeschränkt)",
				CounterpartyIBAN: "DE13250501800000900512", CounterpartyBIC: "SPKHDE2HXXX",
				Reference: "RE-2025-0007 Logo und Briefpapier", EndToEndID: "NOTPROVIDED",
				BankReference: "HVB2501140000133", Charges: zero},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := parseFile(t, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.stmts, summarise(t, r), decimalEqual); d != "" {
				t.Errorf("statements (-want +got)\n%s", d)
			}
			var all []bank.Entry
			for _, s := range r.stmts {
				all = append(all, s.entries...)
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
				if d := cmp.Diff(want, seenOf(all[i]), decimalEqual); d != "" {
					t.Errorf("entry %d (-want +got)\n%s", i, d)
				}
			}
		})
	}
}

// A document declared ISO-8859-1 whose text is UTF-8 (as export tools
// write it) keeps its umlauts; one that is ISO-8859-1 keeps them too.
func TestDeclaredLatin1(t *testing.T) {
	body := `<Stmt><Id>S</Id><Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>` +
		`<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>Müller Söhne</Nm></Dbtr></RltdPties></TxDtls></NtryDtls></Ntry></Stmt>`
	utf := strings.Replace(doc("camt.053.001.02", "BkToCstmrStmt", body), `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1)
	if !strings.Contains(utf, `encoding="ISO-8859-1"`) {
		t.Fatal("no declaration to replace")
	}
	latin := strings.NewReplacer("ü", "\xfc", "ö", "\xf6").Replace(utf)
	for name, in := range map[string]string{"UTF-8 text": utf, "ISO-8859-1 text": latin} {
		r := &recorder{}
		if err := Parse(strings.NewReader(in), r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := r.stmts[0].entries[0].CounterpartyName; got != "Müller Söhne" {
			t.Errorf("%s: name %q", name, got)
		}
	}
}
