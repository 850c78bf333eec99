package skr04

import "github.com/ledgerplatform/ledger/services/ledger"

// Report groups of the seeded chart. The first eight are the canonical
// values of the specification; the others split what a balance sheet, a
// P&L (HGB §275(2), total-cost format) or a BWA has to show apart.
const (
	GroupRevenue          = "revenue"           // GuV 1 Umsatzerlöse
	GroupMaterialExpense  = "material_expense"  // GuV 5 Materialaufwand
	GroupPersonnelExpense = "personnel_expense" // GuV 6 Personalaufwand
	GroupDepreciation     = "depreciation"      // GuV 7 Abschreibungen
	GroupOtherOpex        = "other_opex"        // GuV 8 sonstige betriebliche Aufwendungen
	GroupCash             = "cash"              // Kasse, Schecks
	GroupReceivables      = "receivables"       // Forderungen (B.II.1–3)
	GroupLiabilities      = "liabilities"       // Anleihen, Kreditinstitute, Anzahlungen, Wechsel, verbundene Unternehmen

	GroupIntangibleAssets  = "intangible_assets"
	GroupFixedAssets       = "fixed_assets"
	GroupFinancialAssets   = "financial_assets"
	GroupInventory         = "inventory"
	GroupOtherAssets       = "other_assets"
	GroupTaxReceivables    = "tax_receivables" // Vorsteuer, Steuerforderungen
	GroupClearing          = "clearing"        // Geldtransit, Verrechnungskonten: zero at closing
	GroupSecurities        = "securities"
	GroupBank              = "bank"
	GroupPrepaidExpenses   = "prepaid_expenses"
	GroupDeferredTaxAssets = "deferred_tax_assets"

	GroupEquity           = "equity"
	GroupPrivateAccounts  = "private_accounts"  // Privatentnahmen/-einlagen
	GroupRetainedEarnings = "retained_earnings" // Gewinn-/Verlustvortrag
	GroupProvisions       = "provisions"
	GroupDeferredTaxLiabs = "deferred_tax_liabilities"
	GroupPayables         = "payables" // Verbindlichkeiten aus L+L (C.4)
	GroupOtherLiabilities = "other_liabilities"
	GroupTaxLiabilities   = "tax_liabilities" // Umsatzsteuer, Steuerverbindlichkeiten
	GroupDeferredIncome   = "deferred_income"

	GroupInventoryChange    = "inventory_change"     // GuV 2
	GroupOwnWorkCapitalised = "own_work_capitalised" // GuV 3
	GroupOtherIncome        = "other_income"         // GuV 4
	GroupFinancialIncome    = "financial_income"     // GuV 9, 10
	GroupInterestIncome     = "interest_income"      // GuV 11
	GroupFinancialWriteDown = "financial_write_downs"
	GroupInterestExpense    = "interest_expense" // GuV 13
	GroupTaxesOnIncome      = "taxes_on_income"  // GuV 14
	GroupOtherTaxes         = "other_taxes"      // GuV 16
	GroupAppropriation      = "appropriation"    // Ergebnisverwendung, after the net income
	GroupCarryForward       = "carry_forward"    // Saldenvorträge
	GroupStatistical        = "statistical"
)

// class is a range of SKR04 account numbers, compared by their first four
// digits, with what every account in it is. pos is the HGB position as
// Odoo's tag suffix names it ("asset_bs_A_I_2", "pl_08_1"); tests compare
// it with the tags of the upstream file.
type class struct {
	lo, hi   int
	typ      string
	group    string
	category string
	pos      string
}

// Category texts: the HGB position (§266 balance sheet, §275(2) P&L).
const (
	catGuV8   = "GuV 8. Sonstige betriebliche Aufwendungen"
	catGuV4   = "GuV 4. Sonstige betriebliche Erträge"
	catBIV    = "Aktiva B.IV Kassenbestand, Guthaben bei Kreditinstituten und Schecks"
	catBII4   = "Aktiva B.II.4 Sonstige Vermögensgegenstände"
	catC8     = "Passiva C.8 Sonstige Verbindlichkeiten"
	catGuV11  = "GuV 11. Sonstige Zinsen und ähnliche Erträge"
	catGuV10  = "GuV 10. Erträge aus anderen Wertpapieren und Ausleihungen des Finanzanlagevermögens"
	catKasse  = "Kassendifferenzen"
	catStatis = "Statistische Konten"
)

