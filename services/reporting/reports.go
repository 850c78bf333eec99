package reporting

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Report types of GET /v1/reports.
const (
	ReportSuSa         = "susa"
	ReportTrialBalance = "trial_balance"
	ReportGuV          = "guv"
	ReportBilanz       = "bilanz"
)

// ReportTypes lists the report types in the order of the documentation.
var ReportTypes = []string{ReportSuSa, ReportTrialBalance, ReportGuV, ReportBilanz}

// Header is what every report starts with. From and To are the first and
// last period covered: the fiscal year's first month and the end of the
// requested period (YYYY-MM, or YYYY-13 when the adjustment period is in).
type Header struct {
	Type       string `json:"type"`
	Period     string `json:"period"`
	FiscalYear int    `json:"fiscal_year"`
	From       string `json:"from"`
	To         string `json:"to"`
}

// SuSaRow is one account of the Summen- und Saldenliste. OpeningBalance is
// the balance (debit - credit) of everything before the fiscal year for
// balance sheet accounts and 0 for profit and loss accounts; Balance is
// OpeningBalance + YTDDebit - YTDCredit.
type SuSaRow struct {
	Account        string       `json:"account"`
	Name           string       `json:"name"`
	OpeningBalance money.Amount `json:"opening_balance"`
	PeriodDebit    money.Amount `json:"period_debit"`
	PeriodCredit   money.Amount `json:"period_credit"`
	YTDDebit       money.Amount `json:"ytd_debit"`
	YTDCredit      money.Amount `json:"ytd_credit"`
	Balance        money.Amount `json:"balance"`
}

// SuSaTotals are the column sums; debit and credit agree.
type SuSaTotals struct {
	PeriodDebit  money.Amount `json:"period_debit"`
	PeriodCredit money.Amount `json:"period_credit"`
	YTDDebit     money.Amount `json:"ytd_debit"`
	YTDCredit    money.Amount `json:"ytd_credit"`
}

// SuSa is the Summen- und Saldenliste.
type SuSa struct {
	Header
	Rows   []SuSaRow  `json:"rows"`
	Totals SuSaTotals `json:"totals"`
}

// TrialBalanceRow is one account's turnover up to the end of the period:
// from the beginning for balance sheet accounts, within the fiscal year for
// profit and loss accounts. Balance is Debit - Credit.
type TrialBalanceRow struct {
	Account string       `json:"account"`
	Name    string       `json:"name"`
	Debit   money.Amount `json:"debit"`
	Credit  money.Amount `json:"credit"`
	Balance money.Amount `json:"balance"`
}

// TrialBalanceTotals are the column sums; they agree.
type TrialBalanceTotals struct {
	Debit  money.Amount `json:"debit"`
	Credit money.Amount `json:"credit"`
}

// TrialBalance is the Saldenbilanz. When profit and loss accounts of earlier
// fiscal years were never closed into equity, a row without account number
// (CarryForwardName) carries their net result, so the totals still agree.
type TrialBalance struct {
	Header
	Rows   []TrialBalanceRow  `json:"rows"`
	Totals TrialBalanceTotals `json:"totals"`
}

// CarryForwardName names the trial balance row and balance sheet entry for
// earlier years' results that were never closed into equity.
const CarryForwardName = "Ergebnisvortrag aus Vorjahren (nicht abgeschlossene Erfolgskonten)"

// AccountAmount is one account's share of a report line.
type AccountAmount struct {
	Account string       `json:"account"`
	Name    string       `json:"name"`
	Amount  money.Amount `json:"amount"`
}

// GuVLine is a line of the profit and loss account. Amounts of income lines
// are credit - debit, of expense lines debit - credit (positive amounts are
// subtracted); subtotal and result lines are signed results.
type GuVLine struct {
	Position string          `json:"position"`
	Label    string          `json:"label"`
	Kind     string          `json:"kind"`
	Amount   money.Amount    `json:"amount"`
	Accounts []AccountAmount `json:"accounts"`
}

