package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

// maxDetails bounds the details of one refusal; a client fixing its input
// needs the first problems, not a thousand.
const maxDetails = 20

// CheckRequest checks one call against the operation: path values are text
// (anything else names nothing: 404), every query parameter is documented,
// given once unless it is an array and valid for its schema, and the body
// is strict JSON or a multipart form valid for the request schema. A
// refusal is an *errs.Error; nil means the request is as documented.
func (o *Operation) CheckRequest(params, query url.Values, contentType string, body []byte) error {
	if err := o.CheckParams(params, query); err != nil {
		return err
	}
	return o.checkBody(contentType, body)
}

func (o *Operation) checkQuery(query url.Values) error {
	var details []errs.Detail
	for name, vs := range query {
		p := o.params["query:"+name]
		switch {
		case p == nil:
			details = append(details, errs.Field(name, "unknown query parameter"))
			continue
		case len(vs) > 1 && p.kind != "array":
			details = append(details, errs.Field(name, "must be given once"))
			continue
		}
		var v any = vs
		if p.kind == "array" {
			arr := make([]any, len(vs))
			for i, s := range vs {
				arr[i] = s
			}
			v = arr
		}
		for _, s := range vs {
			if issue := strictjson.TextIssue(s, false); issue != "" {
				details = append(details, errs.Field(name, issue))
				v = nil
				break
			}
		}
		if v == nil {
			continue
		}
		if p.kind != "array" {
			var ok bool
			if v, ok = scalarValue(vs[0], p.kind); !ok {
				details = append(details, errs.Field(name, "must be "+article(p.kind)))
				continue
			}
		}
		if err := p.schema.Validate(v); err != nil {
			details = append(details, validationDetails(err, name)...)
		}
	}
	for _, p := range o.params {
		if p.in == "query" && p.required && !query.Has(p.name) {
			details = append(details, errs.Field(p.name, "required"))
		}
	}
	return refusal("invalid query parameters", details)
}

// scalarValue converts a query value to the JSON type its schema declares.
func scalarValue(s, kind string) (any, bool) {
	switch kind {
	case "integer":
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return nil, false
		}
		return json.Number(s), true
	case "number":
		if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "xXpP_iInN") {
			return nil, false
		}
		return json.Number(s), true
	case "boolean":
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return nil, false
	}
	return s, true
}

func (o *Operation) checkBody(contentType string, body []byte) error {
	empty := len(bytes.TrimSpace(body)) == 0
	switch o.bodyType {
	case "":
		// Clients and MCP tool calls send {} to operations without a body.
		if !empty && !bytes.Equal(bytes.Join(bytes.Fields(body), nil), []byte("{}")) {
			return errs.Invalid("this operation takes no request body", errs.Field("", "must be empty"))
		}
		return nil
	case "multipart/form-data":
		if empty {
			return errs.Invalid("request body required", errs.Field("file", "required"))
		}
		_, err := o.StreamForm(contentType, bytes.NewReader(body), func(p FilePart) error {
			_, err := io.Copy(io.Discard, p.R)
			return err
		})
		return err
	}
	if empty {
		if o.bodyReq {
			body = []byte("{}")
		} else {
			return nil
		}
	}
	v, err := DecodeJSON(body)
	if err != nil {
		return err
	}
	if err := o.body.Validate(v); err != nil {
		return refusal("invalid request body", validationDetails(err, ""))
	}
	return nil
}

// form is what the multipart schema of an operation says of each part.
type form struct {
	fields   map[string]formField
	maxParts int
}

type formField struct {
	kind        string             // string, boolean, integer or number
	file        bool               // format: binary
	jsonContent *jsonschema.Schema // contentSchema of a JSON text field
}

// maxFormParts matches the services' limit on form parts.
const maxFormParts = 16

func compileForm(c *jsonschema.Compiler, doc map[string]any, loc string) (*form, error) {
	s := resolve(doc, loc)
	if ref, ok := s["$ref"].(string); ok {
		loc, s = ref, resolve(doc, ref)
	}
	props, _ := s["properties"].(map[string]any)
	f := &form{fields: map[string]formField{}, maxParts: maxFormParts}
	for name, p := range props {
		pm, _ := p.(map[string]any)
		ff := formField{kind: schemaType(doc, pm)}
		ff.file = pm["format"] == "binary" || pm["contentMediaType"] == "application/octet-stream"
		if pm["contentMediaType"] == "application/json" && pm["contentSchema"] != nil {
			sch, err := c.Compile(docURL + loc + "/properties/" + escape(name) + "/contentSchema")
			if err != nil {
				return nil, err
			}
			ff.jsonContent = sch
		}
		f.fields[name] = ff
	}
	return f, nil
}

