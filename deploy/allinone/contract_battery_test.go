package allinone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ---- bad inputs derived from the document's schemas ----
//
// A mutation marked rule is bad whatever the schema says: the boundary's
// own rules (no NUL or control characters, valid UTF-8 without lone
// surrogates, no duplicate or case-variant keys, dates within 1900-9999,
// numbers that fit, strings of bounded length, single-valued and known
// query parameters). Any other mutation counts only when the schema
// refuses it, so a value the document allows is never sent as "bad".

const mutMarker = "@@MUTATION@@"

type jsonMut struct {
	name string
	rule bool
	raw  []byte
}

// jsonMutations walks value (an instance of schema) and returns its bad
// variants as whole documents.
func (d *apiDoc) jsonMutations(schema, value any) []jsonMut {
	var out []jsonMut
	d.walkJSON(nil, schema, value, true, value, &out)
	return out
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch x := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x)
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		}
	}
	if b.Len() == 0 {
		return "(body)"
	}
	return b.String()
}

// mutateAt returns a copy of root after fn changed the container holding
// the last path element.
func mutateAt(root any, path []any, fn func(parent any, last any)) any {
	root = jcopy(root)
	cur := root
	for _, p := range path[:len(path)-1] {
		switch x := p.(type) {
		case string:
			cur = cur.(map[string]any)[x]
		case int:
			cur = cur.([]any)[x]
		}
	}
	fn(cur, path[len(path)-1])
	return root
}

func setAt(root any, path []any, v any) []byte {
	if len(path) == 0 {
		return jmarshal(v)
	}
	return jmarshal(mutateAt(root, path, func(parent, last any) {
		switch c := parent.(type) {
		case map[string]any:
			c[last.(string)] = v
		case []any:
			c[last.(int)] = v
		}
	}))
}

// rawAt puts raw JSON text (which need not be valid) at path.
func rawAt(root any, path []any, raw string) []byte {
	b := setAt(root, path, mutMarker)
	return bytes.Replace(b, []byte(`"`+mutMarker+`"`), []byte(raw), 1)
}

