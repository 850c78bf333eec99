package bank

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// TestParseErrorKeepsStoreErrorsInside: an error of writing what was
// parsed comes back through the parser; it is an internal error, never a
// "file cannot be read" answer quoting the database.
func TestParseErrorKeepsStoreErrorsInside(t *testing.T) {
	db := errors.New(`ERROR: new row for relation "transactions" violates check constraint "transactions_amount_check" (SQLSTATE 23514)`)
	for _, format := range []string{FormatCAMT, FormatMT940, FormatCSV} {
		code, msg, details := errs.Public((&Service{}).parseError(format, stored(db)))
		if code != errs.Internal || strings.Contains(msg, "constraint") || len(details) != 0 {
			t.Errorf("%s: %s %q %v", format, code, msg, details)
		}
	}
	// A parser's own refusal still reads as one.
	code, msg, _ := errs.Public((&Service{}).parseError(FormatCAMT, errors.New("line 3: unexpected end of element")))
	if code != errs.InvalidInput || !strings.Contains(msg, "cannot be read") {
		t.Errorf("parse error: %s %q", code, msg)
	}
}

// TestZIPBudget: an archive's entries stop at the unpacked budget, shared
// by all entries, and the refusal says so.
func TestZIPBudget(t *testing.T) {
	left := int64(10)
	a := &budgetReader{r: strings.NewReader("0123456"), left: &left}
	b := &budgetReader{r: strings.NewReader("0123456"), left: &left}
	if got, err := io.ReadAll(a); err != nil || string(got) != "0123456" {
		t.Fatalf("first entry: %q %v", got, err)
	}
	got, err := io.ReadAll(b)
	if string(got) != "012" || !errors.Is(err, errZIPTooLarge) {
		t.Fatalf("second entry: %q %v", got, err)
	}
	code, msg, _ := errs.Public(zipEntryError("b.xml", err))
	if code != errs.InvalidInput || !strings.Contains(msg, "more than 256 MB") {
		t.Errorf("%s %q", code, msg)
	}
}
