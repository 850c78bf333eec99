// Package csvimport reads the CSV exports of German online banking into a
// bank.Sink, streaming.
//
// What it understands:
//
//   - Encoding: a UTF-8 byte order mark means UTF-8; else UTF-8 when the
//     first 64 KB are valid UTF-8; else one of the two single-byte
//     encodings German banks use. Windows-1252 and ISO-8859-15 differ in
//     a few bytes only; the one that matters is the euro sign (0x80 in
//     Windows-1252, 0xA4 in ISO-8859-15). Bytes 0x80–0x9F are control
//     characters in ISO-8859-15 and never appear in its text, so any of
//     them means Windows-1252; else a 0xA4 (which Windows-1252 reads as
//     the never-used "¤") means ISO-8859-15; else Windows-1252. Bytes
//     that are not UTF-8 after the first 64 KB of a file read as UTF-8
//     read as Windows-1252 (an ASCII start, then "Müller").
//   - Layout: the header row is the first row (within the first 64 KB)
//     that names a booking date and an amount (or Soll and Haben); rows
//     before it are the preamble many banks write (account, period,
//     balance), where an IBAN is picked up for the statement when the
//     rows have no account column. The delimiter (";", "," or tab) is
//     the one under which such a header row appears. Column names are
//     matched in German and English (see synonyms), which covers the
//     Sparkasse CSV-CAMT and CSV-MT940 layouts, DKB, ING, Commerzbank,
//     Deutsche Bank, comdirect, Volksbank and N26 exports.
//   - Values: amounts with decimal comma or point, grouping, a sign
//     before or after and a currency before or after; Soll/Haben
//     columns or an S/H column; dates DD.MM.YYYY, DD.MM.YY, YYYY-MM-DD.
//
// A file is one bank.Statement of kind "csv" with no balances. A second
// header row ends it: comdirect writes every account of a customer into
// one file, a section each, and the sections after the first are other
// accounts (their title and balance rows are no errors). Rows the
// bank marks as not yet booked ("Umsatz vorgemerkt", "Vorgemerkt", a
// booking date of "offen") and balance lines ("Kontostand", "Saldo")
// are left out without a report. A row with a date, amount or currency
// that cannot be read is left out and reported as a RowError (see
// RowErrorSink); the rest of the file still imports. A file without a
// usable header row is a *MissingColumnsError.
package csvimport

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
)

// MaxRecordBytes bounds one row of the file (all its fields, quoted line
// breaks included): a longer row stops the parse with ErrRowTooLong, so
// an unterminated quote cannot pull a whole file into memory.
const MaxRecordBytes = 64 << 10

// ErrRowTooLong is returned when a row exceeds MaxRecordBytes.
var ErrRowTooLong = errors.New("csv: a row is longer than 64 KB (an unterminated quote?)")

// MaxRowErrors bounds the row errors RowErrors keeps when the sink does
// not take them itself.
const MaxRowErrors = 1000

// MissingColumnsError means no row of the file's start names the columns
// an entry needs. The import answers it as 400 with Error() as message.
type MissingColumnsError struct {
	Missing []MissingColumn
	// Header is the row that came closest (most recognised columns), nil
	// for an empty file.
	Header []string
}

// MissingColumn is one needed column the header lacks.
type MissingColumn struct {
	What     string   // "the booking date", "the amount"
	Expected []string // names that would have been recognised
}

func (e *MissingColumnsError) Error() string {
	if len(e.Missing) == 0 {
		return "csv: no header row found"
	}
	parts := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		parts[i] = "no column for " + m.What + ": expected one of " + strings.Join(m.Expected, ", ")
	}
	return "csv: " + strings.Join(parts, "; ")
}

// RowError is one data row left out because a field cannot be read.
type RowError struct {
	Row  int // 1-based number of the row after the header row
	Line int // 1-based line of the file where the row starts
	// Field is the bank transaction field, named as the JSON import names
	// it: "tx_date", "value_date", "amount", "currency", or "account" (a
	// row of another account than the file's first); "" when the row
	// itself is malformed CSV.
	Field  string
	Value  string // the cell as read, cut to 60 characters
	Reason string
}

func (e RowError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("row %d (line %d): %s", e.Row, e.Line, e.Reason)
	}
	return fmt.Sprintf("row %d (line %d), field %s: %s %s", e.Row, e.Line, e.Field, quote(e.Value), e.Reason)
}

// RowErrorSink is a bank.Sink that also takes the rows left out. When
// the sink given to Parse implements it, each RowError goes to it as it
// is found (an error from it stops the parse and is returned as it is);
// otherwise Parse returns them all as RowErrors after the statement's
// End.
type RowErrorSink interface {
	bank.Sink
	RowError(RowError) error
}