func (d *apiDoc) walkJSON(path []any, schema, value any, present bool, root any, out *[]jsonMut) {
	f := d.flatten(schema)
	at := pathString(path)
	emitAt := func(loc, name string, rule bool, raw []byte) {
		*out = append(*out, jsonMut{name: loc + ": " + name, rule: rule, raw: raw})
	}
	emit := func(name string, rule bool, raw []byte) { emitAt(at, name, rule, raw) }
	if len(path) > 0 {
		for _, c := range []struct {
			name string
			v    any
		}{{`"zz"`, "zz"}, {"7", json.Number("7")}, {"7.5", json.Number("7.5")}, {"true", true}, {"null", nil}, {"{}", map[string]any{}}, {"[]", []any{}}} {
			emit("= "+c.name, false, setAt(root, path, c.v))
		}
		if f.is("string") {
			emit("NUL", true, rawAt(root, path, `"a\u0000b"`))
			emit("control character", true, rawAt(root, path, `"a\u0001b"`))
			emit("invalid UTF-8", true, rawAt(root, path, "\"a\xffb\""))
			emit("lone surrogate", true, rawAt(root, path, `"a\ud800b"`))
			if f.maxLength >= 0 {
				emit(fmt.Sprintf("%d characters (maxLength+1)", f.maxLength+1), false, setAt(root, path, strings.Repeat("x", f.maxLength+1)))
			} else {
				emit("100000 characters", true, setAt(root, path, strings.Repeat("x", 100000)))
			}
			switch f.format {
			case "date":
				for _, v := range []string{"0000-01-01", "2025-02-30", "10000-01-01", ""} {
					emit(fmt.Sprintf("date %q", v), true, setAt(root, path, v))
				}
			case "uuid":
				emit(`"not-a-uuid"`, false, setAt(root, path, "not-a-uuid"))
			case "email":
				emit(`"not-an-email"`, false, setAt(root, path, "not-an-email"))
			}
			if len(f.enum) > 0 {
				emit(`"zz-not-listed"`, false, setAt(root, path, "zz-not-listed"))
			}
		}
		if f.is("number") || f.is("integer") {
			emit("1e400", true, rawAt(root, path, "1e400"))
			emit("huge integer", true, rawAt(root, path, "123456789012345678901234567890"))
			emit("-1", false, setAt(root, path, json.Number("-1")))
			emit("0", false, setAt(root, path, json.Number("0")))
			emit(`numeric string "12"`, false, setAt(root, path, "12"))
			if f.refName == "Money" {
				emit("1.001 (three decimals)", true, setAt(root, path, json.Number("1.001")))
			}
			if f.maximum != nil {
				emit("maximum+1", false, setAt(root, path, json.Number(strconv.FormatFloat(*f.maximum+1, 'f', -1, 64))))
			}
		}
	}
	if !present {
		return
	}
	switch v := value.(type) {
	case map[string]any:
		if len(f.props) == 0 {
			return // free-form (custom_metadata)
		}
		for _, r := range f.required {
			if _, ok := v[r]; ok {
				p := append(slices.Clone(path), r)
				emitAt(pathString(p), "missing (required)", false, jmarshal(mutateAt(root, p, func(parent, last any) {
					delete(parent.(map[string]any), last.(string))
				})))
			}
		}
		unknown := append(slices.Clone(path), "zz_unknown")
		emitAt(pathString(unknown), "unknown field", true, setAt(root, unknown, json.Number("1")))
		for _, name := range sortedKeys(f.props) {
			child, ok := v[name]
			p := append(slices.Clone(path), name)
			if ok {
				orig := string(jmarshal(child))
				dup := bytes.Replace(setAt(root, p, mutMarker), []byte(`"`+name+`":"`+mutMarker+`"`), []byte(`"`+name+`":`+orig+`,"`+name+`":`+orig), 1)
				emitAt(pathString(p), "duplicate key", true, dup)
				if up := strings.ToUpper(name); up != name {
					emitAt(pathString(p), "case variant "+up, true, jmarshal(mutateAt(root, p, func(parent, last any) {
						m := parent.(map[string]any)
						m[up] = m[name]
						delete(m, name)
					})))
				}
			}
			d.walkJSON(p, f.props[name], child, ok, root, out)
		}
	case []any:
		if len(v) > 0 && f.items != nil {
			d.walkJSON(append(slices.Clone(path), 0), f.items, v[0], true, root, out)
		}
	}
}

// ---- query, path, header and multipart mutations ----

type wire struct {
	method, path string // path with the raw query
	token        string
	body         []byte
	contentType  string
	headers      []string
}

type mutation struct {
	name string
	w    wire
}

// goodQueryValue is a value the parameter accepts, for repeating it.
func (d *apiDoc) goodQueryValue(p apiParam, base url.Values) string {
	if v := base.Get(p.Name); v != "" {
		return v
	}
	n, _ := p.Schema.(map[string]any)
	if ex := jslice(n["examples"]); len(ex) > 0 {
		return fmt.Sprint(ex[0])
	}
	f := d.flatten(p.Schema)
	switch {
	case len(f.enum) > 0:
		return fmt.Sprint(f.enum[0])
	case f.is("integer"):
		return "1"
	case f.is("boolean"):
		return "true"
	case f.format == "date":
		return "2025-01-01"
	case f.format == "uuid":
		return "00000000-0000-4000-8000-000000000000"
	}
	return "x"
}

