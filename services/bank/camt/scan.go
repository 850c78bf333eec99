package camt

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// scanner is a small XML tokenizer with the contract of
// xml.Decoder.RawToken for the subset of XML a bank statement is: elements
// with attributes, text with the predefined and numeric entities, CDATA,
// comments and processing instructions; no DTD. encoding/xml spends most
// of a camt import reading byte by byte through interfaces; this reads
// runs with bytes.IndexByte and interns element names, which triples the
// throughput. A document with a DOCTYPE is refused: no bank sends one, and
// whatever it declares would be ignored anyway.
//
// As with RawToken, end tags are not matched against start tags (the
// parser does that), a self-closing element yields a StartElement and an
// EndElement, CharData is only valid until the next call, and text has
// \r\n and lone \r turned into \n.
//
// The parser reads tokens with next, which leaves the token in the
// scanner's fields instead of returning an xml.Token: boxing a
// StartElement, EndElement or CharData into the interface costs an
// allocation each, three in every element, and was most of the garbage a
// camt import made. RawToken wraps next for the tests that hold the
// scanner to encoding/xml.
type scanner struct {
	r     *bufio.Reader
	line  int
	text  []byte
	names map[string]string
	// recent holds interned names by a hash of their bytes: most tags
	// find theirs there for a hash and a compare, without a map lookup.
	recent [256]string
	vals   map[string]string // interned short attribute values ("EUR")
	// open holds the full names of the open elements, so an end tag
	// that closes the innermost one (every end tag of a well-formed
	// file) needs no lookup in names.
	open []string

	// The current token, valid until the next call of next.
	name  xml.Name
	attrs []xml.Attr
	data  []byte
	// pendingEnd says a self-closing tag owes its EndElement (of name).
	pendingEnd bool
	// lt says the '<' that starts the next markup has been read: the
	// text before it ended there.
	lt bool
}

// tokKind is the kind of token next found.
type tokKind uint8

const (
	tokNone  tokKind = iota // a comment or processing instruction: no token
	tokStart                // StartElement: name, attrs
	tokEnd                  // EndElement: name
	tokText                 // CharData: data
)

// maxNode bounds a text node, a tag or a comment held at once.
const maxNode = 1 << 20

func newScanner(r io.Reader) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 64<<10), line: 1, names: map[string]string{}, vals: map[string]string{}}
}

func (s *scanner) syntax(msg string) error { return &xml.SyntaxError{Msg: msg, Line: s.line} }

// RawToken returns the next token, or io.EOF after the last one.
func (s *scanner) RawToken() (xml.Token, error) {
	k, err := s.next()
	if err != nil {
		return nil, err
	}
	switch k {
	case tokStart:
		var attrs []xml.Attr
		if len(s.attrs) > 0 {
			attrs = append(attrs, s.attrs...)
		}
		return xml.StartElement{Name: s.name, Attr: attrs}, nil
	case tokEnd:
		return xml.EndElement{Name: s.name}, nil
	}
	return xml.CharData(s.data), nil
}

// next reads the next token into the scanner's fields and says which kind
// it is (never tokNone), or returns io.EOF after the last one.
func (s *scanner) next() (tokKind, error) {
	if s.pendingEnd {
		s.pendingEnd = false
		return tokEnd, nil
	}
	for {
		if !s.lt {
			b, err := s.r.ReadByte()
			if err != nil {
				return tokNone, err
			}
			if b != '<' {
				s.r.UnreadByte()
				t, err := s.readText()
				if err != nil {
					return tokNone, err
				}
				s.data = t
				return tokText, nil
			}
		}
		s.lt = false
		k, err := s.readMarkup()
		if err != nil {
			return tokNone, err
		}
		if k != tokNone {
			return k, nil
		}
	}
}

