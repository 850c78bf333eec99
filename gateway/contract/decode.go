package contract

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

// maxDepth bounds nesting: no operation's input nests deeper than a few
// levels, and a deeply nested body should cost nothing to refuse.
const maxDepth = 32

// DecodeJSON reads one JSON value strictly: duplicate member names, invalid
// UTF-8, lone surrogates, trailing data and nesting deeper than maxDepth are
// refused, and every string (member names too) must be text (see strictjson.TextIssue).
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
		return nil, strictjson.SyntaxError(err, path)
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
		if issue := strictjson.TextIssue(s, true); issue != "" {
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
			return nil, strictjson.SyntaxError(err, path)
		}
		return arr, nil
	case '{':
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, strictjson.SyntaxError(err, path)
			}
			key := name.String()
			field := strictjson.Join(path, key)
			if issue := strictjson.TextIssue(key, false); issue != "" {
				return nil, errs.Invalid("invalid field name", errs.Field(field, issue))
			}
			v, err := decodeValue(dec, field, depth+1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, strictjson.SyntaxError(err, path)
		}
		return obj, nil
	}
	return nil, errs.Invalid("malformed request body", errs.Field(path, "not a JSON value"))
}
