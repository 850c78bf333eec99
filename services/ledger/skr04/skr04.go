// Package skr04 is the seed of a new tenant: the full SKR04 chart of
// accounts (DATEV Standardkontenrahmen 04, 1,222 accounts from Odoo's
// l10n_de template plus the standard accounts it lacks) and the system tax
// codes. The account list is embedded; see data/README.md for its source
// and license.
package skr04

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/services/ledger"
)

//go:embed data/odoo-l10n_de-skr04-accounts.csv
var accountsCSV []byte

// Added are the standard SKR04 accounts every tenant needs that Odoo's
// template leaves out (Odoo creates cash and bank accounts per journal).
// 1810 is "Paypal" and 1820 "Bank 2" in the template and stay so.
var added = []struct{ number, name string }{
	{"1460", "Geldtransit"},
	{"1600", "Kasse"},
	{"1800", "Bank"},
}

// nameFixes replace German names the upstream file leaves empty or garbles.
var nameFixes = map[string]string{
	"0150": "Geschäfts- oder Firmenwert",                                                // "0 Geschäfts- oder Firmenwert"
	"3517": "Verbindlichkeiten gegenüber Gesellschaftern - Restlaufzeit größer 5 Jahre", // empty
	"3741": "Verbindlichkeiten im Rahmen der sozialen Sicherheit - Restlaufzeit bis 1 Jahr",
	"4970": "Versicherungsentschädigungen und Schadenersatzleistungen", // empty
	"5192": "Energiestoffe (Fertigung) 19 % Vorsteuer",
	"9991": "Kassendifferenzen (Ertrag)",  // empty; Odoo's "Cash Difference Gain"
	"9994": "Kassendifferenzen (Aufwand)", // empty; Odoo's "Cash Difference Loss"
}

// wordFixes restore hyphens lost upstream; runs of spaces are collapsed too.
var wordFixes = strings.NewReplacer(
	"Hilfsund ", "Hilfs- und ",
	"Aufsichtsratsund ", "Aufsichtsrats- und ",
	"Abschlussund ", "Abschluss- und ",
	"Verschmelzungund ", "Verschmelzung und ",
	"UmsatzsteuerVorauszahlungen", "Umsatzsteuer-Vorauszahlungen",
)

// Accounts returns the SKR04 chart ordered by number. Each call returns a
// fresh slice the caller may change.
func Accounts() []ledger.Account {
	return slices.Clone(chart())
}

var chart = sync.OnceValue(func() []ledger.Account {
	accounts, err := parse(accountsCSV)
	if err != nil {
		panic("skr04: embedded chart: " + err.Error())
	}
	return accounts
})

// parse reads the upstream CSV: number = code, name = name@de (cleaned up),
// and type, report group and category from the SKR04 class of the number.
func parse(data []byte) ([]ledger.Account, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // the file ends in a 2-field record `,""`
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	codeCol, okCode := col["code"]
	nameCol, okName := col["name@de"]
	if !okCode || !okName {
		return nil, fmt.Errorf("header %v lacks code or name@de", header)
	}
	seen := map[string]bool{}
	var out []ledger.Account
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) != len(header) {
			continue
		}
		code := rec[codeCol]
		a, err := account(code, cleanName(code, rec[nameCol]))
		if err != nil {
			return nil, err
		}
		if seen[code] {
			return nil, fmt.Errorf("account %s occurs twice", code)
		}
		seen[code] = true
		out = append(out, a)
	}
	for _, x := range added {
		if seen[x.number] {
			return nil, fmt.Errorf("added account %s is already in the file", x.number)
		}
		a, err := account(x.number, x.name)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b ledger.Account) int { return strings.Compare(a.Number, b.Number) })
	return out, nil
}

func cleanName(code, name string) string {
	if fixed, ok := nameFixes[code]; ok {
		return fixed
	}
	return wordFixes.Replace(strings.Join(strings.Fields(name), " "))
}

// account builds a seeded account. Five-digit numbers of the file (05601,
// 06351, ...) are Odoo sub-accounts and take the class of their parent.
func account(number, name string) (ledger.Account, error) {
	if len(number) < 4 || len(number) > 8 || strings.Trim(number, "0123456789") != "" {
		return ledger.Account{}, fmt.Errorf("account number %q is not 4 to 8 digits", number)
	}
	if name == "" {
		return ledger.Account{}, fmt.Errorf("account %s has no German name", number)
	}
	c, ok := classOf(number[:4])
	if !ok {
		return ledger.Account{}, fmt.Errorf("account %s is in no SKR04 class range", number)
	}
	return ledger.Account{Number: number, Name: name, Type: c.typ, Category: c.category, ReportGroup: c.group,
		IsActive: true, IsSystem: true}, nil
}

