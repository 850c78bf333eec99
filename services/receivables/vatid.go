package receivables

import "github.com/ledgerplatform/ledger/pkg/vatid"

// NormalizeVATID writes a VAT ID as VIES does (pkg/vatid, shared with
// payables).
func NormalizeVATID(s string) string { return vatid.Normalize(s) }

// CheckVATID returns what is wrong with a normalised VAT ID, "" when
// nothing is (pkg/vatid).
func CheckVATID(id string) string { return vatid.Check(id) }
