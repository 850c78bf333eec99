package mt940

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/shopspring/decimal"
)

// recorder is a bank.Sink that keeps what it is handed.
type recorder struct {
	stmts []parsed
}

type parsed struct {
	Stmt    bank.Statement
	Entries []bank.Entry
	End     bank.StatementEnd
	ended   bool
}

func (r *recorder) Statement(s bank.Statement) error {
	if n := len(r.stmts); n > 0 && !r.stmts[n-1].ended {
		return errors.New("Statement before the previous End")
	}
	r.stmts = append(r.stmts, parsed{Stmt: s})
	return nil
}

func (r *recorder) Entry(e bank.Entry) error {
	n := len(r.stmts)
	if n == 0 || r.stmts[n-1].ended {
		return errors.New("Entry outside a statement")
	}
	r.stmts[n-1].Entries = append(r.stmts[n-1].Entries, e)
	return nil
}

func (r *recorder) End(e bank.StatementEnd) error {
	n := len(r.stmts)
	if n == 0 || r.stmts[n-1].ended {
		return errors.New("End outside a statement")
	}
	r.stmts[n-1].End, r.stmts[n-1].ended = e, true
	return nil
}

var cmpDecimal = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func bal(date, amount string) *bank.Balance { return &bank.Balance{Date: date, Amount: dec(amount)} }

func parseFile(t testing.TB, name string) []parsed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	if err := Parse(bytes.NewReader(b), &rec); err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return rec.stmts
}

// stmtWant is what one statement of a file must yield. The figures are
// read off the files by hand:
//
//   - sparkassen.sta (wolph/mt940 test data): one :61: "1811261126CR" +
//     "30,00N062NONREF": C with funds code R, 30.00 in, value and entry
//     date 2018-11-26; no :20:, :25:, :60:, :62: (a snippet), so no IBAN,
//     currency or balances. The :86: tag is wrapped as ":" / "86:".
//   - gv_codes.sta (wolph/mt940): :25: 12345678/1020304050 is DE20...
//     (98 - (1234567810203040501314 00 mod 97) = 20, checked with Python's
//     int()); :60F: C 12345,12 on 2017-09-14; two debits 233,15 and 24,30:
//     sum -257.45; no :62F:, so no balance check.
//   - volksbank.sta (ours, CRLF): opening 1000,00; -150,00 (DR: D with
//     funds code R), +2500,00 (value 2023-12-30, entry 0102 -> 2024-01-02),
//     -49,99 (RC: a reversed credit); sum 2300.01; closing 3300,01 = 1000 +
//     2300.01. Second statement: 3300,01 - 100,00 (value 2024-01-01, entry
//     1231 -> 2023-12-31) = 3200,01.
//   - deutschebank.sta (ours, SWIFT blocks): opening D 1234,56; +5000,00
//     and +12,34 (RD: a reversed debit); sum 5012.34; -1234.56 + 5012.34 =
//     3777.78 = closing :62M:. Second message has no entries, 3777,78 both.
//   - commerzbank.sta (ours, Latin-1, CRLF): 200,00 - 89,90 + 1000, =
//     1110.10 = closing. Second statement: 1110,10 - 10,00 = 1100.10, but
//     its :62F: says 1090,10: the mismatch the import must name.
type stmtWant struct {
	stmt     bank.Statement
	entries  int
	sum      string
	closing  *bank.Balance
	mismatch bool
	// some entries by index, compared field by field
	some map[int]bank.Entry
}

