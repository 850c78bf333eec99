package reporting

import (
	"fmt"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
)

// The HGB report structure: the balance sheet of §266 (2) and (3) and the
// profit and loss account of §275 (2) (Gesamtkostenverfahren), each line
// with the SKR04 account-number prefixes that feed it.
//
// The prefixes are derived from OCA/l10n-germany's MIS Builder reports for
// SKR04 (l10n_de_skr04_mis_reports/data/mis_report_bs.xml and
// mis_report_pl.xml, commit b5676373, AGPL-3.0): an expression such as
// bals[0143%,0144%] becomes the prefixes "0143", "0144". Only these derived
// ranges are kept here, not the files. Where the OCA files have no line for
// accounts the SKR04 chart uses, or are out of date, the table deviates; each
// deviation is marked "not OCA" and explained in data/README.md:
//
//   - the profit and loss lines follow §275 (2) as amended by BilRUG (2016):
//     no extraordinary items (OCA's 14./15. on 990-995, which are
//     statistical accounts in SKR04), other taxes are no. 16 after
//     "15. Ergebnis nach Steuern", the result is no. 17;
//   - Passiva A.I also takes 2000-2899 (Kapital, Privatkonten of
//     partnerships and sole traders) and 2901-2907;
//   - Passiva C.6 (340-344) and C.7 (345-349), which the OCA file names in
//     its total but does not define;
//   - OCA's "274%" in C.8 is read as 374 (274x are private accounts);
//   - A.I.2 takes 0149, A.III.4 2937, A.IV all of 297 except 2979, C.8 all
//     of 379 (OCA: 3790), GuV 1 takes 461 (Odoo's tags: pl_01);
//   - B.III follows BilMoG: "eigene Anteile" are no longer a line; 1504
//     (Anteile an herrschender Gesellschaft) counts as B.III.1;
//   - 119 (erhaltene Anzahlungen, von Vorräten offen abgesetzt) is B.I.4,
//     not cash (OCA: B.IV);
//   - Aktiva F (nicht durch Eigenkapital gedeckter Fehlbetrag, §268 (3)) is
//     computed from the equity, not read from an account;
//   - 77 (Ergebnisverwendung) follows the result: on Passiva A.V for equity
//     accounts, after no. 17 for profit-and-loss accounts.
//
// An account is placed by its type first: asset accounts on the Aktiva,
// liability and equity accounts on the Passiva, revenue and expense accounts
// in the profit and loss account. Within its side the longest matching
// prefix decides; an account matching none falls back by type (see
// fallbackPos). Five-digit numbers not starting with 0 are DATEV personal
// accounts (debtors 10000-69999, creditors 70000-99999) and land on
// receivables (B.II.1) or payables (C.4). Since every account lands in
// exactly one place, the balance sheet balances whenever the books do.

// Account types of the ledger.
const (
	TypeAsset     = ledgerv1.AccountAsset
	TypeLiability = ledgerv1.AccountLiability
	TypeEquity    = ledgerv1.AccountEquity
	TypeRevenue   = ledgerv1.AccountRevenue
	TypeExpense   = ledgerv1.AccountExpense
)

// balanceSheetType reports whether accounts of type t carry their balance
// into the next year (asset, liability, equity).
func balanceSheetType(t string) bool {
	return t == TypeAsset || t == TypeLiability || t == TypeEquity
}

// hgbNode is a balance sheet position; leaves carry prefixes.
type hgbNode struct {
	Pos      string
	Label    string
	Prefixes []string
	Children []hgbNode
}

