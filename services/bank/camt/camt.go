// Package camt reads ISO 20022 bank-to-customer statements: camt.052
// (intraday report, Rpt), camt.053 (statement, Stmt) and camt.054
// (debit/credit notification, Ntfctn), every version in use (.001.02 to
// .001.08 and later). Elements are matched by local name, never by
// namespace, because each version has its own namespace and banks mix
// them freely with their own extensions.
//
// The parser streams: it reads tokens one at a time and hands each entry
// to a bank.Sink as soon as the entry's element closes, so only one entry
// (with its transaction details) is ever held in memory.
//
// A file that is not camt, or breaks the schema in a way that would make
// an import wrong (no statement, an entry without amount or direction, an
// amount that is not a number), is refused with errs.Invalid (400
// INVALID_INPUT, detail field "file"), so the import layer can pass it on
// as it is. An error from the sink is returned unchanged, and so (wrapped,
// not as INVALID_INPUT) is a failure of the reader.
//
// Rules the import relies on:
//   - Only booked entries count: an entry whose Sts is PDNG or INFO (an
//     intraday camt.052; also as Sts/Prtry) is skipped, so it neither
//     imports nor enters the statement's sum. So is an entry (or a part
//     of a batch) of 0.00, which moved no money.
//   - A batch booking (one Ntry, several TxDtls) splits into one entry per
//     detail only when every detail carries an amount in the entry's
//     currency and the signed amounts add up to the booked amount; else
//     the booking stays one entry of the booked amount, because that is
//     what moved on the account. Split entries carry BatchRef (the entry's
//     AcctSvcrRef, else NtryRef) and as BankReference only their own
//     Refs/AcctSvcrRef, so that duplicate detection by bank reference
//     never takes one part of a batch for another.
//   - With a single TxDtls the entry's booked amount counts, whatever the
//     detail says (banks put the instructed amount or 0 there).
//   - The counterparty of a credit is the debtor, of a debit the creditor;
//     of a reversal (RvslInd) the other way round, as it names the parties
//     of the payment it undoes.
package camt

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// Bounds that keep a hostile or broken file from growing the process.
const (
	// MaxTextRunes is the longest text field kept; longer ones are cut.
	MaxTextRunes = 1000
	// maxTextBytes bounds what is collected of one element's text before
	// it is cut to MaxTextRunes (4 bytes is the longest UTF-8 rune).
	maxTextBytes = 4 * MaxTextRunes
	// MaxDetails is the most transaction details one entry (a batch
	// booking) may carry; they are held until the entry closes.
	MaxDetails = 20000
	// maxDetailBytes bounds the text held for one entry's details.
	maxDetailBytes = 16 << 20
	// maxDepth is far deeper than any camt element nests (about 15).
	maxDepth = 48
)

// Parse reads a camt.052, .053 or .054 document from r and streams its
// statements into sink.
func Parse(r io.Reader, sink bank.Sink) error {
	er := &guardReader{r: r}
	br := bufio.NewReaderSize(er, 64<<10)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	var src io.Reader = br
	head, _ := br.Peek(512)
	if label := declaredEncoding(head); label != "" {
		dec, err := charsetReader(label, br)
		if err != nil {
			return invalid("cannot read the document: %v", err)
		}
		src = dec
	}
	p := &parser{d: newScanner(src), sink: sink}
	err := p.run()
	if er.bad {
		return invalid("more than 1 MiB of text without markup")
	}
	if er.err != nil {
		// The reader failed (a cut upload, a cancelled request): not the
		// file's fault, so not a 400.
		return fmt.Errorf("camt: read: %w", er.err)
	}
	return err
}

// guardReader remembers the reader's own failure, which the decoder would
// otherwise report like a syntax error, and refuses a run of more than
// maxRun bytes without a '<' or '>': the decoder holds a text node, a
// tag with its attributes or a comment whole in memory, and no camt field
// comes near that length.
type guardReader struct {
	r   io.Reader
	err error
	run int
	bad bool
}

const maxRun = 1 << 20

var errLongRun = errors.New("camt: more than 1 MiB without markup")

func (g *guardReader) Read(b []byte) (int, error) {
	if g.bad {
		return 0, errLongRun
	}
	n, err := g.r.Read(b)
	if err != nil && err != io.EOF && g.err == nil {
		g.err = err
	}
	g.run = nextRun(g.run, b[:n])
	if g.run > maxRun {
		g.bad = true
		return 0, errLongRun
	}
	return n, err
}

