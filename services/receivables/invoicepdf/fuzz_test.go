package invoicepdf_test

import (
	"bytes"
	"testing"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

// FuzzRender lays out invoices with arbitrary texts where a client's words
// go (names, street, line description, note): Render either refuses the
// document as the e-invoice rules do (INVALID_INPUT) or returns a PDF,
// whichever fonts the text needs; it never panics.
func FuzzRender(f *testing.F) {
	f.Add("Kunden AG", "Kundenstraße 15", "Beratung", "Vielen Dank.")
	f.Add("Przedsiębiorstwo Łączność", "ul. Żółkiewskiego 12", "Dostawa wewnątrzwspólnotowa", "")
	f.Add("北京贸易有限公司 😀", "\t\r\n", "Ωμέγα "+string(make([]byte, 300)), "‮rtl")
	f.Add("(x) \\ ) (", "€ – · ²", "a\nb\n\n", "\xff\xfe")
	f.Fuzz(func(t *testing.T, buyer, street, desc, note string) {
		d := einvoicetest.Invoice19()
		d.Buyer.Name, d.Buyer.Street, d.Lines[0].Description = buyer, street, desc
		d.Notes = []string{note}
		x, err := einvoice.CII(d)
		if err != nil {
			return // FuzzCII covers what the XML refuses
		}
		p, err := invoicepdf.Render(d, x)
		if err != nil {
			if !errs.Is(err, errs.InvalidInput) {
				t.Fatalf("Render: %v", err)
			}
			return
		}
		if !bytes.HasPrefix(p, []byte("%PDF-1.7")) || !bytes.Contains(p, []byte("/AFRelationship /Data")) {
			t.Fatalf("not a PDF with the XML embedded")
		}
	})
}
