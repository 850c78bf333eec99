package country_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/country"
)

func TestValid(t *testing.T) {
	for code, want := range map[string]bool{"DE": true, "AT": true, "XK": true, "GR": true, "EL": false, "de": false, "D": false, "DEU": false, "": false, "ZZ": false} {
		if got := country.Valid(code); got != want {
			t.Errorf("Valid(%q) = %v", code, got)
		}
	}
}
