package csvimport

import (
	"regexp"
	"strings"
)

// role is what a column means to the importer.
type role int

const (
	rBooking role = iota
	rValue
	rAmount
	rDebit     // Soll: money out, written without or with a sign
	rCredit    // Haben: money in
	rIndicator // one column of "S"/"H" (or D/C) that gives the amount its sign
	rCounterparty
	rPayer // DKB: "Zahlungspflichtige*r", the counterparty of money in
	rPayee // DKB: "Zahlungsempfänger*in", the counterparty of money out
	rCPIBAN
	rCPBIC
	rReference
	rBookingText
	rTxType // Umsatzart, Vorgang: the kind of booking, where Buchungstext may be the remittance text
	rCurrency
	rEndToEnd
	rMandate
	rCreditorID
	rAccount // the account holder's own account (Auftragskonto)
	rStatus  // "Umsatz gebucht"/"Umsatz vorgemerkt", "Gebucht"/"Vorgemerkt"
	rBankRef
	rBLZ // the counterparty's bank code; Sparkasse's CSV-MT940 writes the BIC there
	rFee // a fee taken on top of the amount (Revolut's "Fee")
	// rDescription is a general description: the remittance text when no
	// column names one, else the booking text (Wise writes "Description"
	// next to "Payment Reference").
	rDescription
	rCPName2 // HypoVereinsbank's "Empfaenger 2", the name's continuation
	nRoles
)

// synonyms maps a normalised column name (see normHeader) to its role. The
// names are those the German banks' exports use (Sparkasse CSV-CAMT and
// CSV-MT940, DKB old and new, ING, Commerzbank, Deutsche Bank, comdirect,
// Volksbank/Raiffeisenbank, N26, Postbank) and their English counterparts.
var synonyms = map[string]role{
	"buchungstag": rBooking, "buchungsdatum": rBooking, "buchung": rBooking, "datum": rBooking,
	"date": rBooking, "booking date": rBooking, "transaction date": rBooking, "buchungstag/datum": rBooking,
	// Revolut: the day the money moved is the completed one; a started
	// card payment may never complete.
	"completed date": rBooking, "date completed (utc)": rBooking, "date completed": rBooking,

	"valutadatum": rValue, "valuta": rValue, "wertstellung": rValue, "wert": rValue,
	"wertstellungsdatum": rValue, "wertstellung (valuta)": rValue, "value date": rValue, "valuta date": rValue,
	"interest date": rValue, // bunq

	"betrag": rAmount, "umsatz": rAmount, "amount": rAmount, "betrag (eur)": rAmount,

	"soll": rDebit, "debit": rDebit,
	"haben": rCredit, "credit": rCredit,

	"soll/haben": rIndicator, "s/h": rIndicator, "soll-haben": rIndicator,
	"soll/haben-kennzeichen": rIndicator, "soll-haben-kennzeichen": rIndicator, "debit/credit": rIndicator,

	"beguenstigter/zahlungspflichtiger": rCounterparty, "auftraggeber/empfaenger": rCounterparty,
	"empfaenger/auftraggeber": rCounterparty, "beguenstigter/auftraggeber": rCounterparty,
	"auftraggeber/beguenstigter":     rCounterparty,
	"empfaenger/zahlungspflichtiger": rCounterparty, "zahlungsempfaenger/zahlungspflichtiger": rCounterparty,
	"empfaenger": rCounterparty, "auftraggeber": rCounterparty, "name": rCounterparty,
	"beguenstigter": rCounterparty, "zahlungsbeteiligter": rCounterparty, "name zahlungsbeteiligter": rCounterparty,
	"counterparty": rCounterparty, "counterparty name": rCounterparty, "partner name": rCounterparty,
	"payee": rCounterparty, "gegenpartei": rCounterparty,
	"sender/empfaenger": rCounterparty, "empfaenger/sender": rCounterparty, // Consorsbank
	"empfaenger 1": rCounterparty, "empfaenger 2": rCPName2, // HypoVereinsbank
	// Not "Auftraggeber/Zahlungsempfänger": Volksbank's older export names
	// the account holder so and the counterparty "Empfänger/Zahlungspflichtiger".

	"zahlungspflichtige*r": rPayer, "zahlungspflichtiger": rPayer,
	"zahlungsempfaenger*in": rPayee, "zahlungsempfaenger": rPayee,
	"payer name": rPayer, "payee name": rPayee, // Wise

	"kontonummer/iban": rCPIBAN, "iban": rCPIBAN, "kontonummer": rCPIBAN, "konto-nr.": rCPIBAN,
	"iban zahlungsbeteiligter": rCPIBAN, "partner iban": rCPIBAN, "counterparty iban": rCPIBAN,
	"iban/kontonummer": rCPIBAN, "gegenkonto": rCPIBAN, "iban/konto-nr.": rCPIBAN, "konto-nr./iban": rCPIBAN,
	"payee account number": rCPIBAN,

	"bic": rCPBIC, "bic (swift-code)": rCPBIC, "bic (swift-code) zahlungsbeteiligter": rCPBIC,
	"bic zahlungsbeteiligter": rCPBIC, "partner bic": rCPBIC, "counterparty bic": rCPBIC, "bic/blz": rCPBIC,

	"verwendungszweck": rReference, "buchungsdetails": rReference, "reference": rReference,
	"purpose": rReference, "payment reference": rReference, "vorgang/verwendungszweck": rReference,
	"beschreibung": rDescription, "description": rDescription, "remittance information": rReference,

	"buchungstext": rBookingText, "booking text": rBookingText,

	"umsatzart": rTxType, "vorgang": rTxType, "transaktionstyp": rTxType, "umsatztyp": rTxType,
	"type": rTxType, "transaction type": rTxType, "buchungsart": rTxType,

	"waehrung": rCurrency, "currency": rCurrency, "whrg.": rCurrency, "whg": rCurrency,

	"kundenreferenz (end-to-end)": rEndToEnd, "kundenreferenz": rEndToEnd, "end-to-end-referenz": rEndToEnd,
	"end-to-end referenz": rEndToEnd, "end-to-end reference": rEndToEnd, "end to end id": rEndToEnd,
	"end-to-end-id": rEndToEnd, "endtoendid": rEndToEnd,

	"mandatsreferenz": rMandate, "mandate reference": rMandate, "mandat": rMandate, "mandats-id": rMandate,

	"glaeubiger id": rCreditorID, "glaeubiger-id": rCreditorID, "glaeubigerid": rCreditorID,
	"creditor id": rCreditorID, "glaeubiger-identifikationsnummer": rCreditorID,

	"auftragskonto": rAccount, "iban auftragskonto": rAccount, "iban kontoinhaber": rAccount,
	"iban auftraggeberkonto": rAccount, // Commerzbank: the account holder's own account
	"account iban":           rAccount, "own iban": rAccount, "account": rAccount,

	"info": rStatus, "status": rStatus, "state": rStatus,

	"blz": rBLZ,

	"fee": rFee,

	"bankreferenz": rBankRef, "bank reference": rBankRef, "transaktions-id": rBankRef, "transaction id": rBankRef,
	"transferwise id": rBankRef, "wise id": rBankRef, "referenz": rBankRef, // comdirect
}

