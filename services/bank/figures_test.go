package bank_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// TestBalanceAt: one rule for every balance the bank shows: forward and
// back from the latest statement's closing balance, or the sum of the
// transactions from 0 without one; days without movement carry the
// balance before.
func TestBalanceAt(t *testing.T) {
	d := decimal.RequireFromString
	days := []bank.DaySum{{Date: "2025-03-03", Sum: d("1000.00")}, {Date: "2025-03-10", Sum: d("-250.50")}, {Date: "2025-03-31", Sum: d("-9.90")}}
	for _, tc := range []struct {
		name   string
		anchor *bank.Anchor
		day    string
		want   string
		source string
	}{
		{"before every transaction", nil, "2025-03-01", "0.00", bankv1.BalanceFromTransactions},
		{"on a booking day", nil, "2025-03-10", "749.50", bankv1.BalanceFromTransactions},
		{"a day without movement", nil, "2025-03-20", "749.50", bankv1.BalanceFromTransactions},
		{"after the last", nil, "2026-01-01", "739.60", bankv1.BalanceFromTransactions},
		{"on the anchor's day", &bank.Anchor{Date: "2025-03-10", Balance: d("5000.00")}, "2025-03-10", "5000.00", bankv1.BalanceFromStatement},
		{"back from the anchor", &bank.Anchor{Date: "2025-03-10", Balance: d("5000.00")}, "2025-03-05", "5250.50", bankv1.BalanceFromStatement},
		{"before every transaction, back from the anchor", &bank.Anchor{Date: "2025-03-10", Balance: d("5000.00")}, "2025-03-01", "4250.50", bankv1.BalanceFromStatement},
		{"forward from the anchor", &bank.Anchor{Date: "2025-03-10", Balance: d("5000.00")}, "2025-04-01", "4990.10", bankv1.BalanceFromStatement},
		{"an anchor without transactions", &bank.Anchor{Date: "2025-02-28", Balance: d("10.00")}, "2025-02-01", "10.00", bankv1.BalanceFromStatement},
	} {
		got, source := bank.BalanceBasis{Anchor: tc.anchor, Days: days}.BalanceAt(tc.day)
		if got.StringFixed(2) != tc.want || source != tc.source {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, got.StringFixed(2), source, tc.want, tc.source)
		}
	}
}

// TestParseReconciliationQuery: dates checked, to defaults to today and is
// not before from.
func TestParseReconciliationQuery(t *testing.T) {
	defer func(f func() time.Time) { bank.Today = f }(bank.Today)
	bank.Today = func() time.Time { return time.Date(2026, 2, 3, 23, 0, 0, 0, time.UTC) }
	q, err := bank.ParseReconciliationQuery(url.Values{"from": {"2026-01-01"}}.Get, 7)
	if err != nil || q != (bank.ReconciliationQuery{From: "2026-01-01", To: "2026-02-03", Limit: 7}) {
		t.Fatalf("%+v %v", q, err)
	}
	for _, v := range []url.Values{{"from": {"2026-02-30"}}, {"to": {"03.02.2026"}}, {"from": {"2026-02-02"}, "to": {"2026-02-01"}}, {"from": {"2026-03-01"}}} {
		if _, err := bank.ParseReconciliationQuery(v.Get, 7); !errs.Is(err, errs.InvalidInput) {
			t.Errorf("%v: %v", v, err)
		}
	}
}
