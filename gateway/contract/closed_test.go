package contract_test

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ledgerplatform/ledger/contracts"
)

// TestRequestSchemasClosed: every object a request may send lists its
// fields and refuses others, so an unknown or case-variant field name is
// refused at the boundary, and what the product accepts the document
// allows.
func TestRequestSchemasClosed(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(contracts.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(ref string) map[string]any {
		var cur any = doc
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
		}
		return cur.(map[string]any)
	}
	var open []string
	seen := map[string]bool{}
	var walk func(s any, where string)
	walk = func(s any, where string) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			if !seen[ref] {
				seen[ref] = true
				walk(resolve(ref), ref)
			}
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			// A mail provider's form (x-provider-form) carries the provider's
			// own fields beside the message; the gateway skips them unread.
			if m["additionalProperties"] != false && m["x-provider-form"] != true {
				open = append(open, where)
			}
			for name, p := range props {
				walk(p, where+"/"+name)
			}
		}
		for _, k := range []string{"items", "contentSchema", "additionalProperties"} {
			walk(m[k], where+"/"+k)
		}
		for _, k := range []string{"allOf", "oneOf", "anyOf"} {
			list, _ := m[k].([]any)
			for _, x := range list {
				walk(x, where+"/"+k)
			}
		}
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			rb, ok := op.(map[string]any)["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			for mt, c := range rb["content"].(map[string]any) {
				walk(c.(map[string]any)["schema"], strings.ToUpper(method)+" "+path+" "+mt)
			}
		}
	}
	slices.Sort(open)
	if len(open) > 0 {
		t.Errorf("request schemas that take undeclared fields (add additionalProperties: false):\n%s", strings.Join(open, "\n"))
	}
}