// readText reads character data up to the next '<' or the end; a '<' it
// reads it leaves to the next call (lt).
func (s *scanner) readText() (xml.CharData, error) {
	chunk, err := s.r.ReadSlice('<')
	if err == nil {
		// The whole text lies in the buffer: unless it holds entities or
		// '\r', it is handed on where it lies, without a copy.
		s.lt = true
		raw := chunk[:len(chunk)-1]
		plain, err := s.checkText(raw)
		if err != nil {
			return nil, err
		}
		if plain {
			return raw, nil
		}
		s.text = append(s.text[:0], raw...)
		return s.resolve(s.text)
	}
	s.text = s.text[:0]
	for {
		if err == nil {
			chunk = chunk[:len(chunk)-1]
			s.lt = true
		}
		if len(s.text)+len(chunk) > maxNode {
			return nil, s.syntax("text node longer than 1 MiB")
		}
		s.text = append(s.text, chunk...)
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		chunk, err = s.r.ReadSlice('<')
	}
	return s.decodeText(s.text)
}

// decodeText checks raw text and resolves its entities and line ends in
// place.
func (s *scanner) decodeText(raw []byte) (xml.CharData, error) {
	plain, err := s.checkText(raw)
	if err != nil || plain {
		return raw, err
	}
	return s.resolve(raw)
}

// checkText checks raw text as checkChars does, counts its lines and
// says whether it is plain: without entities or '\r', so as it stands.
func (s *scanner) checkText(raw []byte) (plain bool, err error) {
	// One pass counts the line ends, checks the characters as checkChars
	// does and looks for entities and '\r': text nodes are short, and
	// four passes cost more in calls than in bytes.
	lines, plain := 0, true
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= 0x20 && c < utf8.RuneSelf {
			if c == '&' {
				plain = false
			}
			i++
			continue
		}
		switch c {
		case '\n':
			lines++
			i++
			continue
		case '\r':
			plain = false
			i++
			continue
		case '\t':
			i++
			continue
		}
		if c < utf8.RuneSelf {
			// The error names the line after the text, as it always has.
			s.line += bytes.Count(raw, []byte{'\n'})
			return false, s.syntax("illegal character code U+" + strconv.FormatUint(uint64(c), 16))
		}
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 || !isXMLChar(r) {
			s.line += bytes.Count(raw, []byte{'\n'})
			return false, s.checkChars(raw[i:])
		}
		i += n
	}
	s.line += lines
	return plain, nil
}

// resolve resolves the entities and line ends of checked text in place.
func (s *scanner) resolve(raw []byte) (xml.CharData, error) {
	out := raw[:0]
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '\r':
			out = append(out, '\n')
			i++
			if i < len(raw) && raw[i] == '\n' {
				i++
			}
			continue
		case '&':
			end := bytes.IndexByte(raw[i:], ';')
			if end < 0 {
				return nil, s.syntax("invalid character entity (no semicolon)")
			}
			r, ok := entity(raw[i+1 : i+end])
			if !ok {
				return nil, s.syntax("invalid character entity &" + string(raw[i+1:i+end]) + ";")
			}
			// The entity's text is never longer than the reference.
			out = utf8.AppendRune(out, r)
			i += end + 1
			continue
		}
		out = append(out, c)
		i++
	}
	return out, nil
}

func entity(name []byte) (rune, bool) {
	switch string(name) {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	if len(name) > 1 && name[0] == '#' {
		var n uint64
		var err error
		if name[1] == 'x' {
			n, err = strconv.ParseUint(string(name[2:]), 16, 32)
		} else {
			n, err = strconv.ParseUint(string(name[1:]), 10, 32)
		}
		if err == nil && isXMLChar(rune(n)) {
			return rune(n), true
		}
	}
	return 0, false
}

// checkChars refuses invalid UTF-8 and characters XML does not allow.
func (s *scanner) checkChars(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return s.syntax("illegal character code U+" + strconv.FormatUint(uint64(c), 16))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return s.syntax("invalid UTF-8")
		}
		if !isXMLChar(r) {
			return s.syntax("illegal character code U+" + strconv.FormatUint(uint64(r), 16))
		}
		i += n
	}
	return nil
}

func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// readUntil reads up to and including delim (several bytes), bounded.
func (s *scanner) readUntil(delim string) ([]byte, error) {
	return s.readUntilAfter(nil, delim)
}