// GuV is the Gewinn- und Verlustrechnung (HGB §275 (2),
// Gesamtkostenverfahren) for the fiscal year up to the end of the period.
// Result is the Jahresüberschuss (positive) or Jahresfehlbetrag (negative).
type GuV struct {
	Header
	Lines  []GuVLine    `json:"lines"`
	Result money.Amount `json:"result"`
}

// BilanzNode is a balance sheet position with its sub-positions or, for a
// leaf, the accounts with a balance. Aktiva amounts are debit - credit,
// Passiva amounts credit - debit; an asset account with a credit balance or
// a liability account with a debit balance is shown as it is (negative) on
// its position, not moved to the other side.
type BilanzNode struct {
	Position string          `json:"position"`
	Label    string          `json:"label"`
	Amount   money.Amount    `json:"amount"`
	Accounts []AccountAmount `json:"accounts,omitempty"`
	Children []BilanzNode    `json:"children,omitempty"`
}

// Bilanz is the balance sheet (HGB §266) at the end of the period. The
// year's result from the GuV is shown in Passiva A.V; Balanced is true when
// both sides agree, which they do whenever the books balance.
type Bilanz struct {
	Header
	Aktiva       []BilanzNode `json:"aktiva"`
	Passiva      []BilanzNode `json:"passiva"`
	TotalAktiva  money.Amount `json:"total_aktiva"`
	TotalPassiva money.Amount `json:"total_passiva"`
	Balanced     bool         `json:"balanced"`
	Result       money.Amount `json:"result"`
}

// Report builds a report of the tenant's projection. typ is one of
// ReportTypes; period is YYYY-MM, YYYY-13, YYYY or "" (see ParsePeriod).
// ctx carries the caller's claims for the calls to identity and the ledger.
func (s *Service) Report(ctx context.Context, tenant, typ, period string) (any, error) {
	switch {
	case typ == "":
		return nil, errs.Invalid("query parameter type is required", errs.Field("type", "required: "+strings.Join(ReportTypes, ", ")))
	case !slices.Contains(ReportTypes, typ):
		return nil, errs.Invalid("unknown report type", errs.Field("type", "must be one of "+strings.Join(ReportTypes, ", ")))
	}
	if err := s.caughtUp(ctx, tenant); err != nil {
		return nil, err
	}
	// The chart is fetched while the fiscal year and the balances are read.
	type chartResult struct {
		m   map[string]Account
		err error
	}
	chartc := make(chan chartResult, 1)
	go func() {
		m, err := s.chart(ctx, tenant, false)
		chartc <- chartResult{m, err}
	}()
	t, err := s.tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	w, err := ParsePeriod(period, t.FiscalYearStartMonth, s.now())
	if err != nil {
		return nil, err
	}
	sums, err := s.store.Balances(ctx, tenant, w.Query())
	if err != nil {
		return nil, err
	}
	cr := <-chartc
	if cr.err != nil {
		return nil, cr.err
	}
	chart := cr.m
	for _, a := range sums {
		if _, ok := chart[a.Account]; !ok {
			// An account created after the chart was cached.
			if chart, err = s.chart(ctx, tenant, true); err != nil {
				return nil, err
			}
			break
		}
	}
	figs := figures(sums, chart)
	h := Header{Type: typ, Period: w.Period, FiscalYear: w.FiscalYear, From: w.Start, To: w.To()}
	switch typ {
	case ReportSuSa:
		return buildSuSa(h, figs), nil
	case ReportTrialBalance:
		return buildTrialBalance(h, figs), nil
	case ReportGuV:
		return buildGuV(h, figs), nil
	default:
		return buildBilanz(h, figs), nil
	}
}

// reportCaches keep per tenant what reports look up often and what changes
// rarely. The zero value is ready to use.
type reportCaches struct {
	accounts ttlCache[map[string]Account]
	tenants  ttlCache[identityv1.Tenant]
}

