package ledger_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
)

// drChart is ledgertest.Seed as an AdjustChart, without a database.
type drChart struct {
	accounts map[string]ledger.Account
	codes    []ledger.TaxCode
}

func newDRChart() drChart {
	accounts, codes := ledgertest.Seed()
	c := drChart{accounts: map[string]ledger.Account{}}
	for _, a := range accounts {
		a.IsActive = true
		c.accounts[a.Number] = a
	}
	inactive := ledger.Account{Number: "6300", Name: "Alt", Type: ledger.Expense}
	c.accounts[inactive.Number] = inactive
	for _, t := range codes {
		t.IsActive = true
		c.codes = append(c.codes, t)
	}
	// A second input code at 7 % that must not win over VSt7 for VSt19.
	c.codes = append(c.codes, ledger.TaxCode{Code: "AVSt7", Kind: ledger.TaxInput, Rate: money.MustParse("7"), VATAccount: "1401", IsActive: true})
	return c
}

func (c drChart) Account(n string) (ledger.Account, bool) { a, ok := c.accounts[n]; return a, ok }
func (c drChart) TaxCode(code string) (ledger.TaxCode, bool) {
	for _, t := range c.codes {
		if t.Code == code {
			return t, true
		}
	}
	return ledger.TaxCode{}, false
}
func (c drChart) TaxCodes() []ledger.TaxCode { return c.codes }

// drDraft is a purchase of office supplies: 119.00 gross with 19 % input tax.
func drDraft() ledger.Suggestion {
	return ledger.Suggestion{BookingDate: "2025-03-15", Description: "Büromaterial", Confidence: 0.8, Reasons: []string{"vendor match"},
		Lines: []ledger.Line{ledgertest.Line("6815", "1800", "119.00", "VSt19")}}
}

// drDraftOr is s, or drDraft for a suggestion without lines.
func drDraftOr(s ledger.Suggestion) ledger.Suggestion {
	if s.Lines == nil {
		return drDraft()
	}
	return s
}

func drWith(f func(*ledger.Suggestion)) ledger.Suggestion {
	s := drDraft()
	f(&s)
	return s
}

// drAmounts compares money by value and scale-free.
var drAmounts = cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })

func TestAdjust(t *testing.T) {
	t.Parallel()
	sale := ledger.Suggestion{BookingDate: "2025-03-15", Description: "Verkauf", Lines: []ledger.Line{ledgertest.Line("1200", "4400", "100.00", "USt19")}}
	twoLines := drWith(func(s *ledger.Suggestion) { s.Lines = append(s.Lines, ledgertest.Line("6805", "1800", "10.00", "")) })
	tests := []struct {
		name        string
		draft       ledger.Suggestion // drDraft when zero
		instruction string
		want        ledger.Suggestion
		applied     []string
	}{
		{name: "account de", instruction: "Konto 6805 statt 6815",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountDebit = "6805" }), applied: []string{"account 6815 replaced by 6805 on 1 line"}},
		{name: "account en", instruction: "account 6805 instead of 6815",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountDebit = "6805" }), applied: []string{"account 6815 replaced by 6805 on 1 line"}},
		{name: "account credit side, verb, trailing dot", instruction: "use account 3300 instead of account 1800.",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountCredit = "3300" }), applied: []string{"account 1800 replaced by 3300 on 1 line"}},
		{name: "account both lines", draft: drWith(func(s *ledger.Suggestion) { s.Lines = append(s.Lines, ledgertest.Line("6805", "1800", "5", "")) }), instruction: "Konto 1200 statt 1800",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines[0].AccountCredit = "1200"
				s.Lines = append(s.Lines, ledgertest.Line("6805", "1200", "5", ""))
			}), applied: []string{"account 1800 replaced by 1200 on 2 lines"}},
		{name: "replace de", instruction: "Konto 6815 durch 6805 ersetzen",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountDebit = "6805" }), applied: []string{"account 6815 replaced by 6805 on 1 line"}},
		{name: "replace en", instruction: "replace 6815 with 6805",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].AccountDebit = "6805" }), applied: []string{"account 6815 replaced by 6805 on 1 line"}},
		{name: "rate de", instruction: "7 % statt 19 %",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].TaxCode = "VSt7" }), applied: []string{"tax 19 % replaced by 7 %: VSt19 → VSt7"}},
		{name: "rate en", instruction: "7% instead of 19%",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].TaxCode = "VSt7" }), applied: []string{"tax 19 % replaced by 7 %: VSt19 → VSt7"}},
		{name: "rate with word", instruction: "USt 7% statt 19%", draft: sale,
			want:    ledger.Suggestion{BookingDate: "2025-03-15", Description: "Verkauf", Lines: []ledger.Line{ledgertest.Line("1200", "4400", "100.00", "USt7")}},
			applied: []string{"tax 19 % replaced by 7 %: USt19 → USt7"}},
		{name: "rate back", draft: drWith(func(s *ledger.Suggestion) { s.Lines[0].TaxCode = "VSt7" }), instruction: "19 % statt 7 %",
			want: drDraft(), applied: []string{"tax 7 % replaced by 19 %: VSt7 → VSt19"}},
		{name: "date iso", instruction: "Datum 2025-03-31",
			want: drWith(func(s *ledger.Suggestion) { s.BookingDate = "2025-03-31" }), applied: []string{"booking date set to 2025-03-31"}},
		{name: "date german", instruction: "Datum: 1.3.2025",
			want: drWith(func(s *ledger.Suggestion) { s.BookingDate = "2025-03-01" }), applied: []string{"booking date set to 2025-03-01"}},
		{name: "date en", instruction: "set date to 31.03.2025",
			want: drWith(func(s *ledger.Suggestion) { s.BookingDate = "2025-03-31" }), applied: []string{"booking date set to 2025-03-31"}},
		{name: "amount de", instruction: "Betrag 1.234,50 €",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("1234.50") }), applied: []string{"amount set to 1234.50"}},
		{name: "amount en", instruction: "amount 1,234.5",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("1234.5") }), applied: []string{"amount set to 1234.50"}},
		{name: "amount comma decimals", instruction: "Betrag 119,00",
			want: drDraft(), applied: []string{"amount set to 119.00"}},
		{name: "amount integer EUR", instruction: "amount EUR 80",
			want: drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("80") }), applied: []string{"amount set to 80.00"}},
		{name: "text de", instruction: "Text Büromaterial März",
			want: drWith(func(s *ledger.Suggestion) { s.Description = "Büromaterial März" }), applied: []string{`description set to "Büromaterial März"`}},
		{name: "text with und", instruction: `Text "Papier und Toner"`,
			want: drWith(func(s *ledger.Suggestion) { s.Description = "Papier und Toner" }), applied: []string{`description set to "Papier und Toner"`}},
		{name: "description en", instruction: "description: Office supplies",
			want: drWith(func(s *ledger.Suggestion) { s.Description = "Office supplies" }), applied: []string{`description set to "Office supplies"`}},
		{name: "split de", instruction: "aufteilen 60/40 auf 6805 und 6815",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines = []ledger.Line{ledgertest.Line("6805", "1800", "71.40", "VSt19"), ledgertest.Line("6815", "1800", "47.60", "VSt19")}
			}), applied: []string{"amount 119.00 split 60/40: 71.40 on 6805, 47.60 on 6815"}},
		{name: "split en, remainder to last", draft: drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("100.00") }),
			instruction: "split 33.33/33.33/33.34 between 6805, 6815 and 3300",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines = []ledger.Line{ledgertest.Line("6805", "1800", "33.33", "VSt19"), ledgertest.Line("6815", "1800", "33.33", "VSt19"), ledgertest.Line("3300", "1800", "33.34", "VSt19")}
			}), applied: []string{"amount 100.00 split 33.33/33.33/33.34: 33.33 on 6805, 33.33 on 6815, 33.34 on 3300"}},
		{name: "split rounding exact to cents", draft: drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("0.05") }),
			instruction: "split 50/50 between 6805 and 6815",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines = []ledger.Line{ledgertest.Line("6805", "1800", "0.03", "VSt19"), ledgertest.Line("6815", "1800", "0.02", "VSt19")}
			}), applied: []string{"amount 0.05 split 50/50: 0.03 on 6805, 0.02 on 6815"}},
		{name: "split sale replaces the revenue side", draft: sale, instruction: "aufteilen 50%/50% auf 4400 und 6805",
			want:    ledger.Suggestion{BookingDate: "2025-03-15", Description: "Verkauf", Lines: []ledger.Line{ledgertest.Line("1200", "4400", "50.00", "USt19"), ledgertest.Line("1200", "6805", "50.00", "USt19")}},
			applied: []string{"amount 100.00 split 50%/50%: 50.00 on 4400, 50.00 on 6805"}},
		{name: "several with und", instruction: "Konto 6805 statt 6815 und Datum 2025-03-31 und Text Telefon März",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines[0].AccountDebit = "6805"
				s.BookingDate = "2025-03-31"
				s.Description = "Telefon März"
			}), applied: []string{"account 6815 replaced by 6805 on 1 line", "booking date set to 2025-03-31", `description set to "Telefon März"`}},
		{name: "several with semicolons and and", instruction: "7% instead of 19%; amount 107.00 and date 2025-04-01",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines[0].TaxCode = "VSt7"
				s.Lines[0].Amount = money.MustParse("107.00")
				s.BookingDate = "2025-04-01"
			}), applied: []string{"tax 19 % replaced by 7 %: VSt19 → VSt7", "amount set to 107.00", "booking date set to 2025-04-01"}},
		{name: "split then account, comma separated", instruction: "aufteilen 60/40 auf 6805 und 6815, Konto 3300 statt 1800",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines = []ledger.Line{ledgertest.Line("6805", "3300", "71.40", "VSt19"), ledgertest.Line("6815", "3300", "47.60", "VSt19")}
			}), applied: []string{"amount 119.00 split 60/40: 71.40 on 6805, 47.60 on 6815", "account 1800 replaced by 3300 on 2 lines"}},
		{name: "two lines rate switch", draft: twoLines, instruction: "7 % statt 19 %",
			want: drWith(func(s *ledger.Suggestion) {
				s.Lines[0].TaxCode = "VSt7"
				s.Lines = append(s.Lines, ledgertest.Line("6805", "1800", "10.00", ""))
			}), applied: []string{"tax 19 % replaced by 7 %: VSt19 → VSt7"}},
	}
	chart := newDRChart()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			draft := drDraftOr(tc.draft)
			before := draft
			before.Lines = append([]ledger.Line(nil), draft.Lines...)
			got, applied, err := ledger.Adjust(draft, tc.instruction, chart)
			if err != nil {
				t.Fatalf("Adjust(%q): %v", tc.instruction, err)
			}
			if diff := cmp.Diff(tc.want, got, drAmounts); diff != "" {
				t.Errorf("draft (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.applied, applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, draft, drAmounts); diff != "" {
				t.Errorf("input draft modified (-before +after):\n%s", diff)
			}
		})
	}
}

