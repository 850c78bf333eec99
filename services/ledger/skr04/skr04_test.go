package skr04

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/services/ledger"
)

// upstream reads the embedded file as it is, for comparisons.
func upstream(t *testing.T) []map[string]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(accountsCSV))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			continue
		}
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

func byNumber(t *testing.T) map[string]ledger.Account {
	t.Helper()
	m := map[string]ledger.Account{}
	for _, a := range Accounts() {
		m[a.Number] = a
	}
	return m
}

func TestEmbeddedFileIsUpstreamCopy(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256(accountsCSV)
	if got, want := hex.EncodeToString(sum[:]), "5aa78699bf9722d4cac466120e72f643b7d3234883a2302a21afec77db42d358"; got != want {
		t.Fatalf("data/odoo-l10n_de-skr04-accounts.csv changed: sha256 %s, want %s", got, want)
	}
	if n := len(upstream(t)); n != 1222 {
		t.Fatalf("upstream rows = %d, want 1222", n)
	}
}

func TestAccountsCountAndNumbers(t *testing.T) {
	t.Parallel()
	accounts := Accounts()
	if len(accounts) != 1222+len(added) {
		t.Fatalf("len(Accounts()) = %d, want %d", len(accounts), 1222+len(added))
	}
	numeric := regexp.MustCompile(`^[0-9]{1,8}$`)
	seen := map[string]bool{}
	for i, a := range accounts {
		if !numeric.MatchString(a.Number) {
			t.Errorf("number %q is not 1 to 8 digits", a.Number)
		}
		if seen[a.Number] {
			t.Errorf("number %s occurs twice", a.Number)
		}
		seen[a.Number] = true
		if i > 0 && accounts[i-1].Number >= a.Number {
			t.Errorf("accounts not ordered: %s before %s", accounts[i-1].Number, a.Number)
		}
		if !ledger.ValidAccountType(a.Type) {
			t.Errorf("%s: type %q", a.Number, a.Type)
		}
		if a.Category == "" || utf8.RuneCountInString(a.Category) > 100 {
			t.Errorf("%s: category %q is empty or longer than 100", a.Number, a.Category)
		}
		if a.ReportGroup == "" || len(a.ReportGroup) > 40 {
			t.Errorf("%s: report group %q is empty or longer than 40", a.Number, a.ReportGroup)
		}
		if !a.IsActive || !a.IsSystem {
			t.Errorf("%s: seeded accounts are active system accounts", a.Number)
		}
	}
}

func TestAddedAccounts(t *testing.T) {
	t.Parallel()
	got := byNumber(t)
	tests := []ledger.Account{
		{Number: "1460", Name: "Geldtransit", Type: ledger.Asset, ReportGroup: GroupClearing},
		{Number: "1600", Name: "Kasse", Type: ledger.Asset, ReportGroup: GroupCash},
		{Number: "1800", Name: "Bank", Type: ledger.Asset, ReportGroup: GroupBank},
	}
	for _, want := range tests {
		a := got[want.Number]
		a.Category, a.IsActive, a.IsSystem = "", false, false
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("account %s (-want +got):\n%s", want.Number, diff)
		}
	}
	// Accounts the tax codes and everyday bookings rely on.
	for _, n := range []string{"1200", "1406", "1401", "1407", "1404", "1610", "1820", "2900", "2970", "3300", "3806", "3801",
		"3837", "3804", "4300", "4400", "6310", "6815", "6855", "9000", "9008", "9009"} {
		if _, ok := got[n]; !ok {
			t.Errorf("account %s is missing", n)
		}
	}
}