// readUntilAfter is readUntil when head has been read already.
func (s *scanner) readUntilAfter(head []byte, delim string) ([]byte, error) {
	s.text = append(s.text[:0], head...)
	last := delim[len(delim)-1]
	for {
		chunk, err := s.r.ReadSlice(last)
		if len(s.text)+len(chunk) > maxNode {
			return nil, s.syntax("markup longer than 1 MiB")
		}
		s.text = append(s.text, chunk...)
		if err == nil {
			if bytes.HasSuffix(s.text, []byte(delim)) {
				s.line += bytes.Count(s.text, []byte{'\n'})
				return s.text[:len(s.text)-len(delim)], nil
			}
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil, s.syntax("unexpected EOF")
		}
		return nil, err
	}
}

// readMarkup reads what follows a '<': a tag, a comment, CDATA or a
// processing instruction. Comments and instructions yield tokNone.
func (s *scanner) readMarkup() (tokKind, error) {
	b, err := s.r.Peek(1)
	if err != nil {
		return tokNone, s.syntax("unexpected EOF")
	}
	switch b[0] {
	case '?':
		s.r.ReadByte()
		if _, err := s.readUntil("?>"); err != nil {
			return tokNone, err
		}
		return tokNone, nil
	case '!':
		head, _ := s.r.Peek(8)
		switch {
		case bytes.HasPrefix(head, []byte("!--")):
			s.r.Discard(3)
			body, err := s.readUntil("-->")
			if err != nil {
				return tokNone, err
			}
			if bytes.Contains(body, []byte("--")) {
				return tokNone, s.syntax(`invalid sequence "--" not allowed in comments`)
			}
			return tokNone, nil
		case bytes.Equal(head, []byte("![CDATA[")):
			s.r.Discard(8)
			body, err := s.readUntil("]]>")
			if err != nil {
				return tokNone, err
			}
			if err := s.checkChars(body); err != nil {
				return tokNone, err
			}
			s.data = body
			return tokText, nil
		}
		return tokNone, s.syntax("a DOCTYPE or other directive is not accepted in a bank statement")
	case '/':
		s.r.ReadByte()
		// An end tag within the buffer is read where it lies, without
		// the copy readUntil makes.
		body, err := s.r.ReadSlice('>')
		counted := false
		switch {
		case err == nil:
			body = body[:len(body)-1]
		case errors.Is(err, bufio.ErrBufferFull):
			if body, err = s.readUntilAfter(body, ">"); err != nil {
				return tokNone, err
			}
			counted = true
		case errors.Is(err, io.EOF):
			return tokNone, s.syntax("unexpected EOF")
		default:
			return tokNone, err
		}
		name, rest := splitName(body)
		if !counted {
			s.line += bytes.Count(rest, []byte{'\n'}) // a name holds none
		}
		if len(name) == 0 || len(bytes.TrimSpace(rest)) > 0 {
			return tokNone, s.syntax("invalid end tag")
		}
		var full string
		if n := len(s.open) - 1; n >= 0 {
			if s.open[n] == string(name) {
				full = s.open[n]
			}
			s.open = s.open[:n]
		}
		if full == "" {
			if full, err = s.intern(name); err != nil {
				return tokNone, err
			}
		}
		s.name = split(full)
		return tokEnd, nil
	}
	return s.readStart()
}

