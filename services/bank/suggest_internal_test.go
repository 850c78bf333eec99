package bank

import (
	"testing"
	"time"
)

func TestDayNumber(t *testing.T) {
	t.Parallel()
	epoch := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2101; d = d.AddDate(0, 0, 1) {
		if got, want := dayNumber(d.Format(time.DateOnly)), int(d.Sub(epoch).Hours()/24); got != want {
			t.Fatalf("%s: %d, want %d", d.Format(time.DateOnly), got, want)
		}
	}
	for _, bad := range []string{"", "2026-3-01", "2026-13-01", "20x6-01-01"} {
		if dayNumber(bad) != 0 {
			t.Fatalf("%q", bad)
		}
	}
}