// RowErrors is what Parse returns when rows were left out and the sink
// does not implement RowErrorSink. The statement was imported all the
// same; these are the rows missing from it.
type RowErrors struct {
	Errors  []RowError // the first MaxRowErrors
	Omitted int        // how many more there were
}

func (e *RowErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "csv: %d rows left out", len(e.Errors)+e.Omitted)
	for i, r := range e.Errors {
		if i == 3 {
			b.WriteString("; …")
			break
		}
		b.WriteString("; ")
		b.WriteString(r.Error())
	}
	return b.String()
}

// Parse reads one CSV export from r into sink: one Statement, its
// entries, its End. See the package documentation for what it accepts.
func Parse(r io.Reader, sink bank.Sink) error {
	dec, err := decode(r)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(dec, peekSize)
	head, err := br.Peek(peekSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return err
	}
	delim, mErr := detectDelimiter(head)
	if mErr != nil {
		return mErr
	}
	lim := &limitReader{r: br}
	cr := csv.NewReader(lim)
	cr.Comma = delim
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true

	p := &parser{sink: sink, cr: cr}
	p.rowSink, _ = sink.(RowErrorSink)
	// The header row: detectDelimiter saw it in the first 64 KB, so this
	// reads no further than that.
	for {
		rec, err := cr.Read()
		lim.n = 0
		if err == io.EOF {
			return &MissingColumnsError{Missing: missing(nil)}
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			return err
		}
		if l, ok, _ := mapHeader(rec); ok {
			p.lay = l
			break
		}
		if p.preambleIBAN == "" {
			for _, c := range rec {
				if p.preambleIBAN = ibanIn(c); p.preambleIBAN != "" {
					break
				}
			}
		}
	}
	for {
		rec, err := cr.Read()
		lim.n = 0
		if err == io.EOF {
			break
		}
		p.row++
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if err := p.start(p.preambleIBAN, ""); err != nil {
				return err
			}
			if err := p.flushHeld(); err != nil {
				return err
			}
			if err := p.rowError(RowError{Row: p.row, Line: pe.StartLine, Reason: "malformed CSV: " + pe.Err.Error()}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := p.record(rec); err != nil {
			return err
		}
		if p.done {
			break
		}
	}
	if err := p.start(p.preambleIBAN, ""); err != nil {
		return err
	}
	if err := p.flushHeld(); err != nil {
		return err
	}
	if err := sink.End(bank.StatementEnd{Entries: p.entries, Sum: p.sum}); err != nil {
		return err
	}
	if p.collected != nil {
		return p.collected
	}
	return nil
}

type parser struct {
	sink         bank.Sink
	rowSink      RowErrorSink
	cr           *csv.Reader
	lay          layout
	preambleIBAN string

	charges decimal.Decimal // the fee of the row amount last read
	held    []RowError      // rows without a date since the last booking, see record
	done    bool            // a header row of another section was met

	started   bool
	iban      string
	row       int
	entries   int
	sum       decimal.Decimal
	collected *RowErrors
}

// start hands the statement to the sink once, before its first entry:
// its IBAN is the first row's account.
func (p *parser) start(iban, currency string) error {
	if p.started {
		return nil
	}
	p.started = true
	p.iban = iban
	return p.sink.Statement(bank.Statement{Kind: "csv", IBAN: iban, Currency: currency})
}

// maxHeld bounds the row errors held back while it is not yet known
// whether they are a section's title rows.
const maxHeld = 32

// flushHeld reports the row errors held back: they were bad rows.
func (p *parser) flushHeld() error {
	for _, e := range p.held {
		if err := p.rowError(e); err != nil {
			return err
		}
	}
	p.held = p.held[:0]
	return nil
}

func (p *parser) rowError(e RowError) error {
	if p.rowSink != nil {
		return p.rowSink.RowError(e)
	}
	if p.collected == nil {
		p.collected = &RowErrors{}
	}
	if len(p.collected.Errors) < MaxRowErrors {
		p.collected.Errors = append(p.collected.Errors, e)
	} else {
		p.collected.Omitted++
	}
	return nil
}

func (p *parser) cell(rec []string, r role) string {
	i := p.lay.col[r]
	if i < 0 || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// notBooked says whether a status cell marks a row that moved no money
// (yet): "Umsatz vorgemerkt", "offen", and Revolut's PENDING, REVERTED,
// DECLINED and FAILED.
func notBooked(status string) bool {
	s := strings.ToLower(strings.TrimSpace(status))
	if strings.Contains(s, "vorgemerkt") {
		return true
	}
	switch s {
	case "pending", "offen", "reverted", "declined", "failed", "cancelled", "canceled", "storniert":
		return true
	}
	return false
}

// balanceRow reports whether one of rec's cells is only a balance word:
// Volksbank writes "Anfangssaldo" and "Endsaldo" rows with a date and an
// amount in the text column after the bookings.
func balanceRow(rec []string) bool {
	for _, c := range rec {
		if len(c) < 5 || len(c) > 40 {
			continue // every row passes here: no folding for cells that cannot match
		}
		c = strings.TrimSuffix(strings.TrimSpace(c), ":")
		for _, w := range balanceWords {
			if strings.EqualFold(c, w) {
				return true
			}
		}
	}
	return false
}

var balanceWords = []string{"kontostand", "saldo", "anfangssaldo", "endsaldo", "alter kontostand", "neuer kontostand", "abschlusssaldo", "summe"}

// balanceLine reports whether rec is a balance line some banks write
// after the rows ("Kontostand;30.09.2026;;;1.234,56;EUR").
func balanceLine(rec []string) bool {
	first := normHeader(rec[0])
	for _, w := range balanceWords {
		if strings.HasPrefix(first, w) {
			return true
		}
	}
	return false
}

func (p *parser) record(rec []string) error {
	empty := true
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			empty = false
			break
		}
	}
	if empty {
		return nil
	}
	if notBooked(p.cell(rec, rStatus)) || balanceRow(rec) {
		return nil
	}
	// The statement comes first, before this row's entry or its error:
	// the file's account is its first row's.
	account := p.cell(rec, rAccount)
	iban := normIBAN(account)
	if !p.started {
		if iban == "" {
			iban = p.preambleIBAN
		}
		cur := currencyCode(p.cell(rec, rCurrency))
		if cur == "" {
			cur = p.lay.headerCurrency
		}
		if cur == "" {
			cur = "EUR"
		}
		if err := p.start(iban, cur); err != nil {
			return err
		}
	}
	line, _ := p.cr.FieldPos(0)
	fail := func(field, value, reason string) error {
		if err := p.flushHeld(); err != nil {
			return err
		}
		return p.rowError(RowError{Row: p.row, Line: line, Field: field, Value: value, Reason: reason})
	}

	raw := p.cell(rec, rBooking)
	if l := strings.ToLower(raw); l == "offen" || l == "vorgemerkt" || l == "pending" {
		return nil
	}
	booking, err := parseDate(raw)
	if err != nil {
		if balanceLine(rec) {
			return nil
		}
		if _, ok, _ := mapHeader(rec); ok {
			// comdirect exports every account of a customer in one file,
			// each in a section with its own header row: what follows is
			// another account's, and the rows since the last booking were
			// that section's title and balance.
			p.done, p.held = true, p.held[:0]
			return nil
		}
		// Held until a booking follows (it was a bad row) or a header
		// row (it was a section title).
		if len(p.held) == maxHeld {
			if err := p.flushHeld(); err != nil {
				return err
			}
		}
		p.held = append(p.held, RowError{Row: p.row, Line: line, Field: "tx_date", Value: raw, Reason: err.Error()})
		return nil
	}
	var value string
	if raw := p.cell(rec, rValue); raw != "" {
		if value, err = parseDate(raw); err != nil {
			return fail("value_date", raw, err.Error())
		}
	}
	amount, cellCur, field, raw, err := p.amount(rec)
	if err != nil {
		return fail(field, raw, err.Error())
	}
	currency := p.lay.headerCurrency
	if cellCur != "" {
		currency = cellCur
	}
	if raw := p.cell(rec, rCurrency); raw != "" {
		if currency = currencyCode(raw); currency == "" {
			return fail("currency", raw, "is not a currency code")
		}
	}
	if currency == "" {
		currency = "EUR" // German accounts; the JSON import defaults the same way
	}

	if iban != "" && p.iban != "" && iban != p.iban {
		return fail("account", account, "is another account than the file's first row ("+p.iban+")")
	}

	e := bank.Entry{
		BookingDate:      booking,
		ValueDate:        value,
		Amount:           amount,
		Currency:         currency,
		BankReference:    clean(p.cell(rec, rBankRef)),
		EndToEndID:       clean(p.cell(rec, rEndToEnd)),
		MandateID:        clean(p.cell(rec, rMandate)),
		CreditorID:       clean(p.cell(rec, rCreditorID)),
		CounterpartyName: clean(p.counterparty(rec, amount)),
		CounterpartyIBAN: p.counterpartyIBAN(rec),
		CounterpartyBIC:  normBIC(p.cell(rec, rCPBIC)),
		Reference:        clean(p.cell(rec, rReference)),
		BookingText:      clean(p.cell(rec, rBookingText)),
		Charges:          p.charges,
	}
	if err := p.flushHeld(); err != nil {
		return err
	}
	if err := p.sink.Entry(e); err != nil {
		return err
	}
	p.entries++
	p.sum = p.sum.Add(amount)
	return nil
}

