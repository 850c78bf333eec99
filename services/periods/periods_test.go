package periods_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/services/periods"
)

func TestParsePeriod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   periods.Key
		wantOK bool
	}{
		{"2025-01", periods.Key{Year: 2025, Month: 1}, true},
		{"2025-12", periods.Key{Year: 2025, Month: 12}, true},
		{"2025-13", periods.Key{Year: 2025, Month: 13}, true},
		{"2025-00", periods.Key{}, false},
		{"2025-14", periods.Key{}, false},
		{"2025-1", periods.Key{}, false},
		{"25-01", periods.Key{}, false},
		{"0999-01", periods.Key{}, false},
		{"2025-01-01", periods.Key{}, false},
		{"abc", periods.Key{}, false},
		{"", periods.Key{}, false},
		{" 2025-01", periods.Key{}, false},
	}
	for _, tt := range tests {
		got, ok := periods.ParsePeriod(tt.in)
		if diff := cmp.Diff([]any{tt.want, tt.wantOK}, []any{got, ok}); diff != "" {
			t.Errorf("ParsePeriod(%q) (-want +got):\n%s", tt.in, diff)
		}
		if ok && got.String() != tt.in {
			t.Errorf("ParsePeriod(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestParseYear(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"2025": true, "1999": true, "25": false, "02025": false, "abcd": false, "2025-01": false, "": false} {
		if _, ok := periods.ParseYear(in); ok != want {
			t.Errorf("ParseYear(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		period string
		start  int
		want   int
	}{
		{"2025-01", 1, 1},
		{"2025-12", 1, 12},
		{"2025-04", 4, 1},
		{"2025-03", 4, 12},
		{"2026-03", 4, 12},
		{"2025-07", 7, 1},
		{"2025-06", 7, 12},
		{"2025-13", 4, 13},
		{"2025-05", 0, 5},  // an unset start month is January
		{"2025-05", 13, 5}, // so is a nonsensical one
		{"abc", 1, 0},
	}
	for _, tt := range tests {
		if got := periods.Number(tt.period, tt.start); got != tt.want {
			t.Errorf("Number(%q, %d) = %d, want %d", tt.period, tt.start, got, tt.want)
		}
	}
}

func TestFiscalYear(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name  string
		today string
		start int
		want  []string
	}{
		{"calendar year", "2025-03-15", 1, []string{"2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06", "2025-07", "2025-08", "2025-09", "2025-10", "2025-11", "2025-12"}},
		{"April start, before April", "2025-03-15", 4, []string{"2024-04", "2024-05", "2024-06", "2024-07", "2024-08", "2024-09", "2024-10", "2024-11", "2024-12", "2025-01", "2025-02", "2025-03"}},
		{"April start, in April", "2025-04-01", 4, []string{"2025-04", "2025-05", "2025-06", "2025-07", "2025-08", "2025-09", "2025-10", "2025-11", "2025-12", "2026-01", "2026-02", "2026-03"}},
		{"December start", "2025-12-31", 12, []string{"2025-12", "2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06", "2026-07", "2026-08", "2026-09", "2026-10", "2026-11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := periods.FiscalYear(day(tt.today), tt.start)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FiscalYear (-want +got):\n%s", diff)
			}
			for i, p := range got {
				if n := periods.Number(p, tt.start); n != i+1 {
					t.Errorf("Number(%s) = %d, want %d", p, n, i+1)
				}
			}
		})
	}
}

func TestLockedBy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    *auth.Claims
		want string
	}{
		{"user", &auth.Claims{UserID: "u1", Email: "anna@example.com"}, "anna@example.com"},
		{"key with label", &auth.Claims{KeyID: "k1", Label: "CI", KeyPrefix: "lgr_ab12"}, "CI (lgr_ab12)"},
		{"key without label", &auth.Claims{KeyID: "k1", KeyPrefix: "lgr_ab12"}, "lgr_ab12"},
		{"bare key", &auth.Claims{KeyID: "k1"}, "key:k1"},
		{"nobody", nil, ""},
	}
	for _, tt := range tests {
		if got := periods.LockedBy(tt.c); got != tt.want {
			t.Errorf("%s: LockedBy = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTaskUpdateDecoding(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	tests := []struct {
		body string
		want periods.TaskUpdate
	}{
		{`{}`, periods.TaskUpdate{}},
		{`{"status":"done"}`, periods.TaskUpdate{Status: str("done")}},
		{`{"assignee":null}`, periods.TaskUpdate{Assignee: periods.Nullable{Set: true}}},
		{`{"assignee":"Bea","note":"x","due_date":null}`, periods.TaskUpdate{Assignee: periods.Nullable{Set: true, Value: str("Bea")},
			Note: periods.Nullable{Set: true, Value: str("x")}, DueDate: periods.Nullable{Set: true}}},
	}
	for _, tt := range tests {
		var got periods.TaskUpdate
		if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.body, diff)
		}
	}
	var bad periods.TaskUpdate
	if err := json.Unmarshal([]byte(`{"assignee":5}`), &bad); err == nil {
		t.Error("a number as assignee decoded")
	}
}