// CheckResponse checks an answer against the operation: the status is
// documented, the content type is one documented for it, and a JSON body
// matches its schema.
func (o *Operation) CheckResponse(status int, contentType string, body []byte) error {
	media, ok := o.statusSchemas(status)
	if !ok {
		return fmt.Errorf("status %d is not documented", status)
	}
	if len(media) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("status %d documents no body, got %d bytes", status, len(body))
		}
		return nil
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	sch, ok := media[mt]
	if !ok {
		// A documented type with parameters (text/csv; charset=windows-1252)
		// matches an answer of that type with those parameters.
		for k, v := range media {
			kmt, kparams, err := mime.ParseMediaType(k)
			if err == nil && kmt == mt && sameParams(kparams, params) {
				sch, ok = v, true
			}
		}
	}
	if !ok {
		documented := make([]string, 0, len(media))
		for k := range media {
			documented = append(documented, k)
		}
		slices.Sort(documented)
		return fmt.Errorf("content type %q is not documented for status %d (documented: %s)", contentType, status, strings.Join(documented, ", "))
	}
	if sch == nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("response body is not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		var b strings.Builder
		for _, d := range validationDetails(err, "") {
			fmt.Fprintf(&b, "\n  %s: %s", cmpOr(d.Field, "(body)"), d.Issue)
		}
		return fmt.Errorf("response body differs from the document:%s", b.String())
	}
	return nil
}

func sameParams(want, got map[string]string) bool {
	for k, v := range want {
		if !strings.EqualFold(got[k], v) {
			return false
		}
	}
	return true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func refusal(msg string, details []errs.Detail) error {
	if len(details) == 0 {
		return nil
	}
	slices.SortStableFunc(details, func(a, b errs.Detail) int { return strings.Compare(a.Field, b.Field) })
	if len(details) > maxDetails {
		details = details[:maxDetails]
	}
	return errs.Invalid(msg, details...)
}

func prefixDetails(ds []errs.Detail, prefix string) []errs.Detail {
	out := make([]errs.Detail, len(ds))
	for i, d := range ds {
		out[i] = errs.Field(strictjson.Join(prefix, d.Field), d.Issue)
	}
	return out
}

var printer = message.NewPrinter(language.English)

// validationDetails flattens a schema validation error into one detail per
// failed rule, each naming the field by its path under prefix.
func validationDetails(err error, prefix string) []errs.Detail {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []errs.Detail{errs.Field(prefix, "invalid")}
	}
	var out []errs.Detail
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		field := strictjson.Join(prefix, strictjson.Path(e.InstanceLocation))
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, errs.Field(strictjson.Join(field, m), "required"))
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				out = append(out, errs.Field(strictjson.Join(field, p), "unknown field"))
			}
		case *kind.Type:
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				want[i] = article(w)
			}
			out = append(out, errs.Field(field, "must be "+strings.Join(want, " or ")))
		case *kind.Format:
			issue := "must be a valid " + k.Want
			if k.Err != nil && (k.Want == "date" || k.Want == "date-time") {
				issue = k.Err.Error()
			}
			out = append(out, errs.Field(field, issue))
		case *kind.MinProperties:
			out = append(out, errs.Field(field, fmt.Sprintf("at least %d fields", k.Want)))
		case *kind.FalseSchema:
			out = append(out, errs.Field(field, "unknown field"))
		case *kind.MinLength:
			out = append(out, errs.Field(field, fmt.Sprintf("at least %d characters", k.Want)))
		case *kind.MaxLength:
			out = append(out, errs.Field(field, fmt.Sprintf("at most %d characters", k.Want)))
		case *kind.MinItems:
			out = append(out, errs.Field(field, fmt.Sprintf("at least %d items", k.Want)))
		case *kind.MaxItems:
			out = append(out, errs.Field(field, fmt.Sprintf("at most %d items", k.Want)))
		case *kind.Minimum:
			out = append(out, errs.Field(field, "must be at least "+ratString(k.Want)))
		case *kind.Maximum:
			out = append(out, errs.Field(field, "must be at most "+ratString(k.Want)))
		case *kind.ExclusiveMinimum:
			out = append(out, errs.Field(field, "must be more than "+ratString(k.Want)))
		case *kind.ExclusiveMaximum:
			out = append(out, errs.Field(field, "must be less than "+ratString(k.Want)))
		case *kind.MultipleOf:
			out = append(out, errs.Field(field, "must be a multiple of "+ratString(k.Want)))
		case *kind.Pattern:
			out = append(out, errs.Field(field, "must match "+k.Want))
		case *kind.Enum:
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				want[i] = fmt.Sprint(w)
			}
			out = append(out, errs.Field(field, "must be one of "+strings.Join(want, ", ")))
		default:
			out = append(out, errs.Field(field, e.ErrorKind.LocalizedString(printer)))
		}
	}
	walk(ve)
	return dedupe(out)
}

func dedupe(ds []errs.Detail) []errs.Detail {
	seen := map[errs.Detail]bool{}
	out := ds[:0]
	for _, d := range ds {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// ratString writes a schema bound as the document does: 10, 0.01.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func article(kind string) string {
	switch kind {
	case "integer", "object", "array":
		return "an " + kind
	case "null":
		return "null"
	}
	return "a " + kind
}