// amount reads the row's signed amount from the amount column (with an
// S/H column when there is one) or from Soll and Haben.
func (p *parser) amount(rec []string) (amount decimal.Decimal, currency, field, raw string, err error) {
	// Deutsche Bank has Betrag next to Soll and Haben, and fills one.
	if p.lay.has(rAmount) && (p.cell(rec, rAmount) != "" || !p.lay.has(rDebit) || !p.lay.has(rCredit)) {
		raw = p.cell(rec, rAmount)
		if raw == "" {
			return amount, "", "amount", raw, errors.New("is empty")
		}
		if amount, currency, err = parseAmount(raw); err != nil {
			return amount, "", "amount", raw, err
		}
		if p.lay.has(rIndicator) {
			switch ind := strings.ToUpper(p.cell(rec, rIndicator)); ind {
			case "S", "D", "SOLL", "DEBIT":
				amount = amount.Abs().Neg()
			case "H", "C", "HABEN", "CREDIT":
				amount = amount.Abs()
			case "":
			default:
				if !p.lay.indicatorGuessed {
					return amount, "", "amount", ind, errors.New("is not S or H")
				}
			}
		}
	} else {
		debit, credit := p.cell(rec, rDebit), p.cell(rec, rCredit)
		if debit == "" && credit == "" {
			return amount, "", "amount", "", errors.New("is empty (neither Soll nor Haben)")
		}
		if debit != "" {
			d, c, err := parseAmount(debit)
			if err != nil {
				return amount, "", "amount", debit, err
			}
			amount, currency = amount.Sub(d.Abs()), c
		}
		if credit != "" {
			c, cur, err := parseAmount(credit)
			if err != nil {
				return amount, "", "amount", credit, err
			}
			amount = amount.Add(c.Abs())
			if currency == "" {
				currency = cur
			}
		}
		raw = debit + credit
	}
	p.charges = decimal.Zero
	if fee := p.cell(rec, rFee); fee != "" {
		f, _, err := parseAmount(fee)
		if err != nil {
			return amount, "", "amount", fee, errors.New("has a fee that " + err.Error())
		}
		// Revolut takes the fee on top of the amount: the balance moves
		// by both, and the entry keeps the fee as its charges.
		p.charges = f.Abs()
		amount = amount.Sub(p.charges)
	}
	if amount.IsZero() {
		return amount, "", "amount", raw, errors.New("is zero")
	}
	return amount, currency, "", "", nil
}

