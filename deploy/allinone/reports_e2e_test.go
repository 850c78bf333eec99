package allinone_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// ---- helpers of the reporting end-to-end tests ----

// repHeader starts every report.
type repHeader struct {
	Type       string `json:"type"`
	Period     string `json:"period"`
	FiscalYear int    `json:"fiscal_year"`
	From       string `json:"from"`
	To         string `json:"to"`
}

// repTable is a report of rows and totals, numbers kept exact.
type repTable struct {
	repHeader
	Rows   []map[string]any `json:"rows"`
	Totals map[string]any   `json:"totals"`
}

// cols formats the fields of a row or the totals.
func cols(m map[string]any, format string, fields ...string) string {
	args := make([]any, len(fields))
	for i, f := range fields {
		args[i] = m[f]
	}
	return fmt.Sprintf(format, args...)
}

// text is a text field of a row ("" when it is none).
func text(m map[string]any, field string) string { s, _ := m[field].(string); return s }

type repSuSa struct{ repTable }

// sigs reduces the rows to "account opening pd/pc ytd yd/yc = balance".
func (s repSuSa) sigs() []string {
	return sigsOf(s.Rows, func(r map[string]any) string {
		return cols(r, "%v o%v p%v/%v y%v/%v =%v", "account", "opening_balance", "period_debit", "period_credit", "ytd_debit", "ytd_credit", "balance")
	})
}

func (s repSuSa) totals() string {
	return cols(s.Totals, "p%v/%v y%v/%v", "period_debit", "period_credit", "ytd_debit", "ytd_credit")
}

type repTrialBalance struct{ repTable }

// sigs reduces the rows to "account debit/credit =balance"; a row without
// an account shows its name in parentheses.
func (b repTrialBalance) sigs() []string {
	return sigsOf(b.Rows, func(r map[string]any) string {
		acct := text(r, "account")
		if acct == "" {
			acct = "(" + text(r, "name") + ")"
		}
		return acct + cols(r, " %v/%v =%v", "debit", "credit", "balance")
	})
}

func (b repTrialBalance) totals() string { return cols(b.Totals, "%v/%v", "debit", "credit") }

type repAccountAmount struct {
	Account string      `json:"account"`
	Name    string      `json:"name"`
	Amount  json.Number `json:"amount"`
}

// repAccounts are the accounts of a position.
type repAccounts []repAccountAmount

// sigs reduces the accounts to "account amount".
func (as repAccounts) sigs() []string {
	return sigsOf(as, func(a repAccountAmount) string { return a.Account + " " + a.Amount.String() })
}

// repPosition is a position of the GuV or of the balance sheet.
type repPosition struct {
	Position string      `json:"position"`
	Label    string      `json:"label"`
	Amount   json.Number `json:"amount"`
	Accounts repAccounts `json:"accounts"`
}

type repGuV struct {
	repHeader
	Lines []struct {
		repPosition
		Kind string `json:"kind"`
	} `json:"lines"`
	Result json.Number `json:"result"`
}

type repNode struct {
	repPosition
	Children []repNode `json:"children"`
}

// find returns the node at a position of a side of the balance sheet.
func repFind(nodes []repNode, pos string) (repNode, bool) {
	for _, n := range nodes {
		if n.Position == pos {
			return n, true
		}
		if c, ok := repFind(n.Children, pos); ok {
			return c, true
		}
	}
	return repNode{}, false
}

// repPlaced lists "position account amount" of every account on a side.
func repPlaced(nodes []repNode) []string {
	out := []string{}
	for _, n := range nodes {
		for _, a := range n.Accounts {
			out = append(out, n.Position+" "+a.Account+" "+a.Amount.String())
		}
		out = append(out, repPlaced(n.Children)...)
	}
	return out
}

// repSides are the two sides of the balance sheet.
type repSides struct {
	Aktiva  []repNode `json:"aktiva"`
	Passiva []repNode `json:"passiva"`
}

