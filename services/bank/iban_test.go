package bank_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/services/bank"
)

func TestValidCurrency(t *testing.T) {
	for c, want := range map[string]bool{"EUR": true, "USD": true, "CHF": true, "GBP": true, "eur": false, "XXX": false, "XAU": false, "EURO": false, "": false} {
		if bank.ValidCurrency(c) != want {
			t.Errorf("%q: %v", c, !want)
		}
	}
}