// What a missing role's error lists (the spellings a user recognises).
var expectedNames = map[role][]string{
	rBooking: {"Buchungstag", "Buchungsdatum", "Buchung", "Datum", "Date", "Booking Date"},
	rAmount:  {"Betrag", "Umsatz", "Amount", "Betrag (EUR)", "Umsatz in EUR", "or Soll and Haben"},
}

var roleNames = map[role]string{rBooking: "the booking date", rAmount: "the amount"}

// An amount column's header may name the currency: "Betrag (EUR)",
// "Betrag (€)", "Umsatz in EUR", "Amount (EUR)".
var headerCurrencyRe = regexp.MustCompile(`^(.*?) ?(?:\(([a-z]{3}|€)\)|in ([a-z]{3}|€))$`)

var umlauts = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss", "Ä", "ae", "Ö", "oe", "Ü", "ue",
	"\ufeff", "", "\"", "", "\u00a0", " ")

// normHeader folds a header cell to the form the synonyms use: lower
// case, umlauts spelled out, single spaces, none around a slash, no
// trailing colon.
func normHeader(s string) string {
	s = strings.ToLower(umlauts.Replace(s))
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(strings.ReplaceAll(s, " /", "/"), "/ ", "/")
	return strings.TrimSuffix(s, ":")
}

// layout is a header row understood: the column of each role (-1 when
// absent) and the currency an amount column's name gives.
type layout struct {
	col            [nRoles]int
	headerCurrency string
	// ibanCols are all counterparty IBAN columns: Volksbank writes
	// "Konto-Nr." (empty for SEPA) and "IBAN".
	ibanCols []int
	// nameCols are all counterparty name columns: bunq writes the
	// counterparty's IBAN under "Counterparty" and the name under "Name".
	nameCols []int
	// indicatorGuessed: the S/H column is the blank-headed one after the
	// amount, not a named one.
	indicatorGuessed bool
}

