// Package mt940 parses SWIFT MT940 account statements as German banks
// write them (Sparkasse, Volksbank, Deutsche Bank, Commerzbank, ...) and
// streams them into a bank.Sink, one statement at a time.
//
// Errors: a file that is not MT940 at all (no field tag such as :20:,
// :25:, :60F: or :61: before other text) is refused with an *errs.Error of
// code errs.InvalidFileType; an MT940 file with a malformed field (a bad
// amount, date or debit/credit mark, a line or field beyond the limits)
// with an *errs.Error of code errs.InvalidInput whose detail names the line
// and the tag. Both codes map to 400 through the errs table, so the import
// layer passes them on as they are. An error from the sink is returned as
// it is. Entries handed to the sink before an error stay handed: the import
// layer writes a file in one transaction and must drop them.
package mt940

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"
)

// Limits. SWIFT allows 65 characters a line and 6 lines of :86:, but German
// banks write the structured :86: (up to 14 remittance subfields of 27
// characters plus names and codes) on one long line or many; the limits
// leave room for that and still bound what one field can hold.
const (
	MaxLine  = 16 << 10 // bytes of one line
	MaxField = 32 << 10 // bytes of one field with its continuation lines

	maxRef       = 35   // SEPA references, statement id and number
	maxName      = 140  // counterparty name, booking text
	maxReference = 1000 // remittance information (runes)
)

// Parse reads an MT940 file from r and hands each statement, its entries
// and its end to sink. It reads line by line and keeps one statement's
// header and one entry in memory, never the file.
func Parse(r io.Reader, sink bank.Sink) error {
	p := &parser{lines: newLineReader(r), sink: sink}
	return p.run()
}

// field is one tag with its value; continuation lines are joined with "\n".
type field struct {
	tag  string // "20", "60F", "61", ...
	val  string
	line int // line number of the tag
}

type parser struct {
	lines *lineReader
	sink  bank.Sink

	sawTag  bool // any field tag seen: the file is MT940
	sawCore bool // a :20:, :25:, :60:, :61: or :62: seen

	st *statement
}

// statement is the one statement being read.
type statement struct {
	hdr     bank.Statement
	emitted bool // header handed to the sink
	closing *bank.Balance
	entries int
	sum     decimal.Decimal
	pending *bank.Entry // the last :61:, waiting for its :86:
}

func (p *parser) run() error {
	// The field being read; its lines gather in buf (appending to a string
	// would copy the field once per line: quadratic on many short lines).
	var cur *field
	var buf []byte
	flush := func() error {
		if cur == nil {
			return nil
		}
		f := *cur
		f.val = string(buf)
		cur = nil
		return p.field(f)
	}
	for {
		line, n, err := p.lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line = stripHeaders(line)
		trimmed := strings.TrimSpace(line)
		if tag, rest, ok := splitTag(line); ok {
			if err := flush(); err != nil {
				return err
			}
			p.sawTag = true
			cur = &field{tag: tag, line: n}
			buf = append(buf[:0], rest...)
			continue
		}
		if trimmed == "-" || trimmed == "-}" || strings.HasPrefix(trimmed, "-}{") {
			if err := flush(); err != nil {
				return err
			}
			if err := p.endStatement(); err != nil {
				return err
			}
			continue
		}
		if cur == nil {
			if trimmed == "" || strings.HasPrefix(trimmed, "{") {
				continue // blank lines and header blocks between statements
			}
			if !p.sawTag && n <= 3 && abnHeader.MatchString(trimmed) {
				continue // ABN AMRO's export starts "ABNANL2A", "940", "ABNANL2A"
			}
			if !p.sawTag {
				return errs.E(errs.InvalidFileType,
					"not an MT940 file: line %d does not start with a field tag such as :20:, :25: or :60F:", n)
			}
			continue // stray text after an end marker
		}
		if len(buf)+1+len(line) > MaxField {
			return lineErr(cur.line, cur.tag, fmt.Sprintf("field longer than %d bytes", MaxField))
		}
		buf = append(append(buf, '\n'), line...)
	}
	if err := flush(); err != nil {
		return err
	}
	if !p.sawCore {
		return errs.E(errs.InvalidFileType, "not an MT940 file: no :20:, :25:, :60F: or :61: field")
	}
	return p.endStatement()
}