// chart returns the tenant's accounts by number, cached for CacheTTL.
func (s *Service) chart(ctx context.Context, tenant string, fresh bool) (map[string]Account, error) {
	return s.reports.accounts.get(ctx, tenant, fresh, func(ctx context.Context) (map[string]Account, error) {
		list, err := s.ledger.Accounts(ctx)
		if err != nil {
			return nil, errs.Wrap("reporting: chart of accounts", err)
		}
		m := make(map[string]Account, len(list))
		for _, a := range list {
			m[a.Number] = a
		}
		return m, nil
	})
}

// tenant returns the tenant's master data, cached for CacheTTL.
func (s *Service) tenant(ctx context.Context, tenant string) (identityv1.Tenant, error) {
	return s.reports.tenants.get(ctx, tenant, false, func(ctx context.Context) (identityv1.Tenant, error) {
		t, err := s.tenants.Tenant(ctx)
		if err != nil {
			return t, errs.Wrap("reporting: tenant", err)
		}
		return t, nil
	})
}

// ForgetTenant drops what the service cached of a tenant (after its master
// data or chart changed).
func (s *Service) ForgetTenant(tenant string) {
	s.reports.accounts.forget(tenant)
	s.reports.tenants.forget(tenant)
}

// figure is one account's sums with what the reports need of the account.
type figure struct {
	AccountSums
	name string
	typ  string
	bs   bool   // balance sheet account: carries its balance into the next year
	pos  string // HGB position
}

// figures joins sums and chart, ordered by account number (shorter numbers
// first: general ledger accounts before personal accounts).
func figures(sums []AccountSums, chart map[string]Account) []figure {
	out := make([]figure, 0, len(sums))
	for _, a := range sums {
		acct, ok := chart[a.Account]
		typ := acct.Type
		if !ok || !validType(typ) {
			typ = TypeOf(a.Account)
		}
		pos, _ := Position(a.Account, typ)
		out = append(out, figure{AccountSums: a, name: acct.Name, typ: typ, bs: balanceSheetType(typ), pos: pos})
	}
	slices.SortFunc(out, func(x, y figure) int { return compareAccounts(x.Account, y.Account) })
	return out
}

func compareAccounts(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}

func validType(t string) bool { return balanceSheetType(t) || t == TypeRevenue || t == TypeExpense }

func buildSuSa(h Header, figs []figure) SuSa {
	r := SuSa{Header: h, Rows: []SuSaRow{}, Totals: SuSaTotals{money.Zero, money.Zero, money.Zero, money.Zero}}
	for _, f := range figs {
		opening := money.Zero
		if f.bs {
			opening = f.PriorDebit.Sub(f.PriorCredit)
		}
		if opening.IsZero() && f.PeriodDebit.IsZero() && f.PeriodCredit.IsZero() && f.YTDDebit.IsZero() && f.YTDCredit.IsZero() {
			continue
		}
		r.Rows = append(r.Rows, SuSaRow{Account: f.Account, Name: f.name, OpeningBalance: opening,
			PeriodDebit: f.PeriodDebit, PeriodCredit: f.PeriodCredit, YTDDebit: f.YTDDebit, YTDCredit: f.YTDCredit,
			Balance: opening.Add(f.YTDDebit).Sub(f.YTDCredit)})
		r.Totals.PeriodDebit = r.Totals.PeriodDebit.Add(f.PeriodDebit)
		r.Totals.PeriodCredit = r.Totals.PeriodCredit.Add(f.PeriodCredit)
		r.Totals.YTDDebit = r.Totals.YTDDebit.Add(f.YTDDebit)
		r.Totals.YTDCredit = r.Totals.YTDCredit.Add(f.YTDCredit)
	}
	return r
}

// priorResult is the net (debit - credit) of profit and loss accounts
// before the fiscal year: earlier results not closed into equity.
func priorResult(figs []figure) money.Amount {
	net := money.Zero
	for _, f := range figs {
		if !f.bs {
			net = net.Add(f.PriorDebit).Sub(f.PriorCredit)
		}
	}
	return net
}

