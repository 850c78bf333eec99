package einvoice_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

// lineEnds writes every line end as \n.
func lineEnds(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// FuzzCII feeds arbitrary texts and numbers through Compute and CII: either
// Compute rejects the document with INVALID_INPUT, or the XML is well-formed,
// in schema order, adds up, and carries the texts unchanged.
func FuzzCII(f *testing.F) {
	f.Add("RE-1", "Müller & Söhne <GmbH>", "Beratung \"Ü\"", "12.5", "120.00", "0", "19", "S")
	f.Add("R'1", "A]]>B", "x\ny", "-3", "0.0001", "0.01", "7", "S")
	f.Add("1", "a", "b", "1e3", "1.23456", "5", "0", "Z")
	f.Add(" ", "\x00", "\xff", "0", "-1", "-1", "abc", "K")
	f.Fuzz(func(t *testing.T, number, seller, desc, qty, price, discount, rate, cat string) {
		d := einvoicetest.Invoice19()
		d.Number, d.Seller.Name = number, seller
		l := &d.Lines[0]
		l.Description = desc
		l.TaxCategory = einvoice.TaxCategory(cat)
		for _, p := range []struct {
			s   string
			dst *decimal.Decimal
		}{{qty, &l.Quantity}, {price, &l.UnitPrice}, {discount, &l.Discount}, {rate, &l.TaxRate}} {
			v, err := decimal.NewFromString(p.s)
			if err != nil || len(p.s) > 40 {
				return // not a number the service could hand over
			}
			*p.dst = v
		}
		b, err := einvoice.CII(d)
		if err != nil {
			if !errs.Is(err, errs.InvalidInput) {
				t.Fatalf("CII: %v", err)
			}
			return
		}
		root := parse(t, b)
		var problems []string
		checkStructure(root, "CrossIndustryInvoice", &problems)
		if len(problems) > 0 {
			t.Fatalf("structure:\n  %s\n%s", strings.Join(problems, "\n  "), b)
		}
		checkArithmetic(t, root, d.Currency)
		agr := root.one(t, "SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement")
		for _, c := range []struct{ got, want string }{
			{root.one(t, "ExchangedDocument/ID").text, number},
			{agr.one(t, "SellerTradeParty/Name").text, seller},
			{root.one(t, "SupplyChainTradeTransaction").all("IncludedSupplyChainTradeLineItem")[0].one(t, "SpecifiedTradeProduct/Name").text, desc},
		} {
			// An XML parser normalises the line ends it reads as they
			// stand (a \r written as &#xD; stays); everything else must
			// come back as it went in.
			if lineEnds(c.got) != lineEnds(c.want) {
				t.Fatalf("text %q came back as %q", c.want, c.got)
			}
		}
	})
}
