package ledger_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// FuzzAdjust feeds the adjust parser what a reviewer may type: it never
// panics, leaves the draft it was given alone, and refuses in the error
// vocabulary (a 4xx code, never INTERNAL).
func FuzzAdjust(f *testing.F) {
	for _, s := range []string{
		"Konto 6805 statt 6815", "use account 3300 instead of account 1800.", "Konto 6815 durch 6805 ersetzen",
		"7 % statt 19 %", "USt 7% statt 19%", "Datum: 1.3.2025", "booking date 2025-03-31",
		"Betrag 238,00", "amount 1.234,56 and 7%", "Buchungstext: Miete März; Konto 6310",
		"aufteilen auf 6805 und 6815", "split 60/40 onto 6805, 6815", "bitte nimm 4400 & 19%",
	} {
		f.Add(s)
	}
	chart := newDRChart()
	f.Fuzz(func(t *testing.T, instruction string) {
		draft := drDraft()
		before := drDraft()
		_, _, err := ledger.Adjust(draft, instruction, chart)
		if diff := cmp.Diff(before, draft); diff != "" {
			t.Fatalf("Adjust(%q) changed the draft it was given (-before +after):\n%s", instruction, diff)
		}
		var e *errs.Error
		if err != nil && (!errors.As(err, &e) || errs.Status(e.Code) >= 500) {
			t.Fatalf("Adjust(%q) = %v, want a client error", instruction, err)
		}
	})
}
