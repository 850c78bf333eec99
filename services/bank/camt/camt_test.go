package camt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// recorder is a Sink that keeps what it is given and checks the order.
type recorder struct {
	stmts []*stmt
	err   error // returned from Entry when set
}

type stmt struct {
	head    bank.Statement
	entries []bank.Entry
	end     *bank.StatementEnd
}

func (r *recorder) Statement(s bank.Statement) error {
	if n := len(r.stmts); n > 0 && r.stmts[n-1].end == nil {
		return fmt.Errorf("statement %q before the end of %q", s.ID, r.stmts[n-1].head.ID)
	}
	r.stmts = append(r.stmts, &stmt{head: s})
	return nil
}

func (r *recorder) Entry(e bank.Entry) error {
	if r.err != nil {
		return r.err
	}
	n := len(r.stmts)
	if n == 0 || r.stmts[n-1].end != nil {
		return errors.New("entry outside a statement")
	}
	r.stmts[n-1].entries = append(r.stmts[n-1].entries, e)
	return nil
}

func (r *recorder) End(e bank.StatementEnd) error {
	n := len(r.stmts)
	if n == 0 || r.stmts[n-1].end != nil {
		return errors.New("end outside a statement")
	}
	r.stmts[n-1].end = &e
	return nil
}

var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func bal(date, amount string) *bank.Balance { return &bank.Balance{Date: date, Amount: dec(amount)} }

// summary is what the file tests compare: per statement the header,
// count and sum of entries, the balances and the balance check.
type summary struct {
	Kind, ID, Number, IBAN, Currency string
	Opening, Closing                 *bank.Balance
	Entries                          int
	Sum                              decimal.Decimal
	Mismatch                         bool
}

func summarise(t *testing.T, r *recorder) []summary {
	t.Helper()
	var out []summary
	for _, s := range r.stmts {
		if s.end == nil {
			t.Fatalf("statement %q has no end", s.head.ID)
		}
		sum := decimal.Zero
		for _, e := range s.entries {
			sum = sum.Add(e.Amount)
		}
		if s.end.Entries != len(s.entries) || !s.end.Sum.Equal(sum) {
			t.Errorf("statement %q: End says %d entries summing %s, the sink got %d summing %s",
				s.head.ID, s.end.Entries, s.end.Sum, len(s.entries), sum)
		}
		_, _, mismatch := bank.BalanceMismatch(s.head.Opening, *s.end)
		out = append(out, summary{
			Kind: s.head.Kind, ID: s.head.ID, Number: s.head.Number, IBAN: s.head.IBAN, Currency: s.head.Currency,
			Opening: s.head.Opening, Closing: s.end.Closing,
			Entries: len(s.entries), Sum: sum, Mismatch: mismatch,
		})
	}
	return out
}

func parseFile(t *testing.T, name string) (*recorder, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &recorder{}
	return r, Parse(f, r)
}