// nextRun is the run of bytes without '<' or '>' at the end of b when run
// such bytes came before it, or a number above maxRun once a run exceeds
// maxRun. A read is no longer than the bufio buffer above (64 KiB), so
// only the run across its start and the one at its end can be long, and
// those two are found with bytes.IndexByte from the front and a short
// walk from the back, instead of looking at every byte.
func nextRun(run int, b []byte) int {
	if len(b) > maxRun {
		for _, c := range b {
			if c == '<' || c == '>' {
				run = 0
			} else if run++; run > maxRun {
				return run
			}
		}
		return run
	}
	first := bytes.IndexByte(b, '<')
	if gt := bytes.IndexByte(b, '>'); gt >= 0 && (first < 0 || gt < first) {
		first = gt
	}
	if first < 0 {
		return run + len(b)
	}
	if run+first > maxRun {
		return run + first
	}
	last := len(b) - 1
	for b[last] != '<' && b[last] != '>' {
		last--
	}
	return len(b) - 1 - last
}

func invalid(format string, args ...any) error {
	msg := "camt: " + fmt.Sprintf(format, args...)
	return errs.Invalid(msg, errs.Field("file", msg))
}

// tokenizer is what the scanner and xml.Decoder have in common, for the
// tests that compare the two.
type tokenizer interface {
	RawToken() (xml.Token, error)
}

var encodingDecl = regexp.MustCompile(`^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']`)

// declaredEncoding is the encoding the XML declaration names, "" when it
// names none.
func declaredEncoding(head []byte) string {
	if m := encodingDecl.FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		return transform.NewReader(in, bank.UTF8Else(charmap.ISO8859_1)), nil
	case "iso-8859-15", "iso8859-15", "latin9", "latin-9":
		return transform.NewReader(in, bank.UTF8Else(charmap.ISO8859_15)), nil
	case "windows-1252", "cp1252":
		return transform.NewReader(in, bank.UTF8Else(charmap.Windows1252)), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

// kinds maps the document's root child to the statement element it holds.
var kinds = map[string]struct{ kind, stmt string }{
	"BkToCstmrAcctRpt":      {"camt.052", "Rpt"},
	"BkToCstmrStmt":         {"camt.053", "Stmt"},
	"BkToCstmrDbtCdtNtfctn": {"camt.054", "Ntfctn"},
}

// Depths in the element stack: Document, BkToCstmr..., Stmt, Ntry/Bal.
const (
	stmtDepth = 2
	ntryDepth = 3
)

type parser struct {
	d    *scanner
	sink bank.Sink

	root, kind, stmtName string
	statements           int

	stack  []string // local names of the open elements
	prefix []string // their namespace prefixes, to match end tags
	text   []byte
	ccy    string // the Ccy attribute of the element last opened

	st     stmtState
	inStmt bool
	inBal  bool
	bal    balState

	inNtry  bool
	ntry    fields
	details []fields
	txDepth int // stack index of the open TxDtls, 0 when none
	tx      fields
	held    int // bytes of text held for the open entry

	strs     strCache
	validDay string // the day dateOf last found valid
}

type stmtState struct {
	head          bank.Statement
	headSent      bool
	opening       *bank.Balance
	openingIsOPBD bool
	closing       *bank.Balance
	entries       int
	sum           decimal.Decimal
}

type balState struct {
	code, amount, ccy, dir, date string
}

// fields are what an Ntry and a TxDtls share; the entry's are the
// default for its details.
type fields struct {
	amount, ccy, dir                   string
	reversal, status                   string
	bookDate, valDate                  string
	acctSvcrRef, ntryRef               string
	endToEnd, mandate, creditorID      string
	othrID, othrScheme                 string // the Othr being read under Cdtr
	dbtrName, dbtrIBAN, dbtrBIC        string
	cdtrName, cdtrIBAN, cdtrBIC        string
	ustrd, strdRef                     []string
	domain, family, subFamily, prtryCd string
	info                               string // AddtlNtryInf / AddtlTxInf
	chargesTotal                       string
	chargesSum                         decimal.Decimal
	hasCharges                         bool
}

func (p *parser) run() error {
	for {
		// The scanner's tokens are raw (RawToken's, not Token's): names
		// are matched by local name, so a namespace translation would be
		// work thrown away; the end tags it would match, end() matches.
		kind, err := p.d.next()
		if err == io.EOF {
			if len(p.stack) > 0 {
				return invalid("not well-formed XML: the document ends inside %s", p.stack[len(p.stack)-1])
			}
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return invalid("not well-formed XML (line %d): %s", se.Line, se.Msg)
			}
			// A sink error never reaches here; this is the reader or the
			// decoder (an unsupported encoding, a read failure).
			return invalid("cannot read the document: %v", err)
		}
		switch kind {
		case tokStart:
			if err := p.start(xml.StartElement{Name: p.d.name, Attr: p.d.attrs}); err != nil {
				return err
			}
		case tokText:
			if t := p.d.data; len(p.stack) > stmtDepth && len(p.text) < maxTextBytes {
				room := maxTextBytes - len(p.text)
				if len(t) > room {
					t = t[:room]
				}
				p.text = append(p.text, t...)
			}
		case tokEnd:
			n := len(p.stack) - 1
			if t := p.d.name; n < 0 || t.Local != p.stack[n] || t.Space != p.prefix[n] {
				return invalid("not well-formed XML: end tag %s does not close the open element", t.Local)
			}
			if err := p.end(); err != nil {
				return err
			}
		}
	}
	switch {
	case p.root == "":
		return invalid("the document has no root element")
	case p.kind == "":
		return invalid("the Document holds no BkToCstmrStmt, BkToCstmrAcctRpt or BkToCstmrDbtCdtNtfctn")
	case p.statements == 0:
		// The schema requires at least one statement (1..n); a document
		// without one is a broken export, not an empty day.
		return invalid("%s document without any %s element (the schema requires at least one)", p.kind, p.stmtName)
	}
	return nil
}

