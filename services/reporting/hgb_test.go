package reporting

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
)

func TestPosition(t *testing.T) {
	tests := []struct {
		number, typ, want string
	}{
		{"0027", TypeAsset, "B.II.4"}, // outside every range: fallback by type
		{"0135", TypeAsset, "A.I.2"},
		{"0143", TypeAsset, "A.I.1"},
		{"0149", TypeAsset, "A.I.2"},
		{"0240", TypeAsset, "A.II.1"},
		{"0520", TypeAsset, "A.II.3"},
		{"05601", TypeAsset, "A.II.3"}, // Odoo's sub-account of 0560
		{"0820", TypeAsset, "A.III.3"},
		{"1000", TypeAsset, "B.I.1"},
		{"1140", TypeAsset, "B.I.3"},
		{"1200", TypeAsset, "B.II.1"},
		{"1298", TypeAsset, "B.II.4"},
		{"1381", TypeAsset, "E"},
		{"1406", TypeAsset, "B.II.4"}, // Vorsteuer
		{"1504", TypeAsset, "B.III.1"},
		{"1510", TypeAsset, "B.III.2"},
		{"1190", TypeAsset, "B.I.4"},
		{"1600", TypeAsset, "B.IV"},
		{"1800", TypeAsset, "B.IV"},
		{"1900", TypeAsset, "C"},
		{"1950", TypeAsset, "D"},
		{"10001", TypeAsset, "B.II.1"},  // debtor
		{"70001", TypeLiability, "C.4"}, // creditor
		{"2000", TypeEquity, "A.I"},
		{"2100", TypeEquity, "A.I"},
		{"2900", TypeEquity, "A.I"},
		{"2920", TypeEquity, "A.II"},
		{"2930", TypeEquity, "A.III.1"},
		{"2960", TypeEquity, "A.III.4"},
		{"2970", TypeEquity, "A.IV"},
		{"2978", TypeEquity, "A.IV"},
		{"2979", TypeEquity, "A.V"},
		{"7700", TypeEquity, "A.V"},
		{"9000", TypeEquity, "A.IV"}, // fallback
		{"3000", TypeLiability, "B.1"},
		{"3020", TypeLiability, "B.2"},
		{"3065", TypeLiability, "E"},
		{"3070", TypeLiability, "B.3"},
		{"3150", TypeLiability, "C.2"},
		{"3300", TypeLiability, "C.4"},
		{"3400", TypeLiability, "C.6"},
		{"3450", TypeLiability, "C.7"},
		{"3740", TypeLiability, "C.8"},
		{"3806", TypeLiability, "C.8"},
		{"3900", TypeLiability, "D"},
		{"3140", TypeLiability, "C.8"}, // outside every range
		{"4400", TypeRevenue, "1"},
		{"4610", TypeRevenue, "1"},
		{"4600", TypeRevenue, "4"},
		{"4800", TypeRevenue, "2"},
		{"4820", TypeRevenue, "3"},
		{"4830", TypeRevenue, "4"},
		{"4833", TypeRevenue, "1"},
		{"4500", TypeRevenue, "4"}, // outside every range
		{"5400", TypeExpense, "5.a"},
		{"5900", TypeExpense, "5.b"},
		{"6000", TypeExpense, "6.a"},
		{"6110", TypeExpense, "6.b"},
		{"6220", TypeExpense, "7.a"},
		{"6280", TypeExpense, "7.b"},
		{"6310", TypeExpense, "8"},
		{"6815", TypeExpense, "8"},
		{"7000", TypeRevenue, "9"},
		{"7010", TypeRevenue, "10"},
		{"7100", TypeRevenue, "11"},
		{"7200", TypeExpense, "12"},
		{"7300", TypeExpense, "13"},
		{"7400", TypeRevenue, "4"},
		{"7500", TypeExpense, "8"},
		{"7600", TypeExpense, "14"},
		{"7650", TypeExpense, "16"},
		{"7705", TypeRevenue, "18"},
		{"9991", TypeRevenue, "4"}, // fallback
		{"9994", TypeExpense, "8"}, // fallback
	}
	for _, tc := range tests {
		got, ok := Position(tc.number, tc.typ)
		if !ok || got != tc.want {
			t.Errorf("Position(%s, %s) = %s, %v; want %s", tc.number, tc.typ, got, ok, tc.want)
		}
	}
	if _, ok := Position("1800", "other"); ok {
		t.Error("Position accepted an unknown type")
	}
}

