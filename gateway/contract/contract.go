// Package contract makes contracts/openapi.yaml executable: the gateway
// checks every request against the operation the document describes before
// anything reaches a service, and tests check every response against it.
// The document is the one source of truth for what the API accepts and
// answers; a route is born under it the day its operation is written down.
package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

const docURL = "urn:ledger:openapi"

// Doc is the compiled document.
type Doc struct {
	ops map[string]*Operation // "METHOD /pattern"
}

// Operation is one documented method and path with its compiled schemas.
type Operation struct {
	ID      string
	Method  string
	Pattern string

	params    map[string]*param // by "in:name", in = path or query
	body      *jsonschema.Schema
	bodyType  string // "application/json", "multipart/form-data" or "" for none
	bodyReq   bool
	form      *form
	responses map[string]map[string]*jsonschema.Schema // status ("201", "default") -> media type -> schema (nil when undeclared)
}

type param struct {
	name, in string
	required bool
	schema   *jsonschema.Schema
	kind     string // the schema's type: string, integer, number, boolean or array
}

// Option adjusts Load.
type Option func(*options)

type options struct{ closed bool }

// ClosedResponses closes every object schema of the document that does not
// say otherwise, so a response field the document does not declare fails
// CheckResponse. Tests use it; the gateway does not check responses.
func ClosedResponses() Option { return func(o *options) { o.closed = true } }

// Load compiles the OpenAPI 3.1 document (YAML or JSON).
func Load(src []byte, opts ...Option) (*Doc, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	var y any
	if err := yaml.Unmarshal(src, &y); err != nil {
		return nil, fmt.Errorf("contract: parse document: %w", err)
	}
	js, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("contract: document as JSON: %w", err)
	}
	root, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, fmt.Errorf("contract: document as JSON: %w", err)
	}
	if o.closed {
		closeObjects(root)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "date", Validate: validDate})
	c.RegisterFormat(&jsonschema.Format{Name: "date-time", Validate: validDateTime})
	if err := c.AddResource(docURL, root); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	doc := root.(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	d := &Doc{ops: map[string]*Operation{}}
	for pattern, item := range paths {
		item, _ := item.(map[string]any)
		for method, raw := range item {
			m := strings.ToUpper(method)
			if !slices.Contains([]string{"GET", "PUT", "POST", "PATCH", "DELETE"}, m) {
				continue
			}
			op, err := compileOperation(c, doc, pattern, method, item, raw.(map[string]any))
			if err != nil {
				return nil, fmt.Errorf("contract: %s %s: %w", m, pattern, err)
			}
			d.ops[m+" "+pattern] = op
		}
	}
	return d, nil
}

// Operation returns the operation of a route, or nil.
func (d *Doc) Operation(method, pattern string) *Operation { return d.ops[method+" "+pattern] }

// Operations lists every operation, sorted by pattern and method.
func (d *Doc) Operations() []*Operation {
	out := make([]*Operation, 0, len(d.ops))
	for _, op := range d.ops {
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b *Operation) int {
		return strings.Compare(a.Pattern+" "+a.Method, b.Pattern+" "+b.Method)
	})
	return out
}