// TestAdjustRefused: what the parser does not understand, or cannot
// apply, is refused with INVALID_INPUT and a message naming the problem.
func TestAdjustRefused(t *testing.T) {
	t.Parallel()
	twoLines := drWith(func(s *ledger.Suggestion) { s.Lines = append(s.Lines, ledgertest.Line("6805", "1800", "10.00", "")) })
	fx := drWith(func(s *ledger.Suggestion) {
		a := money.MustParse("120")
		s.Lines[0].FXCurrency, s.Lines[0].FXAmount = "USD", &a
	})
	tests := []struct {
		name, instruction string
		draft             ledger.Suggestion
		msg               string // part of the error message
	}{
		{"empty", "  ", ledger.Suggestion{}, "instruction is required"},
		{"gibberish", "mach das schöner", ledger.Suggestion{}, "was not understood"},
		{"second clause gibberish", "Datum 2025-03-31; bitte schöner", ledger.Suggestion{}, "was not understood"},
		{"unknown account", "Konto 9999 statt 6815", ledger.Suggestion{}, "account 9999 does not exist"},
		{"inactive account", "Konto 6300 statt 6815", ledger.Suggestion{}, "account 6300 is inactive"},
		{"account not in draft", "Konto 6805 statt 4400", ledger.Suggestion{}, "account 4400 does not appear"},
		{"same account", "Konto 6815 statt 6815", ledger.Suggestion{}, "both accounts are 6815"},
		{"account against itself", "Konto 1800 statt 6815", ledger.Suggestion{}, "against itself"},
		{"rate not used", "7 % statt 16 %", ledger.Suggestion{}, "no line of the draft uses a tax code with 16 %"},
		{"rate unknown", "5 % statt 19 %", ledger.Suggestion{}, "no active input tax code with 5 %"},
		{"same rate", "19 % statt 19 %", ledger.Suggestion{}, "both rates are 19 %"},
		{"bad date", "Datum 2025-02-30", ledger.Suggestion{}, "not a real calendar date"},
		{"bad german date", "Datum 31.04.2025", ledger.Suggestion{}, "not a real calendar date"},
		{"amount three decimals", "Betrag 1,2345", ledger.Suggestion{}, "not a positive EUR amount"},
		{"amount zero", "amount 0", ledger.Suggestion{}, "not a positive EUR amount"},
		{"amount multi-line", "Betrag 10", twoLines, "exactly one line"},
		{"split not 100", "aufteilen 60/30 auf 6805 und 6815", ledger.Suggestion{}, "add up to 90 %"},
		{"split count", "split 50/25/25 between 6805 and 6815", ledger.Suggestion{}, "3 shares but 2 accounts"},
		{"split multi-line", "split 50/50 between 6805 and 6815", twoLines, "exactly one line"},
		{"split same account twice", "split 50/50 between 6805 and 6805", ledger.Suggestion{}, "named twice"},
		{"split unknown account", "split 50/50 between 6805 and 9999", ledger.Suggestion{}, "account 9999 does not exist"},
		{"split onto other side", "split 50/50 between 6805 and 1800", ledger.Suggestion{}, "already the other side"},
		{"split below a cent", "split 99/1 between 6805 and 6815", drWith(func(s *ledger.Suggestion) { s.Lines[0].Amount = money.MustParse("0.01") }), "less than one cent"},
		{"split fx", "split 50/50 between 6805 and 6815", fx, "foreign-currency"},
		{"text empty", `Text ""`, ledger.Suggestion{}, "text is empty"},
		{"text too long", "Text " + strings.Repeat("x", 501), ledger.Suggestion{}, "longer than 500"},
		{"too long", strings.Repeat("Datum 2025-03-31; ", 60), ledger.Suggestion{}, "too long"},
		{"too many", strings.Repeat("Datum 2025-03-31; ", 21), ledger.Suggestion{}, "too many"},
	}
	chart := newDRChart()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			draft := drDraftOr(tc.draft)
			got, applied, err := ledger.Adjust(draft, tc.instruction, chart)
			if !errs.Is(err, errs.InvalidInput) || !strings.Contains(errs.As(err).Message+" "+drDetailText(err), tc.msg) {
				t.Fatalf("Adjust(%q) = %+v %v, %v; want INVALID_INPUT containing %q", tc.instruction, got, applied, err, tc.msg)
			}
			if diff := cmp.Diff(draft, got, drAmounts); diff != "" {
				t.Errorf("refused adjust changed the draft (-want +got):\n%s", diff)
			}
		})
	}
}

