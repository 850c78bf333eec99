package csvimport

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"

	"github.com/ledgerplatform/ledger/services/bank"
)

// peekSize is how much of the file's start the encoding and the header
// row are looked for in.
const peekSize = 64 << 10

// Encoding names what decode settled on; Detect answers it for tests and
// logs.
type Encoding string

const (
	UTF8        Encoding = "UTF-8"
	Windows1252 Encoding = "Windows-1252"
	ISO885915   Encoding = "ISO-8859-15"
)

// DetectEncoding answers the encoding Parse reads a file starting with
// head in (see the package documentation for the rule).
func DetectEncoding(head []byte) Encoding {
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) || validUTF8Prefix(head, len(head) >= peekSize) {
		return UTF8
	}
	for _, c := range head {
		if c >= 0x80 && c <= 0x9f {
			return Windows1252
		}
	}
	if bytes.IndexByte(head, 0xa4) >= 0 {
		return ISO885915
	}
	return Windows1252
}

// validUTF8Prefix reports whether b is valid UTF-8, allowing a character
// cut off at the end when b is only the start of the file.
func validUTF8Prefix(b []byte, truncated bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if !truncated {
		return false
	}
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			return !utf8.FullRune(b[len(b)-i:]) && utf8.Valid(b[:len(b)-i])
		}
	}
	return false
}

// decode answers r as UTF-8 text, without a byte order mark.
func decode(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, peekSize)
	head, err := br.Peek(peekSize)
	if err != nil && err != io.EOF {
		return nil, err
	}
	switch DetectEncoding(head) {
	case UTF8:
		if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
			_, _ = br.Discard(3)
		}
		// UTF-8 as far as the encoding is told from; a Windows-1252 umlaut
		// further on is read as one (see bank.UTF8Else).
		return transform.NewReader(br, bank.UTF8Else(charmap.Windows1252)), nil
	case ISO885915:
		return transform.NewReader(br, charmap.ISO8859_15.NewDecoder()), nil
	default:
		return transform.NewReader(br, charmap.Windows1252.NewDecoder()), nil
	}
}

// detectDelimiter finds the delimiter under which a header row appears
// in head (the decoded start of the file): ";", "," or tab, the one whose
// header row comes first (";" on a tie, the German default). When none
// has one, the error names what the closest row lacks.
func detectDelimiter(head []byte) (rune, error) {
	bestLine, bestDelim := -1, rune(0)
	var closest []string
	closestKnown := -1
	for _, d := range []rune{';', ',', '\t'} {
		cr := csv.NewReader(bytes.NewReader(head))
		cr.Comma = d
		cr.FieldsPerRecord = -1
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				continue
			}
			if err != nil {
				break
			}
			_, ok, known := mapHeader(rec)
			if ok {
				line, _ := cr.FieldPos(0)
				if bestLine < 0 || line < bestLine {
					bestLine, bestDelim = line, d
				}
				break
			}
			if known > closestKnown {
				closestKnown, closest = known, rec
			}
		}
	}
	if bestLine >= 0 {
		return bestDelim, nil
	}
	return 0, &MissingColumnsError{Missing: missing(closest), Header: closest}
}
