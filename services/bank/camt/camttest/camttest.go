// Package camttest generates camt.053 statements of any size for
// benchmarks and load tests: realistic entries (SEPA credit transfers
// and debits with parties, references and remittance text) whose booked
// closing balance agrees with the opening balance and the entries.
package camttest

import (
	"bytes"
	"fmt"

	"github.com/shopspring/decimal"
)

// Statement053 is one camt.053.001.08 statement of n entries for iban,
// booked on 2024-03-01, about 1.3 KB per entry. seq makes the bank
// references unique across statements.
func Statement053(n int, iban string, seq int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>GEN-%d</MsgId><CreDtTm>2024-03-01T20:00:00+01:00</CreDtTm></GrpHdr>
<Stmt><Id>GEN-%d</Id><ElctrncSeqNb>%d</ElctrncSeqNb><Acct><Id><IBAN>%s</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-02-29</Dt></Dt></Bal>
`, seq, seq, seq, iban)
	sum := decimal.Zero
	for i := 0; i < n; i++ {
		dir := "CRDT"
		amt := decimal.New(int64(100+i%500000), -2)
		if i%3 == 0 {
			dir = "DBIT"
			sum = sum.Sub(amt)
		} else {
			sum = sum.Add(amt)
		}
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
  <BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>2024-03-01</Dt></ValDt><AcctSvcrRef>GEN%04d-%08d</AcctSvcrRef>
  <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn><Prtry><Cd>NTRF+166+00931</Cd><Issr>DK</Issr></Prtry></BkTxCd>
  <NtryDtls><TxDtls>
    <Refs><EndToEndId>E2E-%04d-%08d</EndToEndId></Refs>
    <Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>
    <RltdPties>
      <Dbtr><Pty><Nm>Kunde Nummer %d GmbH &amp; Co. KG</Nm><PstlAdr><Ctry>DE</Ctry><AdrLine>Hauptstrasse %d</AdrLine><AdrLine>10115 Berlin</AdrLine></PstlAdr></Pty></Dbtr>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <Cdtr><Pty><Nm>Lieferant %d AG</Nm></Pty></Cdtr>
      <CdtrAcct><Id><IBAN>DE75512108001245126199</IBAN></Id></CdtrAcct>
    </RltdPties>
    <RltdAgts><DbtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></DbtrAgt></RltdAgts>
    <RmtInf><Ustrd>Rechnung RE-2024-%08d vom 15.02.2024 Kundennummer %d</Ustrd></RmtInf>
  </TxDtls></NtryDtls>
  <AddtlNtryInf>SEPA-UEBERWEISUNG</AddtlNtryInf>
</Ntry>
`, amt.StringFixed(2), dir, seq, i, seq, i, amt.StringFixed(2), dir, i, i%200, i, i, i)
	}
	ind := "CRDT"
	if sum.IsNegative() {
		ind = "DBIT"
	}
	fmt.Fprintf(&b, `<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>2024-03-01</Dt></Dt></Bal>
</Stmt></BkToCstmrStmt></Document>
`, sum.Abs().StringFixed(2), ind)
	return b.Bytes()
}