// classes covers every four-digit number of the classes 0–7 and 9, in
// order and without overlap (class 8 is unused in SKR04).
//
// Types follow the SKR04 class, not Odoo's account_type column:
//
//	0, 1        asset (Anlage- und Umlaufvermögen, incl. contra accounts such as Wertberichtigungen)
//	2           equity (Kapital, Privatkonten, Rücklagen, Vorträge)
//	3           liability (Rückstellungen, Verbindlichkeiten, Umsatzsteuer, passive RAP)
//	4           revenue (incl. Erlösschmälerungen, Bestandsveränderungen)
//	5, 6        expense (incl. the "Erlöse bei Buchverlust" contra accounts 6884–6892)
//	7000–7199   revenue: Beteiligungs-, Wertpapier-, Zinserträge, Erträge aus Gewinnabführung
//	7200–7399   expense: Abschreibungen auf Finanzanlagen, Zinsaufwand, Verlustübernahme
//	7400–7499   revenue: außergewöhnliche Erträge
//	7500–7599   expense: außergewöhnliche Aufwendungen
//	7600–7699   expense: Steuern vom Einkommen und Ertrag, sonstige Steuern (refund
//	            accounts such as 7604 stay expense: they reduce the tax line)
//	7700–7799   equity: Ergebnisverwendung (Gewinnvortrag, Entnahmen aus und Einstellungen in
//	            Rücklagen) happens after the net income; it moves amounts inside equity
//	7800–7999   expense (not in the seed)
//	9000–9099   equity: Saldenvorträge (opening-balance contra accounts)
//	9991, 9994  revenue/expense: Odoo's cash-difference accounts
//	other 9xxx  equity: statistical accounts, booked against each other
var classes = []class{
	{0, 99, ledger.Asset, GroupOtherAssets, catBII4 + " (ausstehende Einlagen)", "asset_bs_B_II_4"},
	{100, 142, ledger.Asset, GroupIntangibleAssets, "Aktiva A.I.2 Entgeltlich erworbene Konzessionen, Schutzrechte und Lizenzen", "asset_bs_A_I_2"},
	{143, 148, ledger.Asset, GroupIntangibleAssets, "Aktiva A.I.1 Selbst geschaffene gewerbliche Schutzrechte und ähnliche Rechte", "asset_bs_A_I_1"},
	{149, 149, ledger.Asset, GroupIntangibleAssets, "Aktiva A.I.2 Entgeltlich erworbene Konzessionen, Schutzrechte und Lizenzen", "asset_bs_A_I_2"},
	{150, 169, ledger.Asset, GroupIntangibleAssets, "Aktiva A.I.3 Geschäfts- oder Firmenwert", "asset_bs_A_I_3"},
	{170, 199, ledger.Asset, GroupIntangibleAssets, "Aktiva A.I.4 Geleistete Anzahlungen (immaterielle Vermögensgegenstände)", "asset_bs_A_I_4"},
	{200, 399, ledger.Asset, GroupFixedAssets, "Aktiva A.II.1 Grundstücke, grundstücksgleiche Rechte und Bauten", "asset_bs_A_II_1"},
	{400, 499, ledger.Asset, GroupFixedAssets, "Aktiva A.II.2 Technische Anlagen und Maschinen", "asset_bs_A_II_2"},
	{500, 699, ledger.Asset, GroupFixedAssets, "Aktiva A.II.3 Andere Anlagen, Betriebs- und Geschäftsausstattung", "asset_bs_A_II_3"},
	{700, 799, ledger.Asset, GroupFixedAssets, "Aktiva A.II.4 Geleistete Anzahlungen und Anlagen im Bau", "asset_bs_A_II_4"},
	{800, 809, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.1 Anteile an verbundenen Unternehmen", "asset_bs_A_III_1"},
	{810, 819, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.2 Ausleihungen an verbundene Unternehmen", "asset_bs_A_III_2"},
	{820, 879, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.3 Beteiligungen", "asset_bs_A_III_3"},
	{880, 899, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.4 Ausleihungen an Unternehmen mit Beteiligungsverhältnis", "asset_bs_A_III_4"},
	{900, 929, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.5 Wertpapiere des Anlagevermögens", "asset_bs_A_III_5"},
	{930, 999, ledger.Asset, GroupFinancialAssets, "Aktiva A.III.6 Sonstige Ausleihungen", "asset_bs_A_III_6"},

	{1000, 1039, ledger.Asset, GroupInventory, "Aktiva B.I.1 Roh-, Hilfs- und Betriebsstoffe", "asset_bs_B_I_1"},
	{1040, 1099, ledger.Asset, GroupInventory, "Aktiva B.I.2 Unfertige Erzeugnisse, unfertige Leistungen", "asset_bs_B_I_2"},
	{1100, 1179, ledger.Asset, GroupInventory, "Aktiva B.I.3 Fertige Erzeugnisse und Waren", "asset_bs_B_I_3"},
	{1180, 1199, ledger.Asset, GroupInventory, "Aktiva B.I.4 Geleistete Anzahlungen (Vorräte)", "asset_bs_B_I_4"},
	{1200, 1259, ledger.Asset, GroupReceivables, "Aktiva B.II.1 Forderungen aus Lieferungen und Leistungen", "asset_bs_B_II_1"},
	{1260, 1279, ledger.Asset, GroupReceivables, "Aktiva B.II.2 Forderungen gegen verbundene Unternehmen", "asset_bs_B_II_2"},
	{1280, 1299, ledger.Asset, GroupReceivables, "Aktiva B.II.3 Forderungen gegen Unternehmen mit Beteiligungsverhältnis", "asset_bs_B_II_3"},
	{1300, 1380, ledger.Asset, GroupOtherAssets, catBII4, "asset_bs_B_II_4"},
	{1381, 1381, ledger.Asset, GroupOtherAssets, "Aktiva E. Aktiver Unterschiedsbetrag aus der Vermögensverrechnung", "asset_bs_E"},
	{1382, 1382, ledger.Asset, GroupOtherAssets, catBII4, "asset_bs_B_II_4"},
	{1383, 1383, ledger.Asset, GroupOtherAssets, "Aktiva E. Aktiver Unterschiedsbetrag aus der Vermögensverrechnung", "asset_bs_E"},
	{1384, 1395, ledger.Asset, GroupOtherAssets, catBII4, "asset_bs_B_II_4"},
	{1396, 1456, ledger.Asset, GroupTaxReceivables, catBII4 + " (Steuerforderungen)", "asset_bs_B_II_4"},
	{1457, 1459, ledger.Asset, GroupOtherAssets, catBII4, "asset_bs_B_II_4"},
	{1460, 1469, ledger.Asset, GroupClearing, catBII4 + " (Geldtransit)", "asset_bs_B_II_4"},
	{1470, 1479, ledger.Asset, GroupOtherAssets, catBII4, "asset_bs_B_II_4"},
	{1480, 1499, ledger.Asset, GroupClearing, catBII4 + " (Verrechnungskonten)", "asset_bs_B_II_4"},
	{1500, 1509, ledger.Asset, GroupSecurities, "Aktiva B.III.1 Anteile an verbundenen Unternehmen", "asset_bs_B_III_1"},
	{1510, 1549, ledger.Asset, GroupSecurities, "Aktiva B.III.2 Sonstige Wertpapiere", "asset_bs_B_III_2"},
	{1550, 1699, ledger.Asset, GroupCash, catBIV, "asset_bs_B_IV"},
	{1700, 1899, ledger.Asset, GroupBank, catBIV, "asset_bs_B_IV"},
	{1900, 1949, ledger.Asset, GroupPrepaidExpenses, "Aktiva C. Rechnungsabgrenzungsposten", "asset_bs_C"},
	{1950, 1999, ledger.Asset, GroupDeferredTaxAssets, "Aktiva D. Aktive latente Steuern", "asset_bs_D"},

	{2000, 2099, ledger.Equity, GroupEquity, "Passiva A.I Kapital (Festkapital, variables Kapital, Kommanditkapital)", "liabilities_bs_A_I"},
	{2100, 2799, ledger.Equity, GroupPrivateAccounts, "Passiva A.I Kapital (Privatkonten)", "liabilities_bs_A_I"},
	{2800, 2919, ledger.Equity, GroupEquity, "Passiva A.I Gezeichnetes Kapital", "liabilities_bs_A_I"},
	{2920, 2929, ledger.Equity, GroupEquity, "Passiva A.II Kapitalrücklage", "liabilities_bs_A_II"},
	{2930, 2934, ledger.Equity, GroupEquity, "Passiva A.III.1 Gesetzliche Rücklage", "liabilities_bs_A_III_1"},
	{2935, 2936, ledger.Equity, GroupEquity, "Passiva A.III.2 Rücklage für Anteile an einem herrschenden Unternehmen", "liabilities_bs_A_III_2"},
	{2937, 2949, ledger.Equity, GroupEquity, "Passiva A.III.4 Andere Gewinnrücklagen", "liabilities_bs_A_III_4"},
	{2950, 2959, ledger.Equity, GroupEquity, "Passiva A.III.3 Satzungsmäßige Rücklagen", "liabilities_bs_A_III_3"},
	{2960, 2969, ledger.Equity, GroupEquity, "Passiva A.III.4 Andere Gewinnrücklagen", "liabilities_bs_A_III_4"},
	{2970, 2979, ledger.Equity, GroupRetainedEarnings, "Passiva A.IV Gewinnvortrag/Verlustvortrag", "liabilities_bs_A_IV"},
	{2980, 2999, ledger.Equity, GroupEquity, "Passiva A. Sonderposten mit Rücklageanteil", ""},

	{3000, 3019, ledger.Liability, GroupProvisions, "Passiva B.1 Rückstellungen für Pensionen und ähnliche Verpflichtungen", "liabilities_bs_B_1"},
	{3020, 3064, ledger.Liability, GroupProvisions, "Passiva B.2 Steuerrückstellungen", "liabilities_bs_B_2"},
	{3065, 3069, ledger.Liability, GroupDeferredTaxLiabs, "Passiva E. Passive latente Steuern", "liabilities_bs_E"},
	{3070, 3099, ledger.Liability, GroupProvisions, "Passiva B.3 Sonstige Rückstellungen", "liabilities_bs_B_3"},
	{3100, 3149, ledger.Liability, GroupLiabilities, "Passiva C.1 Anleihen", "liabilities_bs_C_1"},
	{3150, 3249, ledger.Liability, GroupLiabilities, "Passiva C.2 Verbindlichkeiten gegenüber Kreditinstituten", "liabilities_bs_C_2"},
	{3250, 3299, ledger.Liability, GroupLiabilities, "Passiva C.3 Erhaltene Anzahlungen auf Bestellungen", "liabilities_bs_C_3"},
	{3300, 3349, ledger.Liability, GroupPayables, "Passiva C.4 Verbindlichkeiten aus Lieferungen und Leistungen", "liabilities_bs_C_4"},
	{3350, 3399, ledger.Liability, GroupLiabilities, "Passiva C.5 Verbindlichkeiten aus der Annahme gezogener Wechsel", "liabilities_bs_C_5"},
	{3400, 3449, ledger.Liability, GroupLiabilities, "Passiva C.6 Verbindlichkeiten gegenüber verbundenen Unternehmen", "liabilities_bs_C_6"},
	{3450, 3499, ledger.Liability, GroupLiabilities, "Passiva C.7 Verbindlichkeiten gegenüber Unternehmen mit Beteiligungsverhältnis", "liabilities_bs_C_7"},
	{3500, 3629, ledger.Liability, GroupOtherLiabilities, catC8, "liabilities_bs_C_8"},
	{3630, 3630, ledger.Liability, GroupClearing, catC8 + " (Verrechnungskonten)", "liabilities_bs_C_8"},
	{3631, 3694, ledger.Liability, GroupOtherLiabilities, catC8, "liabilities_bs_C_8"},
	{3695, 3699, ledger.Liability, GroupClearing, catC8 + " (Verrechnungskonten)", "liabilities_bs_C_8"},
	{3700, 3719, ledger.Liability, GroupTaxLiabilities, catC8 + " (Steuern)", "liabilities_bs_C_8"},
	{3720, 3789, ledger.Liability, GroupOtherLiabilities, catC8 + " (Lohn, Gehalt, soziale Sicherheit)", "liabilities_bs_C_8"},
	{3790, 3794, ledger.Liability, GroupClearing, catC8 + " (Lohn- und Gehaltsverrechnung)", "liabilities_bs_C_8"},
	{3795, 3797, ledger.Liability, GroupOtherLiabilities, catC8, "liabilities_bs_C_8"},
	{3798, 3899, ledger.Liability, GroupTaxLiabilities, catC8 + " (Umsatzsteuer)", "liabilities_bs_C_8"},
	{3900, 3999, ledger.Liability, GroupDeferredIncome, "Passiva D. Rechnungsabgrenzungsposten", "liabilities_bs_D"},

	{4000, 4569, ledger.Revenue, GroupRevenue, "GuV 1. Umsatzerlöse", "pl_01"},
	{4570, 4579, ledger.Revenue, GroupOtherIncome, catGuV4, "pl_04"},
	{4580, 4629, ledger.Revenue, GroupRevenue, "GuV 1. Umsatzerlöse", "pl_01"},
	{4630, 4669, ledger.Revenue, GroupOtherIncome, catGuV4, "pl_04"},
	{4670, 4685, ledger.Revenue, GroupRevenue, "GuV 1. Umsatzerlöse", "pl_01"},
	{4686, 4689, ledger.Revenue, GroupOtherIncome, catGuV4, "pl_04"},
	{4690, 4799, ledger.Revenue, GroupRevenue, "GuV 1. Umsatzerlöse", "pl_01"},
	{4800, 4819, ledger.Revenue, GroupInventoryChange, "GuV 2. Bestandsveränderungen an fertigen und unfertigen Erzeugnissen", "pl_02"},
	{4820, 4829, ledger.Revenue, GroupOwnWorkCapitalised, "GuV 3. Andere aktivierte Eigenleistungen", "pl_03"},
	{4830, 4999, ledger.Revenue, GroupOtherIncome, catGuV4, "pl_04"},

	{5000, 5899, ledger.Expense, GroupMaterialExpense, "GuV 5.a Aufwendungen für Roh-, Hilfs- und Betriebsstoffe und für bezogene Waren", "pl_05"},
	{5900, 5999, ledger.Expense, GroupMaterialExpense, "GuV 5.b Aufwendungen für bezogene Leistungen", "pl_05"},

	{6000, 6099, ledger.Expense, GroupPersonnelExpense, "GuV 6.a Löhne und Gehälter", "pl_06"},
	{6100, 6199, ledger.Expense, GroupPersonnelExpense, "GuV 6.b Soziale Abgaben und Aufwendungen für Altersversorgung", "pl_06"},
	{6200, 6269, ledger.Expense, GroupDepreciation, "GuV 7.a Abschreibungen auf immaterielle Vermögensgegenstände und Sachanlagen", "pl_07"},
	{6270, 6299, ledger.Expense, GroupDepreciation, "GuV 7.b Abschreibungen auf Vermögensgegenstände des Umlaufvermögens", "pl_07"},
	{6300, 6304, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},
	{6305, 6389, ledger.Expense, GroupOtherOpex, catGuV8 + ": Raumkosten", "pl_08_1"},
	{6390, 6399, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},
	{6400, 6439, ledger.Expense, GroupOtherOpex, catGuV8 + ": Versicherungen, Beiträge und Abgaben", "pl_08_2"},
	{6440, 6449, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},
	{6450, 6474, ledger.Expense, GroupOtherOpex, catGuV8 + ": Reparaturen und Instandhaltung", "pl_08_3"},
	{6475, 6479, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},
	{6480, 6497, ledger.Expense, GroupOtherOpex, catGuV8 + ": Reparaturen und Instandhaltung", "pl_08_3"},
	{6498, 6499, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},
	{6500, 6599, ledger.Expense, GroupOtherOpex, catGuV8 + ": Fahrzeugkosten", "pl_08_4"},
	{6600, 6699, ledger.Expense, GroupOtherOpex, catGuV8 + ": Werbe- und Reisekosten", "pl_08_5"},
	{6700, 6789, ledger.Expense, GroupOtherOpex, catGuV8 + ": Kosten der Warenabgabe", "pl_08_6"},
	{6790, 6999, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},

	{7000, 7009, ledger.Revenue, GroupFinancialIncome, "GuV 9. Erträge aus Beteiligungen", "pl_09"},
	{7010, 7019, ledger.Revenue, GroupFinancialIncome, catGuV10, "pl_10"},
	{7020, 7029, ledger.Revenue, GroupInterestIncome, catGuV11, "pl_11"},
	{7030, 7099, ledger.Revenue, GroupFinancialIncome, catGuV10, "pl_10"},
	{7100, 7189, ledger.Revenue, GroupInterestIncome, catGuV11, "pl_11"},
	{7190, 7199, ledger.Revenue, GroupOtherIncome, catGuV4 + " (Gewinngemeinschaft, Verlustübernahme)", "pl_04"},
	{7200, 7299, ledger.Expense, GroupFinancialWriteDown, "GuV 12. Abschreibungen auf Finanzanlagen und Wertpapiere des Umlaufvermögens", "pl_12"},
	{7300, 7389, ledger.Expense, GroupInterestExpense, "GuV 13. Zinsen und ähnliche Aufwendungen", "pl_13"},
	{7390, 7399, ledger.Expense, GroupOtherOpex, catGuV8 + " (Verlustübernahme, Gewinnabführung)", "pl_08_7"},
	{7400, 7499, ledger.Revenue, GroupOtherIncome, catGuV4 + " (außergewöhnliche Erträge)", "pl_04"},
	{7500, 7599, ledger.Expense, GroupOtherOpex, catGuV8 + " (außergewöhnliche Aufwendungen)", "pl_08_7"},
	{7600, 7649, ledger.Expense, GroupTaxesOnIncome, "GuV 14. Steuern vom Einkommen und vom Ertrag", "pl_14"},
	{7650, 7699, ledger.Expense, GroupOtherTaxes, "GuV 16. Sonstige Steuern", "pl_15"},
	{7700, 7799, ledger.Equity, GroupAppropriation, "Ergebnisverwendung (Gewinnvortrag, Rücklagenbewegungen)", ""},
	{7800, 7999, ledger.Expense, GroupOtherOpex, catGuV8, "pl_08_7"},

	{9000, 9099, ledger.Equity, GroupCarryForward, "Vortragskonten (Saldenvorträge)", ""},
	{9100, 9990, ledger.Equity, GroupStatistical, catStatis, ""},
	{9991, 9991, ledger.Revenue, GroupOtherIncome, catGuV4 + " (" + catKasse + ")", "pl_04"},
	{9992, 9993, ledger.Equity, GroupStatistical, catStatis, ""},
	{9994, 9994, ledger.Expense, GroupOtherOpex, catGuV8 + " (" + catKasse + ")", "pl_08_7"},
	{9995, 9999, ledger.Equity, GroupStatistical, catStatis, ""},
}

// Classify returns the type, report group and category the seeded chart
// gives a four-digit SKR04 account number. ok is false for other numbers
// (class 8 is unused in SKR04; longer numbers are personal accounts or
// sub-accounts, whose meaning depends on the chart's set-up).
func Classify(number string) (typ, reportGroup, category string, ok bool) {
	c, ok := classOf(number)
	if !ok {
		return "", "", "", false
	}
	return c.typ, c.group, c.category, true
}

func classOf(number string) (class, bool) {
	if len(number) != 4 {
		return class{}, false
	}
	n := 0
	for _, r := range number {
		if r < '0' || r > '9' {
			return class{}, false
		}
		n = n*10 + int(r-'0')
	}
	// Binary search would do; 120 ranges do not need it.
	for _, c := range classes {
		if n >= c.lo && n <= c.hi {
			return c, true
		}
	}
	return class{}, false
}