// aktivaTree is §266 (2).
var aktivaTree = []hgbNode{
	{Pos: "A", Label: "Anlagevermögen", Children: []hgbNode{
		{Pos: "A.I", Label: "Immaterielle Vermögensgegenstände", Children: []hgbNode{
			{Pos: "A.I.1", Label: "Selbst geschaffene gewerbliche Schutzrechte und ähnliche Rechte und Werte", Prefixes: []string{"0143", "0144", "0145", "0146", "0147", "0148"}},
			{Pos: "A.I.2", Label: "Entgeltlich erworbene Konzessionen, gewerbliche Schutzrechte und ähnliche Rechte und Werte sowie Lizenzen an solchen Rechten und Werten", Prefixes: []string{"010", "011", "012", "013", "0140", "0149" /* not OCA */}},
			{Pos: "A.I.3", Label: "Geschäfts- oder Firmenwert", Prefixes: []string{"015", "016"}},
			{Pos: "A.I.4", Label: "Geleistete Anzahlungen", Prefixes: []string{"017"}},
		}},
		{Pos: "A.II", Label: "Sachanlagen", Children: []hgbNode{
			{Pos: "A.II.1", Label: "Grundstücke, grundstücksgleiche Rechte und Bauten einschließlich der Bauten auf fremden Grundstücken", Prefixes: []string{"02", "03"}},
			{Pos: "A.II.2", Label: "Technische Anlagen und Maschinen", Prefixes: []string{"04"}},
			{Pos: "A.II.3", Label: "Andere Anlagen, Betriebs- und Geschäftsausstattung", Prefixes: []string{"05", "06"}},
			{Pos: "A.II.4", Label: "Geleistete Anzahlungen und Anlagen im Bau", Prefixes: []string{"07"}},
		}},
		{Pos: "A.III", Label: "Finanzanlagen", Children: []hgbNode{
			{Pos: "A.III.1", Label: "Anteile an verbundenen Unternehmen", Prefixes: []string{"080"}},
			{Pos: "A.III.2", Label: "Ausleihungen an verbundene Unternehmen", Prefixes: []string{"081"}},
			{Pos: "A.III.3", Label: "Beteiligungen", Prefixes: []string{"082", "083", "084", "085", "086"}},
			{Pos: "A.III.4", Label: "Ausleihungen an Unternehmen, mit denen ein Beteiligungsverhältnis besteht", Prefixes: []string{"088"}},
			{Pos: "A.III.5", Label: "Wertpapiere des Anlagevermögens", Prefixes: []string{"090", "091", "092"}},
			{Pos: "A.III.6", Label: "Sonstige Ausleihungen", Prefixes: []string{"093", "094", "095", "096", "097", "098", "099"}},
		}},
	}},
	{Pos: "B", Label: "Umlaufvermögen", Children: []hgbNode{
		{Pos: "B.I", Label: "Vorräte", Children: []hgbNode{
			{Pos: "B.I.1", Label: "Roh-, Hilfs- und Betriebsstoffe", Prefixes: []string{"100", "101", "102", "103"}},
			{Pos: "B.I.2", Label: "Unfertige Erzeugnisse, unfertige Leistungen", Prefixes: []string{"104", "105", "106", "107", "108", "109"}},
			{Pos: "B.I.3", Label: "Fertige Erzeugnisse und Waren", Prefixes: []string{"110", "111", "112", "113", "114", "115", "116", "117"}},
			{Pos: "B.I.4", Label: "Geleistete Anzahlungen", Prefixes: []string{"118", "119" /* OCA: B.IV */}},
		}},
		{Pos: "B.II", Label: "Forderungen und sonstige Vermögensgegenstände", Children: []hgbNode{
			{Pos: "B.II.1", Label: "Forderungen aus Lieferungen und Leistungen", Prefixes: []string{"120", "121", "122", "123", "124", "125"}},
			{Pos: "B.II.2", Label: "Forderungen gegen verbundene Unternehmen", Prefixes: []string{"126", "127"}},
			{Pos: "B.II.3", Label: "Forderungen gegen Unternehmen, mit denen ein Beteiligungsverhältnis besteht", Prefixes: []string{"128", "1290", "1291", "1295", "1296", "1297"}},
			{Pos: "B.II.4", Label: "Sonstige Vermögensgegenstände", Prefixes: []string{"1298", "1299", "130", "131", "132", "133", "134", "135", "136", "137", "1380", "1382", "139", "14"}},
		}},
		{Pos: "B.III", Label: "Wertpapiere", Children: []hgbNode{
			{Pos: "B.III.1", Label: "Anteile an verbundenen Unternehmen", Prefixes: []string{"1500", "1504" /* OCA: eigene Anteile */}},
			{Pos: "B.III.2", Label: "Sonstige Wertpapiere", Prefixes: []string{"151", "152", "153"}},
		}},
		{Pos: "B.IV", Label: "Kassenbestand, Bundesbankguthaben, Guthaben bei Kreditinstituten und Schecks", Prefixes: []string{"155", "16", "17", "18"}},
	}},
	{Pos: "C", Label: "Rechnungsabgrenzungsposten", Prefixes: []string{"190", "191", "192", "193", "194"}},
	{Pos: "D", Label: "Aktive latente Steuern", Prefixes: []string{"195"}},
	{Pos: "E", Label: "Aktiver Unterschiedsbetrag aus der Vermögensverrechnung", Prefixes: []string{"1381", "1383"}},
	{Pos: PosDeficit, Label: "Nicht durch Eigenkapital gedeckter Fehlbetrag"}, // computed (§268 (3))
}

