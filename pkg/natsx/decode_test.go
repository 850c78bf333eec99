package natsx_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

type decLine struct {
	Account string          `json:"account"`
	Amount  money.Amount    `json:"amount"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

type decBody struct {
	Name  string    `json:"name"`
	Count int32     `json:"count"`
	Size  uint8     `json:"size"`
	Rate  float64   `json:"rate"`
	Flag  bool      `json:"flag"`
	Note  *string   `json:"note"`
	Tags  []string  `json:"tags"`
	Lines []decLine `json:"lines"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	note := "zwei\tZeilen\r\nhier"
	tests := []struct {
		name string
		body string
		want decBody
		err  *errs.Error
	}{
		{name: "every field", body: `{"name":"Büro","count":-3,"size":7,"rate":0.19,"flag":true,"note":"zwei\tZeilen\r\nhier","tags":["a","b"],
			"lines":[{"account":"6815","amount":"119.00","meta":{"x":[1,"y"]}}]}`,
			want: decBody{Name: "Büro", Count: -3, Size: 7, Rate: 0.19, Flag: true, Note: &note, Tags: []string{"a", "b"},
				Lines: []decLine{{Account: "6815", Amount: money.MustParse("119.00"), Meta: json.RawMessage(`{"x":[1,"y"]}`)}}}},
		{name: "empty body", body: ""},
		{name: "white space", body: " \n\t"},
		{name: "nulls", body: `{"name":null,"note":null,"tags":null,"lines":null}`},
		{name: "white space around", body: " {\"name\":\"x\"} \n", want: decBody{Name: "x"}},

		// Names match exactly and only known ones.
		{name: "other case", body: `{"Name":"x"}`, err: invalid("invalid request body", "Name", "unknown field")},
		{name: "unknown field", body: `{"name":"x","admin":true}`, err: invalid("invalid request body", "admin", "unknown field")},
		{name: "unknown nested field", body: `{"lines":[{"account":"1"},{"account":"2","vat":19}]}`, err: invalid("invalid request body", "lines[1].vat", "unknown field")},

		// Malformed JSON.
		{name: "duplicate field", body: `{"name":"x","name":"y"}`, err: invalid("malformed request body", "name", "duplicate field name")},
		{name: "duplicate in raw member", body: `{"lines":[{"meta":{"a":1,"a":2}}]}`, err: invalid("malformed request body", "lines[0].meta.a", "duplicate field name")},
		{name: "invalid UTF-8", body: "{\"name\":\"B\xfcro\"}", err: invalid("malformed request body", "name", "invalid UTF-8 or a lone surrogate in text")},
		{name: "lone surrogate", body: `{"tags":["ok","\ud800"]}`, err: invalid("malformed request body", "tags[1]", "invalid UTF-8 or a lone surrogate in text")},
		{name: "trailing value", body: `{"name":"x"} {}`, err: invalid("malformed request body", "", "unexpected data after the JSON value")},
		{name: "trailing garbage", body: `{"name":"x"}x`, err: invalid("malformed request body", "", "unexpected data after the JSON value")},
		{name: "cut short", body: `{"name":"x"`, err: invalid("malformed request body", "", "the JSON value is cut short")},
		{name: "cut short in a member", body: `{"lines":[{"account":`, err: invalid("malformed request body", "", "the JSON value is cut short")},
		{name: "missing colon", body: `{"name" "x"}`, err: invalid("malformed request body", "name", "malformed JSON at offset 8")},

		// Text: tab, CR and LF only.
		{name: "NUL", body: `{"name":"a\u0000b"}`, err: invalid("invalid text in the request body", "name", "must not contain NUL characters")},
		{name: "escape character", body: `{"tags":["a","\u001b[31m"]}`, err: invalid("invalid text in the request body", "tags[1]", "must not contain control characters")},
		{name: "DEL", body: `{"name":"a\u007f"}`, err: invalid("invalid text in the request body", "name", "must not contain control characters")},
		{name: "C1 control", body: `{"name":"a\u0085"}`, err: invalid("invalid text in the request body", "name", "must not contain control characters")},
		{name: "raw DEL", body: "{\"name\":\"a\x7f\"}", err: invalid("invalid text in the request body", "name", "must not contain control characters")},
		{name: "raw C1 control", body: "{\"name\":\"a\xc2\x85\"}", err: invalid("invalid text in the request body", "name", "must not contain control characters")},
		{name: "raw text beside C1", body: "{\"name\":\"§ 14\"}", want: decBody{Name: "§ 14"}},
		{name: "control in a name", body: `{"na\u0001me":"x"}`, err: invalid("invalid text in the request body", "na\x01me", "must not contain control characters")},
		{name: "control in raw member", body: `{"lines":[{"meta":{"0":"\u0000"}}]}`, err: invalid("invalid text in the request body", "lines[0].meta.0", "must not contain NUL characters")},

		// Types, in JSON's words.
		{name: "number for string", body: `{"name":1}`, err: invalid("invalid request body", "name", "must be a string")},
		{name: "string for integer", body: `{"count":"1"}`, err: invalid("invalid request body", "count", "must be an integer")},
		{name: "fraction for integer", body: `{"count":1.5}`, err: invalid("invalid request body", "count", "must be an integer")},
		{name: "integer out of range", body: `{"count":3000000000}`, err: invalid("invalid request body", "count", "must be an integer from -2147483648 to 2147483647")},
		{name: "negative unsigned", body: `{"size":-1}`, err: invalid("invalid request body", "size", "must be a non-negative integer")},
		{name: "unsigned out of range", body: `{"size":256}`, err: invalid("invalid request body", "size", "must be an integer from 0 to 255")},
		{name: "string for number", body: `{"rate":"0.19"}`, err: invalid("invalid request body", "rate", "must be a number")},
		{name: "string for boolean", body: `{"flag":"true"}`, err: invalid("invalid request body", "flag", "must be a boolean")},
		{name: "number for pointer to string", body: `{"note":5}`, err: invalid("invalid request body", "note", "must be a string")},
		{name: "object for array", body: `{"lines":{}}`, err: invalid("invalid request body", "lines", "must be an array")},
		{name: "number for object", body: `{"lines":[1]}`, err: invalid("invalid request body", "lines[0]", "must be an object")},
		{name: "array at the top", body: `[]`, err: invalid("invalid request body", "", "must be an object")},
		{name: "amount not a number", body: `{"lines":[{"amount":"abc"}]}`, err: invalid("invalid request body", "lines[0].amount", `amount "abc" is not a decimal number`)},
		{name: "amount null", body: `{"lines":[{"amount":null}]}`, err: invalid("invalid request body", "lines[0].amount", "amount must not be null")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got decBody
			err := natsx.Decode([]byte(tc.body), &got)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b money.Amount) bool { return a.Equal(b.Decimal) })); diff != "" {
					t.Fatalf("decoded (-want +got):\n%s", diff)
				}
				return
			}
			e := errs.As(err)
			if e == nil {
				t.Fatalf("Decode: %v, want %+v", err, tc.err)
			}
			if diff := cmp.Diff(tc.err, e, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			for _, d := range e.Details {
				if strings.Contains(d.Issue, "Go ") || strings.Contains(d.Issue, "natsx") || strings.Contains(d.Issue, "money.") || strings.Contains(d.Issue, "int32") {
					t.Fatalf("detail %+v names a Go type", d)
				}
			}
		})
	}
}

func invalid(msg, field, issue string) *errs.Error {
	return errs.Invalid(msg, errs.Field(field, issue))
}

// TestCheckJSON: one value of acceptable text, whatever its shape.
func TestCheckJSON(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]*errs.Error{
		`{"label":"x","rate":19}`: nil,
		`[1,"a",{"b":null}]`:      nil,
		`"x"`:                     nil,
		``:                        invalid("malformed request body", "", "the JSON value is cut short"),
		`{"label":"x"}{}`:         invalid("malformed request body", "", "unexpected data after the JSON value"),
		`{"label":"\u0000"}`:      invalid("invalid text in the request body", "label", "must not contain NUL characters"),
		`{"a":1,"a":1}`:           invalid("malformed request body", "a", "duplicate field name"),
	} {
		err := natsx.CheckJSON([]byte(body))
		var got *errs.Error
		if err != nil {
			got = errs.As(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("CheckJSON(%s) (-want +got):\n%s", body, diff)
		}
	}
}
