package bank

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestDedupKey(t *testing.T) {
	amt := decimal.RequireFromString
	base := Entry{BookingDate: "2025-03-03", Amount: amt("-10.50"), CounterpartyIBAN: "DE89370400440532013000", Reference: "RE 4711"}
	fp := "fp:" + Fingerprint(base)
	with := func(f func(*Entry)) Entry { e := base; f(&e); return e }
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    []string
	}{
		{"bank reference first", []Entry{with(func(e *Entry) { e.BankReference = " 2025030312345 "; e.EndToEndID = "E2E-1" })}, []string{"ref:2025030312345"}},
		{"NONREF is no reference", []Entry{with(func(e *Entry) { e.BankReference = "NONREF"; e.EndToEndID = "E2E-1" })}, []string{"e2e:E2E-1"}},
		{"NOTPROVIDED in any case", []Entry{with(func(e *Entry) { e.BankReference = "notprovided"; e.EndToEndID = "NOTPROVIDED" })}, []string{fp + ":1"}},
		{"EndToEndId without a bank reference", []Entry{with(func(e *Entry) { e.EndToEndID = "E2E-1" })}, []string{"e2e:E2E-1"}},
		{"fingerprint", []Entry{base}, []string{fp + ":1"}},
		{"two identical entries both count", []Entry{base, base, base}, []string{fp + ":1", fp + ":2", fp + ":3"}},
		{"another amount is another fingerprint", []Entry{base, with(func(e *Entry) { e.Amount = amt("-10.51") })},
			[]string{fp + ":1", "fp:" + Fingerprint(with(func(e *Entry) { e.Amount = amt("-10.51") })) + ":1"}},
		{"a batch booking's details share the reference", []Entry{
			with(func(e *Entry) { e.BankReference = "B1"; e.BatchRef = "B1" }),
			with(func(e *Entry) { e.BankReference = "B1"; e.BatchRef = "B1"; e.Amount = amt("-3") }),
		}, []string{"ref:B1", "ref:B1#2"}},
		{"references and fingerprints count apart", []Entry{with(func(e *Entry) { e.BankReference = "R" }), base, with(func(e *Entry) { e.BankReference = "R" }), base},
			[]string{"ref:R", fp + ":1", "ref:R#2", fp + ":2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDeduper()
			for i, e := range tc.entries {
				if got := d.Key(e); got != tc.want[i] {
					t.Errorf("entry %d: %q, want %q", i, got, tc.want[i])
				}
			}
		})
	}
}

// TestFingerprintForms: what a bank writes differently for the same
// transaction does not change the fingerprint; what tells two apart does.
func TestFingerprintForms(t *testing.T) {
	a := Entry{BookingDate: "2025-03-03", Amount: decimal.RequireFromString("10.50"), CounterpartyIBAN: "DE89370400440532013000", Reference: "RE 4711 Danke"}
	b := Entry{BookingDate: "2025-03-03", Amount: decimal.RequireFromString("10.5"), CounterpartyIBAN: "de89 3704 0044 0532 0130 00", Reference: " RE  4711 Danke "}
	if Fingerprint(a) != Fingerprint(b) {
		t.Fatal("the same transaction written differently has two fingerprints")
	}
	for _, f := range []func(*Entry){
		func(e *Entry) { e.BookingDate = "2025-03-04" },
		func(e *Entry) { e.Amount = e.Amount.Neg() },
		func(e *Entry) { e.CounterpartyIBAN = "" },
		func(e *Entry) { e.Reference = "RE 4712 Danke" },
	} {
		c := a
		f(&c)
		if Fingerprint(c) == Fingerprint(a) {
			t.Errorf("%+v has the fingerprint of %+v", c, a)
		}
	}
}