func (p *parser) start(t xml.StartElement) error {
	name := t.Name.Local
	p.stack = append(p.stack, name)
	p.prefix = append(p.prefix, t.Name.Space)
	p.text = p.text[:0]
	depth := len(p.stack) - 1
	if depth >= maxDepth {
		return invalid("elements nest deeper than %d levels", maxDepth)
	}
	switch depth {
	case 0:
		if name != "Document" {
			return invalid("root element is %s, not a camt Document", name)
		}
		p.root = name
		return nil
	case 1:
		if p.kind != "" {
			return invalid("the Document holds more than one message (%s)", name)
		}
		k, ok := kinds[name]
		if !ok {
			return invalid("%s is not a camt.052, camt.053 or camt.054 message", name)
		}
		p.kind, p.stmtName = k.kind, k.stmt
		return nil
	case stmtDepth:
		if name == p.stmtName {
			p.inStmt = true
			p.statements++
			p.st = stmtState{head: bank.Statement{Kind: p.kind}}
			return nil
		}
		for _, k := range kinds {
			if name == k.stmt {
				return invalid("%s element in a %s document", name, p.kind)
			}
		}
		return nil
	case ntryDepth:
		if !p.inStmt {
			return nil
		}
		switch name {
		case "Ntry":
			if err := p.sendHead(); err != nil {
				return err
			}
			p.inNtry = true
			p.held = 0
			p.ntry = fields{}
			p.details = p.details[:0]
		case "Bal":
			p.inBal = true
			p.bal = balState{}
		}
		return nil
	}
	if name == "Amt" || name == "TtlChrgsAndTaxAmt" {
		p.ccy = ""
		for _, a := range t.Attr {
			if a.Name.Local == "Ccy" {
				p.ccy = a.Value
			}
		}
	}
	if p.inNtry && name == "TxDtls" && p.txDepth == 0 && depth == ntryDepth+2 && p.stack[ntryDepth+1] == "NtryDtls" {
		if len(p.details) >= MaxDetails {
			return invalid("an entry carries more than %d transaction details", MaxDetails)
		}
		p.txDepth = depth
		p.tx = fields{}
	}
	return nil
}

func (p *parser) end() error {
	depth := len(p.stack) - 1
	err := p.closed(depth)
	p.stack, p.prefix, p.text = p.stack[:depth], p.prefix[:depth], p.text[:0]
	return err
}

