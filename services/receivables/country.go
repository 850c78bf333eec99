package receivables

import (
	"strconv"

	"github.com/ledgerplatform/ledger/pkg/country"
)

// ValidCountry reports whether s is an ISO 3166-1 alpha-2 code (or XK);
// see pkg/country.
func ValidCountry(s string) bool { return country.Valid(s) }

func itoa(n int) string { return strconv.Itoa(n) }
