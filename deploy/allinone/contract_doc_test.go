package allinone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/ledgerplatform/ledger/contracts"
)

// ---- contracts/openapi.yaml as the contract test reads it ----
//
// The battery is derived from the document itself: its operations, their
// parameters and request schemas. Walking the raw tree (rather than typed
// structs) keeps every keyword the document may grow visible to the walk.

type apiDoc struct {
	root map[string]any
	ops  []*apiOp
	// accept compiles request schemas as written (format asserted), to
	// tell a mutation the document itself allows from a bad one.
	accept *jsonschema.Compiler
	cache  map[string]*jsonschema.Schema
}

type apiOp struct {
	ID, Method, Pattern string
	OperatorOnly        bool
	Public              bool
	Params              []apiParam
	Body                *apiBody // nil without requestBody
	node                map[string]any
}

type apiParam struct {
	Name, In string
	Required bool
	Schema   any    // raw schema node
	Ptr      string // JSON pointer of the schema in the document
}

type apiBody struct {
	Required    bool
	ContentType string // application/json or multipart/form-data
	Schema      any
	Ptr         string
	Example     any // the document's example, if any
	HasExample  bool
}

func loadAPIDoc(t testing.TB) *apiDoc {
	t.Helper()
	var y any
	if err := yaml.Unmarshal(contracts.OpenAPI, &y); err != nil {
		t.Fatal(err)
	}
	// Through JSON, so the tree holds only JSON types (and numbers stay exact).
	b, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	d := &apiDoc{root: root, cache: map[string]*jsonschema.Schema{}}
	d.accept = jsonschema.NewCompiler()
	d.accept.DefaultDraft(jsonschema.Draft2020)
	d.accept.AssertFormat()
	if err := d.accept.AddResource("mem://openapi.json", jcopy(root)); err != nil {
		t.Fatal(err)
	}
	paths, _ := root["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range []string{"get", "put", "post", "patch", "delete"} {
			node, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op := &apiOp{ID: jstr(node["operationId"]), Method: strings.ToUpper(m), Pattern: p, node: node}
			op.OperatorOnly = node["x-operator-only"] == true
			if sec, ok := node["security"].([]any); ok && len(sec) == 0 {
				op.Public = true
			}
			base := "#/paths/" + ptrEscape(p)
			for i, raw := range jslice(item["parameters"]) {
				op.Params = append(op.Params, d.param(raw, fmt.Sprintf("%s/parameters/%d", base, i)))
			}
			for i, raw := range jslice(node["parameters"]) {
				op.Params = append(op.Params, d.param(raw, fmt.Sprintf("%s/%s/parameters/%d", base, m, i)))
			}
			if rb, ok := node["requestBody"].(map[string]any); ok {
				op.Body = d.body(rb, base+"/"+m+"/requestBody")
			}
			d.ops = append(d.ops, op)
		}
	}
	return d
}

func (d *apiDoc) param(raw any, ptr string) apiParam {
	n, _ := raw.(map[string]any)
	if ref, ok := n["$ref"].(string); ok {
		ptr = ref
		n, _ = d.resolve(ref).(map[string]any)
	}
	return apiParam{Name: jstr(n["name"]), In: jstr(n["in"]), Required: n["required"] == true, Schema: n["schema"], Ptr: ptr + "/schema"}
}

func (d *apiDoc) body(rb map[string]any, ptr string) *apiBody {
	content, _ := rb["content"].(map[string]any)
	for _, ct := range []string{"application/json", "multipart/form-data"} {
		mt, ok := content[ct].(map[string]any)
		if !ok {
			continue
		}
		b := &apiBody{Required: rb["required"] == true, ContentType: ct, Schema: mt["schema"], Ptr: ptr + "/content/" + ptrEscape(ct) + "/schema"}
		b.Example, b.HasExample = mt["example"]
		return b
	}
	return nil
}

// resolve follows a local $ref ("#/components/...").
func (d *apiDoc) resolve(ref string) any {
	var v any = d.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, _ := v.(map[string]any)
		v = m[part]
	}
	return v
}

// flat is a schema with its $ref followed and its allOf merged: what the
// battery needs to know about one value.
type flat struct {
	types      []string // empty: any
	props      map[string]any
	required   []string
	items      any
	enum       []any
	format     string
	pattern    string
	maxLength  int // -1: none
	minimum    *float64
	maximum    *float64
	exclMin    *float64
	refName    string // the last component schema followed, e.g. Money
	constValue any
	hasConst   bool
}