// TestClassTypes is the class → type table: every account of a class (or
// of a documented part of classes 7 and 9) has exactly the listed type.
func TestClassTypes(t *testing.T) {
	t.Parallel()
	part := func(n string) string {
		switch v, _ := strconv.Atoi(n[:4]); {
		case n[0] != '7' && n[0] != '9':
			return n[:1]
		case v < 7200:
			return "7000-7199"
		case v < 7400:
			return "7200-7399"
		case v < 7500:
			return "7400-7499"
		case v < 7600:
			return "7500-7599"
		case v < 7700:
			return "7600-7699"
		case v < 7800:
			return "7700-7799"
		case v < 8000:
			return "7800-7999"
		case v < 9100:
			return "9000-9099"
		case v == 9991 || v == 9994:
			return n
		default:
			return "9100-9999"
		}
	}
	got := map[string][]string{}
	for _, a := range Accounts() {
		p := part(a.Number)
		if !slices.Contains(got[p], a.Type) {
			got[p] = append(got[p], a.Type)
		}
	}
	want := map[string][]string{
		"0": {ledger.Asset}, "1": {ledger.Asset}, "2": {ledger.Equity}, "3": {ledger.Liability},
		"4": {ledger.Revenue}, "5": {ledger.Expense}, "6": {ledger.Expense},
		"7000-7199": {ledger.Revenue}, "7200-7399": {ledger.Expense}, "7400-7499": {ledger.Revenue},
		"7500-7599": {ledger.Expense}, "7600-7699": {ledger.Expense}, "7700-7799": {ledger.Equity},
		"9000-9099": {ledger.Equity}, "9991": {ledger.Revenue}, "9994": {ledger.Expense},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("class → type (-want +got):\n%s", diff)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	type result struct {
		Type, Group string
		OK          bool
	}
	tests := map[string]result{
		"0135":  {ledger.Asset, GroupIntangibleAssets, true},
		"0650":  {ledger.Asset, GroupFixedAssets, true},
		"1140":  {ledger.Asset, GroupInventory, true},
		"1200":  {ledger.Asset, GroupReceivables, true},
		"1406":  {ledger.Asset, GroupTaxReceivables, true},
		"1600":  {ledger.Asset, GroupCash, true},
		"1800":  {ledger.Asset, GroupBank, true},
		"2100":  {ledger.Equity, GroupPrivateAccounts, true},
		"2900":  {ledger.Equity, GroupEquity, true},
		"2970":  {ledger.Equity, GroupRetainedEarnings, true},
		"3070":  {ledger.Liability, GroupProvisions, true},
		"3150":  {ledger.Liability, GroupLiabilities, true},
		"3300":  {ledger.Liability, GroupPayables, true},
		"3806":  {ledger.Liability, GroupTaxLiabilities, true},
		"3900":  {ledger.Liability, GroupDeferredIncome, true},
		"4400":  {ledger.Revenue, GroupRevenue, true},
		"4700":  {ledger.Revenue, GroupRevenue, true},
		"4830":  {ledger.Revenue, GroupOtherIncome, true},
		"5400":  {ledger.Expense, GroupMaterialExpense, true},
		"5900":  {ledger.Expense, GroupMaterialExpense, true},
		"6020":  {ledger.Expense, GroupPersonnelExpense, true},
		"6220":  {ledger.Expense, GroupDepreciation, true},
		"6815":  {ledger.Expense, GroupOtherOpex, true},
		"7100":  {ledger.Revenue, GroupInterestIncome, true},
		"7310":  {ledger.Expense, GroupInterestExpense, true},
		"7610":  {ledger.Expense, GroupTaxesOnIncome, true},
		"7685":  {ledger.Expense, GroupOtherTaxes, true},
		"7785":  {ledger.Equity, GroupAppropriation, true},
		"9000":  {ledger.Equity, GroupCarryForward, true},
		"8400":  {},
		"12345": {},
		"140":   {},
		"14a0":  {},
		"":      {},
	}
	for n, want := range tests {
		typ, group, cat, ok := Classify(n)
		if diff := cmp.Diff(want, result{typ, group, ok}); diff != "" {
			t.Errorf("Classify(%q) (-want +got):\n%s", n, diff)
		}
		if ok != (cat != "") {
			t.Errorf("Classify(%q): category %q with ok=%v", n, cat, ok)
		}
	}
}

// TestClassesCoverEveryNumber: classes 0–7 and 9 are covered once, in order.
func TestClassesCoverEveryNumber(t *testing.T) {
	t.Parallel()
	for i, c := range classes {
		if c.lo > c.hi {
			t.Errorf("class %d: lo %d > hi %d", i, c.lo, c.hi)
		}
		if i > 0 && classes[i-1].hi+1 != c.lo && !(classes[i-1].hi == 7999 && c.lo == 9000) {
			t.Errorf("gap or overlap between %d-%d and %d-%d", classes[i-1].lo, classes[i-1].hi, c.lo, c.hi)
		}
		if !ledger.ValidAccountType(c.typ) || len(c.group) > 40 || utf8.RuneCountInString(c.category) > 100 {
			t.Errorf("class %d-%d: invalid %q %q %q", c.lo, c.hi, c.typ, c.group, c.category)
		}
	}
	if classes[0].lo != 0 || classes[len(classes)-1].hi != 9999 {
		t.Errorf("classes span %d-%d, want 0-9999", classes[0].lo, classes[len(classes)-1].hi)
	}
}

// TestNamesAreUpstreamOrDocumentedFixes: names are the German names of the
// file, changed only where nameFixes and wordFixes say so.
func TestNamesAreUpstreamOrDocumentedFixes(t *testing.T) {
	t.Parallel()
	got := byNumber(t)
	var changed []string
	for _, row := range upstream(t) {
		if a := got[row["code"]]; a.Name != row["name@de"] {
			changed = append(changed, fmt.Sprintf("%s %s", row["code"], a.Name))
		}
	}
	want := []string{
		"0150 Geschäfts- oder Firmenwert",
		"1320 Forderungen gegen Aufsichtsrats- und Beirats-Mitglieder",
		"1321 Forderungen gegen Aufsichtsrats- und Beirats-Mitglieder - Restlaufzeit bis 1 Jahr",
		"1325 Forderungen gegen Aufsichtsrats- und Beirats-Mitglieder - Restlaufzeit größer 1 Jahr",
		"1420 Forderungen aus Umsatzsteuer-Vorauszahlungen",
		"3095 Rückstellungen für Abschluss- und Prüfungskosten",
		"3130 Anleihen, konvertibel - Restlaufzeit größer 5 Jahre",
		"3517 Verbindlichkeiten gegenüber Gesellschaftern - Restlaufzeit größer 5 Jahre",
		"3656 Verbindlichkeiten gegenüber stillen Gesellschaftern - Restlaufzeit bis 1 Jahr",
		"3741 Verbindlichkeiten im Rahmen der sozialen Sicherheit - Restlaufzeit bis 1 Jahr",
		"4970 Versicherungsentschädigungen und Schadenersatzleistungen",
		"5000 Aufwendungen für Roh-, Hilfs- und Betriebsstoffe und für bezogene Waren",
		"5192 Energiestoffe (Fertigung) 19 % Vorsteuer",
		"5701 Nachlässe aus Einkauf Roh-, Hilfs- und Betriebsstoffe",
		"5714 Nachlässe aus Einkauf Roh-, Hilfs- und Betriebsstoffe 7 % Vorsteuer",
		"5715 Nachlässe aus Einkauf Roh-, Hilfs- und Betriebsstoffe 19 % Vorsteuer",
		"5717 Nachlässe aus Einkauf Roh-, Hilfs- und Betriebsstoffe, innergemeinschaftlicher Erwerb 7 % Vorsteuer und 7 % Umsatzsteuer",
		"5718 Nachlässe aus Einkauf Roh-, Hilfs- und Betriebsstoffe, innergemeinschaftlicher Erwerb 19 % Vorsteuer und 19 % Umsatzsteuer",
		"6278 Abschreibungen auf Roh-, Hilfs- und Betriebsstoffe/Waren (soweit unüblich hoch)",
		"7451 Erträge durch Verschmelzung und Umwandlung",
		"9991 Kassendifferenzen (Ertrag)",
		"9994 Kassendifferenzen (Aufwand)",
	}
	if diff := cmp.Diff(want, changed); diff != "" {
		t.Errorf("names differing from upstream (-want +got):\n%s", diff)
	}
	for _, a := range Accounts() {
		if a.Name == "" || utf8.RuneCountInString(a.Name) > 255 || a.Name != strings.TrimSpace(a.Name) || strings.Contains(a.Name, "  ") {
			t.Errorf("%s: bad name %q", a.Number, a.Name)
		}
	}
}

// TestOdooTagCrossCheck compares the HGB position of every tagged upstream
// account with ours. Each difference is deliberate; the reason is given.
func TestOdooTagCrossCheck(t *testing.T) {
	t.Parallel()
	deviations := map[string]string{
		// Odoo puts VAT accounts under asset B.II.4 whatever their balance
		// (SOURCES.md calls it out); Umsatzsteuer is a liability, C.8.
		"3798-3809": "asset_bs_B_II_4", "3817-3837": "asset_bs_B_II_4", "3851": "asset_bs_B_II_4",
		// "Umsatzsteuer nicht fällig" is tagged Steuerrückstellung; it is VAT owed later: C.8.
		"3810-3816": "liabilities_bs_B_2",
		// Clearing accounts of class 3 that Odoo tags as assets; they stay in class 3.
		"3630-3635": "asset_bs_B_II_4", "3695": "asset_bs_B_II_4", "3790": "asset_bs_B_II_4",
		// Class-1 clearing accounts tagged as liability / P&L by Odoo.
		"1495": "liabilities_bs_C_8", "1498": "pl_06",
		// HGB §266(3) A.III.2 is the reserve for shares in a controlling company;
		// Odoo tags it A.III.4 (and never uses its own A_III_2 tag).
		"2935": "liabilities_bs_A_III_4",
		// D. Aktive latente Steuern is its own position (§266(2) D); Odoo tags it C.
		"1950": "asset_bs_C",
		// OCA's ranges put Genossenschaftsanteile to Sonstige Ausleihungen.
		"0980": "asset_bs_A_III_3",
		// Fremdleistungen 59xx are GuV 5.b (OCA); Odoo tags some as 8.
		"5913": "pl_08_7", "5923": "pl_08_7", "5950-5951": "pl_08_7", "5970-5985": "pl_08_7",
		// Forderungsverluste with VAT share the 7.b range.
		"6281": "pl_08_7", "6286": "pl_08_7",
		// Disagio amortisation is interest expense (GuV 13) in the 73xx range.
		"7323-7324": "pl_12",
		// Ergebnisverwendung is after the net income, not a P&L line.
		"7705-7785": "pl_15",
	}
	inDeviation := func(code string) (key, tag string) {
		n, _ := strconv.Atoi(code[:4])
		for k, v := range deviations {
			lo, hi, ok := strings.Cut(k, "-")
			if !ok {
				hi = lo
			}
			l, _ := strconv.Atoi(lo)
			h, _ := strconv.Atoi(hi)
			if n >= l && n <= h {
				return k, v
			}
		}
		return "", ""
	}
	var mismatches []string
	used := map[string]bool{}
	for _, row := range upstream(t) {
		var tag string
		for _, t := range strings.Split(row["tag_ids"], ",") {
			if s, ok := strings.CutPrefix(t, "l10n_de.tag_de_"); ok {
				tag = s
			}
		}
		if tag == "" {
			continue
		}
		c, _ := classOf(row["code"][:4])
		if c.pos == tag {
			continue
		}
		if key, want := inDeviation(row["code"]); key != "" && want == tag {
			used[key] = true
			continue
		}
		mismatches = append(mismatches, fmt.Sprintf("%s: ours %q, Odoo %q (%s)", row["code"], c.pos, tag, row["name@de"]))
	}
	sort.Strings(mismatches)
	if diff := cmp.Diff([]string(nil), mismatches); diff != "" {
		t.Errorf("undocumented differences to Odoo's HGB tags (-want +got):\n%s", diff)
	}
	for k := range deviations {
		if !used[k] {
			t.Errorf("deviation %s is stale: no account differs there", k)
		}
	}
}

func TestTaxCodes(t *testing.T) {
	t.Parallel()
	accounts := byNumber(t)
	codeRe := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,20}$`)
	type row struct {
		Kind, Rate, VAT, Self, BU string
	}
	got := map[string]row{}
	for _, c := range TaxCodes() {
		self := ""
		if c.SelfAssessAccount != nil {
			self = *c.SelfAssessAccount
		}
		got[c.Code] = row{c.Kind, c.Rate.String(), c.VATAccount, self, c.DATEVKey}
		if !codeRe.MatchString(c.Code) || c.Label == "" || utf8.RuneCountInString(c.Label) > 100 || !c.IsSystem || !c.IsActive {
			t.Errorf("%s: invalid code, label or flags: %+v", c.Code, c)
		}
		if c.Rate.IsNegative() || c.Rate.Places() > 2 || c.Rate.IntPart() >= 100 {
			t.Errorf("%s: rate %s", c.Code, c.Rate)
		}
		for _, n := range []string{c.VATAccount, self} {
			if n == "" {
				continue
			}
			if _, ok := accounts[n]; !ok {
				t.Errorf("%s: account %s is not in Accounts()", c.Code, n)
			}
		}
		// The VAT side: output tax is owed (liability), input tax is a receivable.
		wantVAT := map[string]string{ledger.TaxOutput: ledger.Liability, ledger.TaxInput: ledger.Asset,
			ledger.TaxReverseCharge: ledger.Asset, ledger.TaxICAcquisition: ledger.Asset}[c.Kind]
		if c.VATAccount != "" && accounts[c.VATAccount].Type != wantVAT {
			t.Errorf("%s: vat_account %s is %s, want %s", c.Code, c.VATAccount, accounts[c.VATAccount].Type, wantVAT)
		}
		if self != "" && accounts[self].Type != ledger.Liability {
			t.Errorf("%s: self_assess_account %s is %s, want liability", c.Code, self, accounts[self].Type)
		}
	}
	want := map[string]row{
		"USt19": {ledger.TaxOutput, "19", "3806", "", "3"},
		"USt7":  {ledger.TaxOutput, "7", "3801", "", "2"},
		"VSt19": {ledger.TaxInput, "19", "1406", "", "9"},
		"VSt7":  {ledger.TaxInput, "7", "1401", "", "8"},
		"RC19":  {ledger.TaxReverseCharge, "19", "1407", "3837", "94"},
		"RC7":   {ledger.TaxReverseCharge, "7", "1408", "3835", "91"},
		"IGE19": {ledger.TaxICAcquisition, "19", "1404", "3804", "19"},
		"IGE7":  {ledger.TaxICAcquisition, "7", "1402", "3802", "18"},
		"IGL0":  {ledger.TaxExempt, "0", "", "", ""},
		"AUS0":  {ledger.TaxExempt, "0", "", "", ""},
		"STF0":  {ledger.TaxExempt, "0", "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tax codes (-want +got):\n%s", diff)
	}
}

// TestOdooDATEVKeys: where Odoo's tax template names a DATEV key for the
// same VAT account, ours is the same.
func TestOdooDATEVKeys(t *testing.T) {
	t.Parallel()
	odoo := map[string]string{"3806": "3", "3801": "2", "1406": "9", "1401": "8"} // tax_ust_19/7, tax_vst_19/7
	for _, c := range TaxCodes() {
		if k, ok := odoo[c.VATAccount]; ok && c.Kind != ledger.TaxReverseCharge && c.DATEVKey != k {
			t.Errorf("%s: DATEV key %q, Odoo has %q", c.Code, c.DATEVKey, k)
		}
	}
}

func TestResultsAreCopies(t *testing.T) {
	t.Parallel()
	a := Accounts()
	a[0].Name = "changed"
	if Accounts()[0].Name == "changed" {
		t.Error("Accounts() shares its slice")
	}
	c := TaxCodes()
	*c[4].SelfAssessAccount = "0000"
	if *TaxCodes()[4].SelfAssessAccount == "0000" {
		t.Error("TaxCodes() shares its pointers")
	}
}

func TestParseRejectsBadData(t *testing.T) {
	t.Parallel()
	head := `"id","code","name","tag_ids","account_type","reconcile","non_trade","tax_ids","name@de","asset_model_ids"` + "\n"
	rec := func(code, name string) string {
		return fmt.Sprintf(`"x","%s","","","","","","","%s",""`+"\n", code, name)
	}
	tests := map[string]string{
		"duplicate":     head + rec("4400", "a") + rec("4400", "b"),
		"not numeric":   head + rec("44x0", "a"),
		"no name":       head + rec("4400", ""),
		"class 8":       head + rec("8400", "a"),
		"added exists":  head + rec("1600", "Kasse"),
		"missing col":   `"id","code"` + "\n",
		"too long":      head + rec("440000000", "a"),
		"malformed csv": head + `"x,"4400` + "\n",
	}
	for name, data := range tests {
		if _, err := parse([]byte(data)); err == nil {
			t.Errorf("%s: parse succeeded", name)
		}
	}
	if a, err := parse([]byte(head + rec("4400", "Erlöse  19 %") + `,""` + "\n")); err != nil || len(a) != 1+len(added) {
		t.Fatalf("parse = %d accounts, %v", len(a), err)
	}
}
