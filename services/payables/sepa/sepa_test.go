package sepa

import (
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

const xsd = "testdata/pain.001.001.09.xsd"

// validate runs xmllint against the pain.001.001.09 schema; xmllint
// (Debian libxml2-utils, `make tools`) is required, never skipped.
func validate(t *testing.T, doc []byte) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("xmllint not found (apt-get install libxml2-utils, or make tools): %v", err)
	}
	f := filepath.Join(t.TempDir(), "pain.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", xsd, f).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s\ndocument:\n%s", err, out, doc)
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

var (
	debtor = Party{Name: "Muster GmbH", Address: Address{Street: "Hauptstr.", BuildingNumber: "1", PostCode: "10115", Town: "Berlin", Country: "DE"}}
	acct1  = Account{IBAN: "DE89 3704 0044 0532 0130 00", BIC: "COBADEFFXXX"}
	acct2  = Account{IBAN: "DE02120300000000202051"} // no BIC: NOTPROVIDED
	vendor = Party{Name: "Lieferant AG", Address: Address{Street: "Industrieweg", BuildingNumber: "7a", PostCode: "80333", Town: "München", Country: "DE"}}
	vacct  = Account{IBAN: "AT611904300234573201", BIC: "BKAUATWW"}
)

func TestCreditTransferLiteral(t *testing.T) {
	p := Payment{
		MsgID:     "RUN-2026-0001",
		CreatedAt: time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("CET", 3600)),
		Debtor:    debtor,
		Transfers: []Transfer{{
			ExecutionDate: day(2026, 3, 2), DebtorAccount: acct1,
			InstrID: "RUN-2026-0001-1", EndToEndID: "INV-4711",
			Amount: dec("1190.5"), Creditor: vendor, CreditorAccount: vacct,
			InvoiceNumbers: []string{"R-4711"},
		}},
	}
	got, err := CreditTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">
  <CstmrCdtTrfInitn>
    <GrpHdr>
      <MsgId>RUN-2026-0001</MsgId>
      <CreDtTm>2026-03-01T08:30:00Z</CreDtTm>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>1190.50</CtrlSum>
      <InitgPty>
        <Nm>Muster GmbH</Nm>
      </InitgPty>
    </GrpHdr>
    <PmtInf>
      <PmtInfId>RUN-2026-0001-1</PmtInfId>
      <PmtMtd>TRF</PmtMtd>
      <BtchBookg>true</BtchBookg>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>1190.50</CtrlSum>
      <PmtTpInf>
        <SvcLvl>
          <Cd>SEPA</Cd>
        </SvcLvl>
      </PmtTpInf>
      <ReqdExctnDt>
        <Dt>2026-03-02</Dt>
      </ReqdExctnDt>
      <Dbtr>
        <Nm>Muster GmbH</Nm>
        <PstlAdr>
          <StrtNm>Hauptstr.</StrtNm>
          <BldgNb>1</BldgNb>
          <PstCd>10115</PstCd>
          <TwnNm>Berlin</TwnNm>
          <Ctry>DE</Ctry>
        </PstlAdr>
      </Dbtr>
      <DbtrAcct>
        <Id>
          <IBAN>DE89370400440532013000</IBAN>
        </Id>
      </DbtrAcct>
      <DbtrAgt>
        <FinInstnId>
          <BICFI>COBADEFFXXX</BICFI>
        </FinInstnId>
      </DbtrAgt>
      <ChrgBr>SLEV</ChrgBr>
      <CdtTrfTxInf>
        <PmtId>
          <InstrId>RUN-2026-0001-1</InstrId>
          <EndToEndId>INV-4711</EndToEndId>
        </PmtId>
        <Amt>
          <InstdAmt Ccy="EUR">1190.50</InstdAmt>
        </Amt>
        <CdtrAgt>
          <FinInstnId>
            <BICFI>BKAUATWW</BICFI>
          </FinInstnId>
        </CdtrAgt>
        <Cdtr>
          <Nm>Lieferant AG</Nm>
          <PstlAdr>
            <StrtNm>Industrieweg</StrtNm>
            <BldgNb>7a</BldgNb>
            <PstCd>80333</PstCd>
            <TwnNm>Muenchen</TwnNm>
            <Ctry>DE</Ctry>
          </PstlAdr>
        </Cdtr>
        <CdtrAcct>
          <Id>
            <IBAN>AT611904300234573201</IBAN>
          </Id>
        </CdtrAcct>
        <RmtInf>
          <Ustrd>R-4711</Ustrd>
        </RmtInf>
      </CdtTrfTxInf>
    </PmtInf>
  </CstmrCdtTrfInitn>