func (d *apiDoc) flatten(node any) flat {
	f := flat{props: map[string]any{}, maxLength: -1}
	d.merge(&f, node, 0)
	return f
}

func (d *apiDoc) merge(f *flat, node any, depth int) {
	n, _ := node.(map[string]any)
	if n == nil || depth > 20 {
		return
	}
	if ref, ok := n["$ref"].(string); ok {
		if i := strings.LastIndex(ref, "/"); i >= 0 && strings.HasPrefix(ref, "#/components/schemas/") {
			f.refName = ref[i+1:]
		}
		d.merge(f, d.resolve(ref), depth+1)
	}
	for _, m := range jslice(n["allOf"]) {
		d.merge(f, m, depth+1)
	}
	switch t := n["type"].(type) {
	case string:
		f.types = []string{t}
	case []any:
		f.types = nil
		for _, x := range t {
			f.types = append(f.types, jstr(x))
		}
	}
	if p, ok := n["properties"].(map[string]any); ok {
		for k, v := range p {
			f.props[k] = v
		}
		if len(f.types) == 0 {
			f.types = []string{"object"}
		}
	}
	for _, r := range jslice(n["required"]) {
		if !slices.Contains(f.required, jstr(r)) {
			f.required = append(f.required, jstr(r))
		}
	}
	if v, ok := n["items"]; ok {
		f.items = v
	}
	if v, ok := n["enum"].([]any); ok {
		f.enum = v
	}
	if v, ok := n["const"]; ok {
		f.constValue, f.hasConst = v, true
	}
	if v, ok := n["format"].(string); ok {
		f.format = v
	}
	if v, ok := n["pattern"].(string); ok {
		f.pattern = v
	}
	if v, ok := jnum(n["maxLength"]); ok {
		f.maxLength = int(v)
	}
	if v, ok := jnum(n["minimum"]); ok {
		f.minimum = &v
	}
	if v, ok := jnum(n["maximum"]); ok {
		f.maximum = &v
	}
	if v, ok := jnum(n["exclusiveMinimum"]); ok {
		f.exclMin = &v
	}
}

func (f flat) is(t string) bool { return slices.Contains(f.types, t) }

// schemaAt compiles the document's schema at ptr (a request schema, as
// written: closed where the document closes it).
func (d *apiDoc) schemaAt(t testing.TB, ptr string) *jsonschema.Schema {
	if s, ok := d.cache[ptr]; ok {
		return s
	}
	s, err := d.accept.Compile("mem://openapi.json" + ptr)
	if err != nil {
		t.Fatalf("compile %s: %v", ptr, err)
	}
	d.cache[ptr] = s
	return s
}

// allows reports whether the schema at ptr accepts the JSON document raw.
func (d *apiDoc) allows(t testing.TB, ptr string, raw []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	return d.schemaAt(t, ptr).Validate(v) == nil
}

// allowsQuery reports whether a query or path value is one the
// parameter's schema accepts, read as the boundary reads it: integers and
// numbers as JSON numbers, booleans only as true or false.
func (d *apiDoc) allowsQuery(t testing.TB, p apiParam, value string) bool {
	f := d.flatten(p.Schema)
	var v any = value
	switch {
	case f.is("integer") || f.is("number"):
		if !regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`).MatchString(value) {
			return false
		}
		n, err := jsonschema.UnmarshalJSON(strings.NewReader(value))
		if err != nil {
			return false
		}
		v = n
	case f.is("boolean"):
		if value != "true" && value != "false" {
			return false
		}
		v = value == "true"
	}
	return d.schemaAt(t, p.Ptr).Validate(v) == nil
}

// ---- small helpers over the raw tree ----

func jstr(v any) string { s, _ := v.(string); return s }

func jslice(v any) []any { s, _ := v.([]any); return s }

func jnum(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func ptrEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func jcopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jcopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jcopy(e)
		}
		return out
	}
	return v
}

// marshal writes JSON without HTML escaping, so markers survive as written.
func jmarshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// encodeQuery writes q sorted, each value escaped unless it is raw
// (already percent-encoded on purpose, e.g. %FF).
func encodeQuery(q [][2]string) string {
	var parts []string
	for _, kv := range q {
		parts = append(parts, url.QueryEscape(kv[0])+"="+kv[1])
	}
	return strings.Join(parts, "&")
}