func TestTypeOf(t *testing.T) {
	for n, want := range map[string]string{
		"0520": TypeAsset, "1800": TypeAsset, "2900": TypeEquity, "3806": TypeLiability, "4400": TypeRevenue,
		"5400": TypeExpense, "6310": TypeExpense, "7000": TypeRevenue, "7100": TypeRevenue, "7300": TypeExpense,
		"7400": TypeRevenue, "7600": TypeExpense, "7700": TypeEquity, "9000": TypeEquity, "10000": TypeAsset, "70000": TypeLiability,
	} {
		if got := TypeOf(n); got != want {
			t.Errorf("TypeOf(%s) = %s, want %s", n, got, want)
		}
	}
}

// Every leaf and fallback position exists in its tree.
func TestHGBTables(t *testing.T) {
	leaves := map[string]bool{}
	var walk func(side string, nodes []hgbNode)
	walk = func(side string, nodes []hgbNode) {
		for _, n := range nodes {
			if len(n.Children) == 0 {
				leaves[side+n.Pos] = true
			} else if len(n.Prefixes) > 0 {
				t.Errorf("%s%s has children and prefixes", side, n.Pos)
			}
			walk(side, n.Children)
		}
	}
	walk("aktiva:", aktivaTree)
	walk("passiva:", passivaTree)
	for _, l := range guvLines {
		leaves["guv:"+l.Pos] = true
	}
	for typ, pos := range fallbackPos {
		side := map[string]string{TypeAsset: "aktiva:", TypeLiability: "passiva:", TypeEquity: "passiva:", TypeRevenue: "guv:", TypeExpense: "guv:"}[typ]
		if !leaves[side+pos] {
			t.Errorf("fallback %s → %s is not a leaf", typ, pos)
		}
	}
	for _, p := range []string{"passiva:" + PosResult, "passiva:" + PosCarryForward, "aktiva:B.II.1", "passiva:C.4"} {
		if !leaves[p] {
			t.Errorf("%s is not a leaf", p)
		}
	}
}

func amt(s string) money.Amount { return money.MustParse(s) }

var amountCmp = cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })

// The report builders on figures given directly: the hand-computed example
// with a year before it, so opening balances and the carried-forward
// result show.
func TestBuildersCarryForward(t *testing.T) {
	chart := map[string]Account{
		"1800": {Number: "1800", Name: "Bank", Type: TypeAsset},
		"2900": {Number: "2900", Name: "Gezeichnetes Kapital", Type: TypeEquity},
		"4400": {Number: "4400", Name: "Erlöse 19 % USt", Type: TypeRevenue},
		"6310": {Number: "6310", Name: "Miete", Type: TypeExpense},
	}
	z := money.Zero
	// Prior year: capital 1000, revenue 400 (cash). This year: rent 100.
	sums := []AccountSums{
		{Account: "1800", PriorDebit: amt("1400"), PriorCredit: z, YTDDebit: z, YTDCredit: amt("100"), PeriodDebit: z, PeriodCredit: amt("100")},
		{Account: "2900", PriorDebit: z, PriorCredit: amt("1000"), YTDDebit: z, YTDCredit: z, PeriodDebit: z, PeriodCredit: z},
		{Account: "4400", PriorDebit: z, PriorCredit: amt("400"), YTDDebit: z, YTDCredit: z, PeriodDebit: z, PeriodCredit: z},
		{Account: "6310", PriorDebit: z, PriorCredit: z, YTDDebit: amt("100"), YTDCredit: z, PeriodDebit: amt("100"), PeriodCredit: z},
	}
	figs := figures(sums, chart)
	h := Header{Type: "x", Period: "2026", FiscalYear: 2026, From: "2026-01", To: "2026-13"}

	susa := buildSuSa(h, figs)
	wantSuSa := []SuSaRow{
		{Account: "1800", Name: "Bank", OpeningBalance: amt("1400"), PeriodDebit: z, PeriodCredit: amt("100"), YTDDebit: z, YTDCredit: amt("100"), Balance: amt("1300")},
		{Account: "2900", Name: "Gezeichnetes Kapital", OpeningBalance: amt("-1000"), PeriodDebit: z, PeriodCredit: z, YTDDebit: z, YTDCredit: z, Balance: amt("-1000")},
		{Account: "6310", Name: "Miete", OpeningBalance: z, PeriodDebit: amt("100"), PeriodCredit: z, YTDDebit: amt("100"), YTDCredit: z, Balance: amt("100")},
	}
	if d := cmp.Diff(wantSuSa, susa.Rows, amountCmp); d != "" {
		t.Errorf("SuSa rows (-want +got):\n%s", d)
	}

	tb := buildTrialBalance(h, figs)
	if !tb.Totals.Debit.Equal(tb.Totals.Credit.Decimal) {
		t.Errorf("trial balance totals %s / %s", tb.Totals.Debit, tb.Totals.Credit)
	}
	last := tb.Rows[len(tb.Rows)-1]
	if d := cmp.Diff(TrialBalanceRow{Name: CarryForwardName, Debit: z, Credit: amt("400"), Balance: amt("-400")}, last, amountCmp); d != "" {
		t.Errorf("carry-forward row (-want +got):\n%s", d)
	}

	b := buildBilanz(h, figs)
	if !b.Balanced || !b.TotalAktiva.Equal(amt("1300").Decimal) {
		t.Errorf("Bilanz totals %s / %s balanced %v", b.TotalAktiva, b.TotalPassiva, b.Balanced)
	}
	eq := b.Passiva[0]
	if got := eq.Children[3]; got.Position != "A.IV" || !got.Amount.Equal(amt("400").Decimal) {
		t.Errorf("A.IV = %+v", got)
	}
	if got := eq.Children[4]; got.Position != "A.V" || !got.Amount.Equal(amt("-100").Decimal) {
		t.Errorf("A.V = %+v", got)
	}
}

// Equity below zero moves to Aktiva F (§268 (3)).
func TestBilanzDeficit(t *testing.T) {
	z := money.Zero
	chart := map[string]Account{
		"1800": {Number: "1800", Type: TypeAsset},
		"2900": {Number: "2900", Type: TypeEquity},
		"3150": {Number: "3150", Type: TypeLiability},
		"6310": {Number: "6310", Type: TypeExpense},
	}
	// Capital 100, loan 1000, rent 500 paid: equity -400.
	sums := []AccountSums{
		{Account: "1800", PriorDebit: z, PriorCredit: z, YTDDebit: amt("1100"), YTDCredit: amt("500"), PeriodDebit: z, PeriodCredit: z},
		{Account: "2900", PriorDebit: z, PriorCredit: z, YTDDebit: z, YTDCredit: amt("100"), PeriodDebit: z, PeriodCredit: z},
		{Account: "3150", PriorDebit: z, PriorCredit: z, YTDDebit: z, YTDCredit: amt("1000"), PeriodDebit: z, PeriodCredit: z},
		{Account: "6310", PriorDebit: z, PriorCredit: z, YTDDebit: amt("500"), YTDCredit: z, PeriodDebit: z, PeriodCredit: z},
	}
	b := buildBilanz(Header{}, figures(sums, chart))
	if !b.Balanced || !b.TotalAktiva.Equal(amt("1000").Decimal) {
		t.Fatalf("totals %s / %s", b.TotalAktiva, b.TotalPassiva)
	}
	f := b.Aktiva[len(b.Aktiva)-1]
	if f.Position != PosDeficit || !f.Amount.Equal(amt("400").Decimal) {
		t.Errorf("Aktiva F = %+v", f)
	}
	if !b.Passiva[0].Amount.IsZero() {
		t.Errorf("equity = %s, want 0", b.Passiva[0].Amount)
	}
	if !b.Result.Equal(amt("-500").Decimal) {
		t.Errorf("result = %s", b.Result)
	}
}