func buildTrialBalance(h Header, figs []figure) TrialBalance {
	r := TrialBalance{Header: h, Rows: []TrialBalanceRow{}, Totals: TrialBalanceTotals{money.Zero, money.Zero}}
	for _, f := range figs {
		d, c := f.YTDDebit, f.YTDCredit
		if f.bs {
			d, c = d.Add(f.PriorDebit), c.Add(f.PriorCredit)
		}
		if d.IsZero() && c.IsZero() {
			continue
		}
		r.Rows = append(r.Rows, TrialBalanceRow{Account: f.Account, Name: f.name, Debit: d, Credit: c, Balance: d.Sub(c)})
		r.Totals.Debit, r.Totals.Credit = r.Totals.Debit.Add(d), r.Totals.Credit.Add(c)
	}
	if prior := priorResult(figs); !prior.IsZero() {
		row := TrialBalanceRow{Name: CarryForwardName, Debit: money.Zero, Credit: money.Zero, Balance: prior}
		if prior.IsPositive() {
			row.Debit = prior
		} else {
			row.Credit = prior.Neg()
		}
		r.Rows = append(r.Rows, row)
		r.Totals.Debit, r.Totals.Credit = r.Totals.Debit.Add(row.Debit), r.Totals.Credit.Add(row.Credit)
	}
	return r
}

// guvAmount is an account's amount on a GuV line of the given kind.
func guvAmount(f figure, kind string) money.Amount {
	if kind == KindExpense {
		return f.YTDDebit.Sub(f.YTDCredit)
	}
	return f.YTDCredit.Sub(f.YTDDebit)
}

// guvResult computes the GuV and returns it with the appropriation
// (line 18; zero when no account is on it).
func guvResult(figs []figure) (lines []GuVLine, result, appropriation money.Amount, hasAppropriation bool) {
	idx := make(map[string]int, len(guvLines))
	lines = make([]GuVLine, len(guvLines))
	for i, l := range guvLines {
		lines[i] = GuVLine{Position: l.Pos, Label: l.Label, Kind: l.Kind, Amount: money.Zero, Accounts: []AccountAmount{}}
		idx[l.Pos] = i
	}
	for _, f := range figs {
		if f.bs || (f.YTDDebit.IsZero() && f.YTDCredit.IsZero()) {
			continue
		}
		i, ok := idx[f.pos]
		if !ok {
			i = idx[fallbackPos[f.typ]]
		}
		amt := guvAmount(f, lines[i].Kind)
		lines[i].Accounts = append(lines[i].Accounts, AccountAmount{Account: f.Account, Name: f.name, Amount: amt})
		lines[i].Amount = lines[i].Amount.Add(amt)
	}
	// Parents sum their sub-lines.
	for i, l := range guvLines {
		if l.Parent != "" {
			p := idx[l.Parent]
			lines[p].Amount = lines[p].Amount.Add(lines[i].Amount)
		}
	}
	running := money.Zero
	for i, l := range guvLines {
		switch {
		case l.Parent != "":
		case l.Kind == KindIncome:
			running = running.Add(lines[i].Amount)
		case l.Kind == KindExpense:
			running = running.Sub(lines[i].Amount)
		case l.Kind == KindSubtotal:
			lines[i].Amount = running
		case l.Kind == KindResult && l.Pos == "17":
			lines[i].Amount = running
			result = running
		case l.Kind == KindAppropriation:
			appropriation = lines[i].Amount
			hasAppropriation = len(lines[i].Accounts) > 0
		case l.Kind == KindResult:
			lines[i].Amount = result.Add(appropriation)
		}
	}
	if !hasAppropriation {
		lines = slices.DeleteFunc(lines, func(l GuVLine) bool { return l.Position == "18" || l.Position == "19" })
	}
	return lines, result, appropriation, hasAppropriation
}

func buildGuV(h Header, figs []figure) GuV {
	lines, result, _, _ := guvResult(figs)
	return GuV{Header: h, Lines: lines, Result: result}
}