// queryMutations: every declared query parameter with bad values, given
// twice, or missing when required; and an unknown parameter.
func (d *apiDoc) queryMutations(t testing.TB, op *apiOp, base url.Values) (out []struct {
	name  string
	query [][2]string
}) {
	encoded := func(skip string) [][2]string {
		var q [][2]string
		for _, k := range sortedKeys(base) {
			if k != skip {
				q = append(q, [2]string{k, url.QueryEscape(base.Get(k))})
			}
		}
		return q
	}
	add := func(name string, q [][2]string) {
		out = append(out, struct {
			name  string
			query [][2]string
		}{name, q})
	}
	for _, p := range op.Params {
		if p.In != "query" {
			continue
		}
		f := d.flatten(p.Schema)
		if p.Required {
			add("query "+p.Name+" missing", encoded(p.Name))
		}
		good := d.goodQueryValue(p, base)
		type cand struct {
			label, raw string // raw is already escaped
			rule       bool
		}
		cands := []cand{
			{"NUL", "a%00b", true}, {"control character", "a%01b", true}, {"invalid UTF-8", "a%FFb", true},
			{"lone surrogate (CESU-8)", "a%ED%A0%80b", true}, {`"zz"`, "zz", false},
			// Empty is no date and no number; for text the schema decides.
			{"empty", "", f.format == "date" || !f.is("string")},
		}
		if f.is("integer") || f.is("number") {
			cands = append(cands, cand{"1.5", "1.5", false}, cand{"-1", "-1", false}, cand{"huge", "123456789012345678901234567890", true},
				cand{"1e400", "1e400", true}, cand{"0", "0", false})
			if f.maximum != nil {
				cands = append(cands, cand{"maximum+1", strconv.FormatFloat(*f.maximum+1, 'f', -1, 64), false})
			}
		}
		if f.is("boolean") {
			cands = append(cands, cand{"1", "1", false}, cand{"yes", "yes", false}, cand{"TRUE", "TRUE", false})
		}
		if f.is("string") {
			if f.maxLength >= 0 {
				cands = append(cands, cand{fmt.Sprintf("%d characters (maxLength+1)", f.maxLength+1), strings.Repeat("x", f.maxLength+1), false})
			} else {
				cands = append(cands, cand{"100000 characters", strings.Repeat("x", 100000), true})
			}
			if f.format == "date" {
				for _, v := range []string{"0000-01-01", "2025-02-30", "10000-01-01", "2025-1-1"} {
					cands = append(cands, cand{"date " + v, v, true})
				}
			}
			if f.format == "uuid" {
				cands = append(cands, cand{"not-a-uuid", "not-a-uuid", false})
			}
		}
		for _, c := range cands {
			if !c.rule {
				v, _ := url.QueryUnescape(c.raw)
				if d.allowsQuery(t, p, v) {
					continue
				}
			}
			add("query "+p.Name+" = "+c.label, append(encoded(p.Name), [2]string{p.Name, c.raw}))
		}
		add("query "+p.Name+" repeated (good, bad)", append(encoded(p.Name), [2]string{p.Name, url.QueryEscape(good)}, [2]string{p.Name, "abc%00"}))
		add("query "+p.Name+" repeated (good, good)", append(encoded(p.Name), [2]string{p.Name, url.QueryEscape(good)}, [2]string{p.Name, url.QueryEscape(good)}))
	}
	add("unknown query parameter", append(encoded(""), [2]string{"zz_unknown", "1"}))
	return out
}

// pathMutations: malformed values of each path parameter (raw, escaped).
func (d *apiDoc) pathMutations(t testing.TB, op *apiOp) (out []struct {
	param, label, raw string
}) {
	for _, p := range op.Params {
		if p.In != "path" {
			continue
		}
		f := d.flatten(p.Schema)
		type cand struct {
			label, raw string
			rule       bool
		}
		cands := []cand{
			{"not-a-uuid", "not-a-uuid", false}, {"zzz", "zzz", false}, {"-1", "-1", false}, {"0", "0", false},
			{"NUL", "a%00b", true}, {"invalid UTF-8", "a%FFb", true}, {"lone surrogate (CESU-8)", "a%ED%A0%80b", true},
			{"control character", "a%01b", true}, {"300 characters", strings.Repeat("a", 300), false},
			{"SQL quote", "1%27%20OR%20%271%27=%271", false},
		}
		if f.format == "uuid" {
			cands = append(cands, cand{"unknown uuid", "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f", true})
		}
		for _, c := range cands {
			if !c.rule {
				v, _ := url.PathUnescape(c.raw)
				if d.allowsQuery(t, p, v) {
					continue
				}
			}
			out = append(out, struct{ param, label, raw string }{p.Name, c.label, c.raw})
		}
	}
	return out
}