// passivaTree is §266 (3).
var passivaTree = []hgbNode{
	{Pos: "A", Label: "Eigenkapital", Children: []hgbNode{
		{Pos: "A.I", Label: "Gezeichnetes Kapital", Prefixes: []string{
			"20", "21", "22", "23", "24", "25", "26", "27", "28", "290" /* not OCA beyond 2900, 2908, 2909 */, "291"}},
		{Pos: "A.II", Label: "Kapitalrücklage", Prefixes: []string{"292"}},
		{Pos: "A.III", Label: "Gewinnrücklagen", Children: []hgbNode{
			{Pos: "A.III.1", Label: "Gesetzliche Rücklage", Prefixes: []string{"2930"}},
			{Pos: "A.III.2", Label: "Rücklage für Anteile an einem herrschenden oder mehrheitlich beteiligten Unternehmen", Prefixes: []string{"2935"}},
			{Pos: "A.III.3", Label: "Satzungsmäßige Rücklagen", Prefixes: []string{"295"}},
			{Pos: "A.III.4", Label: "Andere Gewinnrücklagen", Prefixes: []string{"296", "2937" /* not OCA */}},
		}},
		{Pos: "A.IV", Label: "Gewinnvortrag/Verlustvortrag", Prefixes: []string{"297" /* OCA: 2970, 2978 */}},
		{Pos: PosResult, Label: "Jahresüberschuss/Jahresfehlbetrag", Prefixes: []string{"2979", "77" /* not OCA: Ergebnisverwendung */}},
		{Pos: "A.VI", Label: "Sonderposten mit Rücklageanteil", Prefixes: []string{"298", "299"}},
		{Pos: PosDeficitOffset, Label: "Nicht durch Eigenkapital gedeckter Fehlbetrag"}, // computed (§268 (3))
	}},
	{Pos: "B", Label: "Rückstellungen", Children: []hgbNode{
		{Pos: "B.1", Label: "Rückstellungen für Pensionen und ähnliche Verpflichtungen", Prefixes: []string{"300", "301"}},
		{Pos: "B.2", Label: "Steuerrückstellungen", Prefixes: []string{"302", "303", "304", "305"}},
		{Pos: "B.3", Label: "Sonstige Rückstellungen", Prefixes: []string{"307", "308", "309"}},
	}},
	{Pos: "C", Label: "Verbindlichkeiten", Children: []hgbNode{
		{Pos: "C.1", Label: "Anleihen", Prefixes: []string{"310", "311", "312", "313"}},
		{Pos: "C.2", Label: "Verbindlichkeiten gegenüber Kreditinstituten", Prefixes: []string{"315", "316", "317", "318", "319", "320", "321", "322", "323", "324"}},
		{Pos: "C.3", Label: "Erhaltene Anzahlungen auf Bestellungen", Prefixes: []string{"325", "326", "327", "328"}},
		{Pos: "C.4", Label: "Verbindlichkeiten aus Lieferungen und Leistungen", Prefixes: []string{"330", "331", "332", "333", "334"}},
		{Pos: "C.5", Label: "Verbindlichkeiten aus der Annahme gezogener Wechsel und der Ausstellung eigener Wechsel", Prefixes: []string{"335", "338", "339"}},
		{Pos: "C.6", Label: "Verbindlichkeiten gegenüber verbundenen Unternehmen", Prefixes: []string{"340", "341", "342", "343", "344" /* not OCA */}},
		{Pos: "C.7", Label: "Verbindlichkeiten gegenüber Unternehmen, mit denen ein Beteiligungsverhältnis besteht", Prefixes: []string{"345", "346", "347", "348", "349" /* not OCA */}},
		{Pos: "C.8", Label: "Sonstige Verbindlichkeiten", Prefixes: []string{
			"35", "36", "370", "371", "372", "373", "374" /* OCA: 274 */, "375", "376", "377", "378", "379" /* OCA: 3790 */, "38"}},
	}},
	{Pos: "D", Label: "Rechnungsabgrenzungsposten", Prefixes: []string{"39"}},
	{Pos: "E", Label: "Passive latente Steuern", Prefixes: []string{"306"}},
}

// Computed balance sheet positions.
const (
	PosResult        = "A.V" // Passiva: the year's result (from the GuV) and the accounts of the result
	PosCarryForward  = "A.IV"
	PosDeficit       = "F"   // Aktiva: equity below zero (§268 (3))
	PosDeficitOffset = "A.F" // Passiva A: the same amount, bringing equity to zero
)