func buildBilanz(h Header, figs []figure) Bilanz {
	_, result, appropriation, _ := guvResult(figs)
	type leaf struct {
		amount   money.Amount
		accounts []AccountAmount
	}
	aktiva, passiva := map[string]*leaf{}, map[string]*leaf{}
	put := func(m map[string]*leaf, pos string, a AccountAmount) {
		l := m[pos]
		if l == nil {
			l = &leaf{amount: money.Zero}
			m[pos] = l
		}
		l.amount = l.amount.Add(a.Amount)
		l.accounts = append(l.accounts, a)
	}
	for _, f := range figs {
		if !f.bs {
			continue
		}
		bal := f.PriorDebit.Add(f.YTDDebit).Sub(f.PriorCredit).Sub(f.YTDCredit)
		if bal.IsZero() {
			continue
		}
		if f.typ == TypeAsset {
			put(aktiva, f.pos, AccountAmount{Account: f.Account, Name: f.name, Amount: bal})
		} else {
			put(passiva, f.pos, AccountAmount{Account: f.Account, Name: f.name, Amount: bal.Neg()})
		}
	}
	if prior := priorResult(figs); !prior.IsZero() {
		put(passiva, PosCarryForward, AccountAmount{Name: CarryForwardName, Amount: prior.Neg()})
	}
	// The year's result (and its appropriation) completes the equity.
	yearEnd := result.Add(appropriation)
	resultLabel := ""
	if l := passiva[PosResult]; l != nil || !appropriation.IsZero() {
		resultLabel = "Bilanzgewinn/Bilanzverlust"
	}
	if l := passiva[PosResult]; l != nil {
		l.amount = l.amount.Add(yearEnd)
	} else {
		passiva[PosResult] = &leaf{amount: yearEnd}
	}

	var build func(nodes []hgbNode, m map[string]*leaf, isPassiva bool) []BilanzNode
	build = func(nodes []hgbNode, m map[string]*leaf, isPassiva bool) []BilanzNode {
		out := make([]BilanzNode, 0, len(nodes))
		for _, n := range nodes {
			if n.Pos == PosDeficit || n.Pos == PosDeficitOffset {
				continue // added below when equity is negative
			}
			b := BilanzNode{Position: n.Pos, Label: n.Label, Amount: money.Zero}
			if isPassiva && n.Pos == PosResult && resultLabel != "" {
				b.Label = resultLabel
			}
			if l := m[n.Pos]; l != nil {
				b.Amount, b.Accounts = l.amount, l.accounts
			}
			if len(n.Children) > 0 {
				b.Children = build(n.Children, m, isPassiva)
				for _, c := range b.Children {
					b.Amount = b.Amount.Add(c.Amount)
				}
			}
			out = append(out, b)
		}
		return out
	}
	r := Bilanz{Header: h, Aktiva: build(aktivaTree, aktiva, false), Passiva: build(passivaTree, passiva, true), Result: result}
	// §268 (3): equity below zero is shown as the last Aktiva position, and
	// equity as zero.
	if eq := &r.Passiva[0]; eq.Amount.IsNegative() {
		deficit := eq.Amount.Neg()
		eq.Children = append(eq.Children, BilanzNode{Position: PosDeficitOffset, Label: "Nicht durch Eigenkapital gedeckter Fehlbetrag", Amount: deficit})
		eq.Amount = money.Zero
		r.Aktiva = append(r.Aktiva, BilanzNode{Position: PosDeficit, Label: "Nicht durch Eigenkapital gedeckter Fehlbetrag", Amount: deficit})
	}
	r.TotalAktiva, r.TotalPassiva = money.Zero, money.Zero
	for _, n := range r.Aktiva {
		r.TotalAktiva = r.TotalAktiva.Add(n.Amount)
	}
	for _, n := range r.Passiva {
		r.TotalPassiva = r.TotalPassiva.Add(n.Amount)
	}
	r.Balanced = r.TotalAktiva.Equal(r.TotalPassiva.Decimal)
	return r
}
