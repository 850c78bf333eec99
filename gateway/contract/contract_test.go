package contract_test

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/gateway/contract"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// A small document with each kind of input the boundary handles.
const testDoc = `
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/things/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string, format: uuid}}
    get:
      operationId: getThing
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 10}}
        - {name: from, in: query, schema: {type: string, format: date}}
        - {name: full, in: query, schema: {type: boolean}}
        - {name: tag, in: query, schema: {type: array, items: {type: string}}}
        - {name: since, in: query, schema: {type: string, anyOf: [{format: date}, {format: date-time}]}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Thing'}
            text/csv; charset=windows-1252:
              schema: {type: string}
        '404': {description: none}
    post:
      operationId: changeThing
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Change'}
      responses:
        '204': {description: done}
  /v1/uploads:
    post:
      operationId: upload
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [file, lines]
              additionalProperties: false
              properties:
                file: {type: string, format: binary}
                lines:
                  type: string
                  contentMediaType: application/json
                  contentSchema: {type: array, items: {$ref: '#/components/schemas/Line'}}
                draft: {type: boolean}
            encoding:
              file: {contentType: 'application/pdf, application/octet-stream'}
      responses:
        '201': {description: stored}
components:
  schemas:
    Line:
      type: object
      required: [amount]
      additionalProperties: false
      properties:
        amount: {type: number, minimum: 0.01}
        note: {type: string, maxLength: 5}
    Part:
      type: object
      properties:
        amount: {type: number}
    Change:
      type: object
      required: [date, lines]
      additionalProperties: false
      properties:
        date: {type: string, format: date}
        name: {type: string}
        lines: {type: array, minItems: 1, items: {$ref: '#/components/schemas/Line'}}
    Thing:
      type: object
      required: [id]
      properties:
        id: {type: string}
        parts:
          allOf:
            - {$ref: '#/components/schemas/Part'}
            - type: object
              properties:
                extra: {type: string}
`

