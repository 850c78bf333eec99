package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// maxDepth bounds nesting: no operation's input nests deeper than a few
// levels, and a deeply nested body should cost nothing to refuse.
const maxDepth = 32

// DecodeJSON reads one JSON value strictly: duplicate member names, invalid
// UTF-8, lone surrogates, trailing data and nesting deeper than maxDepth are
// refused, and every string (member names too) must be text (see checkText).
// Numbers stay json.Number, so nothing is rounded before the schema sees
// it. A refusal is INVALID_INPUT naming the field by its path.
func DecodeJSON(body []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	v, err := decodeValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errs.Invalid("malformed request body", errs.Field("", "unexpected data after the JSON value"))
	}
	return v, nil
}

func decodeValue(dec *jsontext.Decoder, path string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errs.Invalid("malformed request body", errs.Field(path, "nested too deeply"))
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, syntaxError(err, path)
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '"':
		s := tok.String()
		if issue := checkText(s, true); issue != "" {
			return nil, errs.Invalid("invalid text", errs.Field(path, issue))
		}
		return s, nil
	case '[':
		arr := []any{}
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec, path+"["+strconv.Itoa(len(arr))+"]", depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, path)
		}
		return arr, nil
	case '{':
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, syntaxError(err, path)
			}
			key := name.String()
			field := join(path, key)
			if issue := checkText(key, false); issue != "" {
				return nil, errs.Invalid("invalid field name", errs.Field(field, issue))
			}
			v, err := decodeValue(dec, field, depth+1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, path)
		}
		return obj, nil
	}
	return nil, errs.Invalid("malformed request body", errs.Field(path, "not a JSON value"))
}

// syntaxError words a jsontext error for the client: the field where it
// happened and what was wrong, never the decoder's internals.
func syntaxError(err error, path string) error {
	issue := "malformed JSON"
	var se *jsontext.SyntacticError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		issue = "the JSON value is cut short"
	} else if errors.As(err, &se) {
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			issue = "duplicate field name"
			if p := pointerPath(string(se.JSONPointer)); p != "" {
				path = p
			}
		case strings.Contains(se.Err.Error(), "UTF-8"), strings.Contains(se.Err.Error(), "surrogate"):
			issue = "invalid UTF-8 or a lone surrogate in text"
		default:
			issue = "malformed JSON at offset " + strconv.FormatInt(se.ByteOffset, 10)
		}
	}
	return errs.Invalid("malformed request body", errs.Field(path, issue))
}

// TextIssue says why s is not acceptable as a single-line value (a header,
// a name), or "".
func TextIssue(s string) string { return checkText(s, false) }

// checkText returns why s is not acceptable text, or "". Text is valid
// UTF-8 without control characters; multiLine allows tab, CR and LF, which
// a note or description may hold but a name, an id or a query value not.
func checkText(s string, multiLine bool) string {
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
		case r >= 0xd800 && r <= 0xdfff, r == utf8.RuneError:
			return "must be valid UTF-8"
		}
	}
	return ""
}

// join appends a member name to a field path: "lines[0]" + "amount".
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// pointerPath turns a JSON pointer ("/lines/0/amount") into a field path
// ("lines[0].amount"). Numeric tokens are taken as array indexes, which is
// what they are in every schema of the document.
func pointerPath(ptr string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		b.WriteString(segment(b.Len() == 0, tok))
	}
	return b.String()
}

func segment(first bool, tok string) string {
	if _, err := strconv.Atoi(tok); err == nil && tok != "" {
		return "[" + tok + "]"
	}
	if first {
		return tok
	}
	return "." + tok
}

// locationPath is pointerPath for the schema validator's token list.
func locationPath(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteString(segment(b.Len() == 0, tok))
	}
	return b.String()
}