// stripHeaders drops the SWIFT header blocks {1:...}{2:...}{3:...} and the
// opening "{4:" of the text block, so that "{1:...}{4::20:X" reads as ":20:X".
func stripHeaders(line string) string {
	for strings.HasPrefix(line, "{") {
		if strings.HasPrefix(line, "{4:") {
			return line[3:]
		}
		end := strings.IndexByte(line, '}')
		if end < 0 {
			return line
		}
		// {3:{108:...}} nests one level.
		if strings.HasPrefix(line[end+1:], "}") {
			end++
		}
		line = line[end+1:]
	}
	return line
}

// splitTag recognises ":NN:" and ":NNa:" (and the non-SWIFT ":NS:") at the
// start of a line.
// abnHeader is a line of the plain header some banks (ABN AMRO) write
// before the first field: the sender's BIC or the message type.
var abnHeader = regexp.MustCompile(`^(?:[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?|94[02])$`)

func splitTag(line string) (tag, rest string, ok bool) {
	if len(line) < 4 || line[0] != ':' {
		return "", "", false
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	if line[1:4] == "NS:" {
		return "NS", line[4:], true
	}
	if !isDigit(line[1]) || !isDigit(line[2]) {
		return "", "", false
	}
	if line[3] == ':' {
		return line[1:3], line[4:], true
	}
	if len(line) >= 5 && line[3] >= 'A' && line[3] <= 'Z' && line[4] == ':' {
		return line[1:4], line[5:], true
	}
	return "", "", false
}

func lineErr(line int, tag, issue string) error {
	return errs.Invalid(fmt.Sprintf("MT940 line %d, field :%s:: %s", line, tag, issue),
		errs.Field(fmt.Sprintf("line %d :%s:", line, tag), issue))
}

func (p *parser) field(f field) error {
	switch f.tag {
	case "20", "25", "28", "28C", "60", "60F", "60M", "61", "62", "62F", "62M":
		p.sawCore = true
	}
	switch f.tag {
	case "20":
		if err := p.endStatement(); err != nil {
			return err
		}
		p.begin()
		p.st.hdr.ID = clip(oneLine(f.val), maxRef)
	case "25":
		// A header field after the statement's entries began a statement
		// the bank did not open with :20:.
		if err := p.beginIfStarted(); err != nil {
			return err
		}
		p.st.hdr.IBAN = accountIBAN(oneLine(f.val))
	case "28", "28C":
		if err := p.beginIfStarted(); err != nil {
			return err
		}
		p.st.hdr.Number = clip(strings.TrimSpace(oneLine(f.val)), maxRef)
	case "60", "60F", "60M":
		if err := p.beginIfStarted(); err != nil {
			return err
		}
		b, cur, err := parseBalance(f)
		if err != nil {
			return err
		}
		p.st.hdr.Opening = &b
		p.st.hdr.Currency = cur
	case "61":
		if p.st == nil {
			p.begin()
		}
		if err := p.flushEntry(); err != nil {
			return err
		}
		if err := p.emitHeader(); err != nil {
			return err
		}
		e, err := parseLine61(f)
		if err != nil {
			return err
		}
		e.Currency = p.st.hdr.Currency
		p.st.pending = &e
	case "86":
		if p.st == nil || p.st.pending == nil {
			return nil // statement-level information, no entry to attach it to
		}
		applyDetails(p.st.pending, f.val)
		return p.flushEntry()
	case "62", "62F", "62M":
		if p.st == nil {
			p.begin()
		}
		if err := p.flushEntry(); err != nil {
			return err
		}
		b, _, err := parseBalance(f)
		if err != nil {
			return err
		}
		p.st.closing = &b
	}
	// :21:, :13D:, :34F:, :64:, :65:, :90C:, :90D:, :NS: carry nothing the
	// import keeps.
	return nil
}

func (p *parser) begin() {
	p.st = &statement{hdr: bank.Statement{Kind: "mt940"}}
}

// beginIfStarted opens a statement for a header field, ending the current
// one first when its entries or closing balance were already read.
func (p *parser) beginIfStarted() error {
	if p.st != nil && (p.st.emitted || p.st.closing != nil) {
		if err := p.endStatement(); err != nil {
			return err
		}
	}
	if p.st == nil {
		p.begin()
	}
	return nil
}

func (p *parser) emitHeader() error {
	if p.st.emitted {
		return nil
	}
	p.st.emitted = true
	return p.sink.Statement(p.st.hdr)
}

func (p *parser) flushEntry() error {
	e := p.st.pending
	if e == nil {
		return nil
	}
	p.st.pending = nil
	if e.Amount.IsZero() {
		// ":61:...C0,00NMSC": a closing (Abschluss) without interest or
		// charges moved no money; an entry is never zero, and the store
		// refuses one.
		return nil
	}
	p.st.entries++
	p.st.sum = p.st.sum.Add(e.Amount)
	return p.sink.Entry(*e)
}

func (p *parser) endStatement() error {
	if p.st == nil {
		return nil
	}
	if err := p.flushEntry(); err != nil {
		return err
	}
	if err := p.emitHeader(); err != nil {
		return err
	}
	st := p.st
	p.st = nil
	return p.sink.End(bank.StatementEnd{Closing: st.closing, Entries: st.entries, Sum: st.sum})
}

// oneLine joins a field's continuation lines; for fields that SWIFT
// defines as one line, a break is the bank's wrapping.
func oneLine(v string) string { return strings.ReplaceAll(v, "\n", "") }

// lineReader yields decoded lines: LF, CRLF or CR ends a line; a line that
// is valid UTF-8 is taken as it is, any other is Windows-1252 (a superset of
// ISO-8859-1 in the printable range), which is what German banks write.
type lineReader struct {
	sc     *bufio.Scanner
	n      int
	peeked *string
	peekN  int
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine+2)
	sc.Split(splitLines)
	return &lineReader{sc: sc}
}

