package allinone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/gateway"
	"github.com/ledgerplatform/ledger/gateway/contract"
)

// TestContract drives every operation of contracts/openapi.yaml and every
// MCP tool against the whole platform: a happy path per operation whose
// answer must match the document (every object schema closed), then a
// battery of bad inputs derived from the document's schemas, each of which
// must be refused with a 4xx error body and change nothing.
// CONTRACT_DEBUG=1 logs each operation's mutations and time, =names also
// every mutation's name.
func TestContract(t *testing.T) {
	t.Parallel()
	start := time.Now()
	p := startPlatform(t, env{
		"RATE_LIMIT_PER_MINUTE": "10000000", "AUTH_RATE_LIMIT_PER_MINUTE": "10000000",
		"LOGIN_RATE_LIMIT_PER_MINUTE": "10000000", "AUTH_FAILURE_LIMIT_PER_MINUTE": "10000000",
		// No timed checkpoint during the run: the state snapshots include
		// the checkpoints, which a refused call must not write either.
		"LEDGER_CHECKPOINT_INTERVAL": "24h",
	})
	c := &contractRun{t: t, p: p, doc: loadAPIDoc(t), findings: map[string]*findingGroup{}, happyStatus: map[string]int{},
		happyType: map[string]string{}}
	cdoc, err := contract.Load(contracts.OpenAPI, contract.ClosedResponses())
	if err != nil {
		t.Fatal(err)
	}
	c.closed = cdoc
	c.probe = newStateProbe(t, p)

	c.stats.ops = len(c.doc.ops)
	for _, op := range c.doc.ops {
		if len(happyCases[op.ID]) == 0 {
			c.fail("no-happy-case", op.ID, op.Method+" "+op.Pattern+" has no entry in happyCases")
		} else {
			c.stats.covered++
		}
	}
	for id := range happyCases {
		if c.op(id) == nil {
			c.fail("stale-happy-case", id, "happyCases names an operation the document lacks")
		}
	}

	c.a, c.b = newFixture(t, p, "a"), newFixture(t, p, "b")
	setup := time.Since(start)
	c.happyPaths()
	c.mcpHappyPaths()
	t0 := time.Now()
	c.baseline = c.probe.settled(t, 20*time.Second)
	for _, op := range c.doc.ops {
		c.restBattery(op)
	}
	c.mcpBattery()
	c.report(fmt.Sprintf("setup %.1fs, battery %.1fs, total %.1fs", setup.Seconds(), time.Since(t0).Seconds(), time.Since(start).Seconds()))
}

type contractRun struct {
	t           *testing.T
	p           *platform
	doc         *apiDoc
	closed      *contract.Doc // the document with every object schema closed
	probe       *stateProbe
	baseline    state
	a, b        *fixture
	happyStatus map[string]int
	happyType   map[string]string // the content type of each operation's first happy answer
	findings    map[string]*findingGroup
	stats       struct {
		ops, covered, happy, happyMCP, bad, badMCP, serverErrors, stateChanges int
	}
}

type findingGroup struct {
	kind, op string
	n        int
	examples []string
}

