package reporting

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

func TestParsePeriod(t *testing.T) {
	now := time.Date(2025, 8, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		period string
		start  int
		want   Window
	}{
		{"2025-03", 1, Window{Period: "2025-03", FiscalYear: 2025, Start: "2025-01", End: "2025-12", Closing: "2025-13",
			Through: "2025-03", PeriodFrom: "2025-03", PeriodTo: "2025-03"}},
		{"2025", 1, Window{Period: "2025", FiscalYear: 2025, Start: "2025-01", End: "2025-12", Closing: "2025-13",
			Through: "2025-12", WithClosing: true, PeriodFrom: "2025-01", PeriodTo: "2025-12", PeriodClosing: true}},
		{"2025-13", 1, Window{Period: "2025-13", FiscalYear: 2025, Start: "2025-01", End: "2025-12", Closing: "2025-13",
			Through: "2025-12", WithClosing: true, PeriodClosing: true}},
		{"", 1, Window{Period: "2025", FiscalYear: 2025, Start: "2025-01", End: "2025-12", Closing: "2025-13",
			Through: "2025-12", WithClosing: true, PeriodFrom: "2025-01", PeriodTo: "2025-12", PeriodClosing: true}},
		{"2025", 0, Window{Period: "2025", FiscalYear: 2025, Start: "2025-01", End: "2025-12", Closing: "2025-13",
			Through: "2025-12", WithClosing: true, PeriodFrom: "2025-01", PeriodTo: "2025-12", PeriodClosing: true}},
		// Fiscal year from July: named by the year it ends in.
		{"2025-08", 7, Window{Period: "2025-08", FiscalYear: 2026, Start: "2025-07", End: "2026-06", Closing: "2026-13",
			Through: "2025-08", PeriodFrom: "2025-08", PeriodTo: "2025-08"}},
		{"2025-06", 7, Window{Period: "2025-06", FiscalYear: 2025, Start: "2024-07", End: "2025-06", Closing: "2025-13",
			Through: "2025-06", PeriodFrom: "2025-06", PeriodTo: "2025-06"}},
		{"2025-07", 7, Window{Period: "2025-07", FiscalYear: 2026, Start: "2025-07", End: "2026-06", Closing: "2026-13",
			Through: "2025-07", PeriodFrom: "2025-07", PeriodTo: "2025-07"}},
		{"2025", 7, Window{Period: "2025", FiscalYear: 2025, Start: "2024-07", End: "2025-06", Closing: "2025-13",
			Through: "2025-06", WithClosing: true, PeriodFrom: "2024-07", PeriodTo: "2025-06", PeriodClosing: true}},
		{"", 7, Window{Period: "2026", FiscalYear: 2026, Start: "2025-07", End: "2026-06", Closing: "2026-13",
			Through: "2026-06", WithClosing: true, PeriodFrom: "2025-07", PeriodTo: "2026-06", PeriodClosing: true}},
		{"2025-01", 2, Window{Period: "2025-01", FiscalYear: 2025, Start: "2024-02", End: "2025-01", Closing: "2025-13",
			Through: "2025-01", PeriodFrom: "2025-01", PeriodTo: "2025-01"}},
		{"2025-12", 12, Window{Period: "2025-12", FiscalYear: 2026, Start: "2025-12", End: "2026-11", Closing: "2026-13",
			Through: "2025-12", PeriodFrom: "2025-12", PeriodTo: "2025-12"}},
	}
	for _, tc := range tests {
		got, err := ParsePeriod(tc.period, tc.start, now)
		if err != nil {
			t.Errorf("ParsePeriod(%q, %d): %v", tc.period, tc.start, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParsePeriod(%q, %d) (-want +got):\n%s", tc.period, tc.start, d)
		}
	}
}

func TestParsePeriodRejects(t *testing.T) {
	for _, p := range []string{"2025-00", "2025-14", "2025-1", "25", "2025-3", "2025/03", "03-2025", "x", "2025-03-01", " 2025", "0000", "9999", "1899-12"} {
		_, err := ParsePeriod(p, 1, time.Now())
		if !errs.Is(err, errs.InvalidInput) {
			t.Errorf("ParsePeriod(%q) = %v, want INVALID_INPUT", p, err)
			continue
		}
		if e := errs.As(err); len(e.Details) != 1 || e.Details[0].Field != "period" {
			t.Errorf("ParsePeriod(%q) details = %v, want the field period", p, e.Details)
		}
	}
}

// The balance query of a July fiscal year: the prior window takes the
// adjustment periods of earlier fiscal years, which sort among the months.
func TestWindowQuery(t *testing.T) {
	w, err := ParsePeriod("2025-08", 7, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := BalanceQuery{Start: "2025-07", Closing: "2026-13", Through: "2025-08", PeriodFrom: "2025-08", PeriodTo: "2025-08"}
	if d := cmp.Diff(want, w.Query()); d != "" {
		t.Errorf("Query (-want +got):\n%s", d)
	}
	if w.To() != "2025-08" {
		t.Errorf("To = %s", w.To())
	}
}