</Document>
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("document (-want +got):\n%s", diff)
	}
	validate(t, got)
}

// block is what TestCreditTransferGroups checks of each PmtInf.
type block struct {
	ID, Date, IBAN, Agent, NbOfTxs, CtrlSum string
	EndToEnd                                []string
}

func TestCreditTransferGroups(t *testing.T) {
	tr := func(date time.Time, acct Account, e2e, amount string, inv ...string) Transfer {
		return Transfer{ExecutionDate: date, DebtorAccount: acct, EndToEndID: e2e, Amount: dec(amount),
			Creditor: vendor, CreditorAccount: vacct, InvoiceNumbers: inv}
	}
	p := Payment{
		MsgID: "RUN-7", CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Debtor: debtor,
		Transfers: []Transfer{
			tr(day(2026, 3, 3), acct1, "E1", "100.00", "A-1"),
			tr(day(2026, 3, 2), acct1, "E2", "0.01", "A-2"),
			tr(day(2026, 3, 3), acct2, "E3", "250", "A-3", "A-4"),
			tr(day(2026, 3, 3), acct1, "E4", "999999999.99", "A-5"),
			tr(day(2026, 3, 2), acct2, "", "12.30"),
		},
	}
	doc, err := CreditTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, doc)

	var d document
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var got []block
	for _, pi := range d.Init.PmtInf {
		b := block{ID: pi.PmtInfID, Date: pi.ReqdExctnDt.Dt, IBAN: pi.DbtrAcct.ID.IBAN, NbOfTxs: pi.NbOfTxs, CtrlSum: pi.CtrlSum,
			Agent: pi.DbtrAgt.FinInstnID.BICFI}
		if o := pi.DbtrAgt.FinInstnID.Othr; o != nil {
			b.Agent = "Othr " + o.ID
		}
		for _, tx := range pi.CdtTrfTxInf {
			b.EndToEnd = append(b.EndToEnd, tx.PmtID.EndToEndID)
		}
		got = append(got, b)
	}
	want := []block{
		{"RUN-7-1", "2026-03-02", "DE02120300000000202051", "Othr NOTPROVIDED", "1", "12.30", []string{"NOTPROVIDED"}},
		{"RUN-7-2", "2026-03-02", "DE89370400440532013000", "COBADEFFXXX", "1", "0.01", []string{"E2"}},
		{"RUN-7-3", "2026-03-03", "DE02120300000000202051", "Othr NOTPROVIDED", "1", "250.00", []string{"E3"}},
		{"RUN-7-4", "2026-03-03", "DE89370400440532013000", "COBADEFFXXX", "2", "1000000099.99", []string{"E1", "E4"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payment blocks (-want +got):\n%s", diff)
	}
	if d.Init.GrpHdr.NbOfTxs != "5" || d.Init.GrpHdr.CtrlSum != "1000000362.30" {
		t.Errorf("group header NbOfTxs %s CtrlSum %s, want 5 1000000362.30", d.Init.GrpHdr.NbOfTxs, d.Init.GrpHdr.CtrlSum)
	}
	if got := d.Init.PmtInf[2].CdtTrfTxInf[0].RmtInf.Ustrd; got != "A-3, A-4" {
		t.Errorf("remittance %q, want %q", got, "A-3, A-4")
	}
	if d.Init.PmtInf[0].CdtTrfTxInf[0].RmtInf != nil {
		t.Error("a transfer without invoice numbers has remittance information")
	}
}

func TestCreditTransferUmlautsAndLongRemittance(t *testing.T) {
	var invoices []string
	for i := 1; i <= 30; i++ {
		invoices = append(invoices, fmt.Sprintf("RE-2026-%04d", i))
	}
	p := Payment{
		MsgID: "RUN-8", CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Debtor: Party{Name: "Bäckerei Größe & Söhne", Address: Address{Town: "Düsseldorf", Country: "de"}},
		Transfers: []Transfer{{
			ExecutionDate: day(2026, 3, 2), DebtorAccount: acct1, EndToEndID: "E-1", Amount: dec("10"),
			Creditor: Party{Name: "Société Générale d'Équipement — Zürich", Address: Address{
				Street: "Bahnhofstraße", BuildingNumber: "12", PostCode: "8001", Town: "Zürich", Country: "CH"}},
			CreditorAccount: Account{IBAN: "CH9300762011623852957"},
			InvoiceNumbers:  invoices,
		}},
	}
	doc, err := CreditTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, doc)
	var d document
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	pi := d.Init.PmtInf[0]
	tx := pi.CdtTrfTxInf[0]
	got := []string{d.Init.GrpHdr.InitgPty.Nm, pi.Dbtr.Nm, pi.Dbtr.PstlAdr.TwnNm, pi.Dbtr.PstlAdr.Ctry,
		tx.Cdtr.Nm, tx.Cdtr.PstlAdr.StrtNm, tx.Cdtr.PstlAdr.TwnNm}
	want := []string{"Baeckerei Groesse + Soehne", "Baeckerei Groesse + Soehne", "Duesseldorf", "DE",
		"Societe Generale d'Equipement - Zuerich", "Bahnhofstrasse", "Zuerich"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("converted texts (-want +got):\n%s", diff)
	}
	// 10 whole numbers of 12 characters joined by ", " are 138; the
	// count of the other 20 does not fit beside them, so 9 and "(+21)".
	wantRmt := strings.Join(invoices[:9], ", ") + " (+21)"
	if tx.RmtInf == nil || tx.RmtInf.Ustrd != wantRmt {
		t.Errorf("remittance %+v, want %q", tx.RmtInf, wantRmt)
	}
	if len(wantRmt) > 140 {
		t.Fatalf("test expectation longer than 140: %d", len(wantRmt))
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Müller", "Mueller"},
		{"ÄÖÜ äöü ß", "AeOeUe aeoeue ss"},
		{"Crème brûlée", "Creme brulee"},
		{"Łódź", "Lodz"},
		{"Smith & Co. ; Ltd!", "Smith + Co. , Ltd."},
		{"a\tb\n\nc", "a b c"},
		{"Preis: 10 €", "Preis: 10 EUR"},
		{"<tag> {x} [y] #1 * @ = %", "tag x y 1"},
		{"日本", ""},
		{"Mu\u0308ller", "Mueller"}, // decomposed ü
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRemittance(t *testing.T) {
	long := strings.Repeat("X", 150)
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"none", nil, ""},
		{"blank ones dropped", []string{"", " ", "R1"}, "R1"},
		{"joined", []string{"R1", "R2", "R3"}, "R1, R2, R3"},
		{"exactly 140", []string{strings.Repeat("A", 68), strings.Repeat("B", 70)}, strings.Repeat("A", 68) + ", " + strings.Repeat("B", 70)},
		{"second does not fit", []string{strings.Repeat("A", 68), strings.Repeat("B", 71)}, strings.Repeat("A", 68) + " (+1)"},
		{"one too long is cut", []string{long}, long[:140]},
		{"umlauts converted", []string{"Rechnung Nr. 5/Ü"}, "Rechnung Nr. 5/Ue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Remittance(tt.in)
			if got != tt.want || len(got) > 140 {
				t.Errorf("Remittance = %q (%d), want %q", got, len(got), tt.want)
			}
		})
	}
}