func drDetailText(err error) string {
	var b strings.Builder
	for _, d := range errs.As(err).Details {
		b.WriteString(d.Issue + " ")
	}
	return b.String()
}

// TestAdjustHelp: an instruction that is not understood lists every
// supported form.
func TestAdjustHelp(t *testing.T) {
	t.Parallel()
	_, _, err := ledger.Adjust(drDraft(), "??", newDRChart())
	e := errs.As(err)
	if e == nil || len(e.Details) != len(ledger.AdjustForms) {
		t.Fatalf("error %v, want one detail per supported form", err)
	}
	for _, want := range []string{"Konto 6805 statt 6815", "7% instead of 19%", "Datum 2025-03-31", "Betrag 119,00", "Text Büromaterial März", "split 60/40 between 6805 and 6815"} {
		if !strings.Contains(drDetailText(err), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestParseAmountText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"119": "119", "119,00": "119.00", "119.00": "119.00", "1.234,56": "1234.56", "1,234.56": "1234.56",
		"1.234": "1234", "1,234": "1234", "1.234.567,8": "1234567.8", "0,5": "0.5", "12.345.678": "12345678",
		"0": "", "1,2345": "", "1.2.3": "", "1,23,4": "", "abc": "", "": "", "1.234,567": "", "-5": "",
	} {
		got, ok := ledger.ParseAmountText(in)
		switch {
		case want == "" && ok:
			t.Errorf("ParseAmountText(%q) = %s, want refusal", in, got)
		case want != "" && (!ok || !got.Equal(money.MustParse(want).Decimal)):
			t.Errorf("ParseAmountText(%q) = %s %v, want %s", in, got, ok, want)
		}
	}
}