// closed handles the element at depth, which has just closed.
func (p *parser) closed(depth int) error {
	switch {
	case p.txDepth > 0 && depth > p.txDepth:
		if err := p.field(&p.tx, p.stack[p.txDepth+1:]); err != nil {
			return err
		}
		if p.held > maxDetailBytes {
			return invalid("an entry's transaction details hold more than %d MiB of text", maxDetailBytes>>20)
		}
		return nil
	case p.txDepth > 0 && depth == p.txDepth:
		p.details = append(p.details, p.tx)
		p.tx = fields{}
		p.txDepth = 0
		return nil
	case p.inNtry && depth > ntryDepth:
		return p.field(&p.ntry, p.stack[ntryDepth+1:])
	case p.inNtry && depth == ntryDepth:
		p.inNtry = false
		return p.entry()
	case p.inBal && depth > ntryDepth:
		p.balField(p.stack[ntryDepth+1:])
		return nil
	case p.inBal && depth == ntryDepth:
		p.inBal = false
		return p.balance()
	case p.inStmt && depth > stmtDepth:
		p.stmtField(p.stack[stmtDepth+1:])
		return nil
	case p.inStmt && depth == stmtDepth:
		p.inStmt = false
		return p.endStatement()
	}
	return nil
}

func is(path []string, names ...string) bool {
	if len(path) != len(names) {
		return false
	}
	for i := range names {
		if path[i] != names[i] {
			return false
		}
	}
	return true
}

// textOf is the element's text, trimmed, with runs of white space inside
// it (line breaks in a remittance line) made one space, and cut to
// MaxTextRunes.
func (p *parser) textOf() string {
	p.held += len(p.text)
	b := bytes.TrimSpace(p.text)
	if needsFolding(b) {
		b = []byte(strings.Join(strings.Fields(string(b)), " "))
	}
	// Text that short is never cut: every token the scanner hands on is
	// valid UTF-8, so only text cut off at maxTextBytes can end inside a
	// rune, and cut would stop there.
	if len(b) <= MaxTextRunes && utf8.Valid(b) {
		return p.strs.of(b)
	}
	return cut(b)
}

// needsFolding says whether b holds a line break, a tab or two spaces in
// a row (bytes.ContainsAny and bytes.Contains in one pass).
func needsFolding(b []byte) bool {
	for i, c := range b {
		switch c {
		case '\n', '\r', '\t':
			return true
		case ' ':
			if i+1 < len(b) && b[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}

// strCache hands out strings for short texts, reusing the last string
// made for equal bytes: dates, codes, IBANs, BICs and names recur from
// entry to entry, and each reuse saves an allocation. It is a fixed table
// indexed by a hash, an entry replaced by the next text of its slot, so
// a file of texts that never recur costs a hash each and holds nothing.
type strCache [256]string

// maxCached is the longest text the cache keeps (an IBAN has 34 bytes).
const maxCached = 34

func (c *strCache) of(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxCached {
		return string(b)
	}
	h := uint32(len(b))
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619 // FNV-1a
	}
	slot := &c[h>>24]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

func cut(b []byte) string {
	n, i := 0, 0
	for i < len(b) && n < MaxTextRunes {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			break // a rune cut off by maxTextBytes
		}
		i += size
		n++
	}
	return string(b[:i])
}

func cutString(s string) string {
	if utf8.RuneCountInString(s) <= MaxTextRunes {
		return s
	}
	return cut([]byte(s))
}

func (p *parser) stmtField(path []string) {
	switch {
	case is(path, "Id"):
		p.st.head.ID = p.textOf()
	case is(path, "ElctrncSeqNb"):
		p.st.head.Number = p.textOf()
	case is(path, "LglSeqNb"):
		if p.st.head.Number == "" {
			p.st.head.Number = p.textOf()
		}
	case is(path, "Acct", "Id", "IBAN"):
		p.st.head.IBAN = normIBAN(p.textOf())
	case is(path, "Acct", "Ccy"):
		p.st.head.Currency = strings.ToUpper(p.textOf())
	}
}

func normIBAN(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, " ", ""))
}

func (p *parser) balField(path []string) {
	switch {
	case is(path, "Tp", "CdOrPrtry", "Cd"):
		p.bal.code = strings.ToUpper(p.textOf())
	case is(path, "Amt"):
		p.bal.amount, p.bal.ccy = p.textOf(), p.ccy
	case is(path, "CdtDbtInd"):
		p.bal.dir = p.textOf()
	case is(path, "Dt", "Dt"), is(path, "Dt", "DtTm"):
		p.bal.date = p.textOf()
	}
}