func TestValidIBAN(t *testing.T) {
	tests := []struct {
		iban string
		ok   bool
	}{
		{"DE89370400440532013000", true},
		{"FR1420041010050500013M02606", true},
		{"NL91ABNA0417164300", true},
		{"GB29NWBK60161331926819", true},
		{"CH9300762011623852957", true},
		{"DE89370400440532013001", false}, // check digits
		{"DE8937040044053201300", false},  // length
		{"BR1800360305000010009795493C1", false},
		{"US12345678901234", false},
		{"DE89-3704-0044-0532-0130-00", false},
		{"", false},
	}
	for _, tt := range tests {
		if err := ValidIBAN(tt.iban); (err == nil) != tt.ok {
			t.Errorf("ValidIBAN(%q) = %v, want ok %v", tt.iban, err, tt.ok)
		}
	}
}

func TestCreditTransferRefuses(t *testing.T) {
	base := func() Payment {
		return Payment{
			MsgID: "RUN-9", CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Debtor: debtor,
			Transfers: []Transfer{{ExecutionDate: day(2026, 3, 2), DebtorAccount: acct1, EndToEndID: "E-1",
				Amount: dec("10.00"), Creditor: vendor, CreditorAccount: vacct, InvoiceNumbers: []string{"R1"}}},
		}
	}
	tests := []struct {
		name   string
		change func(*Payment)
		want   error
		field  string
	}{
		{"bad IBAN check digits", func(p *Payment) { p.Transfers[0].CreditorAccount.IBAN = "DE89370400440532013001" }, ErrInvalidIBAN, "transfers[0].creditor_account.iban"},
		{"IBAN of the wrong length", func(p *Payment) { p.Transfers[0].CreditorAccount.IBAN = "AT61190430023457320" }, ErrInvalidIBAN, "transfers[0].creditor_account.iban"},
		{"IBAN outside SEPA", func(p *Payment) { p.Transfers[0].CreditorAccount.IBAN = "BR1800360305000010009795493C1" }, ErrInvalidIBAN, "transfers[0].creditor_account.iban"},
		{"bad debtor IBAN", func(p *Payment) { p.Transfers[0].DebtorAccount.IBAN = "DE00" }, ErrInvalidIBAN, "transfers[0].debtor_account.iban"},
		{"bad BIC", func(p *Payment) { p.Transfers[0].CreditorAccount.BIC = "BKAU-AT" }, ErrInvalidBIC, "transfers[0].creditor_account.bic"},
		{"zero amount", func(p *Payment) { p.Transfers[0].Amount = dec("0") }, ErrInvalidAmount, "transfers[0].amount"},
		{"negative amount", func(p *Payment) { p.Transfers[0].Amount = dec("-5") }, ErrInvalidAmount, "transfers[0].amount"},
		{"three decimals", func(p *Payment) { p.Transfers[0].Amount = dec("1.005") }, ErrInvalidAmount, "transfers[0].amount"},
		{"over the maximum", func(p *Payment) { p.Transfers[0].Amount = dec("1000000000.00") }, ErrInvalidAmount, "transfers[0].amount"},
		{"msg id too long", func(p *Payment) { p.MsgID = strings.Repeat("M", 36) }, ErrInvalidID, "msg_id"},
		{"end-to-end id with umlaut", func(p *Payment) { p.Transfers[0].EndToEndID = "Rechnung-Ü" }, ErrInvalidID, "transfers[0].end_to_end_id"},
		{"end-to-end id with //", func(p *Payment) { p.Transfers[0].EndToEndID = "A//B" }, ErrInvalidID, "transfers[0].end_to_end_id"},
		{"no msg id", func(p *Payment) { p.MsgID = "" }, ErrMissing, "msg_id"},
		{"no transfers", func(p *Payment) { p.Transfers = nil }, ErrMissing, "transfers"},
		{"no execution date", func(p *Payment) { p.Transfers[0].ExecutionDate = time.Time{} }, ErrMissing, "transfers[0].execution_date"},
		{"creditor without town", func(p *Payment) { p.Transfers[0].Creditor.Address.Town = "" }, ErrMissing, "transfers[0].creditor.address.town"},
		{"creditor name only symbols", func(p *Payment) { p.Transfers[0].Creditor.Name = "日本" }, ErrMissing, "transfers[0].creditor.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			tt.change(&p)
			doc, err := CreditTransfer(p)
			if !errors.Is(err, tt.want) || doc != nil {
				t.Fatalf("CreditTransfer = %v, want %v", err, tt.want)
			}
			e := errs.As(err)
			if e == nil || e.Code != errs.InvalidInput || len(e.Details) != 1 || e.Details[0].Field != tt.field {
				t.Fatalf("error %#v, want one INVALID_INPUT detail on %s", e, tt.field)
			}
		})
	}
	// The unchanged base is accepted and valid.
	doc, err := CreditTransfer(base())
	if err != nil {
		t.Fatal(err)
	}
	validate(t, doc)

	// A party without any address is written without one (within the
	// EEA none is needed) and is valid.
	noAddr := base()
	noAddr.Debtor.Address, noAddr.Transfers[0].Creditor.Address = Address{}, Address{}
	doc, err = CreditTransfer(noAddr)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "PstlAdr") {
		t.Fatalf("address written for parties without one:\n%s", doc)
	}
	validate(t, doc)

	// Several problems are all named.
	p := base()
	p.Transfers[0].CreditorAccount.IBAN = "DE00"
	p.Transfers[0].Amount = dec("0")
	_, err = CreditTransfer(p)
	if e := errs.As(err); e == nil || len(e.Details) != 2 {
		t.Fatalf("two problems: %v", err)
	}
}