// counterparty is the named counterparty column, or, where the bank
// keeps payer and payee apart (DKB), the one on the other side of the
// money.
func (p *parser) counterparty(rec []string, amount decimal.Decimal) string {
	if p.lay.has(rCounterparty) {
		name := p.cell(rec, rCounterparty)
		for _, i := range p.lay.nameCols {
			// A "name" that is an IBAN (bunq) is no name; another column
			// has it.
			if i < len(rec) && (name == "" || normIBAN(name) != "") {
				if c := strings.TrimSpace(rec[i]); c != "" && normIBAN(c) == "" {
					name = c
				}
			}
		}
		if normIBAN(name) != "" {
			name = ""
		}
		if more := p.cell(rec, rCPName2); more != "" {
			name = strings.TrimSpace(name + " " + more)
		}
		return name
	}
	payer, payee := p.cell(rec, rPayer), p.cell(rec, rPayee)
	if amount.IsNegative() && payee != "" || payer == "" {
		return payee
	}
	return payer
}

func (p *parser) counterpartyIBAN(rec []string) string {
	for _, cols := range [][]int{p.lay.ibanCols, p.lay.nameCols} {
		for _, i := range cols {
			if i < len(rec) {
				if iban := normIBAN(rec[i]); iban != "" {
					return iban
				}
			}
		}
	}
	return ""
}

// limitReader fails once more than MaxRecordBytes (plus what encoding/csv
// reads ahead) were read since n was last reset, which Parse does after
// every row.
type limitReader struct {
	r io.Reader
	n int
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.n > MaxRecordBytes+8<<10 {
		return 0, ErrRowTooLong
	}
	n, err := l.r.Read(b)
	l.n += n
	return n, err
}
