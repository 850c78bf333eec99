package csvimport

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ledgerplatform/ledger/services/bank"
)

type discard struct{}

func (discard) Statement(bank.Statement) error { return nil }
func (discard) Entry(bank.Entry) error         { return nil }
func (discard) End(bank.StatementEnd) error    { return nil }

// BenchmarkParse reads a 10,000-row Sparkasse CSV-CAMT export.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`"Auftragskonto";"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";"Glaeubiger ID";"Mandatsreferenz";"Kundenreferenz (End-to-End)";"Sammlerreferenz";"Lastschrift Ursprungsbetrag";"Auslagenersatz Ruecklastschrift";"Beguenstigter/Zahlungspflichtiger";"Kontonummer/IBAN";"BIC (SWIFT-Code)";"Betrag";"Waehrung";"Info"` + "\r\n")
	const rows = 10000
	for i := range rows {
		fmt.Fprintf(&buf, `"DE89370400440532013000";"%02d.09.26";"%02d.09.26";"FOLGELASTSCHRIFT";"Abschlag 09/2026 Vertragskonto %d";"DE98ZZZ09999999999";"M-4711";"E2E-%d";"";"";"";"Stadtwerke Musterstadt GmbH";"DE45120300001234567890";"BYLADEM1001";"-%d,%02d";"EUR";"Umsatz gebucht"`+"\r\n",
			i%28+1, i%28+1, i, i, i+1, i%100)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Parse(bytes.NewReader(data), discard{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "entries/s")
}