func (p *parser) balance() error {
	code := p.bal.code
	if code != "OPBD" && code != "PRCD" && code != "CLBD" {
		return nil // available, interim and forward balances play no part in the check
	}
	amt, err := signed(p.bal.amount, p.bal.dir, place{name: "balance " + code})
	if err != nil {
		return err
	}
	date, err := p.dateOf(p.bal.date, place{name: "balance " + code})
	if err != nil {
		return err
	}
	b := &bank.Balance{Date: date, Amount: amt}
	switch code {
	case "CLBD":
		if p.st.closing == nil {
			p.st.closing = b
		}
	default:
		if p.st.headSent {
			// The header with the opening balance went out with the first
			// entry; an opening balance after it would be lost silently.
			return invalid("statement %q: balance %s after its first entry", p.st.head.ID, code)
		}
		if code == "OPBD" && !p.st.openingIsOPBD {
			p.st.opening, p.st.openingIsOPBD = b, true
		} else if p.st.opening == nil {
			p.st.opening = b
		}
	}
	return nil
}

func (p *parser) sendHead() error {
	if p.st.headSent {
		return nil
	}
	p.st.headSent = true
	p.st.head.Opening = p.st.opening
	return p.sink.Statement(p.st.head)
}

func (p *parser) endStatement() error {
	if err := p.sendHead(); err != nil {
		return err
	}
	return p.sink.End(bank.StatementEnd{Closing: p.st.closing, Entries: p.st.entries, Sum: p.st.sum})
}

// field records one closed element below an Ntry or a TxDtls; path runs
// from the element under Ntry/TxDtls to the one that just closed.
func (p *parser) field(f *fields, path []string) error {
	if len(path) == 0 {
		return nil
	}
	switch path[0] {
	case "Amt":
		if len(path) == 1 {
			f.amount, f.ccy = p.textOf(), p.ccy
		}
	case "AmtDtls":
		if is(path, "AmtDtls", "TxAmt", "Amt") && f.amount == "" {
			f.amount, f.ccy = p.textOf(), p.ccy
		}
	case "CdtDbtInd":
		f.dir = p.textOf()
	case "RvslInd":
		f.reversal = p.textOf()
	case "Sts":
		// .001.02 to .07 write <Sts>BOOK</Sts>, .08 <Sts><Cd>BOOK</Cd></Sts>;
		// from .08 on a bank may write its own code as <Sts><Prtry>, which
		// an intraday report may use for a pending entry.
		if s := p.textOf(); s != "" && (len(path) == 1 || is(path, "Sts", "Cd")) {
			f.status = s
		} else if s != "" && is(path, "Sts", "Prtry") && f.status == "" {
			f.status = prtryStatus(s)
		}
	case "BookgDt":
		if len(path) == 2 && (path[1] == "Dt" || path[1] == "DtTm") {
			f.bookDate = p.textOf()
		}
	case "ValDt":
		if len(path) == 2 && (path[1] == "Dt" || path[1] == "DtTm") {
			f.valDate = p.textOf()
		}
	case "AcctSvcrRef":
		if len(path) == 1 {
			f.acctSvcrRef = p.textOf()
		}
	case "NtryRef":
		f.ntryRef = p.textOf()
	case "AddtlNtryInf", "AddtlTxInf":
		if len(path) == 1 {
			f.info = p.textOf()
		}
	case "BkTxCd":
		switch {
		case is(path, "BkTxCd", "Domn", "Cd"):
			f.domain = p.textOf()
		case is(path, "BkTxCd", "Domn", "Fmly", "Cd"):
			f.family = p.textOf()
		case is(path, "BkTxCd", "Domn", "Fmly", "SubFmlyCd"):
			f.subFamily = p.textOf()
		case is(path, "BkTxCd", "Prtry", "Cd"):
			f.prtryCd = p.textOf()
		}
	case "Chrgs":
		return p.charges(f, path)
	case "Refs":
		switch {
		case is(path, "Refs", "EndToEndId"):
			f.endToEnd = p.textOf()
		case is(path, "Refs", "MndtId"):
			f.mandate = p.textOf()
		case is(path, "Refs", "AcctSvcrRef"):
			f.acctSvcrRef = p.textOf()
		}
	case "RltdPties":
		p.party(f, path[1:])
	case "RltdAgts":
		if len(path) == 4 && path[2] == "FinInstnId" && (path[3] == "BIC" || path[3] == "BICFI") {
			switch path[1] {
			case "DbtrAgt":
				f.dbtrBIC = strings.ToUpper(p.textOf())
			case "CdtrAgt":
				f.cdtrBIC = strings.ToUpper(p.textOf())
			}
		}
	case "RmtInf":
		switch {
		case is(path, "RmtInf", "Ustrd"):
			f.ustrd = appendLine(f.ustrd, p.textOf())
		case is(path, "RmtInf", "Strd", "CdtrRefInf", "Ref"),
			// The invoice numbers a payer's ERP names (SAP writes them so)
			// and the free text beside a structured reference.
			is(path, "RmtInf", "Strd", "RfrdDocInf", "Nb"),
			is(path, "RmtInf", "Strd", "AddtlRmtInf"):
			f.strdRef = appendLine(f.strdRef, p.textOf())
		}
	}
	return nil
}