func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// CR: a CRLF pair needs the next byte to be seen.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (lr *lineReader) raw() (string, int, error) {
	if lr.peeked != nil {
		s := *lr.peeked
		lr.peeked = nil
		return s, lr.peekN, nil
	}
	if !lr.sc.Scan() {
		if err := lr.sc.Err(); err != nil {
			if err == bufio.ErrTooLong {
				return "", lr.n + 1, errs.Invalid(fmt.Sprintf("MT940 line %d is longer than %d bytes", lr.n+1, MaxLine),
					errs.Field(fmt.Sprintf("line %d", lr.n+1), "too long"))
			}
			return "", lr.n, err
		}
		return "", lr.n, io.EOF
	}
	lr.n++
	b := lr.sc.Bytes()
	if lr.n == 1 {
		b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	}
	return decode(b), lr.n, nil
}

// next returns the next line. Sparkasse exports have been seen to wrap
// inside a tag (":" on one line, "86:..." on the next); such a pair is
// joined back into one tag line.
func (lr *lineReader) next() (string, int, error) {
	s, n, err := lr.raw()
	if err != nil || s != ":" {
		return s, n, err
	}
	nx, nn, err := lr.raw()
	if err == io.EOF {
		return s, n, nil
	}
	if err != nil {
		return "", nn, err
	}
	if _, _, ok := splitTag(":" + nx); ok {
		return ":" + nx, n, nil
	}
	lr.peeked, lr.peekN = &nx, nn
	return s, n, nil
}

// decode turns a line into clean UTF-8 without control characters (NUL,
// SOH/ETX of SWIFT transmission frames, C1 codes, tabs become spaces).
func decode(b []byte) string {
	plain := true
	for _, c := range b {
		if c < ' ' || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return string(b)
	}
	valid := utf8.Valid(b)
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		var r rune
		if valid {
			var size int
			r, size = utf8.DecodeRune(b[i:])
			i += size
		} else {
			r = charmap.Windows1252.DecodeByte(b[i])
			i++
		}
		switch {
		case r == '\t':
			sb.WriteByte(' ')
		case unicode.IsControl(r) || r == utf8.RuneError || r == '\uFEFF':
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// clip bounds s to n runes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
