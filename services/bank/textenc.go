package bank

import (
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// UTF8Else is a transformer for statement files whose single-byte
// encoding is declared or guessed but not to be trusted: a valid UTF-8
// sequence stays what it is, any other byte is read in cm.
//
// Two parsers need it. A camt file declared ISO-8859-1 but written in
// UTF-8 would otherwise read "MÃ¼ller". A Sparkasse CSV export has ASCII
// headers ("Beguenstigter", "Waehrung"), so a long file may show its
// first Windows-1252 umlaut only after the part its encoding is told
// from, and that byte would otherwise become U+FFFD. In text that really
// is in a single-byte encoding, a valid multi-byte UTF-8 sequence ("Ã¼"
// written on purpose) is next to impossible, so nothing is read twice.
func UTF8Else(cm *charmap.Charmap) transform.Transformer { return utf8Else{cm} }

type utf8Else struct{ cm *charmap.Charmap }

func (utf8Else) Reset() {}

func (u utf8Else) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
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
				return nDst, nSrc, transform.ErrShortSrc // a sequence cut by the buffer
			}
			r = u.cm.DecodeByte(c)
		}
		if nDst+utf8.RuneLen(r) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += utf8.EncodeRune(dst[nDst:], r)
		nSrc += size
	}
	return nDst, nSrc, nil
}
