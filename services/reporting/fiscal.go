package reporting

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Fiscal years. A fiscal year is named by the calendar year in which it
// ends (the German tax rule for a Wirtschaftsjahr that is not the calendar
// year, §4a EStG): with the fiscal year starting in July, "2025" runs from
// 2024-07 to 2025-06. Its adjustment period is YYYY-13 of that year, the
// period the ledger gives adjustment postings dated in that calendar year
// (year-end adjustments are dated at the fiscal year's end). With the
// default start in January the fiscal year is the calendar year.

// MinYear and MaxYear bound the years a report may ask for.
const (
	MinYear = 1900
	MaxYear = 9998
)

// Window is the span of a report, derived from the requested period and the
// tenant's fiscal year.
type Window struct {
	Period     string // as normalised: YYYY, YYYY-MM or YYYY-13
	FiscalYear int    // named by the calendar year it ends in
	Start      string // first month of the fiscal year, YYYY-MM
	End        string // last month of the fiscal year, YYYY-MM
	Closing    string // the fiscal year's adjustment period, YYYY-13
	Through    string // last month the report covers
	// WithClosing: the report covers the adjustment period (a whole year,
	// or the adjustment period itself).
	WithClosing bool
	// The reported period within the year to date: months PeriodFrom to
	// PeriodTo (empty for none) and the adjustment period when
	// PeriodClosing.
	PeriodFrom, PeriodTo string
	PeriodClosing        bool
}

var (
	yearRe  = regexp.MustCompile(`^[0-9]{4}$`)
	monthRe = regexp.MustCompile(`^([0-9]{4})-(0[1-9]|1[0-3])$`)
)

// fiscalYearOf names the fiscal year containing month m (1-12) of year y.
func fiscalYearOf(y, m, startMonth int) int {
	if startMonth > 1 && m >= startMonth {
		return y + 1
	}
	return y
}

func month(y, m int) string { return fmt.Sprintf("%04d-%02d", y, m) }

// fiscalSpan returns the first and last month of fiscal year fy.
func fiscalSpan(fy, startMonth int) (start, end string) {
	if startMonth <= 1 {
		return month(fy, 1), month(fy, 12)
	}
	return month(fy-1, startMonth), month(fy, startMonth-1)
}

// ParsePeriod reads a report period: YYYY-MM (that month, with the year to
// date of the fiscal year containing it), YYYY-13 (the adjustment period of
// fiscal year YYYY, with the whole year), YYYY (the whole fiscal year YYYY
// including its adjustment period) or "" (the fiscal year containing now).
// startMonth is the tenant's first month of the fiscal year (1-12; 0 means
// January).
func ParsePeriod(period string, startMonth int, now time.Time) (Window, error) {
	if startMonth < 1 || startMonth > 12 {
		startMonth = 1
	}
	bad := func(issue string) (Window, error) {
		return Window{}, errs.Invalid("invalid query parameter period", errs.Field("period", issue))
	}
	const format = "YYYY-MM, YYYY-13 or YYYY"
	var w Window
	switch {
	case period == "":
		y, m := now.UTC().Year(), int(now.UTC().Month())
		w.FiscalYear = fiscalYearOf(y, m, startMonth)
		w.Period = strconv.Itoa(w.FiscalYear)
		w.WithClosing = true
	case yearRe.MatchString(period):
		w.FiscalYear, _ = strconv.Atoi(period)
		w.Period = period
		w.WithClosing = true
	case monthRe.MatchString(period):
		sm := monthRe.FindStringSubmatch(period)
		y, _ := strconv.Atoi(sm[1])
		m, _ := strconv.Atoi(sm[2])
		w.Period = period
		if m == 13 {
			w.FiscalYear = y
			w.WithClosing, w.PeriodClosing = true, true
		} else {
			w.FiscalYear = fiscalYearOf(y, m, startMonth)
			w.Through = period
			w.PeriodFrom, w.PeriodTo = period, period
		}
	default:
		return bad("must be " + format)
	}
	if w.FiscalYear < MinYear || w.FiscalYear > MaxYear {
		return bad(fmt.Sprintf("the year must be from %d to %d", MinYear, MaxYear))
	}
	w.Start, w.End = fiscalSpan(w.FiscalYear, startMonth)
	w.Closing = strconv.Itoa(w.FiscalYear) + "-13"
	if w.Through == "" {
		w.Through = w.End
	}
	if w.WithClosing && !w.PeriodClosing {
		// A whole year: the period columns are the year.
		w.PeriodFrom, w.PeriodTo, w.PeriodClosing = w.Start, w.End, true
	}
	return w, nil
}

// Query is the balance query of the window.
func (w Window) Query() BalanceQuery {
	return BalanceQuery{Start: w.Start, Closing: w.Closing, Through: w.Through, YTDClosing: w.WithClosing,
		PeriodFrom: w.PeriodFrom, PeriodTo: w.PeriodTo, PeriodClosing: w.PeriodClosing}
}

// To is the last period the report covers.
func (w Window) To() string {
	if w.WithClosing {
		return w.Closing
	}
	return w.Through
}
