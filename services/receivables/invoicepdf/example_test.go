package invoicepdf_test

import (
	"bytes"
	"fmt"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
	"github.com/ledgerplatform/ledger/services/receivables/invoicepdf"
)

func Example() {
	d := einvoicetest.Invoice19()
	xml, err := einvoice.CII(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	pdf, err := invoicepdf.Render(d, xml)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bytes.HasPrefix(pdf, []byte("%PDF-1.7")), invoicepdf.AttachmentName(d.Profile))
	// Output: true factur-x.xml
}