type repBilanz struct {
	repHeader
	repSides
	TotalAktiva  json.Number `json:"total_aktiva"`
	TotalPassiva json.Number `json:"total_passiva"`
	Balanced     bool        `json:"balanced"`
	Result       json.Number `json:"result"`
}

// report fetches GET /v1/reports (period "" leaves it out) into out and
// returns the raw answer.
func (p *platform) report(token, typ, period string, out any) []byte {
	p.t.Helper()
	q := "/v1/reports?type=" + typ
	if period != "" {
		q += "&period=" + period
	}
	r := p.must(200, "GET", q, token, nil)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		p.t.Fatalf("GET %s: Content-Type %q", q, r.Header.Get("Content-Type"))
	}
	if out != nil {
		decodeJSON(p.t, r.Raw, out)
	}
	return r.Raw
}

func (p *platform) susa(token, period string) repSuSa {
	p.t.Helper()
	var s repSuSa
	p.report(token, "susa", period, &s)
	return s
}

// repHeaderIs checks a report's header.
func repHeaderIs(t testing.TB, h repHeader, typ, period string, fy int, from, to string) {
	t.Helper()
	want := repHeader{Type: typ, Period: period, FiscalYear: fy, From: from, To: to}
	if h != want {
		t.Fatalf("header %+v, want %+v", h, want)
	}
}

// repFigures posts the hand-computed example of the reporting tests and
// returns its intent ids in posting order:
//
//	2025-01-02 capital 25,000.00          1800 Bank / 2900 Gezeichnetes Kapital
//	2025-03-10 invoice 11,900.00 USt19    1200 / 4400 10,000.00 and 1200 / 3806 1,900.00
//	2025-03-31 rent 1,500.00              6310 / 1800
//	2025-04-05 receipt 11,900.00          1800 / 1200
//	2025-04-20 supplies 250.00            6815 / 1800
//
// Year 2025: Bank 35,150.00, result 10,000 - 1,500 - 250 = 8,250.00,
// equity 33,250.00 + VAT 1,900.00 = 35,150.00; every column sums to
// 50,550.00 (25,000 + 10,000 + 1,900 + 1,500 + 11,900 + 250).
func (p *platform) repFigures(token string) []string {
	p.t.Helper()
	var ids []string
	for _, b := range []map[string]any{
		bookingBody("2025-01-02", "Einzahlung Stammkapital", bline("1800", "2900", "25000.00")),
		bookingBody("2025-03-10", "Ausgangsrechnung 2025-001", bline("1200", "4400", "11900.00", "tax_code", "USt19", "external_reference", "RE-2025/001")),
		bookingBody("2025-03-31", "Miete Büro März", bline("6310", "1800", "1500.00")),
		bookingBody("2025-04-05", "Zahlungseingang Müller", bline("1800", "1200", "11900.00", "external_reference", "Zahlung Müller")),
		bookingBody("2025-04-20", `=SUMME(A1:A9) Bürobedarf "Größe XL"`, bline("6815", "1800", "250.00")),
	} {
		ids = append(ids, p.book(token, b).IntentID)
	}
	return ids
}

// repSettled waits until the projection holds every posting of the year:
// the SuSa of 2025 sums to ytd.
func (p *platform) repSettled(token, ytd string) repSuSa {
	p.t.Helper()
	var s repSuSa
	eventually(p.t, 10*time.Second, func() error {
		s = p.susa(token, "2025")
		if got := fmt.Sprint(s.Totals["ytd_debit"]); got != ytd {
			return fmt.Errorf("SuSa 2025 ytd debit %s, want %s", got, ytd)
		}
		return nil
	})
	return s
}

// repFigureTable holds expected report rows per account: the account and
// one column per report.
type repFigureTable [][5]string

// column lists "account row" of the accounts with a row in column i.
func (ft repFigureTable) column(i int) []string {
	out := []string{}
	for _, r := range ft {
		if r[i] != "" {
			out = append(out, r[0]+" "+r[i])
		}
	}
	return out
}