// The figures below are read off the XML by hand (grep for <Stmt>, <Bal>,
// <Ntry>, <Amt> and <CdtDbtInd>), not taken from the parser.
func TestPublicFiles(t *testing.T) {
	tests := []struct {
		file string
		want []summary
	}{{
		// One Rpt, no Bal at all; one Ntry: Amt 200000 SEK DBIT, Sts/Cd BOOK,
		// NtryDtls holds only a Btch (no TxDtls) -> one entry of -200000.
		file: "camt052.v8.xml",
		want: []summary{{Kind: "camt.052", ID: "AAAASESS-FP-ACCR001", Number: "12312",
			Entries: 1, Sum: dec("-200000")}},
	}, {
		// Bal: OPBD 1.01 CRDT (PRCD 2.02 ignored while OPBD exists), CLBD 4.04
		// CRDT, the rest (OPAV, CLAV, FWAV, INFO, ITAV, ITBD, XPCD) ignored.
		// Account by Othr/Id, so no IBAN. One Ntry 8.850 CRDT.
		// 1.01 + 8.85 = 9.86 != 4.04 -> mismatch.
		file: "camt053.v2.all-balance-types.xml",
		want: []summary{{Kind: "camt.053", ID: "CAMT0532015012200001", Number: "315",
			Opening: bal("2015-01-21", "1.01"), Closing: bal("2015-01-22", "4.04"),
			Entries: 1, Sum: dec("8.85"), Mismatch: true}},
	}, {
		// OPBD 18.15 CRDT, CLBD 27.00 DBIT (= -27.00); one Ntry 8.85 CRDT.
		// 18.15 + 8.85 = 27.00 != -27.00 -> mismatch.
		file: "camt053.v2.minimal.xml",
		want: []summary{{Kind: "camt.053", ID: "253EURNL26VAYB8060476890", Number: "12312",
			IBAN: "NL26VAYB8060476890", Currency: "EUR",
			Opening: bal("2014-12-30", "18.15"), Closing: bal("2014-12-31", "-27.00"),
			Entries: 1, Sum: dec("8.85"), Mismatch: true}},
	}, {
		// Stmt 253: OPBD 18.15 CRDT, CLBD 27.00 CRDT, Ntry 8.85 CRDT -> balanced.
		// Stmt 254: OPBD 27.00 CRDT, CLBD 20.00 CRDT, Ntry 7.00 DBIT -> balanced.
		file: "camt053.v2.multi.statement.xml",
		want: []summary{{Kind: "camt.053", ID: "253EURNL26VAYB8060476890", Number: "12312",
			IBAN: "NL26VAYB8060476890", Currency: "EUR",
			Opening: bal("2014-12-30", "18.15"), Closing: bal("2014-12-31", "27.00"),
			Entries: 1, Sum: dec("8.85")},
			{Kind: "camt.053", ID: "254EURNL26VAYB8060476890",
				IBAN: "NL26VAYB8060476890", Currency: "EUR",
				Opening: bal("2014-12-30", "27.00"), Closing: bal("2014-12-31", "20.00"),
				Entries: 1, Sum: dec("-7.00")}},
	}, {
		// As minimal.xml, with a PrvtId under Dbtr.
		file: "camt053.v2.with-party-ids.xml",
		want: []summary{{Kind: "camt.053", ID: "253EURNL26VAYB8060476890", Number: "12312",
			IBAN: "NL26VAYB8060476890", Currency: "EUR",
			Opening: bal("2014-12-30", "18.15"), Closing: bal("2014-12-31", "-27.00"),
			Entries: 1, Sum: dec("8.85"), Mismatch: true}},
	}, {
		// OPBD 18.15 CRDT, CLBD 27.00 DBIT; one Ntry 8.85 CRDT whose single
		// TxDtls says Amt 0 SEK: the entry's booked 8.85 counts.
		file: "camt053.v8.xml",
		want: []summary{{Kind: "camt.053", ID: "253EURNL26VAYB8060476890", Number: "12312",
			Opening: bal("2014-12-30", "18.15"), Closing: bal("2014-12-30", "-27.00"),
			Entries: 1, Sum: dec("8.85"), Mismatch: true}},
	}, {
		// No Bal. One Ntry 200000 SEK DBIT with three TxDtls of 3.1, 3.2 and
		// 3.2 CHF CRDT: other currency, other direction, sum 9.5 -> they do
		// not explain the booking, which stays one entry of -200000.
		file: "camt054.v8.xml",
		want: []summary{{Kind: "camt.054", ID: "AAAASESS-FP-ACCR001", Number: "12312",
			IBAN: "CH2801234000123456789", Entries: 1, Sum: dec("-200000")}},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := parseFile(t, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, summarise(t, r), decimalEqual); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestPublicEntries(t *testing.T) {
	tests := []struct {
		file string
		want []bank.Entry
	}{{
		file: "camt053.v2.minimal.xml",
		want: []bank.Entry{{BookingDate: "2014-12-31", ValueDate: "2015-01-02", Amount: dec("8.85"), Currency: "EUR",
			CounterpartyName: "NAME NAME", CounterpartyIBAN: "NL56AGDH9619008421",
			Reference: "4654654654654654", BookingText: "544", GVC: "544"}},
	}, {
		file: "camt053.v8.xml",
		want: []bank.Entry{{BookingDate: "2014-12-31", ValueDate: "2015-01-02", Amount: dec("8.85"), Currency: "EUR",
			BankReference: "AAAASESS-FP-CN_98765/01", EndToEndID: "MUELL/FINP/RA12345",
			CounterpartyName: "NAME NAME", CounterpartyIBAN: "NL56AGDH9619008421",
			Reference: "4654654654654654", BookingText: "PMNT/RCDT/BOOK"}},
	}, {
		file: "camt052.v8.xml",
		want: []bank.Entry{{BookingDate: "2007-10-18", ValueDate: "2007-10-18", Amount: dec("-200000"), Currency: "SEK",
			BankReference: "AAAASESS-FP-ACCR-01", BookingText: "Credit"}},
	}, {
		file: "camt054.v8.xml",
		want: []bank.Entry{{BookingDate: "2007-10-18", ValueDate: "2007-10-18", Amount: dec("-200000"), Currency: "SEK",
			BankReference: "ACSR160617103200001", BookingText: "Order"}},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := parseFile(t, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, r.stmts[0].entries, decimalEqual); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// camt053.v2.invalid.xml has a BkToCstmrStmt with only a GrpHdr: the
// schema requires at least one Stmt.
func TestInvalidFileRefused(t *testing.T) {
	r, err := parseFile(t, "camt053.v2.invalid.xml")
	if !errs.Is(err, errs.InvalidInput) {
		t.Fatalf("err = %v, want INVALID_INPUT", err)
	}
	if !strings.Contains(err.Error(), "without any Stmt") {
		t.Errorf("err = %v, want it to name the missing Stmt", err)
	}
	if len(r.stmts) != 0 {
		t.Errorf("sink got %d statements", len(r.stmts))
	}
}

// doc wraps body (the statements) in a Document of the given message.
func doc(ns, root, body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:` + ns + `"><` + root + `><GrpHdr><MsgId>M1</MsgId></GrpHdr>` +
		body + `</` + root + `></Document>`
}

func balXML(code, amt, dir, date string) string {
	return `<Bal><Tp><CdOrPrtry><Cd>` + code + `</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">` + amt + `</Amt><CdtDbtInd>` + dir +
		`</CdtDbtInd><Dt><Dt>` + date + `</Dt></Dt></Bal>`
}

const batchNtry = `<Ntry><NtryRef>NR-1</NtryRef><Amt Ccy="EUR">300.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>2024-03-01</Dt></ValDt><AcctSvcrRef>BATCH-7</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn><Prtry><Cd>NTRF+116+00931</Cd><Issr>DK</Issr></Prtry></BkTxCd>
<NtryDtls><Btch><NbOfTxs>3</NbOfTxs></Btch>
<TxDtls><Refs><AcctSvcrRef>TX-1</AcctSvcrRef><EndToEndId>E2E-1</EndToEndId></Refs><Amt Ccy="EUR">100.00</Amt><CdtDbtInd>DBIT</CdtDbtInd>
 <RltdPties><Dbtr><Nm>Wir GmbH</Nm></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>
 <Cdtr><Nm>Lieferant Eins</Nm></Cdtr><CdtrAcct><Id><IBAN>de89 3704 0044 0532 0130 00</IBAN></Id></CdtrAcct></RltdPties>
 <RltdAgts><CdtrAgt><FinInstnId><BIC>COBADEFFXXX</BIC></FinInstnId></CdtrAgt></RltdAgts>
 <RmtInf><Ustrd>Rechnung 4711</Ustrd><Ustrd>vom 01.02.2024</Ustrd></RmtInf></TxDtls>
<TxDtls><Refs><EndToEndId>E2E-2</EndToEndId></Refs><Amt Ccy="EUR">150.00</Amt>
 <RltdPties><Cdtr><Nm>Lieferant Zwei</Nm></Cdtr><CdtrAcct><Id><IBAN>DE75512108001245126199</IBAN></Id></CdtrAcct></RltdPties>
 <RltdAgts><CdtrAgt><FinInstnId><BICFI>SOGEDEFFXXX</BICFI></FinInstnId></CdtrAgt></RltdAgts>
 <RmtInf><Strd><CdtrRefInf><Ref>RF18539007547034</Ref></CdtrRefInf></Strd></RmtInf>
 <Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">0.35</TtlChrgsAndTaxAmt></Chrgs></TxDtls>
<TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><AmtDtls><TxAmt><Amt Ccy="EUR">50.00</Amt></TxAmt></AmtDtls>
 <RltdPties><Cdtr><Nm>Lieferant Drei</Nm></Cdtr></RltdPties><AddtlTxInf>Sammler Teil 3</AddtlTxInf></TxDtls>
</NtryDtls><AddtlNtryInf>SEPA-SAMMLER</AddtlNtryInf></Ntry>`

func TestBatchBookingSplit(t *testing.T) {
	body := `<Stmt><Id>S1</Id><Acct><Id><IBAN>DE02120300000000202051</IBAN></Id><Ccy>EUR</Ccy></Acct>` +
		balXML("OPBD", "1000.00", "CRDT", "2024-02-29") + balXML("CLBD", "700.00", "CRDT", "2024-03-01") + batchNtry + `</Stmt>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.053.001.04", "BkToCstmrStmt", body)), r); err != nil {
		t.Fatal(err)
	}
	base := bank.Entry{BookingDate: "2024-03-01", ValueDate: "2024-03-01", Currency: "EUR", BatchRef: "BATCH-7", GVC: "116"}
	e1, e2, e3 := base, base, base
	e1.Amount, e1.BankReference, e1.EndToEndID = dec("-100"), "TX-1", "E2E-1"
	e1.CounterpartyName, e1.CounterpartyIBAN, e1.CounterpartyBIC = "Lieferant Eins", "DE89370400440532013000", "COBADEFFXXX"
	e1.Reference, e1.BookingText = "Rechnung 4711 vom 01.02.2024", "SEPA-SAMMLER"
	e2.Amount, e2.EndToEndID, e2.Charges = dec("-150"), "E2E-2", dec("0.35")
	e2.CounterpartyName, e2.CounterpartyIBAN, e2.CounterpartyBIC = "Lieferant Zwei", "DE75512108001245126199", "SOGEDEFFXXX"
	e2.Reference, e2.BookingText = "RF18539007547034", "SEPA-SAMMLER"
	e3.Amount, e3.EndToEndID, e3.CounterpartyName, e3.BookingText = dec("-50"), "NOTPROVIDED", "Lieferant Drei", "Sammler Teil 3"
	if d := cmp.Diff([]bank.Entry{e1, e2, e3}, r.stmts[0].entries, decimalEqual); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// 1000 - 300 = 700: the split keeps the balance.
	if _, _, mismatch := bank.BalanceMismatch(r.stmts[0].head.Opening, *r.stmts[0].end); mismatch {
		t.Errorf("balance mismatch after a split: %+v", r.stmts[0].end)
	}
}

func TestBatchNotSplit(t *testing.T) {
	tests := []struct {
		name, ntry string
		want       []string // amounts
		batchRef   string
	}{{
		name: "details sum to the booking, NtryRef names the batch",
		ntry: `<Ntry><NtryRef>NR-9</NtryRef><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>
<NtryDtls><TxDtls><AmtDtls><TxAmt><Amt Ccy="EUR">10.00</Amt></TxAmt></AmtDtls></TxDtls>
<TxDtls><AmtDtls><TxAmt><Amt Ccy="EUR">20.00</Amt></TxAmt></AmtDtls></TxDtls></NtryDtls></Ntry>`,
		want: []string{"10", "20"}, batchRef: "NR-9",
	}, {
		name: "details do not add up: one entry",
		ntry: `<Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>
<NtryDtls><TxDtls><Amt Ccy="EUR">10.00</Amt></TxDtls><TxDtls><Amt Ccy="EUR">10.00</Amt></TxDtls></NtryDtls></Ntry>`,
		want: []string{"30"},
	}, {
		name: "a detail without amount: one entry",
		ntry: `<Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>
<NtryDtls><TxDtls><Amt Ccy="EUR">10.00</Amt></TxDtls><TxDtls></TxDtls></NtryDtls></Ntry>`,
		want: []string{"30"},
	}, {
		name: "single detail without amount takes the entry's",
		ntry: `<Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>
<NtryDtls><TxDtls><Refs><EndToEndId>X</EndToEndId></Refs></TxDtls></NtryDtls></Ntry>`,
		want: []string{"30"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			if err := Parse(strings.NewReader(doc("camt.053.001.02", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+tt.ntry+`</Stmt>`)), r); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range r.stmts[0].entries {
				got = append(got, e.Amount.String())
				if e.BatchRef != tt.batchRef {
					t.Errorf("BatchRef = %q, want %q", e.BatchRef, tt.batchRef)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestCharges(t *testing.T) {
	ntry := func(chrgs string) string {
		return `<Ntry><Amt Ccy="EUR">10.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>` + chrgs + `</Ntry>`
	}
	tests := []struct{ name, chrgs, want string }{
		{"total", `<Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">2.50</TtlChrgsAndTaxAmt><Rcrd><Amt Ccy="EUR">2.00</Amt></Rcrd></Chrgs>`, "2.50"},
		{"records summed", `<Chrgs><Rcrd><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd></Rcrd><Rcrd><Amt Ccy="EUR">0.50</Amt></Rcrd></Chrgs>`, "1.50"},
		{".001.02 repeated Chrgs", `<Chrgs><Amt Ccy="EUR">0.20</Amt></Chrgs><Chrgs><Amt Ccy="EUR">0.30</Amt></Chrgs>`, "0.50"},
		{"none", ``, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			if err := Parse(strings.NewReader(doc("camt.053.001.02", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+ntry(tt.chrgs)+`</Stmt>`)), r); err != nil {
				t.Fatal(err)
			}
			e := r.stmts[0].entries[0]
			if !e.Charges.Equal(dec(tt.want)) || !e.Amount.Equal(dec("-10")) {
				t.Errorf("charges %s amount %s, want %s and -10", e.Charges, e.Amount, tt.want)
			}
		})
	}
}

// parties is one TxDtls naming both sides.
const parties = `<NtryDtls><TxDtls><Refs><EndToEndId>E</EndToEndId><MndtId>MANDAT-1</MndtId></Refs>
<RltdPties><Dbtr><Nm>Kunde AG</Nm></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>
<Cdtr><Nm>Wir GmbH</Nm><Id><PrvtId><Othr><Id>DE98ZZZ09999999999</Id><SchmeNm><Prtry>SEPA</Prtry></SchmeNm></Othr></PrvtId></Id></Cdtr>
<CdtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></CdtrAcct></RltdPties>
<RltdAgts><DbtrAgt><FinInstnId><BICFI>BYLADEM1001</BICFI></FinInstnId></DbtrAgt><CdtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></CdtrAgt></RltdAgts>
</TxDtls></NtryDtls>`

func TestDirections(t *testing.T) {
	ntry := func(dir, rvsl string) string {
		return `<Ntry><Amt Ccy="EUR">42.00</Amt><CdtDbtInd>` + dir + `</CdtDbtInd>` + rvsl +
			`<BookgDt><Dt>2024-03-01</Dt></BookgDt>` + parties + `</Ntry>`
	}
	tests := []struct {
		name, dir, rvsl            string
		amount, name2, iban2, bic2 string
		reversal                   bool
	}{
		{"credit: the debtor paid us", "CRDT", "", "42", "Kunde AG", "DE02120300000000202051", "BYLADEM1001", false},
		{"debit: we paid the creditor", "DBIT", "", "-42", "Wir GmbH", "DE89370400440532013000", "COBADEFFXXX", false},
		{"returned debit: the creditor again", "CRDT", "<RvslInd>true</RvslInd>", "42", "Wir GmbH", "DE89370400440532013000", "COBADEFFXXX", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			if err := Parse(strings.NewReader(doc("camt.053.001.08", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+ntry(tt.dir, tt.rvsl)+`</Stmt>`)), r); err != nil {
				t.Fatal(err)
			}
			want := bank.Entry{BookingDate: "2024-03-01", Amount: dec(tt.amount), Currency: "EUR", EndToEndID: "E",
				MandateID: "MANDAT-1", CreditorID: "DE98ZZZ09999999999", Reversal: tt.reversal,
				CounterpartyName: tt.name2, CounterpartyIBAN: tt.iban2, CounterpartyBIC: tt.bic2}
			if d := cmp.Diff([]bank.Entry{want}, r.stmts[0].entries, decimalEqual); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// An intraday report: interim balances only, a pending entry that did
// not move money yet.
func TestCamt052Intraday(t *testing.T) {
	body := `<Rpt><Id>R1</Id><ElctrncSeqNb>7</ElctrncSeqNb><Acct><Id><IBAN>DE02120300000000202051</IBAN></Id></Acct>` +
		balXML("ITBD", "500.00", "CRDT", "2024-03-01") +
		`<Ntry><Amt Ccy="EUR">12.34</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><DtTm>2024-03-01T09:30:00+01:00</DtTm></BookgDt></Ntry>` +
		`<Ntry><Amt Ccy="EUR">99.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>PDNG</Sts><ValDt><Dt>2024-03-02</Dt></ValDt></Ntry>` +
		`</Rpt><Rpt><Id>R2</Id><Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry></Rpt>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.052.001.02", "BkToCstmrAcctRpt", body)), r); err != nil {
		t.Fatal(err)
	}
	want := []summary{
		{Kind: "camt.052", ID: "R1", Number: "7", IBAN: "DE02120300000000202051", Entries: 1, Sum: dec("12.34")},
		{Kind: "camt.052", ID: "R2", Entries: 1, Sum: dec("-1")},
	}
	if d := cmp.Diff(want, summarise(t, r), decimalEqual); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := r.stmts[0].entries[0].BookingDate; got != "2024-03-01" {
		t.Errorf("BookingDate from DtTm = %q", got)
	}
}

func TestCamt054NoBalances(t *testing.T) {
	body := `<Ntfctn><Id>N1</Id><Acct><Id><IBAN>DE02120300000000202051</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Ntry><Amt Ccy="EUR">25.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>` + parties + `</Ntry></Ntfctn>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.054.001.06", "BkToCstmrDbtCdtNtfctn", body)), r); err != nil {
		t.Fatal(err)
	}
	want := []summary{{Kind: "camt.054", ID: "N1", IBAN: "DE02120300000000202051", Currency: "EUR", Entries: 1, Sum: dec("25")}}
	if d := cmp.Diff(want, summarise(t, r), decimalEqual); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// The same statement under each namespace, and under none: elements are
// matched by local name.
func TestNamespaces(t *testing.T) {
	body := `<Stmt><Id>S</Id>` + balXML("PRCD", "10.00", "DBIT", "2024-02-29") + balXML("CLBD", "32.00", "CRDT", "2024-03-01") +
		`<Ntry><Amt Ccy="EUR">42.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>` + parties + `</Ntry></Stmt>`
	want := []summary{{Kind: "camt.053", ID: "S", Opening: bal("2024-02-29", "-10"), Closing: bal("2024-03-01", "32"),
		Entries: 1, Sum: dec("42")}}
	for _, ns := range []string{"camt.053.001.02", "camt.053.001.04", "camt.053.001.06", "camt.053.001.08", "camt.053.001.10"} {
		t.Run(ns, func(t *testing.T) {
			r := &recorder{}
			if err := Parse(strings.NewReader(doc(ns, "BkToCstmrStmt", body)), r); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, summarise(t, r), decimalEqual); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	prefixed := `<?xml version="1.0"?><c:Document xmlns:c="urn:iso:std:iso:20022:tech:xsd:camt.053.001.04"><c:BkToCstmrStmt>` +
		`<c:Stmt><c:Id>P</c:Id><c:Ntry><c:Amt Ccy="EUR">1.00</c:Amt><c:CdtDbtInd>DBIT</c:CdtDbtInd><c:BookgDt><c:Dt>2024-03-01</c:Dt></c:BookgDt></c:Ntry></c:Stmt>` +
		`</c:BkToCstmrStmt></c:Document>`
	r := &recorder{}
	if err := Parse(strings.NewReader(prefixed), r); err != nil {
		t.Fatal(err)
	}
	if len(r.stmts) != 1 || len(r.stmts[0].entries) != 1 || !r.stmts[0].entries[0].Amount.Equal(dec("-1")) {
		t.Errorf("prefixed document: %+v", r.stmts)
	}
}

// From .001.08 on a party's name sits under Pty.
func TestPtyNames(t *testing.T) {
	ntry := `<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><NtryDtls><TxDtls>
<RltdPties><Dbtr><Pty><Nm>Müller &amp; Söhne KG</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>
<Cdtr><Pty><Nm>Wir GmbH</Nm></Pty></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.053.001.08", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+ntry+`</Stmt>`)), r); err != nil {
		t.Fatal(err)
	}
	if got := r.stmts[0].entries[0].CounterpartyName; got != "Müller & Söhne KG" {
		t.Errorf("CounterpartyName = %q", got)
	}
}

func TestLongTextCut(t *testing.T) {
	long := strings.Repeat("ä", 3000)
	ntry := `<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><NtryDtls><TxDtls>
<RmtInf><Ustrd>` + long + `</Ustrd><Ustrd>` + long + `</Ustrd></RmtInf></TxDtls></NtryDtls><AddtlNtryInf>` + long + `</AddtlNtryInf></Ntry>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.053.001.02", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+ntry+`</Stmt>`)), r); err != nil {
		t.Fatal(err)
	}
	e := r.stmts[0].entries[0]
	want := strings.Repeat("ä", MaxTextRunes)
	if e.Reference != want || e.BookingText != want {
		t.Errorf("cut to %d and %d runes, want %d", len([]rune(e.Reference)), len([]rune(e.BookingText)), MaxTextRunes)
	}
}

func TestLatin1(t *testing.T) {
	x := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><Document><BkToCstmrStmt><Stmt><Id>S</Id>" +
		"<Ntry><Amt Ccy=\"EUR\">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt>" +
		"<AddtlNtryInf>Gutschrift \xdcberweisung</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>"
	r := &recorder{}
	if err := Parse(strings.NewReader(x), r); err != nil {
		t.Fatal(err)
	}
	if got := r.stmts[0].entries[0].BookingText; got != "Gutschrift Überweisung" {
		t.Errorf("BookingText = %q", got)
	}
}

func TestRefused(t *testing.T) {
	stmt := func(s string) string { return doc("camt.053.001.02", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+s+`</Stmt>`) }
	okNtry := `<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`
	tests := []struct{ name, in, want string }{
		{"empty", "", "no root element"},
		{"not XML", "Datum;Betrag\n01.03.2024;1,00\n", "no root element"},
		{"JSON", `{"a":1}`, "no root element"},
		{"broken XML", `<Document><BkToCstmrStmt><Stmt>`, "not well-formed"},
		{"other root", `<html><body/></html>`, "root element is html"},
		{"pain.001", `<Document><CstmrCdtTrfInitn/></Document>`, "CstmrCdtTrfInitn is not a camt"},
		{"empty Document", `<Document/>`, "holds no BkToCstmrStmt"},
		{"Stmt in a camt.052", doc("camt.052.001.02", "BkToCstmrAcctRpt", `<Stmt/>`), "Stmt element in a camt.052"},
		{"no Rpt", doc("camt.052.001.02", "BkToCstmrAcctRpt", ``), "without any Rpt"},
		{"no direction", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "CdtDbtInd missing"},
		{"bad direction", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>X</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "neither CRDT nor DBIT"},
		{"no amount", stmt(`<Ntry><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "amount missing"},
		{"exponent", stmt(`<Ntry><Amt Ccy="EUR">1e9</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "not a decimal"},
		{"negative", stmt(`<Ntry><Amt Ccy="EUR">-1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "not a decimal"},
		{"no date", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></Ntry>`), "date missing"},
		{"lone dot", stmt(`<Ntry><Amt Ccy="EUR">.</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`), "not a decimal"},
		{"date with junk", stmt(`<Ntry><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01x</Dt></BookgDt></Ntry>`), "not a date"},
		{"bad date", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-02-30</Dt></BookgDt></Ntry>`), "not a date"},
		{"bad balance", stmt(balXML("OPBD", "abc", "CRDT", "2024-03-01")), "balance OPBD: amount"},
		{"opening after entry", stmt(okNtry + balXML("OPBD", "1.00", "CRDT", "2024-03-01")), "after its first entry"},
		{"too deep", stmt(strings.Repeat("<X>", 60) + strings.Repeat("</X>", 60)), "deeper than"},
		{"huge text node", stmt(`<Ntry><AddtlNtryInf>` + strings.Repeat("x", 2<<20) + `</AddtlNtryInf></Ntry>`), "1 MiB"},
		{"huge tag", stmt(`<Ntry a="` + strings.Repeat("x", 2<<20) + `"/>`), "1 MiB"},
		{"too many details", stmt(`<Ntry><NtryDtls>` + strings.Repeat("<TxDtls/>", MaxDetails+1) + `</NtryDtls></Ntry>`), "more than 20000 transaction details"},
		{"details too big", stmt(`<Ntry><NtryDtls>` + strings.Repeat("<TxDtls><RmtInf><Ustrd>"+strings.Repeat("x", 4000)+"</Ustrd></RmtInf></TxDtls>", 4300) + `</NtryDtls></Ntry>`), "MiB of text"},
		{"unclosed", `<Document><BkToCstmrStmt><Stmt>`, "not well-formed"},
		{"crossed tags", `<Document><BkToCstmrStmt></Document></BkToCstmrStmt>`, "not well-formed"},
		{"encoding", `<?xml version="1.0" encoding="EBCDIC"?><Document/>`, "EBCDIC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Parse(strings.NewReader(tt.in), &recorder{})
			if !errs.Is(err, errs.InvalidInput) {
				t.Fatalf("err = %v, want INVALID_INPUT", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSinkErrorReturnedAsIs(t *testing.T) {
	stop := errors.New("stop")
	r := &recorder{err: stop}
	f, err := os.Open("testdata/camt053.v2.minimal.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Parse(f, r); err != stop {
		t.Errorf("err = %v, want the sink's", err)
	}
}

type failingReader struct{ r io.Reader }

func (f failingReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// A reader that fails is not the file's fault: no 400.
func TestReaderError(t *testing.T) {
	err := Parse(failingReader{strings.NewReader(`<Document><BkToCstmrStmt><Stmt>`)}, &recorder{})
	if err == nil || errs.Is(err, errs.InvalidInput) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want the reader's error, not INVALID_INPUT", err)
	}
}

func TestGVC(t *testing.T) {
	for in, want := range map[string]string{"166": "166", "NTRF+166+00931": "166", "NMSC+201": "201", "Z24": "", "PMNT": "", "1234": "", "NTRF+16A": ""} {
		if got := gvc(in); got != want {
			t.Errorf("gvc(%q) = %q, want %q", in, got, want)
		}
	}
}

// discard is a Sink that keeps nothing, for the fuzz target and the benchmark.
type discard struct{ n int }

func (d *discard) Statement(bank.Statement) error { return nil }
func (d *discard) Entry(bank.Entry) error         { d.n++; return nil }
func (d *discard) End(bank.StatementEnd) error    { return nil }

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(doc("camt.053.001.04", "BkToCstmrStmt", `<Stmt><Id>S</Id>`+balXML("OPBD", "1.00", "CRDT", "2024-03-01")+batchNtry+`</Stmt>`)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		r := &recorder{}
		err := Parse(bytes.NewReader(b), r)
		if err != nil && !errs.Is(err, errs.InvalidInput) {
			t.Fatalf("error not INVALID_INPUT: %v", err)
		}
		for _, s := range r.stmts {
			for _, e := range s.entries {
				if len([]rune(e.Reference)) > MaxTextRunes || len([]rune(e.CounterpartyName)) > MaxTextRunes {
					t.Fatalf("text longer than %d runes", MaxTextRunes)
				}
			}
		}
	})
}

// bigStatement is a camt.053 with n entries as a German bank writes them:
// one TxDtls each with parties, agents, references and remittance text.
func bigStatement(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>BENCH</MsgId><CreDtTm>2024-03-01T20:00:00+01:00</CreDtTm></GrpHdr>
<Stmt><Id>BENCH-1</Id><ElctrncSeqNb>1</ElctrncSeqNb><Acct><Id><IBAN>DE02120300000000202051</IBAN></Id><Ccy>EUR</Ccy></Acct>
`)
	b.WriteString(balXML("OPBD", "0.00", "CRDT", "2024-02-29"))
	for i := 0; i < n; i++ {
		dir := "CRDT"
		if i%3 == 0 {
			dir = "DBIT"
		}
		fmt.Fprintf(&b, `
<Ntry><Amt Ccy="EUR">%d.%02d</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
  <BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>2024-03-01</Dt></ValDt><AcctSvcrRef>2024030100%06d</AcctSvcrRef>
  <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn><Prtry><Cd>NTRF+166+00931</Cd><Issr>DK</Issr></Prtry></BkTxCd>
  <NtryDtls><TxDtls>
    <Refs><MsgId>MSG%06d</MsgId><EndToEndId>E2E-%06d</EndToEndId></Refs>
    <Amt Ccy="EUR">%d.%02d</Amt><CdtDbtInd>%s</CdtDbtInd>
    <RltdPties>
      <Dbtr><Pty><Nm>Kunde Nummer %d GmbH &amp; Co. KG</Nm><PstlAdr><Ctry>DE</Ctry><AdrLine>Hauptstrasse %d</AdrLine><AdrLine>10115 Berlin</AdrLine></PstlAdr></Pty></Dbtr>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <Cdtr><Pty><Nm>Wir GmbH</Nm></Pty></Cdtr>
      <CdtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></CdtrAcct>
    </RltdPties>
    <RltdAgts><DbtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></DbtrAgt></RltdAgts>
    <RmtInf><Ustrd>Rechnung RE-2024-%06d vom 15.02.2024 Kundennummer %d</Ustrd></RmtInf>
  </TxDtls></NtryDtls>
  <AddtlNtryInf>SEPA-GUTSCHRIFT</AddtlNtryInf>
</Ntry>`, 1+i%5000, i%100, dir, i, i, i, 1+i%5000, i%100, dir, i, i, i, i)
	}
	b.WriteString(balXML("CLBD", "0.00", "CRDT", "2024-03-01"))
	b.WriteString("\n</Stmt></BkToCstmrStmt></Document>\n")
	return b.Bytes()
}

func BenchmarkParse053(b *testing.B) {
	const n = 10000
	data := bigStatement(n)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := &discard{}
		if err := Parse(bytes.NewReader(data), d); err != nil {
			b.Fatal(err)
		}
		if d.n != n {
			b.Fatalf("%d entries, want %d", d.n, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// xs:decimal and xs:date allow forms banks rarely write but may.
func TestLexicalForms(t *testing.T) {
	ntry := func(amt, date string) string {
		return `<Ntry><Amt Ccy="EUR">` + amt + `</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>` + date + `</Dt></BookgDt></Ntry>`
	}
	body := `<Stmt><Id>S</Id>` + ntry("5.", "2024-03-01+01:00") + ntry(".5", "2024-03-02Z") + ntry("007.10", "2024-03-03") + `</Stmt>`
	r := &recorder{}
	if err := Parse(strings.NewReader(doc("camt.053.001.02", "BkToCstmrStmt", body)), r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.stmts[0].entries {
		got = append(got, e.BookingDate+" "+e.Amount.String())
	}
	if d := cmp.Diff([]string{"2024-03-01 5", "2024-03-02 0.5", "2024-03-03 7.1"}, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