// readStart reads a start tag; attribute values may hold '>', so the tag
// ends at the first '>' outside quotes.
func (s *scanner) readStart() (tokKind, error) {
	var body []byte
	chunk, err := s.r.ReadSlice('>')
	if err == nil && !hasQuote(chunk) {
		// No attribute values (most tags): the '>' is the tag's end, and
		// the tag is read where it lies in the buffer. Nothing below
		// writes to it, as only attribute values are decoded in place.
		body = chunk[:len(chunk)-1]
	} else {
		s.text = s.text[:0]
		var quote byte
		for {
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return tokNone, s.syntax("unexpected EOF")
			}
			for _, c := range chunk {
				switch {
				case quote != 0 && c == quote:
					quote = 0
				case quote == 0 && (c == '"' || c == '\''):
					quote = c
				}
			}
			if len(s.text)+len(chunk) > maxNode {
				return tokNone, s.syntax("tag longer than 1 MiB")
			}
			s.text = append(s.text, chunk...)
			if err == nil && quote == 0 {
				// The '>' that ended the chunk is outside quotes: the tag's end.
				s.text = s.text[:len(s.text)-1]
				break
			}
			chunk, err = s.r.ReadSlice('>')
		}
		body = s.text
	}
	s.line += bytes.Count(body, []byte{'\n'})
	selfClosing := len(body) > 0 && body[len(body)-1] == '/'
	if selfClosing {
		body = body[:len(body)-1]
	}
	name, rest := splitName(body)
	if len(name) == 0 {
		return tokNone, s.syntax("expected element name after <")
	}
	full, err := s.intern(name)
	if err != nil {
		return tokNone, err
	}
	s.attrs = s.attrs[:0]
	for {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if len(rest) == 0 {
			break
		}
		an, after := splitName(rest)
		if len(an) == 0 {
			return tokNone, s.syntax("expected attribute name in element")
		}
		after = bytes.TrimLeft(after, " \t\r\n")
		if len(after) == 0 || after[0] != '=' {
			return tokNone, s.syntax("attribute name without = in element")
		}
		after = bytes.TrimLeft(after[1:], " \t\r\n")
		if len(after) == 0 || (after[0] != '"' && after[0] != '\'') {
			return tokNone, s.syntax("unquoted or missing attribute value in element")
		}
		q := after[0]
		end := bytes.IndexByte(after[1:], q)
		if end < 0 {
			return tokNone, s.syntax("unterminated attribute value")
		}
		// The value is decoded in place: what decodeText writes is never
		// longer than what it reads, and the rest of the tag lies after it.
		raw := after[1 : 1+end]
		if bytes.IndexByte(raw, '<') >= 0 {
			return tokNone, s.syntax("unescaped < inside quoted string")
		}
		line := s.line
		val, err := s.decodeText(raw)
		s.line = line // counted with the tag already
		if err != nil {
			return tokNone, err
		}
		attr, err := s.intern(an)
		if err != nil {
			return tokNone, err
		}
		s.attrs = append(s.attrs, xml.Attr{Name: split(attr), Value: s.value(val)})
		rest = after[2+end:]
	}
	s.name = split(full)
	if selfClosing {
		s.pendingEnd = true
	} else {
		s.open = append(s.open, full)
	}
	return tokStart, nil
}

// hasQuote says whether a tag holds a quote; tags are short, so a loop
// costs less than two calls of bytes.IndexByte.
func hasQuote(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\'' {
			return true
		}
	}
	return false
}

var nameRE = regexp.MustCompile(`^[A-Za-z_\x80-\xff][A-Za-z0-9_.\-\x80-\xff]*(:[A-Za-z_\x80-\xff][A-Za-z0-9_.\-\x80-\xff]*)?$`)

// splitName cuts a name off the front of b.
func splitName(b []byte) (name, rest []byte) {
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' && b[i] != '=' && b[i] != '/' && b[i] != '>' {
		i++
	}
	return b[:i], b[i:]
}

// intern returns the qualified name b as a string shared by every tag of
// that name, checking it the first time it is seen.
func (s *scanner) intern(b []byte) (string, error) {
	h := uint32(len(b))
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619 // FNV-1a
	}
	slot := &s.recent[h>>24]
	if len(b) > 0 && *slot == string(b) {
		return *slot, nil
	}
	full, ok := s.names[string(b)]
	if ok {
		*slot = full
	} else {
		if !nameRE.Match(b) {
			return "", s.syntax("invalid XML name: " + strconv.Quote(string(b)))
		}
		full = string(b)
		if len(s.names) < 4096 {
			s.names[full] = full
			*slot = full
		}
	}
	return full, nil
}

// split splits a qualified name's prefix off, as RawToken does (Space is
// the prefix, not a namespace URL).
func split(full string) xml.Name {
	if i := indexColon(full); i >= 0 {
		return xml.Name{Space: full[:i], Local: full[i+1:]}
	}
	return xml.Name{Local: full}
}

// value is an attribute value as a string; short ones, such as the
// currency of every amount, are interned.
func (s *scanner) value(b []byte) string {
	if len(b) > 8 {
		return string(b)
	}
	v, ok := s.vals[string(b)]
	if !ok {
		v = string(b)
		if len(s.vals) < 256 {
			s.vals[v] = v
		}
	}
	return v
}

func indexColon(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}
