package payables

import "github.com/ledgerplatform/ledger/pkg/country"

// ValidCountry reports whether s is an ISO 3166-1 alpha-2 code (or XK);
// see pkg/country.
func ValidCountry(s string) bool { return country.Valid(s) }
