package natsx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

// Services decode request bodies as strictly as the gateway checks them,
// in depth behind it: a body reaching a service some other way (another
// service, a replayed message) meets the same rules, and no Go type ever
// shows in an answer.

// strict are the decoding rules of Decode; most are v2's defaults, spelled
// out because they are the point.
var strict = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// Decode strictly decodes a JSON body into v. Member names match exactly;
// unknown and repeated members, invalid UTF-8 (lone surrogates included),
// text with NUL or other control characters but tab, CR and LF, trailing
// data and malformed JSON are INVALID_INPUT, each with a detail naming
// the field by its path ("lines[0].amount") and the rule it broke. An
// empty body decodes as {}. UnmarshalJSON methods (money amounts) still
// decide their own values; their errors are written for clients.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if mayHideControls(body) {
		if err := CheckJSON(body); err != nil {
			return err
		}
	}
	if err := jsonv2.Unmarshal(body, v, strict); err != nil {
		var syn *jsontext.SyntacticError
		if errors.As(err, &syn) {
			// The walk words syntax errors best (trailing data, the field).
			if cerr := CheckJSON(body); cerr != nil {
				return cerr
			}
			return strictjson.SyntaxError(err, "")
		}
		field, issue := semanticDetail(err)
		return errs.Invalid("invalid request body", errs.Field(field, issue))
	}
	return nil
}

// mayHideControls says whether body could carry a control character in a
// string: only as an escape (\u0000), or as DEL or a C1 character (raw
// bytes 0x7f, 0xc2 0x80-0x9f), since raw C0 bytes are not JSON. Most
// bodies have none, and Unmarshal checks everything else CheckJSON does,
// so they skip the walk.
func mayHideControls(body []byte) bool {
	return bytes.Contains(body, []byte(`\u`)) || bytes.IndexByte(body, 0x7f) >= 0 || bytes.IndexByte(body, 0xc2) >= 0
}

// CheckJSON checks that body is exactly one JSON value of text a service
// accepts: well-formed, no repeated member names, valid UTF-8 without lone
// surrogates, no control characters in strings or names but tab, CR and
// LF, nothing after the value. It is Decode without the Go value, for
// bodies a service reads member by member.
func CheckJSON(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), strict)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return strictjson.SyntaxError(err, "")
		}
		if tok.Kind() == '"' {
			if issue := strictjson.TextIssue(tok.String(), true); issue != "" {
				return errs.Invalid("invalid text in the request body", errs.Field(stackPath(dec), issue))
			}
		}
		if dec.StackDepth() == 0 {
			break
		}
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errs.Invalid("malformed request body", errs.Field("", "unexpected data after the JSON value"))
	}
	return nil
}

// stackPath is the path of the token dec read last: the decoder knows
// which levels are arrays, so a numeric member name stays a name.
func stackPath(dec *jsontext.Decoder) string {
	var b strings.Builder
	level := 0
	for tok := range dec.StackPointer().Tokens() {
		level++
		if kind, _ := dec.StackIndex(level); kind == '[' {
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

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// semanticDetail names the field of a well-formed body that does not fit
// the request type, and the rule it broke in words.
func semanticDetail(err error) (field, issue string) {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) {
		return "", "malformed JSON"
	}
	field = strictjson.PointerPath(se.JSONPointer)
	t := se.GoType
	switch {
	case errors.Is(se.Err, jsonv2.ErrUnknownName):
		return field, "unknown field"
	case t != nil && se.Err != nil && reflect.PointerTo(t).Implements(unmarshalerType):
		// The type's own UnmarshalJSON refused the value (money amounts);
		// its errors are written for clients.
		return field, strings.TrimPrefix(se.Err.Error(), "json: ")
	}
	return field, typeRule(t, se.Err)
}

// typeRule is what a value of Go type t must be, in JSON's words.
func typeRule(t reflect.Type, err error) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "invalid value"
	}
	outOfRange := errors.Is(err, strconv.ErrRange)
	switch t.Kind() {
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if outOfRange {
			return "must be an integer from " + strconv.FormatInt(-1<<(t.Bits()-1), 10) + " to " + strconv.FormatInt(1<<(t.Bits()-1)-1, 10)
		}
		return "must be an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if outOfRange {
			return "must be an integer from 0 to " + strconv.FormatUint(1<<t.Bits()-1, 10)
		}
		return "must be a non-negative integer"
	case reflect.Float32, reflect.Float64:
		if outOfRange {
			return "must be a number within range"
		}
		return "must be a number"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Struct, reflect.Map:
		return "must be an object"
	}
	return "invalid value"
}