// GuV line kinds.
const (
	KindIncome        = "income"        // amount = credit - debit, added
	KindExpense       = "expense"       // amount = debit - credit, subtracted
	KindSubtotal      = "subtotal"      // sum of the lines above it that have no parent
	KindResult        = "result"        // Jahresüberschuss/Jahresfehlbetrag
	KindAppropriation = "appropriation" // after the result (Ergebnisverwendung)
)

// guvLine is a line of §275 (2). Parent groups sub-lines (5.a under 5).
type guvLine struct {
	Pos      string
	Label    string
	Kind     string
	Parent   string
	Prefixes []string
}

// guvLines is §275 (2) after BilRUG.
var guvLines = []guvLine{
	{Pos: "1", Label: "Umsatzerlöse", Kind: KindIncome, Prefixes: []string{
		"40", "41", "42", "43", "44", "451", "452", "456", "457", "458", "461" /* not OCA */, "469", "47", "4833", "4860", "4861", "4862", "4863", "4864", "499"}},
	{Pos: "2", Label: "Erhöhung oder Verminderung des Bestands an fertigen und unfertigen Erzeugnissen", Kind: KindIncome, Prefixes: []string{"480", "481"}},
	{Pos: "3", Label: "Andere aktivierte Eigenleistungen", Kind: KindIncome, Prefixes: []string{"482"}},
	{Pos: "4", Label: "Sonstige betriebliche Erträge", Kind: KindIncome, Prefixes: []string{
		"460", "462", "463", "464", "465", "466", "467", "468", "4830", "4832", "4834", "4835", "4836", "4837", "4838", "4839",
		"484", "485", "4865", "4866", "4867", "4868", "4869", "490", "491", "492", "493", "494", "495", "496", "497", "498", "74"}},
	{Pos: "5", Label: "Materialaufwand", Kind: KindExpense},
	{Pos: "5.a", Label: "Aufwendungen für Roh-, Hilfs- und Betriebsstoffe und für bezogene Waren", Kind: KindExpense, Parent: "5", Prefixes: []string{"50", "51", "52", "53", "54", "55", "56", "57", "58"}},
	{Pos: "5.b", Label: "Aufwendungen für bezogene Leistungen", Kind: KindExpense, Parent: "5", Prefixes: []string{"59"}},
	{Pos: "6", Label: "Personalaufwand", Kind: KindExpense},
	{Pos: "6.a", Label: "Löhne und Gehälter", Kind: KindExpense, Parent: "6", Prefixes: []string{"60"}},
	{Pos: "6.b", Label: "Soziale Abgaben und Aufwendungen für Altersversorgung und für Unterstützung", Kind: KindExpense, Parent: "6", Prefixes: []string{"61"}},
	{Pos: "7", Label: "Abschreibungen", Kind: KindExpense},
	{Pos: "7.a", Label: "Auf immaterielle Vermögensgegenstände des Anlagevermögens und Sachanlagen", Kind: KindExpense, Parent: "7", Prefixes: []string{"620", "621", "622", "623", "624", "625", "626"}},
	{Pos: "7.b", Label: "Auf Vermögensgegenstände des Umlaufvermögens, soweit diese die in der Kapitalgesellschaft üblichen Abschreibungen überschreiten", Kind: KindExpense, Parent: "7", Prefixes: []string{"627", "628", "629"}},
	{Pos: "8", Label: "Sonstige betriebliche Aufwendungen", Kind: KindExpense, Prefixes: []string{"63", "64", "65", "66", "67", "68", "69", "75", "78", "79", "80"}},
	{Pos: "9", Label: "Erträge aus Beteiligungen", Kind: KindIncome, Prefixes: []string{"700"}},
	{Pos: "10", Label: "Erträge aus anderen Wertpapieren und Ausleihungen des Finanzanlagevermögens", Kind: KindIncome, Prefixes: []string{"701", "702", "703"}},
	{Pos: "11", Label: "Sonstige Zinsen und ähnliche Erträge", Kind: KindIncome, Prefixes: []string{"71"}},
	{Pos: "12", Label: "Abschreibungen auf Finanzanlagen und auf Wertpapiere des Umlaufvermögens", Kind: KindExpense, Prefixes: []string{"72"}},
	{Pos: "13", Label: "Zinsen und ähnliche Aufwendungen", Kind: KindExpense, Prefixes: []string{"73"}},
	{Pos: "14", Label: "Steuern vom Einkommen und vom Ertrag", Kind: KindExpense, Prefixes: []string{"760", "761", "762", "763", "764"}},
	{Pos: "15", Label: "Ergebnis nach Steuern", Kind: KindSubtotal},
	{Pos: "16", Label: "Sonstige Steuern", Kind: KindExpense, Prefixes: []string{"765", "766", "767", "768", "769"}},
	{Pos: "17", Label: "Jahresüberschuss/Jahresfehlbetrag", Kind: KindResult},
	{Pos: "18", Label: "Ergebnisverwendung", Kind: KindAppropriation, Prefixes: []string{"77"}},
	{Pos: "19", Label: "Bilanzgewinn/Bilanzverlust", Kind: KindResult},
}

