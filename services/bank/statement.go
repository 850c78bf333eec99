package bank

import (
	"github.com/shopspring/decimal"
)

// What the statement parsers (camt, mt940, csvimport) produce. A parser
// streams: it hands each statement's header, then each entry, then the
// statement's end to a Sink, so a 50 MB file never sits in memory as a
// whole. Dates are YYYY-MM-DD; amounts are exact and signed from the
// account holder's view: positive money in (credit), negative money out
// (debit).

// Statement is one account statement (camt Stmt/Rpt/Ntfctn, an MT940
// message, or the rows of one account in a CSV export).
type Statement struct {
	// ID is the bank's identifier of the statement (camt Id, MT940 :20:),
	// "" when the format has none.
	ID string
	// Number is the electronic sequence or statement number (camt
	// ElctrncSeqNb / LglSeqNb, MT940 :28C:), "" when absent.
	Number string
	// Kind is "camt.052", "camt.053", "camt.054", "mt940" or "csv".
	Kind     string
	IBAN     string // the account's IBAN, upper case without spaces; "" when the file names none
	Currency string // ISO 4217 of the account, "" when absent
	// Opening is the booked opening balance (camt OPBD/PRCD, MT940
	// :60F:/:60M:), nil when the statement carries none.
	Opening *Balance
}

// Balance is a balance on a date.
type Balance struct {
	Date   string
	Amount decimal.Decimal // signed: negative is a debit balance (overdraft)
}

// Entry is one booked movement. A camt batch booking (one Ntry with many
// TxDtls) yields one Entry per transaction detail, each with its own
// amount and parties, and BatchRef naming the booking they share.
type Entry struct {
	BookingDate string
	ValueDate   string          // "" when absent
	Amount      decimal.Decimal // signed, see above; never zero for a real entry
	Currency    string          // ISO 4217

	// References the bank gives; duplicate detection uses them in this order.
	BankReference string // camt AcctSvcrRef, MT940 :61: bank reference (after //)
	EndToEndID    string // camt Refs/EndToEndId, MT940 ?20 EREF+; "" or "NOTPROVIDED" when absent
	MandateID     string // SEPA direct debit mandate (MREF+)
	CreditorID    string // SEPA creditor id (CRED+)
	BatchRef      string // the camt entry's reference when it was split from a batch booking

	CounterpartyName string
	CounterpartyIBAN string // upper case without spaces
	CounterpartyBIC  string
	// Reference is the remittance information (Verwendungszweck): camt
	// RmtInf/Ustrd lines joined by a space (or Strd CdtrRefInf/Ref), MT940
	// ?20-?29 and ?60-?63 with the SEPA keywords (EREF+, SVWZ+, ...) kept.
	Reference   string
	BookingText string // camt AddtlNtryInf / BkTxCd, MT940 ?00 (e.g. "SEPA-UEBERWEISUNG")
	GVC         string // MT940 Geschaeftsvorfallcode (:86: first three digits), camt proprietary code when it is one
	// Charges are fees the bank took with this entry (camt Chrgs), as a
	// positive amount; zero when none.
	Charges decimal.Decimal
	// Reversal marks a return or reversal (camt RvslInd, MT940 RC/RD).
	Reversal bool
}

// StatementEnd closes a statement.
type StatementEnd struct {
	// Closing is the booked closing balance (camt CLBD, MT940 :62F:/:62M:),
	// nil when the statement carries none.
	Closing *Balance
	// Entries and Sum are what the parser handed to the sink for this
	// statement, for the balance check.
	Entries int
	Sum     decimal.Decimal
}

// Sink receives a parsed file in order: Statement, its Entries, End;
// then the next statement. An error from the sink stops the parser and
// is returned as it is.
type Sink interface {
	Statement(Statement) error
	Entry(Entry) error
	End(StatementEnd) error
}

// BalanceMismatch reports whether opening + entries differs from closing,
// and the two figures, when the statement carries both balances.
func BalanceMismatch(opening *Balance, end StatementEnd) (expected, closing decimal.Decimal, mismatch bool) {
	if opening == nil || end.Closing == nil {
		return decimal.Decimal{}, decimal.Decimal{}, false
	}
	expected = opening.Amount.Add(end.Sum)
	return expected, end.Closing.Amount, !expected.Equal(end.Closing.Amount)
}
