// Package strictjson holds the rules both strict JSON readers apply: the
// gateway's contract check (gateway/contract) and the services' decoding
// (pkg/natsx). One rule for what text is acceptable, one way to name the
// field a problem is in, one wording of a malformed body, so a client reads
// the same detail whichever side refused.
package strictjson

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// TextIssue returns why s is not acceptable text, or "". Text is valid
// UTF-8 without control characters; multiLine allows tab, CR and LF,
// which a note or description may hold but a name, an id or a query
// value not. NUL is refused by Postgres, and the other controls would
// surprise whoever reads the text later.
func TextIssue(s string, multiLine bool) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			if !multiLine {
				return "must not contain tabs or line breaks"
			}
		case r == 0:
			return "must not contain NUL characters"
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return "must not contain control characters"
		}
	}
	return ""
}

// Path turns the tokens of a JSON pointer or a schema location
// (["lines", "0", "amount"]) into the field path details name
// ("lines[0].amount"). Numeric tokens are taken as array indexes, which is
// what they are in every request schema (none has a map with numeric keys).
func Path(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		if _, err := strconv.Atoi(tok); err == nil && tok != "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// PointerPath is Path of a JSON pointer.
func PointerPath(ptr jsontext.Pointer) string {
	var toks []string
	for tok := range ptr.Tokens() {
		toks = append(toks, tok)
	}
	return Path(toks)
}

// Join appends a member name or a relative path to a field path:
// "lines[0]" + "amount", "lines" + "[0].amount".
func Join(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	case strings.HasPrefix(name, "["):
		return path + name
	}
	return path + "." + name
}

// SyntaxError words a jsontext error for the client: the field where it
// happened (at, when the error names none) and what was wrong, never the
// decoder's internals.
func SyntaxError(err error, at string) error {
	field, issue := at, "malformed JSON"
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		if p := PointerPath(se.JSONPointer); p != "" {
			field = p
		}
		switch msg := se.Err.Error(); {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			issue = "duplicate field name"
		case strings.Contains(msg, "UTF-8"), strings.Contains(msg, "surrogate"):
			issue = "invalid UTF-8 or a lone surrogate in text"
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			// The whole value is incomplete, not the member it stops in.
			field, issue = "", "the JSON value is cut short"
		default:
			issue = "malformed JSON at offset " + strconv.FormatInt(se.ByteOffset, 10)
		}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		field, issue = "", "the JSON value is cut short"
	}
	return errs.Invalid("malformed request body", errs.Field(field, issue))
}