// TestCreditTransferRandom: payments with arbitrary names, addresses and
// invoice numbers (any Unicode, any length) always give a file the
// schema accepts, with exact sums.
func TestCreditTransferRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019 äöüÄÖÜß&/-?:().,'+_;!\"<>{}#*éèçñøåłđ€日本\t\n")
	text := func(max int) string {
		r := make([]rune, rng.IntN(max+1))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return "N" + string(r)
	}
	ibans := []string{"DE89370400440532013000", "DE02120300000000202051", "AT611904300234573201", "NL91ABNA0417164300", "FR1420041010050500013M02606"}
	bics := []string{"", "COBADEFFXXX", "BYLADEM1001", "ABNANL2A"}
	party := func() Party {
		return Party{Name: text(100), Address: Address{Street: text(90), BuildingNumber: text(20), PostCode: text(20), Town: text(50), Country: "DE"}}
	}
	dir := t.TempDir()
	var files []string
	for i := 0; i < 25; i++ {
		p := Payment{MsgID: fmt.Sprintf("RND-%d", i), CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Debtor: party()}
		want := decimal.Zero
		for j := 0; j < 1+rng.IntN(8); j++ {
			amount := decimal.New(1+rng.Int64N(99999999), -2)
			want = want.Add(amount)
			var inv []string
			for k := 0; k < rng.IntN(15); k++ {
				inv = append(inv, text(30))
			}
			p.Transfers = append(p.Transfers, Transfer{
				ExecutionDate: day(2026, 3, 2+rng.IntN(3)), DebtorAccount: Account{IBAN: ibans[rng.IntN(2)], BIC: bics[rng.IntN(len(bics))]},
				EndToEndID: fmt.Sprintf("E-%d-%d", i, j), Amount: amount,
				Creditor: party(), CreditorAccount: Account{IBAN: ibans[rng.IntN(len(ibans))], BIC: bics[rng.IntN(len(bics))]},
				InvoiceNumbers: inv,
			})
		}
		doc, err := CreditTransfer(p)
		if err != nil {
			t.Fatalf("payment %d: %v", i, err)
		}
		var d document
		if err := xml.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		if d.Init.GrpHdr.CtrlSum != want.StringFixed(2) {
			t.Fatalf("payment %d: CtrlSum %s, want %s", i, d.Init.GrpHdr.CtrlSum, want.StringFixed(2))
		}
		blocks := decimal.Zero
		for _, pi := range d.Init.PmtInf {
			blocks = blocks.Add(decimal.RequireFromString(pi.CtrlSum))
		}
		if !blocks.Equal(want) {
			t.Fatalf("payment %d: blocks sum to %s, want %s", i, blocks, want)
		}
		f := filepath.Join(dir, fmt.Sprintf("p%d.xml", i))
		if err := os.WriteFile(f, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("xmllint not found (apt-get install libxml2-utils, or make tools): %v", err)
	}
	if out, err := exec.Command(bin, append([]string{"--noout", "--schema", xsd}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
}
