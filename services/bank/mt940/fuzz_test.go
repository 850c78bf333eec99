package mt940

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// FuzzParse: no input makes the parser panic or hang, every error is one
// of the two documented 400s, and what it hands over is well formed.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.sta")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(":20:X\n:61:2312300102RC1,NTRF//A\n:86:166?00X?20EREF+\n?2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256<<10 {
			t.Skip("bounded input")
		}
		var rec recorder
		err := Parse(bytes.NewReader(data), &rec)
		if err != nil {
			e := errs.As(err)
			if e == nil || (e.Code != errs.InvalidInput && e.Code != errs.InvalidFileType) {
				t.Fatalf("error outside the documented ones: %v", err)
			}
			return
		}
		for _, s := range rec.stmts {
			if !s.ended {
				t.Fatal("statement without End")
			}
			if s.End.Entries != len(s.Entries) {
				t.Fatalf("End says %d entries, %d handed over", s.End.Entries, len(s.Entries))
			}
			for _, e := range s.Entries {
				checkEntry(t, e)
			}
		}
	})
}

func checkEntry(t *testing.T, e bank.Entry) {
	t.Helper()
	for _, s := range []string{e.BookingDate, e.ValueDate} {
		if len(s) != 10 {
			t.Fatalf("date %q", s)
		}
	}
	for _, s := range []string{e.Reference, e.CounterpartyName, e.BookingText, e.EndToEndID, e.BankReference} {
		if !validText(s) {
			t.Fatalf("text %q is not clean UTF-8", s)
		}
	}
	if len([]rune(e.Reference)) > maxReference || len([]rune(e.CounterpartyName)) > maxName {
		t.Fatal("text beyond its bound")
	}
}

func validText(s string) bool {
	for _, r := range s {
		if r == 0xFFFD || r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return false
		}
	}
	return true
}