// System tax codes. Codes are what bookings name in lines[].tax_code.
const (
	CodeOutput19      = "USt19"
	CodeOutput7       = "USt7"
	CodeInput19       = "VSt19"
	CodeInput7        = "VSt7"
	CodeReverseCharge = "RC19"
	CodeReverse7      = "RC7"
	CodeICAcquisition = "IGE19"
	CodeICAcq7        = "IGE7"
	CodeICSupply      = "IGL0"
	CodeExport        = "AUS0"
	CodeTaxFree       = "STF0"
)

// TaxCodes returns the system tax codes, each call a fresh copy. Every
// account they name is in Accounts().
//
// DATEV BU keys: 3, 2, 9 and 8 are the l10n_de_datev_code values of Odoo's
// SKR04 tax template. The template leaves the self-assessed codes empty; 94
// (§13b 19 %), 91 (§13b 7 %), 19 (ig. Erwerb 19 %) and 18 (ig. Erwerb 7 %)
// are DATEV's Steuerschlüssel as valid since 2021. The tax-free codes carry
// no key, as in Odoo's template: in DATEV the revenue account (4125, 4120,
// 4100 ...) decides the VAT return line of a tax-free sale.
func TaxCodes() []ledger.TaxCode {
	str := func(s string) *string { return &s }
	code := func(c, label, desc, kind, rate, vat string, self *string, bu string) ledger.TaxCode {
		return ledger.TaxCode{Code: c, Label: label, Description: str(desc), Kind: kind, Rate: money.MustParse(rate),
			VATAccount: vat, SelfAssessAccount: self, DATEVKey: bu, IsSystem: true, IsActive: true}
	}
	return []ledger.TaxCode{
		code(CodeOutput19, "Umsatzsteuer 19 %", "Steuerpflichtige Umsätze zum allgemeinen Steuersatz (§ 12 Abs. 1 UStG)",
			ledger.TaxOutput, "19", "3806", nil, "3"),
		code(CodeOutput7, "Umsatzsteuer 7 %", "Steuerpflichtige Umsätze zum ermäßigten Steuersatz (§ 12 Abs. 2 UStG)",
			ledger.TaxOutput, "7", "3801", nil, "2"),
		code(CodeInput19, "Vorsteuer 19 %", "Abziehbare Vorsteuer zum allgemeinen Steuersatz (§ 15 Abs. 1 Nr. 1 UStG)",
			ledger.TaxInput, "19", "1406", nil, "9"),
		code(CodeInput7, "Vorsteuer 7 %", "Abziehbare Vorsteuer zum ermäßigten Steuersatz (§ 15 Abs. 1 Nr. 1 UStG)",
			ledger.TaxInput, "7", "1401", nil, "8"),
		code(CodeReverseCharge, "Steuerschuldnerschaft des Leistungsempfängers 19 % (§ 13b UStG)",
			"Leistungsempfänger schuldet die Umsatzsteuer (§ 13b UStG) und zieht sie als Vorsteuer ab (§ 15 Abs. 1 Nr. 4 UStG)",
			ledger.TaxReverseCharge, "19", "1407", str("3837"), "94"),
		code(CodeReverse7, "Steuerschuldnerschaft des Leistungsempfängers 7 % (§ 13b UStG)",
			"Leistungsempfänger schuldet die Umsatzsteuer (§ 13b UStG) und zieht sie als Vorsteuer ab (§ 15 Abs. 1 Nr. 4 UStG)",
			ledger.TaxReverseCharge, "7", "1408", str("3835"), "91"),
		code(CodeICAcquisition, "Innergemeinschaftlicher Erwerb 19 %",
			"Erwerbsteuer auf innergemeinschaftliche Erwerbe (§ 1a UStG) mit Vorsteuerabzug (§ 15 Abs. 1 Nr. 3 UStG)",
			ledger.TaxICAcquisition, "19", "1404", str("3804"), "19"),
		code(CodeICAcq7, "Innergemeinschaftlicher Erwerb 7 %",
			"Erwerbsteuer auf innergemeinschaftliche Erwerbe (§ 1a UStG) mit Vorsteuerabzug (§ 15 Abs. 1 Nr. 3 UStG)",
			ledger.TaxICAcquisition, "7", "1402", str("3802"), "18"),
		code(CodeICSupply, "Steuerfreie innergemeinschaftliche Lieferung",
			"Steuerfrei nach § 4 Nr. 1b i. V. m. § 6a UStG; Erlöse auf 4125", ledger.TaxExempt, "0", "", nil, ""),
		code(CodeExport, "Steuerfreie Ausfuhrlieferung",
			"Steuerfrei nach § 4 Nr. 1a i. V. m. § 6 UStG; Erlöse auf 4120", ledger.TaxExempt, "0", "", nil, ""),
		code(CodeTaxFree, "Steuerfreier Umsatz im Inland",
			"Steuerfrei z. B. nach § 4 Nr. 8 ff. UStG (ohne Vorsteuerabzug); Erlöse auf 4100", ledger.TaxExempt, "0", "", nil, ""),
	}
}
