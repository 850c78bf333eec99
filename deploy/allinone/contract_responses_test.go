package allinone_test

import (
	"bytes"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Interim response check until gateway/contract lands: the document with
// every object schema closed (unevaluatedProperties: false unless it says
// what extra properties it allows), compiled as JSON Schema 2020-12.

type respChecker struct {
	d      *apiDoc
	closed map[string]any
	c      *jsonschema.Compiler
	cache  map[string]*jsonschema.Schema
}

func newRespChecker(t testing.TB, d *apiDoc) *respChecker {
	r := &respChecker{d: d, closed: jcopy(d.root).(map[string]any), cache: map[string]*jsonschema.Schema{}}
	comps, _ := r.closed["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for _, s := range schemas {
		r.close(s, false)
	}
	forEachContentSchema := func(resp any) {
		m, _ := resp.(map[string]any)
		content, _ := m["content"].(map[string]any)
		for _, mt := range content {
			if mm, ok := mt.(map[string]any); ok {
				r.close(mm["schema"], false)
			}
		}
	}
	resps, _ := comps["responses"].(map[string]any)
	for _, x := range resps {
		forEachContentSchema(x)
	}
	paths, _ := r.closed["paths"].(map[string]any)
	for _, item := range paths {
		for _, op := range item.(map[string]any) {
			o, _ := op.(map[string]any)
			rs, _ := o["responses"].(map[string]any)
			for _, x := range rs {
				forEachContentSchema(x)
			}
		}
	}
	r.c = jsonschema.NewCompiler()
	r.c.DefaultDraft(jsonschema.Draft2020)
	r.c.AssertFormat()
	if err := r.c.AddResource("mem://closed.json", r.closed); err != nil {
		t.Fatal(err)
	}
	return r
}

// close closes an object schema in place. An allOf member is left open
// (its parent closes over all members) and a $ref member is inlined, since
// the component it names is closed on its own.
func (r *respChecker) close(node any, member bool) {
	n, _ := node.(map[string]any)
	if n == nil {
		return
	}
	if ref, ok := n["$ref"].(string); ok && member {
		target := jcopy(r.d.resolve(ref)).(map[string]any)
		delete(n, "$ref")
		for k, v := range target {
			if _, has := n[k]; !has {
				n[k] = v
			}
		}
	}
	if p, ok := n["properties"].(map[string]any); ok {
		for _, v := range p {
			r.close(v, false)
		}
	}
	if v, ok := n["items"]; ok {
		r.close(v, false)
	}
	if v, ok := n["additionalProperties"].(map[string]any); ok {
		r.close(v, false)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		for _, m := range jslice(n[k]) {
			r.close(m, false)
		}
	}
	for _, m := range jslice(n["allOf"]) {
		r.close(m, true)
	}
	if member {
		return
	}
	_, hasProps := n["properties"]
	_, hasAllOf := n["allOf"]
	_, hasAP := n["additionalProperties"]
	_, hasUP := n["unevaluatedProperties"]
	isObject := n["type"] == "object"
	for _, t := range jslice(n["type"]) {
		isObject = isObject || t == "object"
	}
	if (hasProps || hasAllOf || isObject) && !hasAP && !hasUP {
		n["unevaluatedProperties"] = false
	}
}

// check validates one answer of op: a documented status, a documented
// content type, and a JSON body that matches the closed schema.
func (r *respChecker) check(t testing.TB, op *apiOp, status int, contentType string, body []byte) error {
	node, _ := r.closed["paths"].(map[string]any)[op.Pattern].(map[string]any)[strings.ToLower(op.Method)].(map[string]any)
	rs, _ := node["responses"].(map[string]any)
	code := strconv.Itoa(status)
	resp, ok := rs[code]
	ptr := "#/paths/" + ptrEscape(op.Pattern) + "/" + strings.ToLower(op.Method) + "/responses/" + code
	if !ok {
		return fmt.Errorf("status %d is not documented", status)
	}
	m, _ := resp.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		ptr = ref
		m, _ = r.d.resolve(ref).(map[string]any)
	}
	content, _ := m["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("status %d documents no body, got %d bytes", status, len(body))
		}
		return nil
	}
	got, gotParams, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %v", contentType, err)
	}
	var key string
	for k := range content {
		want, wantParams, err := mime.ParseMediaType(k)
		if err != nil || want != got {
			continue
		}
		match := true
		for p, v := range wantParams {
			if !strings.EqualFold(gotParams[p], v) {
				match = false
			}
		}
		if match {
			key = k
		}
	}
	if key == "" {
		return fmt.Errorf("Content-Type %q is not documented for status %d (documented: %v)", contentType, status, sortedKeys(content))
	}
	if got != "application/json" {
		return nil
	}
	sptr := ptr + "/content/" + ptrEscape(key) + "/schema"
	s, ok := r.cache[sptr]
	if !ok {
		if s, err = r.c.Compile("mem://closed.json" + sptr); err != nil {
			t.Fatalf("compile %s: %v", sptr, err)
		}
		r.cache[sptr] = s
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("body does not match the schema: %v", err)
	}
	return nil
}
