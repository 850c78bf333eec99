package natsrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	contractrpc "github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
)

func a(s string) money.Amount { return money.MustParse(s) }

var zero = money.Zero

var amountCmp = cmp.Comparer(func(x, y money.Amount) bool { return x.Equal(y.Decimal) })

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestHandComputedReports(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	posted := time.Now()
	for _, ev := range handExample(h, tenant) {
		h.publish(t, ev)
	}
	// A posting shows in the reports within a second.
	var tb reporting.TrialBalance
	for {
		if r := h.report(t, tenant, q("type", "trial_balance", "period", "2025-03"), &tb); r.ErrCode != "" {
			t.Fatalf("trial balance: %s %s", r.ErrCode, r.Body)
		}
		if len(tb.Rows) == 7 && tb.Totals.Debit.Equal(a("50550").Decimal) {
			break
		}
		if time.Since(posted) > time.Second {
			t.Fatalf("the postings did not reach the report within 1s: %+v", tb)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("postings visible in the report after %v", time.Since(posted).Round(time.Millisecond))

	hdr := func(typ string) reporting.Header {
		return reporting.Header{Type: typ, Period: "2025-03", FiscalYear: 2025, From: "2025-01", To: "2025-03"}
	}

	t.Run("susa", func(t *testing.T) {
		var got reporting.SuSa
		h.report(t, tenant, q("type", "susa", "period", "2025-03"), &got)
		want := reporting.SuSa{Header: hdr("susa"),
			Rows: []reporting.SuSaRow{
				{Account: "1200", Name: "Forderungen aus Lieferungen und Leistungen", OpeningBalance: zero, PeriodDebit: zero, PeriodCredit: a("11900"), YTDDebit: a("11900"), YTDCredit: a("11900"), Balance: zero},
				{Account: "1800", Name: "Bank", OpeningBalance: zero, PeriodDebit: a("11900"), PeriodCredit: a("1750"), YTDDebit: a("36900"), YTDCredit: a("1750"), Balance: a("35150")},
				{Account: "2900", Name: "Gezeichnetes Kapital", OpeningBalance: zero, PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: a("25000"), Balance: a("-25000")},
				{Account: "3806", Name: "Umsatzsteuer 19 %", OpeningBalance: zero, PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: a("1900"), Balance: a("-1900")},
				{Account: "4400", Name: "Erlöse 19 % USt", OpeningBalance: zero, PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: a("10000"), Balance: a("-10000")},
				{Account: "6310", Name: "Miete (unbewegliche Wirtschaftsgüter)", OpeningBalance: zero, PeriodDebit: a("1500"), PeriodCredit: zero, YTDDebit: a("1500"), YTDCredit: zero, Balance: a("1500")},
				{Account: "6815", Name: "Bürobedarf", OpeningBalance: zero, PeriodDebit: a("250"), PeriodCredit: zero, YTDDebit: a("250"), YTDCredit: zero, Balance: a("250")},
			},
			Totals: reporting.SuSaTotals{PeriodDebit: a("13650"), PeriodCredit: a("13650"), YTDDebit: a("50550"), YTDCredit: a("50550")}}
		if d := cmp.Diff(want, got, amountCmp); d != "" {
			t.Errorf("SuSa (-want +got):\n%s", d)
		}
	})

	t.Run("trial_balance", func(t *testing.T) {
		var got reporting.TrialBalance
		h.report(t, tenant, q("type", "trial_balance", "period", "2025-03"), &got)
		want := reporting.TrialBalance{Header: hdr("trial_balance"),
			Rows: []reporting.TrialBalanceRow{
				{Account: "1200", Name: "Forderungen aus Lieferungen und Leistungen", Debit: a("11900"), Credit: a("11900"), Balance: zero},
				{Account: "1800", Name: "Bank", Debit: a("36900"), Credit: a("1750"), Balance: a("35150")},
				{Account: "2900", Name: "Gezeichnetes Kapital", Debit: zero, Credit: a("25000"), Balance: a("-25000")},
				{Account: "3806", Name: "Umsatzsteuer 19 %", Debit: zero, Credit: a("1900"), Balance: a("-1900")},
				{Account: "4400", Name: "Erlöse 19 % USt", Debit: zero, Credit: a("10000"), Balance: a("-10000")},
				{Account: "6310", Name: "Miete (unbewegliche Wirtschaftsgüter)", Debit: a("1500"), Credit: zero, Balance: a("1500")},
				{Account: "6815", Name: "Bürobedarf", Debit: a("250"), Credit: zero, Balance: a("250")},
			},
			Totals: reporting.TrialBalanceTotals{Debit: a("50550"), Credit: a("50550")}}
		if d := cmp.Diff(want, got, amountCmp); d != "" {
			t.Errorf("trial balance (-want +got):\n%s", d)
		}
	})

	t.Run("guv", func(t *testing.T) {
		var got reporting.GuV
		h.report(t, tenant, q("type", "guv", "period", "2025-03"), &got)
		want := map[string]string{"1": "10000", "2": "0", "3": "0", "4": "0", "5": "0", "5.a": "0", "5.b": "0", "6": "0", "6.a": "0", "6.b": "0",
			"7": "0", "7.a": "0", "7.b": "0", "8": "1750", "9": "0", "10": "0", "11": "0", "12": "0", "13": "0", "14": "0", "15": "8250", "16": "0", "17": "8250"}
		gotAmounts := map[string]string{}
		for _, l := range got.Lines {
			gotAmounts[l.Position] = l.Amount.String()
		}
		if d := cmp.Diff(want, gotAmounts); d != "" {
			t.Errorf("GuV lines (-want +got):\n%s", d)
		}
		if !got.Result.Equal(a("8250").Decimal) {
			t.Errorf("result = %s, want 8250", got.Result)
		}
		if d := cmp.Diff(hdr("guv"), got.Header); d != "" {
			t.Errorf("header (-want +got):\n%s", d)
		}
		lines := map[string]reporting.GuVLine{}
		for _, l := range got.Lines {
			lines[l.Position] = l
		}
		if d := cmp.Diff([]reporting.AccountAmount{{Account: "4400", Name: "Erlöse 19 % USt", Amount: a("10000")}}, lines["1"].Accounts, amountCmp); d != "" {
			t.Errorf("line 1 accounts (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]reporting.AccountAmount{
			{Account: "6310", Name: "Miete (unbewegliche Wirtschaftsgüter)", Amount: a("1500")},
			{Account: "6815", Name: "Bürobedarf", Amount: a("250")},
		}, lines["8"].Accounts, amountCmp); d != "" {
			t.Errorf("line 8 accounts (-want +got):\n%s", d)
		}
		if lines["1"].Kind != "income" || lines["8"].Kind != "expense" || lines["17"].Kind != "result" || lines["17"].Label != "Jahresüberschuss/Jahresfehlbetrag" {
			t.Errorf("kinds/labels: %+v %+v %+v", lines["1"], lines["8"], lines["17"])
		}
	})

	t.Run("bilanz", func(t *testing.T) {
		var got reporting.Bilanz
		h.report(t, tenant, q("type", "bilanz", "period", "2025-03"), &got)
		if !got.Balanced || !got.TotalAktiva.Equal(a("35150").Decimal) || !got.TotalPassiva.Equal(a("35150").Decimal) || !got.Result.Equal(a("8250").Decimal) {
			t.Fatalf("totals: aktiva %s passiva %s balanced %v result %s", got.TotalAktiva, got.TotalPassiva, got.Balanced, got.Result)
		}
		want := map[string]string{
			"aktiva:A": "0", "aktiva:B": "35150", "aktiva:B.II": "0", "aktiva:B.II.1": "0", "aktiva:B.IV": "35150", "aktiva:C": "0",
			"passiva:A": "33250", "passiva:A.I": "25000", "passiva:A.V": "8250", "passiva:A.IV": "0",
			"passiva:B": "0", "passiva:C": "1900", "passiva:C.8": "1900", "passiva:C.4": "0",
		}
		flat := map[string]reporting.BilanzNode{}
		var walk func(side string, ns []reporting.BilanzNode)
		walk = func(side string, ns []reporting.BilanzNode) {
			for _, n := range ns {
				flat[side+n.Position] = n
				walk(side, n.Children)
			}
		}
		walk("aktiva:", got.Aktiva)
		walk("passiva:", got.Passiva)
		gotAmounts := map[string]string{}
		for k := range want {
			n, ok := flat[k]
			if !ok {
				t.Errorf("position %s missing", k)
				continue
			}
			gotAmounts[k] = n.Amount.String()
		}
		if d := cmp.Diff(want, gotAmounts); d != "" {
			t.Errorf("Bilanz positions (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]reporting.AccountAmount{{Account: "1800", Name: "Bank", Amount: a("35150")}}, flat["aktiva:B.IV"].Accounts, amountCmp); d != "" {
			t.Errorf("B.IV accounts (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]reporting.AccountAmount{{Account: "3806", Name: "Umsatzsteuer 19 %", Amount: a("1900")}}, flat["passiva:C.8"].Accounts, amountCmp); d != "" {
			t.Errorf("C.8 accounts (-want +got):\n%s", d)
		}
		if flat["passiva:A.V"].Label != "Jahresüberschuss/Jahresfehlbetrag" {
			t.Errorf("A.V label %q", flat["passiva:A.V"].Label)
		}
		// Every position of §266 is there, top-level ones in order.
		var top []string
		for _, n := range got.Aktiva {
			top = append(top, "aktiva:"+n.Position)
		}
		for _, n := range got.Passiva {
			top = append(top, "passiva:"+n.Position)
		}
		if d := cmp.Diff([]string{"aktiva:A", "aktiva:B", "aktiva:C", "aktiva:D", "aktiva:E", "passiva:A", "passiva:B", "passiva:C", "passiva:D", "passiva:E"}, top); d != "" {
			t.Errorf("top-level positions (-want +got):\n%s", d)
		}
	})

	// The JSON carries amounts as numbers with two decimals.
	t.Run("json", func(t *testing.T) {
		r := h.report(t, tenant, q("type", "guv", "period", "2025-03"), nil)
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatal(err)
		}
		if string(raw["result"]) != "8250.00" || string(raw["type"]) != `"guv"` || string(raw["period"]) != `"2025-03"` {
			t.Errorf("result %s type %s period %s", raw["result"], raw["type"], raw["period"])
		}
	})

	// The next year opens with the balances carried forward; the year's
	// result, never closed into equity, shows as carried-forward result.
	t.Run("next year", func(t *testing.T) {
		var susa reporting.SuSa
		h.report(t, tenant, q("type", "susa", "period", "2026-01"), &susa)
		want := []reporting.SuSaRow{
			{Account: "1800", Name: "Bank", OpeningBalance: a("35150"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: zero, Balance: a("35150")},
			{Account: "2900", Name: "Gezeichnetes Kapital", OpeningBalance: a("-25000"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: zero, Balance: a("-25000")},
			{Account: "3806", Name: "Umsatzsteuer 19 %", OpeningBalance: a("-1900"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: zero, Balance: a("-1900")},
		}
		if d := cmp.Diff(want, susa.Rows, amountCmp); d != "" {
			t.Errorf("SuSa 2026-01 (-want +got):\n%s", d)
		}
		var tb reporting.TrialBalance
		h.report(t, tenant, q("type", "trial_balance", "period", "2026"), &tb)
		if !tb.Totals.Debit.Equal(tb.Totals.Credit.Decimal) || !tb.Totals.Debit.Equal(a("48800").Decimal) {
			t.Errorf("trial balance 2026 totals %s / %s", tb.Totals.Debit, tb.Totals.Credit)
		}
		var b reporting.Bilanz
		h.report(t, tenant, q("type", "bilanz", "period", "2026"), &b)
		if !b.Balanced || !b.TotalAktiva.Equal(a("35150").Decimal) || !b.Result.IsZero() {
			t.Errorf("Bilanz 2026: %s / %s result %s", b.TotalAktiva, b.TotalPassiva, b.Result)
		}
		if iv := b.Passiva[0].Children[3]; iv.Position != "A.IV" || !iv.Amount.Equal(a("8250").Decimal) {
			t.Errorf("A.IV 2026 = %+v", iv)
		}
	})
}

// handExample posts the hand-computed example and returns its events.
func handExample(h *rptHarness, tenant string) []reportingEvent {
	l := h.ledger
	return []reportingEvent{
		l.post(tenant, "2025-01-02", "", rptLine{"1800", "2900", "25000.00"}),
		l.post(tenant, "2025-02-10", "", rptLine{"1200", "4400", "10000.00"}, rptLine{"1200", "3806", "1900.00"}),
		l.post(tenant, "2025-03-05", "", rptLine{"1800", "1200", "11900.00"}),
		l.post(tenant, "2025-03-01", "", rptLine{"6310", "1800", "1500.00"}),
		l.post(tenant, "2025-03-20", "", rptLine{"6815", "1800", "250.00"}),
	}
}

func TestReportErrors(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	tests := []struct {
		name   string
		tenant string
		query  url.Values
		code   string
		field  string
	}{
		{"no type", tenant, q("period", "2025"), errs.InvalidInput, "type"},
		{"unknown type", tenant, q("type", "bwa"), errs.InvalidInput, "type"},
		{"bad period", tenant, q("type", "susa", "period", "2025-14"), errs.InvalidInput, "period"},
		{"bad period text", tenant, q("type", "guv", "period", "March"), errs.InvalidInput, "period"},
		{"day", tenant, q("type", "bilanz", "period", "2025-03-31"), errs.InvalidInput, "period"},
		{"no claims", "", q("type", "susa"), errs.Unauthenticated, ""},
	}
	for _, tc := range tests {
		r := h.report(t, tc.tenant, tc.query, nil)
		if r.ErrCode != tc.code {
			t.Errorf("%s: code %q (status %d, %s), want %s", tc.name, r.ErrCode, r.Status, r.Body, tc.code)
			continue
		}
		if tc.code == errs.InvalidInput && r.Status != 400 {
			t.Errorf("%s: status %d", tc.name, r.Status)
		}
		if tc.field != "" {
			var b errs.Body
			_ = json.Unmarshal(r.Body, &b)
			if len(b.Details) != 1 || b.Details[0].Field != tc.field {
				t.Errorf("%s: details %+v, want field %s", tc.name, b.Details, tc.field)
			}
		}
	}
	// A tenant without postings gets empty reports, not errors.
	for _, typ := range reporting.ReportTypes {
		var out map[string]any
		if r := h.report(t, tenant, q("type", typ), &out); r.ErrCode != "" {
			t.Errorf("%s for an empty tenant: %s %s", typ, r.ErrCode, r.Body)
		}
	}
	var b reporting.Bilanz
	h.report(t, tenant, q("type", "bilanz"), &b)
	if !b.Balanced || !b.TotalAktiva.IsZero() {
		t.Errorf("empty Bilanz: %+v", b)
	}
}

// Tenants are isolated: a report shows only the caller's postings.
func TestReportsTenantIsolation(t *testing.T) {
	h := newRptHarness(t)
	t1, t2 := uuid.NewString(), uuid.NewString()
	h.publish(t, h.ledger.post(t1, "2025-05-05", "", rptLine{"1800", "2900", "100.00"}))
	h.publish(t, h.ledger.post(t2, "2025-05-05", "", rptLine{"1800", "2000", "7.00"}))
	h.settle(t)
	var s1, s2 reporting.SuSa
	h.report(t, t1, q("type", "susa", "period", "2025"), &s1)
	h.report(t, t2, q("type", "susa", "period", "2025"), &s2)
	if len(s1.Rows) != 2 || s1.Rows[1].Account != "2900" || !s1.Totals.YTDDebit.Equal(a("100").Decimal) {
		t.Errorf("tenant 1: %+v", s1.Rows)
	}
	if len(s2.Rows) != 2 || s2.Rows[1].Account != "2000" || !s2.Totals.YTDDebit.Equal(a("7").Decimal) {
		t.Errorf("tenant 2: %+v", s2.Rows)
	}
}

// A fiscal year from July to June: the year is named by the year it ends
// in, the adjustment period YYYY-13 closes it, and opening balances and
// year-to-date figures follow it.
func TestFiscalYearStartingInJuly(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	h.identity.start[tenant] = 7
	l := h.ledger
	h.publish(t,
		l.post(tenant, "2025-06-01", "", rptLine{"1800", "2900", "5000.00"}),
		l.post(tenant, "2025-06-15", "", rptLine{"1200", "4400", "1000.00"}),
		l.post(tenant, "2025-06-30", "2025-13", rptLine{"6310", "1800", "100.00"}), // year-end adjustment of FY 2025
		l.post(tenant, "2025-07-10", "", rptLine{"6815", "1800", "300.00"}),
		l.post(tenant, "2024-06-20", "", rptLine{"6815", "1800", "40.00"}), // FY 2024
	)
	h.settle(t)

	var guv reporting.GuV
	h.report(t, tenant, q("type", "guv", "period", "2025"), &guv)
	if d := cmp.Diff(reporting.Header{Type: "guv", Period: "2025", FiscalYear: 2025, From: "2024-07", To: "2025-13"}, guv.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if !guv.Result.Equal(a("900").Decimal) {
		t.Errorf("GuV FY 2025 result %s, want 900 (1000 revenue - 100 adjustment)", guv.Result)
	}
	h.report(t, tenant, q("type", "guv", "period", "2025-06"), &guv)
	if !guv.Result.Equal(a("1000").Decimal) {
		t.Errorf("GuV to 2025-06 result %s, want 1000 (without the adjustment period)", guv.Result)
	}
	h.report(t, tenant, q("type", "guv", "period", "2025-13"), &guv)
	if !guv.Result.Equal(a("900").Decimal) || guv.To != "2025-13" {
		t.Errorf("GuV 2025-13 result %s to %s", guv.Result, guv.To)
	}

	var susa reporting.SuSa
	h.report(t, tenant, q("type", "susa", "period", "2025-08"), &susa)
	if d := cmp.Diff(reporting.Header{Type: "susa", Period: "2025-08", FiscalYear: 2026, From: "2025-07", To: "2025-08"}, susa.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	want := []reporting.SuSaRow{
		{Account: "1200", Name: "Forderungen aus Lieferungen und Leistungen", OpeningBalance: a("1000"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: zero, Balance: a("1000")},
		{Account: "1800", Name: "Bank", OpeningBalance: a("4860"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: a("300"), Balance: a("4560")},
		{Account: "2900", Name: "Gezeichnetes Kapital", OpeningBalance: a("-5000"), PeriodDebit: zero, PeriodCredit: zero, YTDDebit: zero, YTDCredit: zero, Balance: a("-5000")},
		{Account: "6815", Name: "Bürobedarf", OpeningBalance: zero, PeriodDebit: zero, PeriodCredit: zero, YTDDebit: a("300"), YTDCredit: zero, Balance: a("300")},
	}
	if d := cmp.Diff(want, susa.Rows, amountCmp); d != "" {
		t.Errorf("SuSa 2025-08 (-want +got):\n%s", d)
	}

	var b reporting.Bilanz
	h.report(t, tenant, q("type", "bilanz", "period", "2025-08"), &b)
	if !b.Balanced || !b.TotalAktiva.Equal(a("5560").Decimal) || !b.Result.Equal(a("-300").Decimal) {
		t.Errorf("Bilanz 2025-08: %s / %s result %s", b.TotalAktiva, b.TotalPassiva, b.Result)
	}
	if iv := b.Passiva[0].Children[3]; iv.Position != "A.IV" || !iv.Amount.Equal(a("860").Decimal) {
		t.Errorf("A.IV = %+v, want 860 (FY 2024: -40, FY 2025: 900)", iv)
	}

	// The default period is the fiscal year containing today.
	var def reporting.SuSa
	h.report(t, tenant, q("type", "susa"), &def)
	now := time.Now().UTC()
	fy := now.Year()
	if now.Month() >= time.July {
		fy++
	}
	if def.Period != fmt.Sprint(fy) || def.From != fmt.Sprintf("%d-07", fy-1) || def.To != fmt.Sprintf("%d-13", fy) {
		t.Errorf("default period: %+v", def.Header)
	}
}

// A redelivered event is applied once.
func TestProjectionIdempotent(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	e1 := h.ledger.post(tenant, "2025-04-01", "", rptLine{"1800", "2900", "100.00"})
	e2 := h.ledger.post(tenant, "2025-04-02", "", rptLine{"6815", "1800", "10.00"}, rptLine{"1406", "1800", "1.90"})
	h.publish(t, e1, e1, e2, e1, e2, e2)
	h.settle(t)
	if got := h.head(t, tenant); got != 3 {
		t.Errorf("head = %d, want 3", got)
	}
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances (-journal +projection):\n%s", d)
	}
	// Applying the same events again through the service changes nothing.
	if err := h.svc.ApplyPosted(context.Background(), e2, e1); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances after re-apply (-journal +projection):\n%s", d)
	}
	if h.ledger.feeds != 0 {
		t.Errorf("%d feed requests for events in order", h.ledger.feeds)
	}
}

// An event that does not follow the projection's head makes it catch up
// from the journal feed; the withheld events, arriving later, change
// nothing.
func TestGapRebuildsFromFeed(t *testing.T) {
	h := newRptHarness(t)
	h.ledger.maxPage = 3 // several pages
	tenant := uuid.NewString()
	var evs []reportingEvent
	for i := range 10 {
		evs = append(evs, h.ledger.post(tenant, fmt.Sprintf("2025-%02d-11", i%12+1), "", rptLine{"1800", "4400", fmt.Sprintf("%d.%02d", 100+i, i)}, rptLine{"1800", "3806", "19.00"}))
	}
	h.publish(t, evs[0]) // numbers 1-2
	h.settle(t)
	h.publish(t, evs[9]) // numbers 19-20: a gap after 2
	h.settle(t)
	if got := h.head(t, tenant); got != 20 {
		t.Errorf("head after the gap = %d, want 20", got)
	}
	if h.ledger.feeds < 6 {
		t.Errorf("only %d feed pages for 18 lines in pages of 3", h.ledger.feeds)
	}
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances after the gap (-journal +projection):\n%s", d)
	}
	h.publish(t, evs[1:9]...) // late arrivals
	h.settle(t)
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances after late events (-journal +projection):\n%s", d)
	}
}

// A projection started after the stream lost its first events (retention)
// catches up on its first event.
func TestFirstEventAfterRetention(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	for i := range 5 {
		h.ledger.post(tenant, "2024-12-31", "2024-13", rptLine{"6310", "1800", fmt.Sprintf("%d.00", i+1)})
	}
	h.publish(t, h.ledger.post(tenant, "2025-01-01", "", rptLine{"1800", "2900", "1.00"}))
	h.settle(t)
	if got := h.head(t, tenant); got != 6 {
		t.Errorf("head = %d, want 6", got)
	}
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances (-journal +projection):\n%s", d)
	}
}

// reporting.v1.rebuild drops the projection and builds it from the feed;
// the result equals the live projection built from events.
func TestRebuildEqualsLive(t *testing.T) {
	h := newRptHarness(t)
	h.ledger.maxPage = 50
	tenant, other := uuid.NewString(), uuid.NewString()
	rng := rand.New(rand.NewPCG(1, 2))
	accounts := []string{"1200", "1406", "1800", "2900", "3300", "3806", "4400", "5400", "6020", "6310", "6815", "7100"}
	var evs []reportingEvent
	for i := range 400 {
		date := fmt.Sprintf("%d-%02d-%02d", 2024+rng.IntN(2), 1+rng.IntN(12), 1+rng.IntN(28))
		period := ""
		if i%37 == 0 {
			period = date[:4] + "-13"
		}
		var lines []rptLine
		for range 1 + rng.IntN(3) {
			d, c := accounts[rng.IntN(len(accounts))], accounts[rng.IntN(len(accounts))]
			lines = append(lines, rptLine{d, c, fmt.Sprintf("%d.%02d", rng.IntN(100000), rng.IntN(100))})
		}
		evs = append(evs, h.ledger.post(tenant, date, period, lines...))
	}
	h.publish(t, h.ledger.post(other, "2025-01-01", "", rptLine{"1800", "2900", "1.00"}))
	h.publish(t, evs...)
	h.settle(t)
	live := h.balances(t, tenant)
	if d := cmp.Diff(h.journalBalances(tenant), live); d != "" {
		t.Fatalf("live projection (-journal +projection):\n%s", d)
	}
	var liveReport reporting.SuSa
	h.report(t, tenant, q("type", "susa", "period", "2025"), &liveReport)

	ctx := context.Background()
	var res reporting.RebuildResult
	if err := h.Bus.Client(t, "reporting").Call(contractrpc.ForTenant(ctx, tenant), reportingv1.SubjectRebuild, nil, nil, &res); err != nil {
		t.Fatal(err)
	}
	if res.TenantID != tenant || res.LastNumber != h.head(t, tenant) || res.LastNumber < 400 {
		t.Errorf("rebuild result %+v, head %d", res, h.head(t, tenant))
	}
	if d := cmp.Diff(live, h.balances(t, tenant)); d != "" {
		t.Errorf("rebuilt projection (-live +rebuilt):\n%s", d)
	}
	var rebuiltReport reporting.SuSa
	h.report(t, tenant, q("type", "susa", "period", "2025"), &rebuiltReport)
	if d := cmp.Diff(liveReport, rebuiltReport, amountCmp); d != "" {
		t.Errorf("SuSa after rebuild (-live +rebuilt):\n%s", d)
	}
	if got := h.balances(t, other); len(got) != 2 {
		t.Errorf("the other tenant's projection changed: %v", got)
	}

	// A tenant the ledger does not know rebuilds to nothing; a bad id is 400.
	if err := h.Bus.Client(t, "reporting").Call(contractrpc.ForTenant(ctx, uuid.NewString()), reportingv1.SubjectRebuild, nil, nil, &res); err != nil || res.LastNumber != 0 {
		t.Errorf("rebuild of an unknown tenant: %+v %v", res, err)
	}
	if err := h.Bus.Client(t, "reporting").Call(contractrpc.ForTenant(ctx, "x"), reportingv1.SubjectRebuild, nil, nil, nil); !errs.Is(err, errs.InvalidInput) {
		t.Errorf("rebuild of tenant x: %v", err)
	}
}

// A malformed event is dropped; the events after it are applied.
func TestMalformedEventDropped(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	bad := h.ledger.post(tenant, "2025-01-01", "", rptLine{"1800", "2900", "1.00"})
	h.ledger.mu.Lock()
	h.ledger.journal[tenant][0].Amount = "1.00" // the journal is fine; the event is not
	h.ledger.mu.Unlock()
	bad.Events[0].Amount = "one euro"
	if _, err := h.JS.Publish(context.Background(), "evt.ledger.v1.intent_posted", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	h.publish(t, bad)
	h.publish(t, h.ledger.post(tenant, "2025-01-02", "", rptLine{"6815", "1800", "2.00"}))
	h.settle(t)
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Errorf("balances (-journal +projection):\n%s", d)
	}
}

// The chart is read page by page and cached; the claims travel with it.
func TestLedgerClient(t *testing.T) {
	h := newRptHarness(t)
	var chart []reporting.Account
	for i := range 1203 {
		chart = append(chart, reporting.Account{Number: fmt.Sprintf("%d", 10000+i), Name: "Debitor", Type: "asset"})
	}
	h.ledger.chart = chart
	tenant := uuid.NewString()
	ctx := auth.WithClaims(context.Background(), rptClaims(tenant))
	l := natsrpc.Ledger{Client: h.client}
	got, err := l.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1203 || got[1202].Number != "11202" || h.ledger.accounts != 3 {
		t.Errorf("%d accounts in %d requests", len(got), h.ledger.accounts)
	}
	if c := h.ledger.claims[0]; c.TenantID != tenant {
		t.Errorf("claims %+v", c)
	}
	codes, err := l.TaxCodes(ctx)
	if err != nil || len(codes) != 2 || codes[0].Rate != "19.00" || codes[1].Rate != "7" || codes[0].DATEVKey != "3" {
		t.Errorf("tax codes %+v %v", codes, err)
	}
	st, err := natsrpc.Periods{Client: h.client}.Statuses(ctx, tenant, "2025-01", "2025-12")
	if err != nil || st == nil {
		t.Errorf("statuses %v %v", st, err)
	}
	tn, err := natsrpc.Tenants{Client: h.client}.Tenant(ctx)
	if err != nil || tn.ID != tenant || tn.FiscalYearStartMonth != 1 {
		t.Errorf("tenant %+v %v", tn, err)
	}

	// Reports reuse the chart and the tenant.
	h.ledger.accounts = 0
	for range 3 {
		var s reporting.SuSa
		if r := h.report(t, tenant, q("type", "susa", "period", "2025"), &s); r.ErrCode != "" {
			t.Fatal(string(r.Body))
		}
	}
	if h.ledger.accounts != 3 || h.identity.calls != 2 {
		t.Errorf("%d account pages and %d tenant reads for three reports, want 3 and 2 (one chart, one tenant, plus the direct call)", h.ledger.accounts, h.identity.calls)
	}
}

// A projection that starts on an existing journal and sees no event yet
// catches up when it is first asked for a report.
func TestReportCatchesUpWithoutEvents(t *testing.T) {
	h := newRptHarness(t)
	tenant := uuid.NewString()
	for i := range 3 {
		h.ledger.post(tenant, "2025-02-10", "", rptLine{"6310", "1800", fmt.Sprintf("%d.00", 100+i)})
	}
	var tb struct {
		Rows []struct {
			Account string  `json:"account"`
			Debit   float64 `json:"debit"`
		} `json:"rows"`
	}
	h.report(t, tenant, url.Values{"type": {"trial_balance"}, "period": {"2025"}}, &tb)
	if got := h.head(t, tenant); got != 3 {
		t.Fatalf("projection head after the first report = %d, want 3", got)
	}
	if d := cmp.Diff(h.journalBalances(tenant), h.balances(t, tenant)); d != "" {
		t.Fatalf("balances (-journal +projection):\n%s", d)
	}
}