// appendLine adds a remittance line unless the lines already fill what
// the joined text keeps.
func appendLine(lines []string, s string) []string {
	if s == "" {
		return lines
	}
	n := 0
	for _, l := range lines {
		n += utf8.RuneCountInString(l) + 1
	}
	if n >= MaxTextRunes {
		return lines
	}
	return append(lines, s)
}

func (p *parser) charges(f *fields, path []string) error {
	var amt bool
	switch {
	case is(path, "Chrgs", "TtlChrgsAndTaxAmt"):
		if f.chargesTotal == "" {
			f.chargesTotal = p.textOf()
		}
		return nil
	case is(path, "Chrgs", "Rcrd", "Amt"), is(path, "Chrgs", "Amt"): // .001.03 and later; .001.02
		amt = true
	}
	if !amt {
		return nil
	}
	d, err := amount(p.textOf(), place{name: "charges"})
	if err != nil {
		return err
	}
	f.chargesSum = f.chargesSum.Add(d)
	f.hasCharges = true
	return nil
}

// party reads RltdPties: Dbtr/Cdtr names (Nm, or Pty/Nm from .001.08 on),
// their accounts' IBAN, and the SEPA creditor identifier, which German
// banks put under Cdtr/Id/PrvtId/Othr with the scheme name SEPA.
func (p *parser) party(f *fields, path []string) {
	if len(path) < 2 {
		return
	}
	role := path[0]
	rest := path[1:]
	if (role == "Dbtr" || role == "Cdtr") && rest[0] == "Pty" {
		rest = rest[1:]
	}
	switch role {
	case "Dbtr", "Cdtr":
		switch {
		case is(rest, "Nm"):
			if role == "Dbtr" {
				f.dbtrName = p.textOf()
			} else {
				f.cdtrName = p.textOf()
			}
		case role == "Cdtr" && is(rest, "Id", "PrvtId", "Othr", "Id"):
			f.othrID = p.textOf()
		case role == "Cdtr" && is(rest, "Id", "PrvtId", "Othr", "SchmeNm", "Prtry"):
			f.othrScheme = p.textOf()
		case role == "Cdtr" && is(rest, "Id", "PrvtId", "Othr"):
			if strings.EqualFold(f.othrScheme, "SEPA") && f.othrID != "" {
				f.creditorID = f.othrID
			}
			f.othrID, f.othrScheme = "", ""
		}
	case "DbtrAcct":
		if is(rest, "Id", "IBAN") {
			f.dbtrIBAN = normIBAN(p.textOf())
		}
	case "CdtrAcct":
		if is(rest, "Id", "IBAN") {
			f.cdtrIBAN = normIBAN(p.textOf())
		}
	}
}

// prtryStatus reads a proprietary status: the ISO codes and the words
// banks use for pending or advice-only entries mean what they say; any
// other code is taken as booked, as an entry is unless it says otherwise.
func prtryStatus(s string) string {
	switch u := strings.ToUpper(strings.TrimSpace(s)); u {
	case "PDNG", "INFO", "FUTR", "PENDING", "VORGEMERKT", "INFORMATION":
		return u
	}
	return "BOOK"
}

// booked says whether the entry moved money: pending (PDNG) and
// information-only (INFO) entries of an intraday report did not, and
// counting them would double the day's statement.
func booked(status string) bool {
	s := strings.ToUpper(status)
	return s == "" || s == "BOOK"
}