func (l *layout) has(r role) bool { return l.col[r] >= 0 }

// mapHeader reads rec as a header row. ok is true when it has what an
// entry needs (a booking date and an amount, or Soll and Haben); known
// counts the recognised columns, to pick the row an error talks about.
func mapHeader(rec []string) (l layout, ok bool, known int) {
	for i := range l.col {
		l.col[i] = -1
	}
	var currencies []int
	for i, cell := range rec {
		if len(cell) > 100 {
			continue
		}
		h := normHeader(cell)
		r, found := synonyms[h]
		cur := ""
		if !found {
			if m := headerCurrencyRe.FindStringSubmatch(h); m != nil {
				if br, ok := synonyms[m[1]]; ok && (br == rAmount || br == rDebit || br == rCredit) {
					r, found = br, true
					cur = m[2] + m[3]
				}
			}
		}
		if !found {
			continue
		}
		known++
		if r == rCurrency {
			currencies = append(currencies, i)
			continue
		}
		if r == rCPIBAN {
			l.ibanCols = append(l.ibanCols, i)
		}
		if r == rCounterparty {
			l.nameCols = append(l.nameCols, i)
		}
		if l.col[r] >= 0 {
			continue // the first column of a name wins
		}
		l.col[r] = i
		if cur != "" && (r == rAmount || l.headerCurrency == "") {
			l.headerCurrency = currencyCode(cur)
		}
	}
	// ING writes "Saldo;Währung;Betrag;Währung": the amount's currency is
	// the one after the amount.
	for _, i := range currencies {
		if l.col[rCurrency] < 0 || (l.col[rAmount] >= 0 && l.col[rCurrency] < l.col[rAmount] && i > l.col[rAmount]) {
			l.col[rCurrency] = i
		}
	}
	if l.has(rDescription) {
		switch {
		case !l.has(rReference):
			l.col[rReference] = l.col[rDescription]
		case !l.has(rBookingText) && !l.has(rTxType):
			l.col[rBookingText] = l.col[rDescription]
		}
	}
	// Commerzbank and comdirect put the remittance text under
	// "Buchungstext" and the kind of booking under "Umsatzart"/"Vorgang".
	if !l.has(rReference) && l.has(rBookingText) && l.has(rTxType) {
		l.col[rReference], l.col[rBookingText] = l.col[rBookingText], l.col[rTxType]
		l.col[rTxType] = -1
	}
	if !l.has(rBookingText) {
		l.col[rBookingText], l.col[rTxType] = l.col[rTxType], -1
	}
	// Sparkasse's CSV-MT940 has "BLZ" and no "BIC" column, and writes the
	// BIC under BLZ since SEPA; where a BIC column exists it wins.
	if !l.has(rCPBIC) {
		l.col[rCPBIC] = l.col[rBLZ]
	}
	// Volksbank's older export marks the amount "S" or "H" in a column
	// right after "Umsatz" whose header is blank. Guessed, so a value
	// other than a mark there is not an error (see parser.amount).
	if a := l.col[rAmount]; !l.has(rIndicator) && a >= 0 && a+1 < len(rec) && strings.TrimSpace(rec[a+1]) == "" {
		l.col[rIndicator], l.indicatorGuessed = a+1, true
	}
	// Credit card exports (DKB's "Wertstellung" beside "Belegdatum") have
	// no booking day but the day the money moved: that is the booking.
	if !l.has(rBooking) && l.has(rValue) {
		l.col[rBooking] = l.col[rValue]
	}
	ok = l.has(rBooking) && (l.has(rAmount) || (l.has(rDebit) && l.has(rCredit)))
	return l, ok, known
}

// missing lists what rec lacks, for the error.
func missing(rec []string) []MissingColumn {
	l, _, _ := mapHeader(rec)
	var out []MissingColumn
	if !l.has(rBooking) {
		out = append(out, MissingColumn{What: roleNames[rBooking], Expected: expectedNames[rBooking]})
	}
	if !l.has(rAmount) && !(l.has(rDebit) && l.has(rCredit)) {
		out = append(out, MissingColumn{What: roleNames[rAmount], Expected: expectedNames[rAmount]})
	}
	return out
}
