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
		return transform.NewReader(br, lateWindows1252{}), nil
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

// lateWindows1252 passes UTF-8 through and reads a byte that is not
// UTF-8 as Windows-1252. A Sparkasse export writes its headers in ASCII
// ("Beguenstigter", "Waehrung"), so a long file may show its first
// Windows-1252 umlaut ("Müller") only after the 64 KB the encoding is
// told from; such a byte would otherwise become U+FFFD. A Windows-1252
// text is never valid UTF-8 where it has umlauts, so nothing valid is
// read twice.
type lateWindows1252 struct{ transform.NopResetter }

func (lateWindows1252) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		c := src[nSrc]
		if c < utf8.RuneSelf {
			if nDst >= len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = c
			nDst++
			nSrc++
			continue
		}
		r, size := utf8.DecodeRune(src[nSrc:])
		if r == utf8.RuneError && size == 1 {
			if !atEOF && !utf8.FullRune(src[nSrc:]) {
				return nDst, nSrc, transform.ErrShortSrc // a rune cut by the buffer
			}
			r = charmap.Windows1252.DecodeByte(c)
		}
		if nDst+utf8.RuneLen(r) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += utf8.EncodeRune(dst[nDst:], r)
		nSrc += size
	}
	return nDst, nSrc, nil
}
