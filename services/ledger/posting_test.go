package ledger_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// taxChart is a chart of the few SKR04 accounts and codes the tax split
// needs.
type taxChart struct{}

func (taxChart) Account(n string) (ledger.Account, bool) {
	types := map[string]string{"1200": ledger.Asset, "1800": ledger.Asset, "0650": ledger.Asset, "3300": ledger.Liability,
		"4400": ledger.Revenue, "6300": ledger.Expense}
	t, ok := types[n]
	return ledger.Account{Number: n, Type: t, IsActive: true}, ok
}

func (taxChart) TaxCode(c string) (ledger.TaxCode, bool) {
	switch c {
	case "USt19":
		return ledger.TaxCode{Code: c, Kind: ledger.TaxOutput, Rate: money.MustParse("19"), VATAccount: "3806", IsActive: true}, true
	case "VSt19":
		return ledger.TaxCode{Code: c, Kind: ledger.TaxInput, Rate: money.MustParse("19"), VATAccount: "1406", IsActive: true}, true
	}
	return ledger.TaxCode{}, false
}

// TestTaxSide: the VAT account takes the side of the revenue (output VAT)
// or the expense or asset (input VAT), so that a credit note with the
// invoice's code takes back the VAT on the side it was posted.
func TestTaxSide(t *testing.T) {
	t.Parallel()
	type ev struct{ Debit, Credit, Amount string }
	tests := []struct {
		name                string
		debit, credit, code string
		want                []ev
	}{
		{"sales invoice", "1200", "4400", "USt19", []ev{{"1200", "4400", "100.00"}, {"1200", "3806", "19.00"}}},
		{"cash sale", "1800", "4400", "USt19", []ev{{"1800", "4400", "100.00"}, {"1800", "3806", "19.00"}}},
		{"sales credit note", "4400", "1200", "USt19", []ev{{"4400", "1200", "100.00"}, {"3806", "1200", "19.00"}}},
		{"purchase invoice", "6300", "3300", "VSt19", []ev{{"6300", "3300", "100.00"}, {"1406", "3300", "19.00"}}},
		{"asset purchase", "0650", "3300", "VSt19", []ev{{"0650", "3300", "100.00"}, {"1406", "3300", "19.00"}}},
		{"vendor credit note", "3300", "6300", "VSt19", []ev{{"3300", "6300", "100.00"}, {"3300", "1406", "19.00"}}},
		{"vendor credit note on an asset", "3300", "0650", "VSt19", []ev{{"3300", "0650", "100.00"}, {"3300", "1406", "19.00"}}},
		{"refund of a cash purchase", "1800", "6300", "VSt19", []ev{{"1800", "6300", "100.00"}, {"1800", "1406", "19.00"}}},
	}
	for _, tt := range tests {
		_, events, err := ledger.Expand(ledger.Booking{BookingDate: "2026-03-02", Description: tt.name,
			Lines: []ledger.Line{{AccountDebit: tt.debit, AccountCredit: tt.credit, Amount: money.MustParse("119.00"), TaxCode: tt.code}}}, taxChart{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []ev
		for _, e := range events {
			got = append(got, ev{e.AccountDebit, e.AccountCredit, e.Amount.StringFixed(2)})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