func TestParseFiles(t *testing.T) {
	const (
		gvIBAN    = "DE20123456781020304050"
		volksIBAN = "DE06760905000001234567"
		dbIBAN    = "DE89370400440532013000"
		cbIBAN    = "DE82200400000001234567"
	)
	tests := []struct {
		file string
		want []stmtWant
	}{
		{"sparkassen.sta", []stmtWant{{
			stmt:    bank.Statement{Kind: "mt940"},
			entries: 1, sum: "30.00",
			some: map[int]bank.Entry{0: {
				BookingDate: "2018-11-26", ValueDate: "2018-11-26", Amount: dec("30.00"),
				Reference: "SVWZ+Test", BookingText: "GUTSCHR. UEBERWEISUNG", GVC: "166",
			}},
		}}},
		{"gv_codes.sta", []stmtWant{{
			stmt: bank.Statement{ID: "STARTUMS", Number: "0", Kind: "mt940", IBAN: gvIBAN, Currency: "EUR",
				Opening: bal("2017-09-14", "12345.12")},
			entries: 2, sum: "-257.45",
			some: map[int]bank.Entry{
				0: {
					BookingDate: "2017-09-14", ValueDate: "2017-09-14", Amount: dec("-233.15"), Currency: "EUR",
					EndToEndID: "1234567890123 PAYPAL", MandateID: "12AB234CD6E7F", CreditorID: "AB12CDE0000000000000000034",
					CounterpartyName: "PayPal (Europe) S.a.r.l. et",
					// ?20-?26: the short ones end a line, the 27-character
					// ones were cut mid-word ("CRED+ A"+"B12...", "S"+"VWZ+").
					Reference: "Cie., S.C.A. SEPA-BASISLASTSCHRIFT EREF+ 1234567890123 PAYPAL MREF+ 12AB234CD6E7F " +
						"CRED+ AB12CDE0000000000000000034 SVWZ+ . SPOTIFY, Ihr Einkaufbei SPOTIFY",
					GVC: "835",
				},
				1: {BookingDate: "2019-10-25", ValueDate: "2019-10-25", Amount: dec("-24.30"), Currency: "EUR"},
			},
		}}},
		{"volksbank.sta", []stmtWant{
			{
				stmt: bank.Statement{ID: "STARTUMS", Number: "00001/001", Kind: "mt940", IBAN: volksIBAN, Currency: "EUR",
					Opening: bal("2023-12-29", "1000.00")},
				entries: 3, sum: "2300.01", closing: bal("2023-12-31", "3300.01"),
				some: map[int]bank.Entry{
					0: {
						BookingDate: "2023-12-29", ValueDate: "2023-12-29", Amount: dec("-150.00"), Currency: "EUR",
						EndToEndID: "RE-2023-117", MandateID: "M-4711", CreditorID: "DE98ZZZ09999999999",
						CounterpartyName: "Stadtwerke Musterstadt GmbH", CounterpartyIBAN: "DE02120300000000202051",
						CounterpartyBIC: "GENODEF1S06",
						Reference:       "EREF+RE-2023-117 MREF+M-4711 CRED+DE98ZZZ09999999999 SVWZ+Rechnung 117 Strom Dezember",
						BookingText:     "SEPA-BASISLASTSCHRIFT", GVC: "105",
					},
					1: {
						BookingDate: "2024-01-02", ValueDate: "2023-12-30", Amount: dec("2500.00"), Currency: "EUR",
						BankReference: "BANKREF-0001", EndToEndID: "ABC-1",
						CounterpartyName: "Mueller Immobilien", CounterpartyIBAN: "DE89370400440532013000",
						CounterpartyBIC: "BYLADEM1001", Reference: "EREF+ABC-1 SVWZ+Miete Januar 2024",
						BookingText: "GUTSCHRIFT", GVC: "166",
					},
					2: {
						BookingDate: "2023-12-31", ValueDate: "2023-12-31", Amount: dec("-49.99"), Currency: "EUR",
						CounterpartyName: "Shop X", Reference: "SVWZ+Rueckgabe", BookingText: "RETOURE", GVC: "159",
						Reversal: true,
					},
				},
			},
			{
				stmt: bank.Statement{ID: "STARTUMS", Number: "00002/001", Kind: "mt940", IBAN: volksIBAN, Currency: "EUR",
					Opening: bal("2023-12-31", "3300.01")},
				entries: 1, sum: "-100.00", closing: bal("2024-01-01", "3200.01"),
				some: map[int]bank.Entry{0: {
					BookingDate: "2023-12-31", ValueDate: "2024-01-01", Amount: dec("-100.00"), Currency: "EUR",
					Reference: "Barauszahlung Geldautomat Filiale Hauptbahnhof",
				}},
			},
		}},
		{"deutschebank.sta", []stmtWant{
			{
				stmt: bank.Statement{ID: "DEUTDEFF", Number: "00012/00001", Kind: "mt940", IBAN: dbIBAN, Currency: "EUR",
					Opening: bal("2024-06-30", "-1234.56")},
				entries: 2, sum: "5012.34", closing: bal("2024-07-01", "3777.78"),
				some: map[int]bank.Entry{
					0: {
						BookingDate: "2024-07-01", ValueDate: "2024-07-01", Amount: dec("5000.00"), Currency: "EUR",
						BankReference: "DB-REF-0001", EndToEndID: "INV-2024-0042",
						CounterpartyName: "ACME Handels GmbH", CounterpartyIBAN: "DE44500105175407324931",
						CounterpartyBIC: "DEUTDEFFXXX", Reference: "EREF+INV-2024-0042 SVWZ+Rechnung 2024-0042 vom 15.06.2024",
						BookingText: "UEBERWEISUNGSGUTSCHRIFT", GVC: "051",
					},
					// "/" as the subfield separator, named by the 4th character.
					1: {
						BookingDate: "2024-07-01", ValueDate: "2024-07-01", Amount: dec("12.34"), Currency: "EUR",
						BankReference: "DB-REF-0002", CounterpartyName: "Versicherung AG",
						Reference: "SVWZ+Storno Lastschrift", BookingText: "RUECKBUCHUNG", GVC: "109", Reversal: true,
					},
				},
			},
			{
				stmt: bank.Statement{ID: "DEUTDEFF", Number: "00012/00002", Kind: "mt940", IBAN: dbIBAN, Currency: "EUR",
					Opening: bal("2024-07-01", "3777.78")},
				entries: 0, sum: "0", closing: bal("2024-07-01", "3777.78"),
			},
		}},
		{"commerzbank.sta", []stmtWant{
			{
				stmt: bank.Statement{ID: "0", Number: "5/1", Kind: "mt940", IBAN: cbIBAN, Currency: "EUR",
					Opening: bal("2024-01-15", "200.00")},
				entries: 2, sum: "910.10", closing: bal("2024-01-17", "1110.10"),
				some: map[int]bank.Entry{
					// ?23 is split across two lines and cut mid-word into ?24;
					// ?31 is split across two lines. Latin-1 umlauts.
					0: {
						BookingDate: "2024-01-16", ValueDate: "2024-01-16", Amount: dec("-89.90"), Currency: "EUR",
						EndToEndID: "2024011600001", MandateID: "MANDAT-77", CreditorID: "DE12ZZZ00000012345",
						CounterpartyName: "Münchner Sportverein e.V.", CounterpartyIBAN: "DE27100777770209299700",
						CounterpartyBIC: "COBADEFFXXX",
						Reference:       "EREF+2024011600001 MREF+MANDAT-77 CRED+DE12ZZZ00000012345 SVWZ+Beitrag Jan. 2024 Münchner Sportverein",
						BookingText:     "LASTSCHRIFT", GVC: "106",
					},
					1: {
						BookingDate: "2024-01-17", ValueDate: "2024-01-17", Amount: dec("1000"), Currency: "EUR",
						CounterpartyName: "Jörg Schäfer", Reference: "SVWZ+Gehalt Januar Zusatzzeile",
						BookingText: "GUTSCHRIFT", GVC: "166",
					},
				},
			},
			{
				stmt: bank.Statement{ID: "0", Number: "6/1", Kind: "mt940", IBAN: cbIBAN, Currency: "EUR",
					Opening: bal("2024-01-17", "1110.10")},
				entries: 1, sum: "-10.00", closing: bal("2024-01-18", "1090.10"), mismatch: true,
				some: map[int]bank.Entry{0: {
					BookingDate: "2024-01-18", ValueDate: "2024-01-18", Amount: dec("-10.00"), Currency: "EUR",
					Reference: "Kontoführung", BookingText: "ENTGELT", GVC: "805",
				}},
			},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := parseFile(t, tc.file)
			if len(got) != len(tc.want) {
				t.Fatalf("%d statements, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if diff := cmp.Diff(w.stmt, g.Stmt, cmpDecimal); diff != "" {
					t.Errorf("statement %d header (-want +got):\n%s", i, diff)
				}
				if !g.ended {
					t.Errorf("statement %d: no End", i)
				}
				// The sum is computed here from the entries too, so the End
				// the parser reports and what it handed over agree.
				sum := decimal.Zero
				for _, e := range g.Entries {
					sum = sum.Add(e.Amount)
				}
				wantEnd := bank.StatementEnd{Closing: w.closing, Entries: w.entries, Sum: dec(w.sum)}
				if diff := cmp.Diff(wantEnd, g.End, cmpDecimal); diff != "" {
					t.Errorf("statement %d end (-want +got):\n%s", i, diff)
				}
				if len(g.Entries) != w.entries || !sum.Equal(dec(w.sum)) {
					t.Errorf("statement %d: %d entries summing to %s, want %d and %s", i, len(g.Entries), sum, w.entries, w.sum)
				}
				_, _, mismatch := bank.BalanceMismatch(g.Stmt.Opening, g.End)
				if mismatch != w.mismatch {
					t.Errorf("statement %d: balance mismatch %v, want %v", i, mismatch, w.mismatch)
				}
				for j, we := range w.some {
					if j >= len(g.Entries) {
						t.Errorf("statement %d: no entry %d", i, j)
						continue
					}
					if diff := cmp.Diff(we, g.Entries[j], cmpDecimal); diff != "" {
						t.Errorf("statement %d entry %d (-want +got):\n%s", i, j, diff)
					}
				}
			}
		})
	}
}