func (p *parser) entry() error {
	n := &p.ntry
	if !booked(n.status) {
		return nil
	}
	where := place{stmt: p.st.head.ID, entry: p.st.entries + 1}
	total, err := signed(n.amount, n.dir, where)
	if err != nil {
		return err
	}
	book, err := p.dateOf(firstOf(n.bookDate, n.valDate), where.with(" booking date"))
	if err != nil {
		return err
	}
	val := ""
	if n.valDate != "" {
		if val, err = p.dateOf(n.valDate, where.with(" value date")); err != nil {
			return err
		}
	}
	charges, err := chargesOf(n, where)
	if err != nil {
		return err
	}
	base := bank.Entry{
		BookingDate:   book,
		ValueDate:     val,
		Amount:        total,
		Currency:      strings.ToUpper(n.ccy),
		BankReference: n.acctSvcrRef,
		Charges:       charges,
		Reversal:      strings.EqualFold(n.reversal, "true") || n.reversal == "1",
	}

	split, err := p.splittable(total, n.ccy, n.dir, where)
	if err != nil {
		return err
	}
	switch {
	case len(p.details) == 1:
		e := base
		if err := p.detail(&e, n, &p.details[0], where); err != nil {
			return err
		}
		return p.emit(e)
	case split:
		batch := firstOf(n.acctSvcrRef, n.ntryRef)
		for i := range p.details {
			d := &p.details[i]
			e := base
			e.Amount, _ = signed(firstOf(d.amount), firstOf(d.dir, n.dir), where)
			e.BankReference = "" // the entry's AcctSvcrRef names the batch, not this part of it
			e.BatchRef = batch
			e.Charges = decimal.Zero
			if err := p.detail(&e, n, d, where); err != nil {
				return err
			}
			if err := p.emit(e); err != nil {
				return err
			}
		}
		return nil
	default:
		// No details, or details that do not add up to what was booked:
		// the booked amount is what moved on the account, so it stays one
		// entry with the entry's own information.
		p.describe(&base, n, nil)
		return p.emit(base)
	}
}

// splittable says whether the entry's several transaction details each
// carry an amount in the entry's currency and add up to the booked
// amount; only then does the booking split without changing the balance.
func (p *parser) splittable(total decimal.Decimal, ccy, dir string, where place) (bool, error) {
	if len(p.details) < 2 {
		return false, nil
	}
	sum := decimal.Zero
	for i := range p.details {
		d := &p.details[i]
		if d.amount == "" || (d.ccy != "" && ccy != "" && !strings.EqualFold(d.ccy, ccy)) {
			return false, nil
		}
		a, err := signed(d.amount, firstOf(d.dir, dir), where.inDetail(i+1))
		if err != nil {
			return false, err
		}
		sum = sum.Add(a)
	}
	return sum.Equal(total), nil
}

// detail fills e from one transaction detail, the entry's fields being
// the default.
func (p *parser) detail(e *bank.Entry, n, d *fields, where place) error {
	if d.acctSvcrRef != "" {
		e.BankReference = d.acctSvcrRef
	}
	if d.hasCharges || d.chargesTotal != "" {
		c, err := chargesOf(d, where)
		if err != nil {
			return err
		}
		e.Charges = c
	}
	if d.reversal != "" {
		e.Reversal = strings.EqualFold(d.reversal, "true") || d.reversal == "1"
	}
	e.EndToEndID = d.endToEnd
	e.MandateID = d.mandate
	e.CreditorID = d.creditorID
	// A credit comes from the debtor, a debit goes to the creditor; a
	// reversal names the parties of the payment it undoes, so it looks
	// the other way.
	fromDebtor := e.Amount.Sign() > 0
	if e.Reversal {
		fromDebtor = !fromDebtor
	}
	if fromDebtor {
		e.CounterpartyName, e.CounterpartyIBAN, e.CounterpartyBIC = d.dbtrName, d.dbtrIBAN, d.dbtrBIC
	} else {
		e.CounterpartyName, e.CounterpartyIBAN, e.CounterpartyBIC = d.cdtrName, d.cdtrIBAN, d.cdtrBIC
	}
	p.describe(e, n, d)
	return nil
}

// describe sets the remittance text, booking text and GVC.
func (p *parser) describe(e *bank.Entry, n, d *fields) {
	src := n
	if d != nil {
		src = d
	}
	switch {
	case len(src.ustrd) > 0:
		e.Reference = cutString(strings.Join(src.ustrd, " "))
	case len(src.strdRef) > 0:
		e.Reference = cutString(strings.Join(src.strdRef, " "))
	}
	code := n
	if d != nil && (d.domain != "" || d.prtryCd != "") {
		code = d
	}
	info := n.info
	if d != nil && d.info != "" {
		info = d.info
	}
	e.BookingText = info
	if e.BookingText == "" {
		e.BookingText = txCode(code)
	}
	e.GVC = gvc(code.prtryCd)
}

