package einvoice_test

import (
	"bytes"
	"fmt"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

// The receivables service maps its invoice onto a Document, computes it
// (validation included) and writes the XML; invoicepdf.Render then embeds
// that XML in the PDF.
func Example() {
	d := einvoicetest.Invoice19() // 12.5 h at 120.00 and 3 licences at 333.3333, 19 %
	if err := d.Compute(); err != nil {
		fmt.Println(err) // errs.InvalidInput with one detail per offending field
		return
	}
	for _, g := range d.TaxBreakdown {
		fmt.Println(g.Category, einvoice.Amount(g.Rate), einvoice.Amount(g.Basis), einvoice.Amount(g.Tax))
	}
	fmt.Println(einvoice.Amount(d.Totals.Grand))

	xml, err := einvoice.CII(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bytes.Contains(xml, []byte("<ram:GrandTotalAmount>2975.00</ram:GrandTotalAmount>")))
	// Output:
	// S 19.00 2500.00 475.00
	// 2975.00
	// true
}