func TestBalanceMismatchFigures(t *testing.T) {
	got := parseFile(t, "commerzbank.sta")
	expected, closing, mismatch := bank.BalanceMismatch(got[1].Stmt.Opening, got[1].End)
	if !mismatch || !expected.Equal(dec("1100.10")) || !closing.Equal(dec("1090.10")) {
		t.Errorf("mismatch %v, expected %s, closing %s; want true, 1100.10, 1090.10", mismatch, expected, closing)
	}
}

func TestRefusesWhatIsNotMT940(t *testing.T) {
	tests := map[string]string{
		"empty":        "",
		"blank lines":  "\n\r\n  \n",
		"only headers": "{1:F01DEUTDEFFAXXX0000000000}{2:I940DEUTDEFFXXXXN}{4:\n-}\n",
		"csv":          "Buchungstag;Valutadatum;Betrag\n01.02.2024;01.02.2024;-12,50\n",
		"camt":         "<?xml version=\"1.0\"?>\n<Document><BkToCstmrStmt/></Document>\n",
		"only :86:":    ":86:166?00GUTSCHRIFT\n",
		"json":         `{"transactions": []}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			err := Parse(strings.NewReader(in), &recorder{})
			if !errs.Is(err, errs.InvalidFileType) {
				t.Fatalf("err = %v, want code %s", err, errs.InvalidFileType)
			}
			if errs.Status(errs.CodeOf(err)) != 400 {
				t.Errorf("status %d, want 400", errs.Status(errs.CodeOf(err)))
			}
		})
	}
}

func TestMalformedFieldsNameTheLine(t *testing.T) {
	head := ":20:X\n:25:DE89370400440532013000\n:60F:C240101EUR1,00\n"
	tests := map[string]struct {
		in   string
		line string
	}{
		"amount":        {head + ":61:240102C1.5NTRFNONREF\n", "line 4 :61:"},
		"mark":          {head + ":61:240102X1,50NTRFNONREF\n", "line 4 :61:"},
		"date":          {head + ":61:241302C1,50NTRFNONREF\n", "line 4 :61:"},
		"no date":       {head + ":61:C1,50NTRFNONREF\n", "line 4 :61:"},
		"entry date":    {head + ":61:2401021340C1,50NTRFNONREF\n", "line 4 :61:"},
		"balance":       {":20:X\n:60F:C24010EUR1,00\n", "line 2 :60F:"},
		"balance mark":  {":20:X\n:60F:X240101EUR1,00\n", "line 2 :60F:"},
		"balance curr.": {":20:X\n:62F:C24010112,001,00\n", "line 2 :62F:"},
		"amount length": {head + ":61:240102C1234567890123456,00NTRF\n", "line 4 :61:"},
		"long line":     {head + ":86:" + strings.Repeat("x", MaxLine+1) + "\n", "line 4"},
		"long field":    {head + ":86:166" + strings.Repeat("\n"+strings.Repeat("y", 1000), MaxField/1000+1), "line 4 :86:"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Parse(strings.NewReader(tc.in), &recorder{})
			e := errs.As(err)
			if e == nil || e.Code != errs.InvalidInput {
				t.Fatalf("err = %v, want %s", err, errs.InvalidInput)
			}
			if len(e.Details) != 1 || e.Details[0].Field != tc.line {
				t.Errorf("details %+v, want field %q", e.Details, tc.line)
			}
		})
	}
}

// failingSink fails on the n-th call.
type failingSink struct {
	recorder
	calls, failAt int
}

var errSink = errors.New("sink full")

func (f *failingSink) tick() error {
	f.calls++
	if f.calls == f.failAt {
		return errSink
	}
	return nil
}
func (f *failingSink) Statement(s bank.Statement) error {
	if err := f.tick(); err != nil {
		return err
	}
	return f.recorder.Statement(s)
}
func (f *failingSink) Entry(e bank.Entry) error {
	if err := f.tick(); err != nil {
		return err
	}
	return f.recorder.Entry(e)
}
func (f *failingSink) End(e bank.StatementEnd) error {
	if err := f.tick(); err != nil {
		return err
	}
	return f.recorder.End(e)
}

func TestSinkErrorStopsTheParser(t *testing.T) {
	b, err := os.ReadFile("testdata/volksbank.sta")
	if err != nil {
		t.Fatal(err)
	}
	// Statement, 3 entries, End, Statement, entry, End: 8 calls.
	for failAt := 1; failAt <= 8; failAt++ {
		s := &failingSink{failAt: failAt}
		if err := Parse(bytes.NewReader(b), s); err != errSink {
			t.Errorf("failing at call %d: err = %v, want the sink's error as it is", failAt, err)
		}
		if s.calls != failAt {
			t.Errorf("failing at call %d: %d calls, want the parser to stop there", failAt, s.calls)
		}
	}
}

func TestEncodingsAndLineEnds(t *testing.T) {
	const body = ":20:A\n:25:DE89370400440532013000\n:60F:C240101EUR0,00\n:61:240102C1,00NTRFNONREF\n" +
		":86:166?00GUTSCHRIFT?20SVWZ+Gr\u00fc\u00dfe?32Fran\u00e7ois M\u00fcller\n:62F:C240102EUR1,00\n-\n"
	latin1 := strings.NewReplacer("\u00fc", "\xfc", "\u00df", "\xdf", "\u00e7", "\xe7").Replace(body)
	tests := map[string]string{
		"utf-8 LF":           body,
		"utf-8 BOM CRLF":     "\xef\xbb\xbf" + strings.ReplaceAll(body, "\n", "\r\n"),
		"latin-1 CR":         strings.ReplaceAll(latin1, "\n", "\r"),
		"latin-1 no last LF": strings.TrimSuffix(latin1, "\n"),
		"control chars":      strings.Replace(body, "Gr", "\x00Gr\x1a", 1),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var rec recorder
			if err := Parse(strings.NewReader(in), &rec); err != nil {
				t.Fatal(err)
			}
			if len(rec.stmts) != 1 || len(rec.stmts[0].Entries) != 1 {
				t.Fatalf("got %+v, want one statement with one entry", rec.stmts)
			}
			e := rec.stmts[0].Entries[0]
			if e.Reference != "SVWZ+Grüße" || e.CounterpartyName != "François Müller" {
				t.Errorf("reference %q, name %q", e.Reference, e.CounterpartyName)
			}
		})
	}
}

func TestStatementsWithoutMarkers(t *testing.T) {
	// No "-" between statements, the second opened by :25: without :20:,
	// a :86: after the closing balance (statement information), :64: and
	// :65: ignored, a :61: without :86:.
	in := ":20:A\n:25:12345678/1020304050\n:60F:C240101EUR10,00\n:61:240102D1,00NMSCNONREF\n" +
		":62F:C240102EUR9,00\n:64:C240102EUR9,00\n:65:C240103EUR9,00\n:86:Kontoinformation\n" +
		":25:DE89370400440532013000\n:60F:D240101EUR10,00\n:61:240102C2,00NMSCNONREF\n:62F:D240102EUR8,00\n"
	var rec recorder
	if err := Parse(strings.NewReader(in), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.stmts) != 2 {
		t.Fatalf("%d statements, want 2", len(rec.stmts))
	}
	if a, b := rec.stmts[0], rec.stmts[1]; a.Stmt.IBAN != "DE20123456781020304050" || b.Stmt.IBAN != "DE89370400440532013000" ||
		a.End.Entries != 1 || b.End.Entries != 1 || !b.End.Closing.Amount.Equal(dec("-8")) || b.Entries[0].Reference != "" {
		t.Errorf("got %+v", rec.stmts)
	}
}

func TestFreeTextDetails(t *testing.T) {
	tests := map[string]bank.Entry{
		"Miete Januar\nWohnung 3":                {Reference: "Miete Januar Wohnung 3"},
		"999Auszahlung Geldautomat":              {GVC: "999", Reference: "Auszahlung Geldautomat"},
		"166":                                    {GVC: "166"},
		"166?3012345678?311020304050?32Name":     {GVC: "166", CounterpartyIBAN: "DE20123456781020304050", CounterpartyName: "Name"},
		"166?30XXXX?31DE89370400440532013001":    {GVC: "166"},
		"166\n?00GUTSCHRIFT\n?20SVWZ+Miete":      {GVC: "166", BookingText: "GUTSCHRIFT", Reference: "SVWZ+Miete"},
		"123 Text mit Ziffern":                   {Reference: "123 Text mit Ziffern"},
		"EREF+E2E-1 SVWZ+Rechnung 7 MREF+M1":     {Reference: "EREF+E2E-1 SVWZ+Rechnung 7 MREF+M1", EndToEndID: "E2E-1", MandateID: "M1"},
		strings.Repeat("x", 65) + "\nyz\nweiter": {Reference: strings.Repeat("x", 65) + "yz weiter"},
	}
	for in, want := range tests {
		var got bank.Entry
		applyDetails(&got, in)
		if diff := cmp.Diff(want, got, cmpDecimal); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

// Many short continuation lines cost linear time, not a copy per line.
func TestManyContinuationLines(t *testing.T) {
	in := ":20:X\n:61:240102C1,00NTRF\n:86:166" + strings.Repeat("\n", MaxField-10) + ":62F:C240102EUR1,00\n"
	var rec recorder
	if err := Parse(strings.NewReader(in), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.stmts) != 1 || rec.stmts[0].End.Entries != 1 {
		t.Errorf("got %+v", rec.stmts)
	}
}

func TestAccountIBAN(t *testing.T) {
	tests := map[string]string{
		"12345678/1020304050":                "DE20123456781020304050",
		"76090500/1234567":                   "DE06760905000001234567",
		"20040000/1234567EUR":                "DE82200400000001234567",
		"DE89 3704 0044 0532 0130 00":        "DE89370400440532013000",
		"DE89370400440532013000EUR":          "DE89370400440532013000",
		"COBADEFFXXX/DE89370400440532013000": "DE89370400440532013000",
		"de89370400440532013000":             "DE89370400440532013000",
		"DE89370400440532013001":             "", // check digits wrong
		"NL91ABNA0417164300":                 "NL91ABNA0417164300",
		"1234567/1020304050":                 "", // BLZ of 7 digits
		"12345678/12345678901":               "", // account of 11 digits
		"":                                   "",
	}
	for in, want := range tests {
		if got := accountIBAN(in); got != want {
			t.Errorf("accountIBAN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLine61Variants(t *testing.T) {
	tests := map[string]bank.Entry{
		"240102CR1,00NTRFNONREF":                  {Amount: dec("1")},
		"240102DR1,5NTRFNONREF//NONREF":           {Amount: dec("-1.5")},
		"2401020102RD0,01NRTIKREF//BREF\nDETAILS": {Amount: dec("0.01"), Reversal: true, BankReference: "BREF"},
		"240102RCE7,NCHG//A B C":                  {Amount: dec("-7"), Reversal: true, BankReference: "A B C"},
		"240102C\n12,34NMSC":                      {Amount: dec("12.34")},
		"240102C12,34":                            {Amount: dec("12.34")},
		"240102D12,34//X":                         {Amount: dec("-12.34"), BankReference: "X"},
	}
	for in, want := range tests {
		got, err := parseLine61(field{tag: "61", val: in, line: 1})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		want.BookingDate, want.ValueDate = "2024-01-02", "2024-01-02"
		if diff := cmp.Diff(want, got, cmpDecimal); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

func TestBookingDateAcrossYearEnd(t *testing.T) {
	tests := []struct{ line, booking, value string }{
		{"2312300102C1,00NTRF", "2024-01-02", "2023-12-30"},
		{"2401011231C1,00NTRF", "2023-12-31", "2024-01-01"},
		{"2406150614C1,00NTRF", "2024-06-14", "2024-06-15"},
		{"240615C1,00NTRF", "2024-06-15", "2024-06-15"},
		{"240230C1,00NTRF", "2024-02-29", "2024-02-29"}, // 360-day interest calendar
		{"990101C1,00NTRF", "1999-01-01", "1999-01-01"},
	}
	for _, tc := range tests {
		e, err := parseLine61(field{tag: "61", val: tc.line, line: 1})
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if e.BookingDate != tc.booking || e.ValueDate != tc.value {
			t.Errorf("%s: booking %s value %s, want %s %s", tc.line, e.BookingDate, e.ValueDate, tc.booking, tc.value)
		}
	}
}

func TestLongTextsAreBounded(t *testing.T) {
	long := strings.Repeat("ä", 2000)
	in := ":20:" + strings.Repeat("I", 100) + "\n:25:X\n:28C:" + strings.Repeat("9", 100) + "\n:60F:C240101EUR0,00\n" +
		":61:240102C1,00NTRF//" + strings.Repeat("R", 100) + "\n:86:166?00" + long + "?20EREF+" + long + "?32" + long + "\n"
	var rec recorder
	if err := Parse(strings.NewReader(in), &rec); err != nil {
		t.Fatal(err)
	}
	s := rec.stmts[0]
	e := s.Entries[0]
	for name, tc := range map[string]struct {
		s string
		n int
	}{
		"id": {s.Stmt.ID, maxRef}, "number": {s.Stmt.Number, maxRef}, "bank ref": {e.BankReference, maxRef},
		"booking text": {e.BookingText, maxName}, "reference": {e.Reference, maxReference},
		"eref": {e.EndToEndID, maxRef}, "name": {e.CounterpartyName, maxName},
	} {
		if n := len([]rune(tc.s)); n != tc.n {
			t.Errorf("%s: %d runes, want %d", name, n, tc.n)
		}
	}
}

// generated writes an MT940 file of n entries in statements of 500.
func generated(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i%500 == 0 {
			if i > 0 {
				b.WriteString(":62F:C240131EUR0,00\r\n-\r\n")
			}
			fmt.Fprintf(&b, ":20:STARTUMS\r\n:25:76090500/0001234567\r\n:28C:%d/1\r\n:60F:C240101EUR0,00\r\n", i/500+1)
		}
		// 1+i%1000: never 0,00, which is no entry.
		fmt.Fprintf(&b, ":61:2401%02d01%02dD%d,%02dNDDTNONREF//REF%d\r\n", i%28+1, i%28+1, 1+i%1000, i%100, i)
		fmt.Fprintf(&b, ":86:105?00SEPA-BASISLASTSCHRIFT?100005?20EREF+RE-%d?21MREF+M-4711?22CRED+DE98ZZZ0999999999\r\n"+
			"9?23SVWZ+Rechnung %d Strom Jan?24uar?30GENODEF1S06?31DE02120300000000202051?32Stadtwerke Musterstadt GmbH\r\n", i, i)
	}
	b.WriteString(":62F:C240131EUR0,00\r\n-\r\n")
	return b.Bytes()
}

type countSink struct{ n int }

func (c *countSink) Statement(bank.Statement) error { return nil }
func (c *countSink) Entry(bank.Entry) error         { c.n++; return nil }
func (c *countSink) End(bank.StatementEnd) error    { return nil }

func TestGeneratedFile(t *testing.T) {
	var c countSink
	if err := Parse(bytes.NewReader(generated(1234)), &c); err != nil {
		t.Fatal(err)
	}
	if c.n != 1234 {
		t.Errorf("%d entries, want 1234", c.n)
	}
}

// BenchmarkParse10k parses a generated file of 10,000 entries (with
// structured :86:) and reports entries per second.
func BenchmarkParse10k(b *testing.B) {
	data := generated(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var c countSink
		if err := Parse(bytes.NewReader(data), &c); err != nil {
			b.Fatal(err)
		}
		if c.n != 10000 {
			b.Fatalf("%d entries", c.n)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "entries/s")
}