func txCode(f *fields) string {
	if f.domain != "" {
		parts := []string{f.domain}
		if f.family != "" {
			parts = append(parts, f.family)
		}
		if f.subFamily != "" {
			parts = append(parts, f.subFamily)
		}
		return strings.Join(parts, "/")
	}
	return f.prtryCd
}

// gvc is the German Geschaeftsvorfallcode when the proprietary bank
// transaction code is one: "166" or the DK form "NTRF+166+00931".
func gvc(cd string) string {
	digits := func(s string) bool {
		if len(s) != 3 {
			return false
		}
		for i := 0; i < 3; i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	if digits(cd) {
		return cd
	}
	if len(cd) >= 8 && cd[4] == '+' && digits(cd[5:8]) && (len(cd) == 8 || cd[8] == '+') {
		return cd[5:8]
	}
	return ""
}

func (p *parser) emit(e bank.Entry) error {
	if e.Amount.IsZero() {
		// A booking of 0.00 (a closing without interest or charges, a
		// zero part of a batch) moved no money; an entry is never zero,
		// and the store refuses one (CHECK amount <> 0).
		return nil
	}
	p.st.entries++
	p.st.sum = p.st.sum.Add(e.Amount)
	return p.sink.Entry(e)
}

func chargesOf(f *fields, where place) (decimal.Decimal, error) {
	if f.chargesTotal != "" {
		return amount(f.chargesTotal, where.with(" charges"))
	}
	return f.chargesSum, nil
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// place names where a value sits, for error messages: a fixed name
// ("charges", "balance OPBD"), or an entry of a statement and perhaps one
// of its details, with what of it ("booking date"). Its text is made only
// when an error is reported; formatting it for every entry up front was a
// fifth of the parser's allocations.
type place struct {
	name          string
	stmt          string
	entry, detail int
	what          string
}

func (w place) with(what string) place { w.what = what; return w }

func (w place) inDetail(i int) place { w.detail = i; return w }

func (w place) String() string {
	s := w.name
	if w.entry > 0 {
		s = fmt.Sprintf("statement %q entry %d", w.stmt, w.entry)
		if w.detail > 0 {
			s += fmt.Sprintf(" detail %d", w.detail)
		}
	}
	return s + w.what
}

// amount reads an ISO 20022 amount: digits with an optional fraction,
// no sign and no exponent (the direction is CdtDbtInd's).
func amount(s string, where place) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, invalid("%s: amount missing", where)
	}
	dot, digits := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return decimal.Decimal{}, invalid("%s: amount %q is not a decimal number", where, s)
		}
	}
	if digits == 0 {
		return decimal.Decimal{}, invalid("%s: amount %q is not a decimal number", where, s)
	}
	if digits > 30 {
		return decimal.Decimal{}, invalid("%s: amount %q has too many digits", where, s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, invalid("%s: amount %q is not a decimal number", where, s)
	}
	return d, nil
}

func signed(s, dir string, where place) (decimal.Decimal, error) {
	d, err := amount(s, where)
	if err != nil {
		return d, err
	}
	switch strings.ToUpper(dir) {
	case "CRDT":
		return d, nil
	case "DBIT":
		return d.Neg(), nil
	case "":
		return d, invalid("%s: CdtDbtInd missing", where)
	}
	return d, invalid("%s: CdtDbtInd %q is neither CRDT nor DBIT", where, dir)
}

// dateOf takes the date of an ISODate or ISODateTime as written: the
// bank's local booking day, without moving it through a time zone.
//
// The day last found valid is remembered: the entries of a statement
// share a few days, and time.Parse was the dearest check of an entry.
func (p *parser) dateOf(s string, where place) (string, error) {
	if s == "" {
		return "", invalid("%s: date missing", where)
	}
	// xs:date may carry a zone ("2024-03-01+01:00", "...Z"); the day is
	// still the one written.
	if len(s) < 10 || (len(s) > 10 && !strings.ContainsRune("TZ+-", rune(s[10]))) {
		return "", invalid("%s: %q is not a date", where, s)
	}
	day := s[:10]
	if day == p.validDay {
		return p.validDay, nil
	}
	if _, err := time.Parse("2006-01-02", day); err != nil {
		return "", invalid("%s: %q is not a date", where, s)
	}
	p.validDay = day
	return day, nil
}