func load(t *testing.T, opts ...contract.Option) *contract.Doc {
	t.Helper()
	d, err := contract.Load([]byte(testDoc), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// details renders a refusal as "STATUS CODE field: issue; ..." for diffs.
func details(err error) string {
	if err == nil {
		return "ok"
	}
	e := errs.As(err)
	if e == nil {
		return "not an *errs.Error: " + err.Error()
	}
	var b strings.Builder
	b.WriteString(e.Code)
	for _, d := range e.Details {
		b.WriteString(" | " + d.Field + ": " + d.Issue)
	}
	return b.String()
}

func TestCheckRequestBody(t *testing.T) {
	op := load(t).Operation("POST", "/v1/things/{id}")
	id := url.Values{"id": {"5d2e7c10-9a4b-4c3e-8f61-2b7d0e9a1c34"}}
	tests := []struct {
		name, body, want string
	}{
		{"valid", `{"date":"2025-03-14","lines":[{"amount":1.5,"note":"a\tb"}]}`, "ok"},
		{"missing fields", `{}`, "INVALID_INPUT | date: required | lines: required"},
		{"empty body is an empty object", ``, "INVALID_INPUT | date: required | lines: required"},
		{"wrong type names the path", `{"date":"2025-03-14","lines":[{"amount":"1.50"}]}`, "INVALID_INPUT | lines[0].amount: must be a number"},
		{"unknown field", `{"date":"2025-03-14","lines":[{"amount":1}],"x":1}`, "INVALID_INPUT | x: unknown field"},
		{"case-variant name is unknown", `{"DATE":"2025-03-14","date":"2025-03-14","lines":[{"amount":1}]}`, "INVALID_INPUT | DATE: unknown field"},
		{"duplicate name", `{"date":"2025-03-14","date":"2025-03-15","lines":[{"amount":1}]}`, "INVALID_INPUT | date: duplicate field name"},
		{"duplicate nested name", `{"date":"2025-03-14","lines":[{"amount":1,"amount":2}]}`, "INVALID_INPUT | lines[0].amount: duplicate field name"},
		{"trailing data", `{"date":"2025-03-14","lines":[{"amount":1}]} {}`, "INVALID_INPUT | : unexpected data after the JSON value"},
		{"NUL", `{"date":"2025-03-14","name":"a\u0000b","lines":[{"amount":1}]}`, "INVALID_INPUT | name: must not contain NUL characters"},
		{"control character", `{"date":"2025-03-14","name":"a\u001bb","lines":[{"amount":1}]}`, "INVALID_INPUT | name: must not contain control characters"},
		{"lone surrogate", `{"date":"2025-03-14","name":"a\ud800b","lines":[{"amount":1}]}`, "INVALID_INPUT | name: invalid UTF-8 or a lone surrogate in text"},
		{"invalid UTF-8", "{\"date\":\"2025-03-14\",\"name\":\"a\xffb\",\"lines\":[{\"amount\":1}]}", "INVALID_INPUT | name: invalid UTF-8 or a lone surrogate in text"},
		{"year 0", `{"date":"0000-01-01","lines":[{"amount":1}]}`, "INVALID_INPUT | date: must be a date from 1900-01-01 to 9999-12-31"},
		{"no such day", `{"date":"2025-02-30","lines":[{"amount":1}]}`, "INVALID_INPUT | date: must be a date YYYY-MM-DD"},
		{"five-digit year", `{"date":"10000-01-01","lines":[{"amount":1}]}`, "INVALID_INPUT | date: must be a date YYYY-MM-DD"},
		{"huge number", `{"date":"2025-03-14","lines":[{"amount":1e400}]}`, "ok"},
		{"over-long", `{"date":"2025-03-14","lines":[{"amount":1,"note":"abcdef"}]}`, "INVALID_INPUT | lines[0].note: at most 5 characters"},
		{"not JSON", `date=1`, "INVALID_INPUT | : malformed JSON at offset 0"},
		{"cut short", `{"date":`, "INVALID_INPUT | : the JSON value is cut short"},
		{"deep nesting", strings.Repeat("[", 100) + strings.Repeat("]", 100), "INVALID_INPUT | " + strings.Repeat("[0]", 33) + ": nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := details(op.CheckRequest(id, nil, "application/json", []byte(tt.body)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestCheckRequestParams(t *testing.T) {
	op := load(t).Operation("GET", "/v1/things/{id}")
	id := url.Values{"id": {"5d2e7c10-9a4b-4c3e-8f61-2b7d0e9a1c34"}}
	tests := []struct {
		name   string
		params url.Values
		query  string
		body   string
		want   string
	}{
		{"valid", id, "limit=3&from=2025-01-01&full=true&tag=a&tag=b", "", "ok"},
		{"repeated", id, "limit=1&limit=abc", "", "INVALID_INPUT | limit: must be given once"},
		{"not an integer", id, "limit=abc", "", "INVALID_INPUT | limit: must be an integer"},
		{"out of range", id, "limit=11", "", "INVALID_INPUT | limit: must be at most 10"},
		{"unknown", id, "limti=1", "", "INVALID_INPUT | limti: unknown query parameter"},
		{"NUL in query", id, "tag=a%00b", "", "INVALID_INPUT | tag: must not contain NUL characters"},
		{"invalid UTF-8 in query", id, "tag=%ff", "", "INVALID_INPUT | tag: must be valid UTF-8"},
		{"line break in query", id, "tag=a%0Ab", "", "INVALID_INPUT | tag: must not contain tabs or line breaks"},
		{"boolean spelled otherwise", id, "full=yes", "", "INVALID_INPUT | full: must be a boolean"},
		{"bad date", id, "from=0000-01-01", "", "INVALID_INPUT | from: must be a date from 1900-01-01 to 9999-12-31"},
		{"date or time: a date", id, "since=2025-03-01", "", "ok"},
		{"date or time: a time", id, "since=2025-03-01T08:00:00%2B01:00", "", "ok"},
		{"date or time: year 0", id, "since=0000-03-01T08:00:00Z", "", "INVALID_INPUT | since: must be a date YYYY-MM-DD | since: must be a time from 1900 to 9999"},
		{"NUL in path names nothing", url.Values{"id": {"a\x00"}}, "", "", "NOT_FOUND"},
		{"a body where none is documented", id, "", `{"a":1}`, "INVALID_INPUT | : must be empty"},
		{"an empty object is no body", id, "", ` { } `, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got := details(op.CheckRequest(tt.params, q, "application/json", []byte(tt.body)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

type part struct {
	name, file, contentType, value string
}

func multipartBody(t *testing.T, parts ...part) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.file != "" {
			cd += `; filename="` + p.file + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p.value))
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

func TestCheckRequestForm(t *testing.T) {
	op := load(t).Operation("POST", "/v1/uploads")
	file := part{"file", "r.pdf", "application/pdf", "%PDF-1.4"}
	lines := part{"lines", "", "", `[{"amount":1}]`}
	tests := []struct {
		name  string
		parts []part
		want  string
	}{
		{"valid", []part{file, lines, {"draft", "", "", "true"}}, "ok"},
		{"octet-stream file", []part{{"file", "r.pdf", "application/octet-stream", "x"}, lines}, "ok"},
		{"file type is the service's to judge", []part{{"file", "r.exe", "application/x-msdownload", "x"}, lines}, "ok"},
		{"missing file", []part{lines}, "INVALID_INPUT | file: required"},
		{"unknown field", []part{file, lines, {"x", "", "", "1"}}, "INVALID_INPUT | x: unknown field"},
		{"repeated field", []part{file, lines, lines}, "INVALID_INPUT | lines: must be given once"},
		{"boolean field", []part{file, lines, {"draft", "", "", "ja"}}, "INVALID_INPUT | draft: must be a boolean"},
		{"JSON field checked strictly", []part{file, {"lines", "", "", `[{"amount":1,"amount":2}]`}}, "INVALID_INPUT | lines[0].amount: duplicate field name"},
		{"JSON field checked by its schema", []part{file, {"lines", "", "", `[{"amount":"1"}]`}}, "INVALID_INPUT | lines[0].amount: must be a number"},
		{"NUL in a field", []part{file, {"lines", "", "", "[\x00]"}}, "INVALID_INPUT | lines: must not contain NUL characters"},
		{"control character in a file name", []part{{"file", "a\x01.pdf", "application/pdf", "x"}, lines}, "INVALID_INPUT | : could not read the form"},
		{"file field without a file name", []part{{"file", "", "", "x"}, lines}, "INVALID_INPUT | file: must be a file part with a file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := multipartBody(t, tt.parts...)
			got := details(op.CheckRequest(nil, nil, ct, body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func csvUndocumented(charset string) string {
	ct := "text/plain"
	if charset != "" {
		ct = "text/csv; charset=" + charset
	}
	return `content type "` + ct + `" is not documented for status 200 (documented: application/json, text/csv; charset=windows-1252)`
}

func TestCheckResponse(t *testing.T) {
	open, closed := load(t).Operation("GET", "/v1/things/{id}"), load(t, contract.ClosedResponses()).Operation("GET", "/v1/things/{id}")
	tests := []struct {
		name        string
		status      int
		ct, body    string
		open, close string
	}{
		{"as documented", 200, "application/json", `{"id":"a","parts":{"amount":1,"extra":"x"}}`, "ok", "ok"},
		{"undeclared field", 200, "application/json", `{"id":"a","period":"2025-01"}`, "ok", "response body differs from the document:\n  period: unknown field"},
		{"undeclared field in an allOf", 200, "application/json", `{"id":"a","parts":{"amount":1,"more":1}}`, "ok", "response body differs from the document:\n  parts.more: unknown field"},
		{"wrong type", 200, "application/json", `{"id":1}`, "response body differs from the document:\n  id: must be a string", "response body differs from the document:\n  id: must be a string"},
		{"undocumented status", 500, "application/json", `{}`, "status 500 is not documented", "status 500 is not documented"},
		{"content type with its documented parameter", 200, "text/csv; charset=windows-1252", "a;b\r\n", "ok", "ok"},
		{"content type without it", 200, "text/csv; charset=utf-8", "a;b\r\n", csvUndocumented("utf-8"), csvUndocumented("utf-8")},
		{"undocumented content type", 200, "text/plain", `x`, csvUndocumented(""), csvUndocumented("")},
		{"no body documented", 404, "", ``, "ok", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				op   *contract.Operation
				want string
			}{{open, tt.open}, {closed, tt.close}} {
				got := "ok"
				if err := c.op.CheckResponse(tt.status, tt.ct, []byte(tt.body)); err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}
		})
	}
}

// TestDocumentLoads compiles the real document in both modes; every route's
// operation is found by gateway.New, which refuses to start otherwise.
func TestDocumentLoads(t *testing.T) {
	for _, opts := range [][]contract.Option{nil, {contract.ClosedResponses()}} {
		d, err := contract.Load(contracts.OpenAPI, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Operations()) == 0 {
			t.Fatal("no operations")
		}
	}
}