func hasIdempotencyKey(op *apiOp) bool {
	for _, p := range op.Params {
		if p.In == "header" && p.Name == "Idempotency-Key" {
			return true
		}
	}
	return false
}

// multipartMutations: missing, unknown, repeated and malformed parts.
func (d *apiDoc) multipartMutations(t testing.TB, op *apiOp, parts []part) (out []struct {
	name  string
	parts []part
}) {
	add := func(name string, ps []part) {
		out = append(out, struct {
			name  string
			parts []part
		}{name, ps})
	}
	f := d.flatten(op.Body.Schema)
	without := func(name string) []part {
		var ps []part
		for _, p := range parts {
			if p.name != name {
				ps = append(ps, p)
			}
		}
		return ps
	}
	with := func(name string, value []byte) []part {
		ps := without(name)
		return append(ps, part{name: name, content: value})
	}
	for _, r := range f.required {
		add("part "+r+" missing", without(r))
	}
	// A mail provider's form (x-provider-form) carries the provider's own
	// fields beside the message, which are skipped: only its declared
	// fields are mutated.
	provider := false
	if s, ok := d.resolve("#/components/schemas/" + f.refName).(map[string]any); ok && f.refName != "" {
		provider = s["x-provider-form"] == true
	}
	if !provider {
		add("unknown part zz_unknown", append(slices.Clone(parts), textField("zz_unknown", "1")))
	}
	for _, p := range parts {
		if _, declared := f.props[p.name]; declared || !provider {
			add("part "+p.name+" repeated", append(slices.Clone(parts), p))
		}
	}
	if !provider {
		add("file is text/plain", append(without("file"), fileField("notes.txt", "text/plain", []byte("just text"))))
		add("file is empty", append(without("file"), fileField("empty.pdf", "application/pdf", nil)))
		add("file declared as PNG", append(without("file"), fileField("scan.png", "image/png", pdfOf("declared png"))))
	}
	for _, name := range sortedKeys(f.props) {
		pf := d.flatten(f.props[name])
		if name == "file" {
			continue
		}
		for _, c := range []struct {
			label string
			v     []byte
		}{{"NUL", []byte("a\x00b")}, {"control character", []byte("a\x01b")}, {"invalid UTF-8", []byte("a\xffb")}, {"CESU-8 surrogate", []byte("a\xed\xa0\x80b")}} {
			add("part "+name+" "+c.label, with(name, c.v))
		}
		if pf.maxLength >= 0 {
			add(fmt.Sprintf("part %s %d characters", name, pf.maxLength+1), with(name, bytes.Repeat([]byte("x"), pf.maxLength+1)))
		} else {
			add("part "+name+" 100000 characters", with(name, bytes.Repeat([]byte("x"), 100000)))
		}
		if pf.format == "date" {
			for _, v := range []string{"0000-01-01", "2025-02-30", "10000-01-01", ""} {
				add(fmt.Sprintf("part %s date %q", name, v), with(name, []byte(v)))
			}
		}
		if pf.is("boolean") {
			add("part "+name+" = yes", with(name, []byte("yes")))
		}
		n, _ := f.props[name].(map[string]any)
		if cs, ok := n["contentSchema"]; ok {
			var cur any
			for _, p := range parts {
				if p.name == name {
					_ = json.Unmarshal(p.content, &cur)
				}
			}
			add("part "+name+" not JSON", with(name, []byte("[{")))
			ptr := d.contentSchemaPtr(op, name)
			for _, m := range d.jsonMutations(cs, cur) {
				if !m.rule && d.allows(t, ptr, m.raw) {
					continue
				}
				add("part "+name+" "+m.name, with(name, m.raw))
			}
		}
	}
	return out
}

// contentSchemaPtr is the JSON pointer of a form field's contentSchema.
func (d *apiDoc) contentSchemaPtr(op *apiOp, field string) string {
	n, _ := op.Body.Schema.(map[string]any)
	base := op.Body.Ptr
	if ref, ok := n["$ref"].(string); ok {
		base = ref
	}
	return base + "/properties/" + ptrEscape(field) + "/contentSchema"
}