func compileOperation(c *jsonschema.Compiler, doc map[string]any, pattern, method string, item, raw map[string]any) (*Operation, error) {
	base := "#/paths/" + escape(pattern) + "/" + method
	op := &Operation{Method: strings.ToUpper(method), Pattern: pattern, params: map[string]*param{}, responses: map[string]map[string]*jsonschema.Schema{}}
	op.ID, _ = raw["operationId"].(string)

	// Path-level parameters first; the operation's own override them.
	for _, level := range []struct {
		loc  string
		list any
	}{{"#/paths/" + escape(pattern), item["parameters"]}, {base, raw["parameters"]}} {
		list, _ := level.list.([]any)
		for i, p := range list {
			loc := fmt.Sprintf("%s/parameters/%d", level.loc, i)
			pm, _ := p.(map[string]any)
			if ref, ok := pm["$ref"].(string); ok {
				loc = ref
				pm = resolve(doc, ref)
			}
			in, _ := pm["in"].(string)
			if in != "path" && in != "query" {
				continue // headers are the gateway's own business
			}
			name, _ := pm["name"].(string)
			sch, err := c.Compile(docURL + loc + "/schema")
			if err != nil {
				return nil, fmt.Errorf("parameter %s: %w", name, err)
			}
			required, _ := pm["required"].(bool)
			op.params[in+":"+name] = &param{name: name, in: in, required: required || in == "path", schema: sch, kind: schemaType(doc, pm["schema"])}
		}
	}

	if rb, ok := raw["requestBody"].(map[string]any); ok {
		loc := base + "/requestBody"
		if ref, ok := rb["$ref"].(string); ok {
			loc, rb = ref, resolve(doc, ref)
		}
		op.bodyReq, _ = rb["required"].(bool)
		content, _ := rb["content"].(map[string]any)
		for _, mt := range []string{"application/json", "multipart/form-data"} {
			if _, ok := content[mt]; !ok {
				continue
			}
			sloc := loc + "/content/" + escape(mt) + "/schema"
			sch, err := c.Compile(docURL + sloc)
			if err != nil {
				return nil, fmt.Errorf("request body: %w", err)
			}
			op.body, op.bodyType = sch, mt
			if mt == "multipart/form-data" {
				f, err := compileForm(c, doc, sloc)
				if err != nil {
					return nil, fmt.Errorf("request form: %w", err)
				}
				op.form = f
			}
			break
		}
		if op.bodyType == "" {
			return nil, fmt.Errorf("request body has neither application/json nor multipart/form-data")
		}
	}

	responses, _ := raw["responses"].(map[string]any)
	for status, r := range responses {
		loc := base + "/responses/" + escape(status)
		rm, _ := r.(map[string]any)
		if ref, ok := rm["$ref"].(string); ok {
			loc, rm = ref, resolve(doc, ref)
		}
		media := map[string]*jsonschema.Schema{}
		content, _ := rm["content"].(map[string]any)
		for mt, entry := range content {
			em, _ := entry.(map[string]any)
			if _, ok := em["schema"]; !ok {
				media[mt] = nil
				continue
			}
			sch, err := c.Compile(docURL + loc + "/content/" + escape(mt) + "/schema")
			if err != nil {
				return nil, fmt.Errorf("response %s %s: %w", status, mt, err)
			}
			media[mt] = sch
		}
		op.responses[status] = media
	}
	return op, nil
}

// resolve follows a local reference ("#/components/parameters/Id").
func resolve(doc map[string]any, ref string) map[string]any {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
	}
	m, _ := cur.(map[string]any)
	return m
}

// schemaType is the JSON type a parameter's schema declares, following one
// reference; query values are converted to it before validation.
func schemaType(doc map[string]any, s any) string {
	m, _ := s.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		m = resolve(doc, ref)
	}
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s != "null" {
				return s
			}
		}
	}
	return "string"
}

func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// closeObjects sets unevaluatedProperties: false on every schema that lists
// properties or combines others with allOf and says nothing about further
// properties. Members of an allOf stay open, since their siblings declare
// the rest; the parent closes them all. That includes components only
// ever referenced from an allOf, found first.
func closeObjects(root any) {
	members := map[string]bool{}
	var find func(v any)
	find = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				find(x)
			}
		case map[string]any:
			if all, ok := v["allOf"].([]any); ok {
				for _, m := range all {
					if ref, ok := m.(map[string]any)["$ref"].(string); ok {
						members[ref] = true
					}
				}
			}
			for _, x := range v {
				find(x)
			}
		}
	}
	find(root)
	var walk func(v any, path string, inAllOf bool)
	walk = func(v any, path string, inAllOf bool) {
		switch v := v.(type) {
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s/%d", path, i), inAllOf)
			}
		case map[string]any:
			_, hasProps := v["properties"]
			_, hasAll := v["allOf"]
			_, setA := v["additionalProperties"]
			_, setU := v["unevaluatedProperties"]
			if (hasProps || hasAll) && !setA && !setU && !inAllOf && !members[path] {
				v["unevaluatedProperties"] = false
			}
			for k, x := range v {
				walk(x, path+"/"+escape(k), k == "allOf")
			}
		}
	}
	walk(root, "#", false)
}

// validDate is the "date" format: a calendar date YYYY-MM-DD between
// 1900-01-01 and 9999-12-31. Years before 1900 are typing mistakes in
// bookkeeping, and Postgres and Go disagree about the ones before year 1.
func validDate(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != 10 {
		return fmt.Errorf("must be a date YYYY-MM-DD")
	}
	if t.Year() < 1900 {
		return fmt.Errorf("must be a date from 1900-01-01 to 9999-12-31")
	}
	return nil
}

// validDateTime is the "date-time" format: an RFC 3339 time with a year
// from 1900 to 9999, for the same reasons as validDate.
func validDateTime(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("must be an RFC 3339 time")
	}
	if y := t.Year(); y < 1900 || y > 9999 {
		return fmt.Errorf("must be a time from 1900 to 9999")
	}
	return nil
}

// statusSchemas returns the schemas documented for status, falling back to
// the "4XX"-style range and "default" as OpenAPI does.
func (o *Operation) statusSchemas(status int) (map[string]*jsonschema.Schema, bool) {
	for _, key := range []string{fmt.Sprint(status), fmt.Sprintf("%dXX", status/100), "default"} {
		if m, ok := o.responses[key]; ok {
			return m, true
		}
	}
	return nil, false
}
