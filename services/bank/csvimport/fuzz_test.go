package csvimport

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// checkSink fails the fuzz run when Parse breaks its promises to a sink.
type checkSink struct {
	t       *testing.T
	state   int // 0 before the statement, 1 in it, 2 after its end
	entries int
	sum     decimal.Decimal
}

func (c *checkSink) Statement(s bank.Statement) error {
	if c.state != 0 || s.Kind != "csv" {
		c.t.Fatalf("statement %+v in state %d", s, c.state)
	}
	c.state = 1
	return nil
}

func (c *checkSink) Entry(e bank.Entry) error {
	if c.state != 1 {
		c.t.Fatalf("entry in state %d", c.state)
	}
	if e.Amount.IsZero() || len(e.BookingDate) != 10 || (e.ValueDate != "" && len(e.ValueDate) != 10) || len(e.Currency) != 3 {
		c.t.Fatalf("bad entry %+v", e)
	}
	for _, s := range []string{e.CounterpartyName, e.Reference, e.BookingText, e.EndToEndID, e.MandateID, e.CreditorID, e.BankReference} {
		if !utf8.ValidString(s) || len(s) > MaxTextBytes {
			c.t.Fatalf("bad text %q", s)
		}
	}
	c.entries++
	c.sum = c.sum.Add(e.Amount)
	return nil
}

func (c *checkSink) End(end bank.StatementEnd) error {
	if c.state != 1 || end.Entries != c.entries || !end.Sum.Equal(c.sum) {
		c.t.Fatalf("end %+v after %d entries summing to %s, state %d", end, c.entries, c.sum, c.state)
	}
	c.state = 2
	return nil
}

func (c *checkSink) RowError(e RowError) error {
	if c.state != 1 || e.Row < 1 {
		c.t.Fatalf("row error %+v in state %d", e, c.state)
	}
	return nil
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &checkSink{t: t}
		if err := Parse(bytes.NewReader(data), s); err == nil && s.state != 2 {
			t.Fatalf("no error, but the statement was not ended (state %d)", s.state)
		}
	})
}