// Fallback positions by account type, for accounts outside every range.
var fallbackPos = map[string]string{
	TypeAsset:     "B.II.4", // Sonstige Vermögensgegenstände
	TypeLiability: "C.8",    // Sonstige Verbindlichkeiten
	TypeEquity:    "A.IV",   // Gewinnvortrag/Verlustvortrag: unassigned carried-forward amounts (e.g. 9000 Saldenvorträge)
	TypeRevenue:   "4",      // Sonstige betriebliche Erträge
	TypeExpense:   "8",      // Sonstige betriebliche Aufwendungen
}

// hgbIndex maps prefixes to positions per side.
type hgbIndex struct {
	aktiva, passiva, guv map[string]string
	maxLen               int
}

var hgb = buildHGBIndex()

func buildHGBIndex() *hgbIndex {
	ix := &hgbIndex{aktiva: map[string]string{}, passiva: map[string]string{}, guv: map[string]string{}}
	add := func(m map[string]string, pos string, prefixes []string) {
		for _, p := range prefixes {
			if prev, dup := m[p]; dup {
				panic(fmt.Sprintf("reporting: HGB prefix %s on %s and %s", p, prev, pos))
			}
			m[p] = pos
			ix.maxLen = max(ix.maxLen, len(p))
		}
	}
	var walk func(m map[string]string, nodes []hgbNode)
	walk = func(m map[string]string, nodes []hgbNode) {
		for _, n := range nodes {
			add(m, n.Pos, n.Prefixes)
			walk(m, n.Children)
		}
	}
	walk(ix.aktiva, aktivaTree)
	walk(ix.passiva, passivaTree)
	for _, l := range guvLines {
		add(ix.guv, l.Pos, l.Prefixes)
	}
	return ix
}

// personalAccount reports a DATEV personal account (five digits, not
// starting with 0).
func personalAccount(number string) bool {
	return len(number) == 5 && number[0] >= '1' && number[0] <= '9' && isDigits(number)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// Position returns the HGB position of an account of the given type: a
// balance sheet position (Aktiva for assets, Passiva for liabilities and
// equity) or a GuV line. ok is false for an unknown type.
func Position(number, typ string) (pos string, ok bool) {
	var m map[string]string
	switch typ {
	case TypeAsset:
		if personalAccount(number) {
			return "B.II.1", true
		}
		m = hgb.aktiva
	case TypeLiability:
		if personalAccount(number) {
			return "C.4", true
		}
		m = hgb.passiva
	case TypeEquity:
		m = hgb.passiva
	case TypeRevenue, TypeExpense:
		m = hgb.guv
	default:
		return "", false
	}
	for l := min(len(number), hgb.maxLen); l >= 1; l-- {
		if p, ok := m[number[:l]]; ok {
			return p, true
		}
	}
	return fallbackPos[typ], true
}

// TypeOf guesses an account's type from its SKR04 number, for accounts the
// ledger's chart does not list: class 0-1 assets, 2 equity, 3 liabilities,
// 4 revenue, 5-6 expenses, 7 by group (70/71/74 revenue, 77 equity, others
// expense), 9 equity (carried-forward and statistical accounts); class 8
// (unused in SKR04) revenue; personal accounts debtors or creditors.
func TypeOf(number string) string {
	if personalAccount(number) {
		if number[0] <= '6' {
			return TypeAsset
		}
		return TypeLiability
	}
	if number == "" {
		return TypeAsset
	}
	switch number[0] {
	case '0', '1':
		return TypeAsset
	case '2', '9':
		return TypeEquity
	case '3':
		return TypeLiability
	case '4', '8':
		return TypeRevenue
	case '5', '6':
		return TypeExpense
	}
	switch {
	case strings.HasPrefix(number, "70"), strings.HasPrefix(number, "71"), strings.HasPrefix(number, "74"):
		return TypeRevenue
	case strings.HasPrefix(number, "77"):
		return TypeEquity
	}
	return TypeExpense
}