// repBalances dumps the tenant's projection tables.
func repBalances(t testing.TB, p *platform, tenant string) string {
	t.Helper()
	var out string
	if err := p.owner.QueryRow(context.Background(), `SELECT
			COALESCE((SELECT string_agg(account || ' ' || period || ' ' || debit::text || '/' || credit::text, ', ' ORDER BY account, period)
				FROM reporting.balances WHERE tenant_id = $1), '') || ' | ' ||
			COALESCE((SELECT string_agg(account || ' ' || year || ' ' || debit::text || '/' || credit::text, ', ' ORDER BY account, year)
				FROM reporting.balance_years WHERE tenant_id = $1), '') || ' | head ' ||
			COALESCE((SELECT last_number::text FROM reporting.tenant_heads WHERE tenant_id = $1), '-')`, tenant).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ---- the reports ----

// TestReportsFigures posts the hand-computed example and checks every
// report type against it, for a month, the year, its adjustment period and
// the omitted period (the current fiscal year, into which the balances
// carry), and that the books balance in each.
func TestReportsFigures(t *testing.T) {
	p, admin, _ := setup(t, nil, "Auswertung GmbH")
	w, rk := p.apiKey(admin, "journal:write"), p.apiKey(admin, "auswertungen:read")

	// A new tenant's reports are empty but complete.
	empty := p.susa(rk, "2025")
	repHeaderIs(t, empty.repHeader, "susa", "2025", 2025, "2025-01", "2025-13")
	if len(empty.Rows) != 0 || empty.totals() != "p0.00/0.00 y0.00/0.00" {
		t.Fatalf("empty SuSa %+v", empty)
	}
	var eb repBilanz
	p.report(rk, "bilanz", "2025", &eb)
	if !eb.Balanced || eb.TotalAktiva != "0.00" || eb.TotalPassiva != "0.00" || eb.Result != "0.00" {
		t.Fatalf("empty Bilanz %+v", eb)
	}

	// A report reflects a posting within a second.
	p.book(w, bookingBody("2025-01-02", "Einzahlung Stammkapital", bline("1800", "2900", "25000.00")))
	posted := time.Now()
	eventually(t, time.Second, func() error {
		s := p.susa(rk, "2025")
		if got, want := s.sigs(), []string{"1800 o0.00 p25000.00/0.00 y25000.00/0.00 =25000.00", "2900 o0.00 p0.00/25000.00 y0.00/25000.00 =-25000.00"}; !slices.Equal(got, want) {
			return fmt.Errorf("SuSa rows %v, want %v", got, want)
		}
		return nil
	})
	t.Logf("first posting in the SuSa after %v", time.Since(posted).Round(time.Millisecond))

	for _, b := range []map[string]any{
		bookingBody("2025-03-10", "Ausgangsrechnung 2025-001", bline("1200", "4400", "11900.00", "tax_code", "USt19")),
		bookingBody("2025-03-31", "Miete Büro März", bline("6310", "1800", "1500.00")),
		bookingBody("2025-04-05", "Zahlungseingang Müller", bline("1800", "1200", "11900.00")),
		bookingBody("2025-04-20", "Bürobedarf", bline("6815", "1800", "250.00")),
	} {
		p.book(w, b)
	}

	// The hand-computed rows per account: the SuSa of 2025 and of 2025-03,
	// then the trial balance of 2025 and of 2025-03 ("" where the account
	// has no row).
	figures := repFigureTable{
		{"1200", "o0.00 p11900.00/11900.00 y11900.00/11900.00 =0.00", "o0.00 p11900.00/0.00 y11900.00/0.00 =11900.00", "11900.00/11900.00 =0.00", "11900.00/0.00 =11900.00"},
		{"1800", "o0.00 p36900.00/1750.00 y36900.00/1750.00 =35150.00", "o0.00 p0.00/1500.00 y25000.00/1500.00 =23500.00", "36900.00/1750.00 =35150.00", "25000.00/1500.00 =23500.00"},
		{"2900", "o0.00 p0.00/25000.00 y0.00/25000.00 =-25000.00", "o0.00 p0.00/0.00 y0.00/25000.00 =-25000.00", "0.00/25000.00 =-25000.00", "0.00/25000.00 =-25000.00"},
		{"3806", "o0.00 p0.00/1900.00 y0.00/1900.00 =-1900.00", "o0.00 p0.00/1900.00 y0.00/1900.00 =-1900.00", "0.00/1900.00 =-1900.00", "0.00/1900.00 =-1900.00"},
		{"4400", "o0.00 p0.00/10000.00 y0.00/10000.00 =-10000.00", "o0.00 p0.00/10000.00 y0.00/10000.00 =-10000.00", "0.00/10000.00 =-10000.00", "0.00/10000.00 =-10000.00"},
		{"6310", "o0.00 p1500.00/0.00 y1500.00/0.00 =1500.00", "o0.00 p1500.00/0.00 y1500.00/0.00 =1500.00", "1500.00/0.00 =1500.00", "1500.00/0.00 =1500.00"},
		{"6815", "o0.00 p250.00/0.00 y250.00/0.00 =250.00", "", "250.00/0.00 =250.00", ""},
	}

	// ---- SuSa ----
	year := p.repSettled(rk, "50550.00")
	repHeaderIs(t, year.repHeader, "susa", "2025", 2025, "2025-01", "2025-13")
	wantRows(t, "SuSa 2025", year.sigs(), year.totals(), figures.column(1), "p50550.00/50550.00 y50550.00/50550.00")
	for _, r := range year.Rows {
		if text(r, "name") == "" || text(r, "account") == "1800" && text(r, "name") != "Bank" {
			t.Fatalf("SuSa row %s named %q", text(r, "account"), text(r, "name"))
		}
	}
	wantKeys(t, "SuSa", p.report(rk, "susa", "2025", nil), "type", "period", "fiscal_year", "from", "to", "rows", "totals")

	// A month: its own turnover in the period columns, the year to date in
	// the others.
	march := p.susa(rk, "2025-03")
	repHeaderIs(t, march.repHeader, "susa", "2025-03", 2025, "2025-01", "2025-03")
	wantRows(t, "SuSa 2025-03", march.sigs(), march.totals(), figures.column(2), "p13400.00/13400.00 y38400.00/38400.00")
	if got := p.susa(rk, "2025-02"); got.totals() != "p0.00/0.00 y25000.00/25000.00" || len(got.Rows) != 2 {
		t.Fatalf("SuSa 2025-02: %v %s", got.sigs(), got.totals())
	}
	// The adjustment period: the whole year to date, nothing in the period.
	adj := p.susa(rk, "2025-13")
	repHeaderIs(t, adj.repHeader, "susa", "2025-13", 2025, "2025-01", "2025-13")
	if got := adj.totals(); got != "p0.00/0.00 y50550.00/50550.00" || len(adj.Rows) != 7 {
		t.Fatalf("SuSa 2025-13: %v %s", adj.sigs(), got)
	}

	// ---- trial balance ----
	var tb repTrialBalance
	raw := p.report(rk, "trial_balance", "2025", &tb)
	wantKeys(t, "trial balance", raw, "type", "period", "fiscal_year", "from", "to", "rows", "totals")
	repHeaderIs(t, tb.repHeader, "trial_balance", "2025", 2025, "2025-01", "2025-13")
	wantRows(t, "trial balance 2025", tb.sigs(), tb.totals(), figures.column(3), "50550.00/50550.00")
	tb = repTrialBalance{}
	p.report(rk, "trial_balance", "2025-03", &tb)
	repHeaderIs(t, tb.repHeader, "trial_balance", "2025-03", 2025, "2025-01", "2025-03")
	wantRows(t, "trial balance 2025-03", tb.sigs(), tb.totals(), figures.column(4), "38400.00/38400.00")

	// ---- GuV ----
	var guv repGuV
	raw = p.report(rk, "guv", "2025", &guv)
	wantKeys(t, "GuV", raw, "type", "period", "fiscal_year", "from", "to", "lines", "result")
	repHeaderIs(t, guv.repHeader, "guv", "2025", 2025, "2025-01", "2025-13")
	if guv.Result != "8250.00" {
		t.Fatalf("GuV 2025 result %s, want 8250.00", guv.Result)
	}
	var positions []string
	for _, l := range guv.Lines {
		positions = append(positions, l.Position)
		want := map[string][2]string{
			"1":  {"10000.00", "4400 10000.00"},
			"8":  {"1750.00", "6310 1500.00,6815 250.00"},
			"15": {"8250.00", ""},
			"17": {"8250.00", ""},
		}[l.Position]
		if want[0] == "" {
			want[0] = "0.00"
		}
		if got := [2]string{l.Amount.String(), strings.Join(l.Accounts.sigs(), ",")}; got != want || l.Label == "" || l.Kind == "" || l.Accounts == nil {
			t.Fatalf("GuV line %s (%s): %v, want %v", l.Position, l.Label, got, want)
		}
	}
	// No appropriation: lines 18 and 19 are left out.
	if want := []string{"1", "2", "3", "4", "5", "5.a", "5.b", "6", "6.a", "6.b", "7", "7.a", "7.b", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17"}; !slices.Equal(positions, want) {
		t.Fatalf("GuV positions %v, want %v", positions, want)
	}
	guv = repGuV{}
	p.report(rk, "guv", "2025-03", &guv)
	if repHeaderIs(t, guv.repHeader, "guv", "2025-03", 2025, "2025-01", "2025-03"); guv.Result != "8500.00" {
		t.Fatalf("GuV 2025-03 result %s, want 8500.00 (10,000 - 1,500)", guv.Result)
	}

	// ---- Bilanz ----
	var bil repBilanz
	raw = p.report(rk, "bilanz", "2025", &bil)
	wantKeys(t, "Bilanz", raw, "type", "period", "fiscal_year", "from", "to", "aktiva", "passiva", "total_aktiva", "total_passiva", "balanced", "result")
	repHeaderIs(t, bil.repHeader, "bilanz", "2025", 2025, "2025-01", "2025-13")
	if !bil.Balanced || bil.TotalAktiva != "35150.00" || bil.TotalPassiva != "35150.00" || bil.Result != "8250.00" {
		t.Fatalf("Bilanz 2025: aktiva %s passiva %s balanced %v result %s", bil.TotalAktiva, bil.TotalPassiva, bil.Balanced, bil.Result)
	}
	if got, want := repPlaced(bil.Aktiva), []string{"B.IV 1800 35150.00"}; !slices.Equal(got, want) {
		t.Fatalf("Aktiva accounts %v, want %v", got, want)
	}
	if got, want := repPlaced(bil.Passiva), []string{"A.I 2900 25000.00", "C.8 3806 1900.00"}; !slices.Equal(got, want) {
		t.Fatalf("Passiva accounts %v, want %v", got, want)
	}
	for _, c := range []struct {
		side   []repNode
		pos    string
		amount string
	}{
		{bil.Aktiva, "A", "0.00"}, {bil.Aktiva, "B", "35150.00"}, {bil.Aktiva, "B.II.1", "0.00"}, {bil.Aktiva, "B.IV", "35150.00"},
		{bil.Passiva, "A", "33250.00"}, {bil.Passiva, "A.I", "25000.00"}, {bil.Passiva, "A.V", "8250.00"},
		{bil.Passiva, "B", "0.00"}, {bil.Passiva, "C", "1900.00"}, {bil.Passiva, "C.8", "1900.00"},
	} {
		n, ok := repFind(c.side, c.pos)
		if !ok || n.Amount.String() != c.amount || n.Label == "" {
			t.Fatalf("Bilanz position %s: %+v (found %v), want %s", c.pos, n, ok, c.amount)
		}
	}
	if _, ok := repFind(bil.Aktiva, "F"); ok {
		t.Fatal("Bilanz shows a deficit although equity is positive")
	}
	bil = repBilanz{}
	p.report(rk, "bilanz", "2025-03", &bil)
	repHeaderIs(t, bil.repHeader, "bilanz", "2025-03", 2025, "2025-01", "2025-03")
	if !bil.Balanced || bil.TotalAktiva != "35400.00" || bil.TotalPassiva != "35400.00" || bil.Result != "8500.00" {
		t.Fatalf("Bilanz 2025-03: aktiva %s passiva %s balanced %v result %s", bil.TotalAktiva, bil.TotalPassiva, bil.Balanced, bil.Result)
	}
	if got, want := repPlaced(bil.Aktiva), []string{"B.II.1 1200 11900.00", "B.IV 1800 23500.00"}; !slices.Equal(got, want) {
		t.Fatalf("Aktiva 2025-03 %v, want %v", got, want)
	}

	// ---- the omitted period: the current fiscal year ----
	cur := strconv.Itoa(time.Now().UTC().Year())
	for _, typ := range []string{"susa", "trial_balance", "guv", "bilanz"} {
		a := p.report(rk, typ, "", nil)
		b := p.report(rk, typ, cur, nil)
		if !sameJSON(t, a, b) {
			t.Fatalf("%s without period:\n%s\nwith period=%s:\n%s", typ, a, cur, b)
		}
	}
	if cur > "2025" {
		// 2025's balances carry into the current year as opening balances;
		// its result, never closed into equity, is carried forward.
		s := p.susa(rk, "")
		repHeaderIs(t, s.repHeader, "susa", cur, time.Now().UTC().Year(), cur+"-01", cur+"-13")
		wantRows(t, "SuSa "+cur, s.sigs(), s.totals(), []string{
			"1800 o35150.00 p0.00/0.00 y0.00/0.00 =35150.00",
			"2900 o-25000.00 p0.00/0.00 y0.00/0.00 =-25000.00",
			"3806 o-1900.00 p0.00/0.00 y0.00/0.00 =-1900.00",
		}, "p0.00/0.00 y0.00/0.00")
		var tb repTrialBalance
		p.report(rk, "trial_balance", "", &tb)
		carry := "(Ergebnisvortrag aus Vorjahren (nicht abgeschlossene Erfolgskonten)) 0.00/8250.00 =-8250.00"
		wantRows(t, "trial balance "+cur, tb.sigs(), tb.totals(), []string{
			"1200 11900.00/11900.00 =0.00",
			"1800 36900.00/1750.00 =35150.00",
			"2900 0.00/25000.00 =-25000.00",
			"3806 0.00/1900.00 =-1900.00",
			carry,
		}, "48800.00/48800.00")
		var b repBilanz
		p.report(rk, "bilanz", "", &b)
		if !b.Balanced || b.TotalAktiva != "35150.00" || b.Result != "0.00" {
			t.Fatalf("Bilanz %s: %s/%s result %s", cur, b.TotalAktiva, b.TotalPassiva, b.Result)
		}
		if n, ok := repFind(b.Passiva, "A.IV"); !ok || n.Amount != "8250.00" {
			t.Fatalf("Bilanz %s: carried result %+v", cur, n)
		}
		var g repGuV
		p.report(rk, "guv", "", &g)
		if g.Result != "0.00" {
			t.Fatalf("GuV %s result %s", cur, g.Result)
		}
	}
}

// TestReportsBadRequests: every report type must be named and known, and
// the period must be YYYY-MM, YYYY-13 or YYYY; nothing else reaches the
// projection.
func TestReportsBadRequests(t *testing.T) {
	p, admin, _ := setup(t, nil, "Fehler GmbH")
	rk := p.apiKey(admin, "auswertungen:read")

	for _, typ := range []string{"susa", "trial_balance", "guv", "bilanz"} {
		for _, period := range []string{"2025-01", "2025-12", "2025-13", "2025", "1900", "9998", ""} {
			var h repHeader
			p.report(rk, typ, period, &h)
			if h.Type != typ || period != "" && h.Period != period {
				t.Fatalf("%s %q: header %+v", typ, period, h)
			}
		}
	}
	p.expectInvalid([]string{"type"}, "GET", "/v1/reports", rk, nil)
	p.expectInvalid([]string{"type"}, "GET", "/v1/reports?period=2025", rk, nil)
	for _, typ := range []string{"cashflow", "SUSA", "susa ", "bwa", "trial-balance"} {
		p.expectInvalid([]string{"type"}, "GET", "/v1/reports?type="+strings.ReplaceAll(typ, " ", "%20")+"&period=2025", rk, nil)
	}
	for _, period := range []string{"2025-00", "2025-14", "2025-1", "25", "20250", "2025-03-01", "03-2025", "abcd", "1899", "9999", "2025-13-01", "2025%2F03", "%20"} {
		p.expectInvalid([]string{"period"}, "GET", "/v1/reports?type=susa&period="+period, rk, nil)
	}
	// Every problem is named at once.
	p.expectInvalid([]string{"period", "type"}, "GET", "/v1/reports?type=cashflow&period=nope", rk, nil)
}

// TestReportsAccess: reports need auswertungen:read, and a tenant sees only
// its own figures.
func TestReportsAccess(t *testing.T) {
	p, adminA, _ := setup(t, nil, "Mandant A GmbH")
	adminB, _ := p.newTenant("Mandant B GmbH")
	wa, wb := p.apiKey(adminA, "journal:write"), p.apiKey(adminB, "journal:write")
	ra, rb := p.apiKey(adminA, "auswertungen:read"), p.apiKey(adminB, "auswertungen:read")

	p.repFigures(wa)
	p.book(wb, bookingBody("2025-05-05", "Einlage B", bline("1800", "2900", "777.00")))

	// Without the scope: 403 on every reporting route, 401 without a key.
	for _, scopes := range [][]string{{"journal:read"}, {"journal:write", "perioden:read", "config:read"}, {"auswertungen:write"}} {
		k, _ := p.newKey(adminA, scopes...)
		for _, path := range []string{"/v1/reports?type=susa&period=2025", "/v1/reports/datev-export?from=2025-01-01&to=2025-12-31", "/v1/reports/gobd-export?year=2025"} {
			p.expectError(403, "FORBIDDEN", "GET", path, k, nil)
			p.expectError(401, "UNAUTHENTICATED", "GET", path, "", nil)
		}
	}
	// The tenant's admin key (all scopes) may read reports.
	p.report(adminA, "susa", "2025", nil)

	a := p.repSettled(ra, "50550.00")
	var b repSuSa
	eventually(t, 5*time.Second, func() error {
		b = p.susa(rb, "2025")
		if len(b.Rows) == 0 {
			return errors.New("B's posting is not in its SuSa yet")
		}
		return nil
	})
	wantRows(t, "B's SuSa", b.sigs(), b.totals(), []string{"1800 o0.00 p777.00/0.00 y777.00/0.00 =777.00", "2900 o0.00 p0.00/777.00 y0.00/777.00 =-777.00"}, "p777.00/777.00 y777.00/777.00")
	if got := p.susa(ra, "2025"); !slices.Equal(got.sigs(), a.sigs()) || got.totals() != "p50550.00/50550.00 y50550.00/50550.00" {
		t.Fatalf("A's SuSa changed with B's posting: %v %s", got.sigs(), got.totals())
	}
	var bb repBilanz
	p.report(rb, "bilanz", "2025", &bb)
	if !bb.Balanced || bb.TotalAktiva != "777.00" || bb.Result != "0.00" {
		t.Fatalf("B's Bilanz %s/%s result %s", bb.TotalAktiva, bb.TotalPassiva, bb.Result)
	}
	var bg repGuV
	p.report(rb, "guv", "2025", &bg)
	if bg.Result != "0.00" {
		t.Fatalf("B's GuV shows A's result %s", bg.Result)
	}
}

// TestReportsRebuild: the projection rebuilt from the journal feed equals
// the live one, even after the live one was damaged.
func TestReportsRebuild(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Rebuild GmbH")
	w, rk := p.apiKey(admin, "journal:write"), p.apiKey(admin, "auswertungen:read")
	ids := p.repFigures(w)
	p.book(w, bookingBody("2024-12-30", "Vorjahr", bline("1800", "2900", "100.00")))
	p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": ids[4]})
	// 25,000 + 11,900 + 1,500 + 11,900 + 250 and the reversal's 250.
	p.repSettled(rk, "50800.00")
	eventually(t, 5*time.Second, func() error {
		if n := count(t, p.owner, "SELECT last_number::int FROM reporting.tenant_heads WHERE tenant_id = $1", tenant); n != 8 {
			return fmt.Errorf("projection head %d, want 8", n)
		}
		return nil
	})

	snapshot := func() map[string][]byte {
		out := map[string][]byte{}
		for _, typ := range []string{"susa", "trial_balance", "guv", "bilanz"} {
			for _, period := range []string{"2025", "2025-03", "2024", "2026"} {
				out[typ+" "+period] = p.report(rk, typ, period, nil)
			}
		}
		return out
	}
	before := snapshot()
	tables := repBalances(t, p, tenant)
	if !strings.HasSuffix(tables, "| head 8") || !strings.Contains(tables, "1800 2024-12 100.00/0.00") || !strings.Contains(tables, "6815 2025-04 250.00/250.00") {
		t.Fatalf("projection tables: %s", tables)
	}

	rebuild := func() {
		t.Helper()
		var out struct {
			TenantID   string `json:"tenant_id"`
			LastNumber int64  `json:"last_number"`
			DurationMS *int64 `json:"duration_ms"`
		}
		if err := p.rpc("reporting", reportingv1.SubjectRebuild, reportingv1.RebuildRequest{TenantID: tenant}, &out); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if out.TenantID != tenant || out.LastNumber != 8 || out.DurationMS == nil {
			t.Fatalf("rebuild answered %+v", out)
		}
	}
	compare := func(when string) {
		t.Helper()
		if got := repBalances(t, p, tenant); got != tables {
			t.Fatalf("%s: projection tables\n%s\nwant\n%s", when, got, tables)
		}
		after := snapshot()
		for k, v := range before {
			if !sameJSON(t, after[k], v) {
				t.Fatalf("%s: %s differs:\n%s\nlive before:\n%s", when, k, after[k], v)
			}
		}
	}

	rebuild()
	compare("rebuilt")
	p.wantCount(1, "SELECT count(*) FROM reporting.tenant_heads WHERE tenant_id = $1 AND rebuilt_at > now() - interval '1 minute'", tenant)

	// Damage the projection: a wrong amount, a lost row, a foreign row.
	ctx := context.Background()
	if _, err := p.owner.Exec(ctx, `WITH a AS (UPDATE reporting.balances SET debit = debit + 1000 WHERE tenant_id = $1 AND account = '1800' AND period = '2025-01'),
		b AS (DELETE FROM reporting.balances WHERE tenant_id = $1 AND account = '6310')
		INSERT INTO reporting.balances (tenant_id, account, period, debit, credit) VALUES ($1, '0999', '2025-06', 5, 5)`, tenant); err != nil {
		t.Fatal(err)
	}
	var live repSuSa
	decodeJSON(t, before["susa 2025"], &live)
	if got := p.susa(rk, "2025"); slices.Equal(got.sigs(), live.sigs()) {
		t.Fatal("the damage does not show in the SuSa")
	}
	rebuild()
	compare("rebuilt after damage")

	// Postings after the rebuild are applied on top of it.
	p.book(w, bookingBody("2025-06-01", "Nach dem Neuaufbau", bline("6815", "1800", "10.00")))
	p.repSettled(rk, "50810.00")

	// The command checks its input.
	var out map[string]any
	err := p.rpc("reporting", reportingv1.SubjectRebuild, reportingv1.RebuildRequest{TenantID: "not-a-uuid"}, &out)
	if e := errs.As(err); e == nil || e.Code != errs.InvalidInput {
		t.Fatalf("rebuild of a malformed tenant id: %v", err)
	}
}