func (c *contractRun) op(id string) *apiOp {
	for _, op := range c.doc.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

func (c *contractRun) opByRoute(route string) *apiOp {
	method, pattern, _ := strings.Cut(route, " ")
	for _, op := range c.doc.ops {
		if op.Method == method && op.Pattern == pattern {
			return op
		}
	}
	return nil
}

// fail records a finding, grouped by kind and operation.
func (c *contractRun) fail(kind, op, example string) {
	key := kind + "|" + op
	g, ok := c.findings[key]
	if !ok {
		g = &findingGroup{kind: kind, op: op}
		c.findings[key] = g
	}
	g.n++
	example = strings.TrimSpace(example)
	if len(g.examples) < 4 {
		if len(example) > 400 {
			example = example[:400] + "…"
		}
		g.examples = append(g.examples, example)
	}
}

// ---- sending ----

func (c *contractRun) pathOf(op *apiOp, params map[string]string, raw map[string]string) string {
	path := op.Pattern
	for _, p := range op.Params {
		if p.In != "path" {
			continue
		}
		v, ok := raw[p.Name]
		if !ok {
			v = url.PathEscape(params[p.Name])
		}
		path = strings.Replace(path, "{"+p.Name+"}", v, 1)
	}
	return path
}

func (c *contractRun) wireFor(op *apiOp, r happyReq) wire {
	w := wire{method: op.Method, path: c.pathOf(op, r.params, nil), token: r.token, headers: r.headers}
	if len(r.query) > 0 {
		w.path += "?" + r.query.Encode()
	}
	switch {
	case r.multipart != nil:
		w.body, w.contentType = multipartBody(c.t, r.multipart...)
	case r.example:
		w.body, w.contentType = jmarshal(op.Body.Example), "application/json"
	case r.body != nil:
		w.body, w.contentType = jmarshal(r.body), "application/json"
	}
	return w
}

// bodyOf is the JSON body of r as a generic value.
func (c *contractRun) bodyOf(op *apiOp, r happyReq) any {
	var raw []byte
	switch {
	case r.example:
		raw = jmarshal(op.Body.Example)
	case r.body != nil:
		raw = jmarshal(r.body)
	default:
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		c.t.Fatal(err)
	}
	return v
}

func (c *contractRun) do(w wire) resp {
	req, err := http.NewRequest(w.method, c.p.base+w.path, bytes.NewReader(w.body))
	if err != nil {
		c.t.Fatalf("%s %s: %v", w.method, w.path, err)
	}
	if w.body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	if w.contentType != "" {
		req.Header.Set("Content-Type", w.contentType)
	}
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	for i := 0; i+1 < len(w.headers); i += 2 {
		req.Header.Set(w.headers[i], w.headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", w.method, w.path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &r.Body)
	}
	return r
}

// checkResponse checks an answer of op against the closed document.
func (c *contractRun) checkResponse(op *apiOp, status int, contentType string, body []byte) error {
	o := c.closed.Operation(op.Method, op.Pattern)
	if o == nil {
		return fmt.Errorf("gateway/contract does not know %s %s", op.Method, op.Pattern)
	}
	return o.CheckResponse(status, contentType, body)
}

// checkHeaders checks what the document promises every response: its
// X-Request-Id, and the rate-limit headers on everything but a 401 (no
// caller is known then whose limit they could describe).
func checkHeaders(r resp) error {
	if r.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id")
	}
	limit, remaining := r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining")
	switch {
	case r.Status == 401 && (limit != "" || remaining != ""):
		return fmt.Errorf("a 401 with X-RateLimit-Limit %q, X-RateLimit-Remaining %q", limit, remaining)
	case r.Status != 401 && (limit == "" || remaining == ""):
		return fmt.Errorf("a %d without X-RateLimit-Limit or X-RateLimit-Remaining", r.Status)
	}
	return nil
}

// ---- happy paths ----

func (c *contractRun) happyPaths() {
	for _, last := range []bool{false, true} {
		for _, op := range c.doc.ops {
			for i, hc := range happyCases[op.ID] {
				if hc.last != last {
					continue
				}
				name := op.ID
				if hc.name != "" {
					name += " (" + hc.name + ")"
				}
				r := c.do(c.wireFor(op, hc.build(c.a)))
				if i == 0 {
					c.happyStatus[op.ID], c.happyType[op.ID] = r.Status, r.Header.Get("Content-Type")
				}
				if r.Status/100 != 2 {
					c.fail("happy-status", op.ID, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
					continue
				}
				if err := c.checkResponse(op, r.Status, r.Header.Get("Content-Type"), r.Raw); err != nil {
					c.fail("happy-response", op.ID, fmt.Sprintf("%s: %v", name, err))
					continue
				}
				if err := checkHeaders(r); err != nil {
					c.fail("happy-headers", op.ID, fmt.Sprintf("%s: %v", name, err))
					continue
				}
				c.stats.happy++
			}
		}
	}
}

// ---- the REST battery ----

var internals = regexp.MustCompile(`SQL|pgx|panic|goroutine|\.go:\d`)

func (c *contractRun) judge(op *apiOp, name string, r resp) {
	c.stats.bad++
	switch {
	case r.Status >= 500:
		c.stats.serverErrors++
		c.fail("5xx", op.ID, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
		return
	case r.Status/100 != 4:
		c.fail("accepted", op.ID, fmt.Sprintf("%s: %d %.200s", name, r.Status, r.Raw))
		return
	}
	if r.str("error") == "" || r.str("code") == "" {
		c.fail("error-body", op.ID, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
	}
	if internals.Match(r.Raw) {
		c.fail("internals", op.ID, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
	}
	if err := c.checkResponse(op, r.Status, r.Header.Get("Content-Type"), r.Raw); err != nil {
		c.fail("refusal-response", op.ID, fmt.Sprintf("%s: %v; %s", name, err, r.Raw))
	}
	if err := checkHeaders(r); err != nil {
		c.fail("refusal-headers", op.ID, fmt.Sprintf("%s: %v", name, err))
	}
}

// guarded runs send for every mutation of one operation and reports any
// state change they caused.
func (c *contractRun) guarded(what string, muts []mutation, send func(m mutation) (accepted bool)) {
	t0 := time.Now()
	defer func() {
		if os.Getenv("CONTRACT_DEBUG") != "" {
			c.t.Logf("%-30s %4d mutations %6.2fs", what, len(muts), time.Since(t0).Seconds())
		}
	}()
	before := c.baseline
	anyAccepted := false
	for _, m := range muts {
		if send(m) {
			anyAccepted = true
		}
	}
	var after state
	if anyAccepted {
		after = c.probe.settled(c.t, 10*time.Second)
	} else {
		after = c.probe.take(c.t)
	}
	if ch := before.changed(after); len(ch) > 0 {
		c.stats.stateChanges++
		c.fail("state-change", what, "changed "+strings.Join(ch, ", "))
		if !anyAccepted {
			after = c.probe.settled(c.t, 10*time.Second)
		}
	}
	c.baseline = after
}

func (c *contractRun) restBattery(op *apiOp) {
	cases := happyCases[op.ID]
	if len(cases) == 0 {
		return
	}
	hc := cases[0]
	build := hc.build
	if hc.battery != nil {
		build = hc.battery
	}
	base := build(c.a)
	muts := c.restMutations(op, hc, base)
	if os.Getenv("CONTRACT_DEBUG") == "names" {
		for _, m := range muts {
			c.t.Logf("%s: %s", op.ID, m.name)
		}
	}
	c.guarded(op.ID, muts, func(m mutation) bool {
		r := c.do(m.w)
		c.judge(op, m.name, r)
		// An accepted read changes nothing to wait for.
		return r.Status/100 == 2 && op.Method != "GET"
	})
}

var uuidLike = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func (c *contractRun) restMutations(op *apiOp, hc happyCase, base happyReq) []mutation {
	var out []mutation
	bw := c.wireFor(op, base)
	add := func(name string, w wire) { out = append(out, mutation{name: name, w: w}) }
	withPath := func(path string) wire {
		w := bw
		if i := strings.Index(bw.path, "?"); i >= 0 {
			path += bw.path[i:]
		}
		w.path = path
		return w
	}
	withQuery := func(q [][2]string) wire {
		w := bw
		w.path, _, _ = strings.Cut(bw.path, "?")
		if len(q) > 0 {
			w.path += "?" + encodeQuery(q)
		}
		return w
	}
	withBody := func(b []byte, ct string) wire {
		w := bw
		w.body, w.contentType = b, ct
		return w
	}

	if !op.Public {
		w := bw
		w.token = ""
		add("no credential", w)
		w.token = "lgr_not_a_key"
		add("unknown credential", w)
		if scope := jstr(op.node["x-scope"]); scope != "" {
			w.token = c.a.bankReader
			if scope == "bank:read" {
				w.token = c.a.journalReader
			}
			if op.OperatorOnly {
				w.token = c.a.admin
			}
			add("credential lacks "+scope, w)
		}
	}
	for _, m := range c.doc.pathMutations(c.t, op) {
		add("path "+m.param+" = "+m.label, withPath(c.pathOf(op, base.params, map[string]string{m.param: m.raw})))
	}
	if !hc.noForeign {
		foreign := hc.build(c.b)
		if hc.battery != nil {
			foreign = hc.battery(c.b)
		}
		for k, v := range foreign.params {
			if v != base.params[k] {
				add("path "+k+" = the other tenant's", withPath(c.pathOf(op, base.params, map[string]string{k: url.PathEscape(v)})))
			}
		}
		for k := range foreign.query {
			if v := foreign.query.Get(k); uuidLike.MatchString(v) && v != base.query.Get(k) {
				q := url.Values{}
				for kk, vv := range base.query {
					q[kk] = vv
				}
				q.Set(k, v)
				w := bw
				w.path, _, _ = strings.Cut(bw.path, "?")
				w.path += "?" + q.Encode()
				add("query "+k+" = the other tenant's", w)
			}
		}
		if fb, ok := c.bodyOf(op, foreign).(map[string]any); ok {
			bb, _ := c.bodyOf(op, base).(map[string]any)
			for k, v := range fb {
				if s, _ := v.(string); uuidLike.MatchString(s) && bb[k] != v {
					m := jcopy(bb).(map[string]any)
					m[k] = s
					add("body "+k+" = the other tenant's", withBody(jmarshal(m), "application/json"))
				}
			}
		}
	}
	for _, m := range c.doc.queryMutations(c.t, op, base.query) {
		add(m.name, withQuery(m.query))
	}
	if hasIdempotencyKey(op) {
		for _, k := range []struct{ label, key string }{
			{"of 256 characters", strings.Repeat("k", 256)}, {"with a tab", "a\tb"}, {"of invalid UTF-8", "a\xffb"},
		} {
			w := bw
			w.headers = append(slices.Clone(bw.headers), "Idempotency-Key", k.key)
			add("Idempotency-Key "+k.label, w)
		}
	}
	if op.Body == nil {
		return out
	}
	if op.Body.ContentType == "multipart/form-data" {
		for _, m := range c.doc.multipartMutations(c.t, op, base.multipart) {
			b, ct := multipartBody(c.t, m.parts...)
			add(m.name, withBody(b, ct))
		}
		add("body is JSON", withBody([]byte(`{}`), "application/json"))
		add("multipart without boundary", withBody([]byte("x"), "multipart/form-data"))
		return out
	}
	bv := c.bodyOf(op, base)
	if bv == nil {
		bv = map[string]any{}
	}
	for _, m := range c.doc.jsonMutations(op.Body.Schema, bv) {
		if !m.rule && c.doc.allows(c.t, op.Body.Ptr, m.raw) {
			continue
		}
		add("body "+m.name, withBody(m.raw, "application/json"))
	}
	raw := jmarshal(bv)
	add("body over 1 MiB", withBody([]byte(`{"zz":"`+strings.Repeat("x", 1<<20)+`"}`), "application/json"))
	add("body not JSON", withBody([]byte(`{"a":`), "application/json"))
	add("body with trailing data", withBody(append(slices.Clone(raw), []byte(` {}`)...), "application/json"))
	add("body is an array", withBody([]byte(`[]`), "application/json"))
	add("body is null", withBody([]byte(`null`), "application/json"))
	add("body as text/plain", withBody(raw, "text/plain"))
	add("body with a BOM", withBody(append([]byte("\xef\xbb\xbf"), raw...), "application/json"))
	if op.Body.Required {
		add("body missing", withBody(nil, ""))
	}
	return out
}

// ---- MCP ----

type mcpTool struct {
	name   string
	op     *apiOp
	schema any
	ptr    string
}

func (c *contractRun) tools() []mcpTool {
	r := c.p.call("POST", "/mcp", c.a.admin, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	res, _ := r.Body["result"].(map[string]any)
	routes := gateway.ToolRoutes()
	var out []mcpTool
	for _, it := range jslice(res["tools"]) {
		m, _ := it.(map[string]any)
		name := jstr(m["name"])
		op := c.opByRoute(routes[name])
		if op == nil {
			c.fail("mcp-no-route", name, "tool "+name+" runs "+routes[name]+", which the document lacks")
			continue
		}
		out = append(out, mcpTool{name: name, op: op, schema: jcopy(m["inputSchema"])})
	}
	if len(out) != len(routes) {
		c.fail("mcp-tools", "tools/list", fmt.Sprintf("tools/list offers %d tools to an admin, the gateway has %d", len(out), len(routes)))
	}
	return out
}

// toolArgs maps a route's request onto the tool's arguments: path
// parameters, query values typed as the tool declares them, body fields;
// only what the tool's schema declares.
func (c *contractRun) toolArgs(t mcpTool, r happyReq) map[string]any {
	f := c.doc.flatten(t.schema)
	args := map[string]any{}
	for k, v := range r.params {
		args[k] = v
	}
	for k := range r.query {
		v := r.query.Get(k)
		switch pf := c.doc.flatten(f.props[k]); {
		case pf.is("integer") || pf.is("number"):
			args[k] = json.Number(v)
		case pf.is("boolean"):
			args[k] = v == "true"
		default:
			args[k] = v
		}
	}
	if b, ok := c.bodyOf(t.op, r).(map[string]any); ok {
		for k, v := range b {
			args[k] = v
		}
	}
	return c.declared(t.schema, args).(map[string]any)
}

// declared drops what schema does not declare, recursively.
func (c *contractRun) declared(schema, v any) any {
	f := c.doc.flatten(schema)
	switch x := v.(type) {
	case map[string]any:
		if len(f.props) == 0 {
			return x
		}
		out := map[string]any{}
		for k, e := range x {
			if ps, ok := f.props[k]; ok {
				out[k] = c.declared(ps, e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.declared(f.items, e)
		}
		return out
	}
	return v
}

func (c *contractRun) callTool(token, name string, args []byte) resp {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + string(jmarshal(name)) + `,"arguments":`)
	msg = append(append(msg, args...), "}}"...)
	return c.do(wire{method: "POST", path: "/mcp", token: token, body: msg, contentType: "application/json"})
}

func rpcCode(r resp) int {
	e, _ := r.Body["error"].(map[string]any)
	n, _ := e["code"].(float64)
	return int(n)
}

func toolOutcome(r resp) (text string, isError bool, rpcErr string) {
	if e, ok := r.Body["error"].(map[string]any); ok {
		return "", false, fmt.Sprint(e)
	}
	res, _ := r.Body["result"].(map[string]any)
	for _, it := range jslice(res["content"]) {
		if m, ok := it.(map[string]any); ok {
			text += jstr(m["text"])
		}
	}
	return text, res["isError"] == true, ""
}

func (c *contractRun) mcpHappyPaths() {
	for _, t := range c.tools() {
		cases := happyCases[t.op.ID]
		if len(cases) == 0 {
			continue
		}
		args := c.toolArgs(t, cases[0].build(c.a))
		if cases[0].mcp != nil {
			cases[0].mcp(c.a, args)
		}
		r := c.callTool(c.a.admin, t.name, jmarshal(args))
		text, isErr, rpcErr := toolOutcome(r)
		status := c.happyStatus[t.op.ID]
		switch {
		case r.Status != 200 || rpcErr != "":
			c.fail("mcp-happy", t.name, fmt.Sprintf("%d %s", r.Status, r.Raw))
		case isErr:
			c.fail("mcp-happy", t.name, "isError: "+text)
		case checkHeaders(r) != nil:
			c.fail("mcp-happy-headers", t.name, checkHeaders(r).Error())
		default:
			// A tool's text is its route's answer: JSON, or the file a
			// route answers (a payment run's XML).
			ct := "application/json"
			if h := c.happyType[t.op.ID]; h != "" && !strings.Contains(h, "json") {
				ct = h
			}
			if err := c.checkResponse(t.op, status, ct, []byte(text)); err != nil {
				c.fail("mcp-happy-response", t.name, err.Error())
			} else {
				c.stats.happyMCP++
			}
		}
	}
}

func (c *contractRun) mcpBattery() {
	for i, t := range c.tools() {
		cases := happyCases[t.op.ID]
		if len(cases) == 0 {
			continue
		}
		hc := cases[0]
		build := hc.build
		if hc.battery != nil {
			build = hc.battery
		}
		base := c.toolArgs(t, build(c.a))
		ptr := fmt.Sprintf("mem://tool-%d.json", i)
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		comp.AssertFormat()
		if err := comp.AddResource(ptr, t.schema); err != nil {
			c.t.Fatal(err)
		}
		sch, err := comp.Compile(ptr)
		if err != nil {
			c.t.Fatal(err)
		}
		var muts []mutation
		add := func(name string, args []byte) { muts = append(muts, mutation{name: name, w: wire{body: args}}) }
		for _, m := range c.doc.jsonMutations(t.schema, base) {
			if !m.rule {
				if v, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.raw)); err == nil && sch.Validate(v) == nil {
					continue
				}
			}
			add(m.name, m.raw)
		}
		if !hc.noForeign {
			fb := hc.build
			if hc.battery != nil {
				fb = hc.battery
			}
			foreign := c.toolArgs(t, fb(c.b))
			for k, v := range foreign {
				if s, _ := v.(string); uuidLike.MatchString(s) && base[k] != v {
					m := jcopy(base).(map[string]any)
					m[k] = s
					add(k+" = the other tenant's", jmarshal(m))
				}
			}
		}
		add("arguments not an object", []byte(`[]`))
		c.guarded("mcp "+t.name, muts, func(m mutation) bool {
			r := c.callTool(c.a.admin, t.name, m.w.body)
			return c.judgeTool(t, m.name, r) && t.op.Method != "GET"
		})
	}
}

func (c *contractRun) judgeTool(t mcpTool, name string, r resp) (accepted bool) {
	c.stats.bad++
	c.stats.badMCP++
	what := "mcp " + t.name
	text, isErr, rpcErr := toolOutcome(r)
	if err := checkHeaders(r); err != nil {
		c.fail("refusal-headers", what, fmt.Sprintf("%s: %v", name, err))
	}
	switch {
	case r.Status >= 500:
		c.stats.serverErrors++
		c.fail("5xx", what, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
		return false
	case rpcErr != "":
		// A message that is no strict JSON (duplicate names, invalid UTF-8,
		// NUL in text) is refused whole, before its tool is known: a parse
		// error (-32700, HTTP 400), as JSON-RPC has it. Arguments that are
		// no object break the params: invalid params (-32602). Never an
		// internal error (-32603).
		code := rpcCode(r)
		if !(code == -32700 && r.Status == 400 || code == -32602 && r.Status == 200) {
			c.fail("mcp-rpc-error", what, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
		}
		return false
	case r.Status != 200:
		c.fail("mcp-http-status", what, fmt.Sprintf("%s: %d %s", name, r.Status, r.Raw))
		return false
	case !isErr:
		c.fail("accepted", what, fmt.Sprintf("%s: %.200s", name, text))
		return true
	}
	var body struct{ Error, Code string }
	if json.Unmarshal([]byte(text), &body) != nil || body.Error == "" || body.Code == "" {
		c.fail("error-body", what, fmt.Sprintf("%s: %s", name, text))
	}
	if body.Code == "INTERNAL" {
		c.stats.serverErrors++
		c.fail("5xx", what, fmt.Sprintf("%s: %s", name, text))
	}
	if internals.MatchString(text) {
		c.fail("internals", what, fmt.Sprintf("%s: %s", name, text))
	}
	return false
}

// ---- the summary ----

func (c *contractRun) report(timing string) {
	s := c.stats
	var b strings.Builder
	failures := 0
	for _, g := range c.findings {
		failures += g.n
	}
	fmt.Fprintf(&b, "contract test: %d operations in the document, %d with a happy path; %d REST and %d MCP happy paths validated; "+
		"%d bad inputs sent (%d over MCP); %d 5xx; %d state changes; %d failures (%s)\n",
		s.ops, s.covered, s.happy, s.happyMCP, s.bad, s.badMCP, s.serverErrors, s.stateChanges, failures, timing)
	for _, key := range sortedKeys(c.findings) {
		g := c.findings[key]
		fmt.Fprintf(&b, "  %s %s: %d\n", g.kind, g.op, g.n)
		for _, e := range g.examples {
			fmt.Fprintf(&b, "      %s\n", e)
		}
	}
	out := b.String()
	if path := os.Getenv("CONTRACT_SUMMARY"); path != "" {
		// The counts and one line per finding; the examples are in the
		// test's own output when it fails.
		var short []string
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(l, "      ") {
				short = append(short, l)
			}
		}
		if err := os.WriteFile(path, []byte(strings.Join(short, "\n")), 0o644); err != nil {
			c.t.Errorf("CONTRACT_SUMMARY: %v", err)
		}
	}
	if failures > 0 {
		c.t.Errorf("%s", out)
	} else {
		c.t.Logf("%s", out)
	}
}
