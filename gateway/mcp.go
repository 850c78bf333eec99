package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/ledgerplatform/ledger/gateway/contract"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// The MCP endpoint (Streamable HTTP transport, JSON responses): POST /mcp
// carries one JSON-RPC 2.0 message. It only translates: the message is an
// exchange of the pipeline, authenticated and rate-limited with the same
// bearer credential as REST, and a tool call runs its route's pipeline.

var mcpVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// mcpEndpoint is the route a message is audited under until it names a tool.
var mcpEndpoint = &route{Route: Route{Method: http.MethodPost, Pattern: "/mcp"}, name: "POST /mcp"}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// mcpTool is a tool with its route resolved.
type mcpTool struct {
	tool
	route *route
	query map[string]bool  // what a GET tool declares besides path parameters
	input *contract.Schema // the published input schema, which every call's arguments must meet
}

func newTools(rr *router) (map[string]*mcpTool, error) {
	out := map[string]*mcpTool{}
	for _, t := range tools {
		rt := rr.routes[t.Route]
		if rt == nil {
			return nil, fmt.Errorf("mcp tool %s: no route %s", t.Name, t.Route)
		}
		input, err := contract.CompileSchema("tool:"+t.Name, t.Schema)
		if err != nil {
			return nil, err
		}
		mt := &mcpTool{tool: t, route: rt, query: map[string]bool{}, input: input}
		props, _ := t.Schema["properties"].(map[string]any)
		for name := range props {
			mt.query[name] = rt.Method == http.MethodGet && !slices.Contains(rt.params, name)
		}
		out[t.Name] = mt
	}
	return out, nil
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	x := g.begin(w, r, mcpSurface)
	defer g.finish(x)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		x.reject(w, errs.E(errs.MethodNotAllowed, "this MCP endpoint takes JSON-RPC messages by POST and offers no event stream"))
		return
	}
	x.use(mcpEndpoint, nil)
	ctx, err := g.admit(r.Context(), x)
	if err != nil {
		x.reject(w, err)
		return
	}
	// A message may carry a file for an upload tool, in base64; any other
	// tool's arguments are held to the REST body limit (callTool).
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max(g.cfg.MaxBodyBytes, g.cfg.MaxUploadBytes/3*4+64<<10)))
	var req rpcRequest
	if err == nil {
		// The message as a whole is read as strictly as a REST body, so no
		// duplicate or broken name in a tool's arguments is lost on the way.
		if _, strict := contract.DecodeJSON(body); strict != nil {
			writeJSON(w, http.StatusBadRequest, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"),
				Error: x.rpcError(-32700, withDetails(strict))})
			return
		}
		err = json.Unmarshal(body, &req)
	}
	if err != nil || req.JSONRPC != "2.0" || req.Method == "" {
		writeJSON(w, http.StatusBadRequest, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: x.rpcError(-32600, errs.Invalid("expected one JSON-RPC 2.0 request object"))})
		return
	}
	if len(req.ID) == 0 { // a notification: nothing to answer
		x.rec.Status = http.StatusAccepted
		w.WriteHeader(http.StatusAccepted)
		return
	}
	x.rec.Status = http.StatusOK
	resp := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	switch req.Method {
	case "initialize":
		resp.Result = initializeResult(req.Params)
	case "ping":
		resp.Result = map[string]any{}
	case "tools/list":
		resp.Result = g.toolList(x.claims)
	case "tools/call":
		resp.Result, resp.Error = g.callTool(ctx, x, req.Params)
	default:
		resp.Error = x.rpcError(-32601, errs.NotFoundf("unknown method %s", req.Method))
	}
	writeJSON(w, http.StatusOK, resp)
}

// rpcError answers err as a JSON-RPC error, audited with err's status and code.
func (x *exchange) rpcError(code int, err error) *rpcError {
	_, body := x.fail(err)
	return &rpcError{Code: code, Message: body.Error}
}

func initializeResult(params json.RawMessage) map[string]any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := mcpVersions[0]
	if slices.Contains(mcpVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": "ledger-platform", "version": "0.1.0"},
		"instructions": "German double-entry bookkeeping (SKR04, GoBD). Amounts are EUR with at most 2 decimals. " +
			"The journal is append-only: correct with reverse_intent. Start with whoami, search_accounts and list_tax_codes.",
	}
}

// toolList offers only what the credential may run.
func (g *Gateway) toolList(claims *auth.Claims) map[string]any {
	list := []map[string]any{}
	for _, t := range tools {
		if authorize(claims, g.tools[t.Name].route.Route) != nil {
			continue
		}
		list = append(list, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.Schema})
	}
	return map[string]any{"tools": list}
}

// callTool runs a tool through its route's pipeline. Refusals and service
// errors are tool results with isError set, rendered as REST renders them,
// so an agent sees the error body and code.
func (g *Gateway) callTool(ctx context.Context, x *exchange, raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string                     `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, x.rpcError(-32602, errs.Invalid("params must be {name, arguments}"))
	}
	t, ok := g.tools[p.Name]
	if !ok {
		return nil, x.rpcError(-32602, errs.NotFoundf("unknown tool %s", p.Name))
	}
	x.use(t.route, func(name string) string { return scalar(p.Arguments[name]) })
	reply, err := g.call(ctx, x, func() (*natsx.Request, string, error) {
		if t.route.Flags&Upload == 0 && int64(len(raw)) > g.cfg.MaxBodyBytes {
			return nil, "", errs.E(errs.PayloadTooLarge, "the arguments exceed %d bytes", g.cfg.MaxBodyBytes)
		}
		req, key, err := t.request(p.Arguments)
		if err == nil && int64(len(req.Body)) > g.cfg.MaxUploadBytes+64<<10 {
			err = errs.E(errs.FileTooLarge, "the file exceeds %d bytes; files may have at most 10 MB", g.cfg.MaxUploadBytes)
		}
		return req, key, err
	})
	if err != nil {
		_, body := x.fail(err)
		b, _ := json.Marshal(body)
		return toolResult(b, true), nil
	}
	x.rec.Status = reply.Status
	return toolResult(reply.Body, false), nil
}

func toolResult(body []byte, isError bool) map[string]any {
	res := map[string]any{"content": []map[string]any{{"type": "text", "text": string(body)}}, "isError": isError}
	var structured map[string]any
	if json.Unmarshal(body, &structured) == nil {
		res["structuredContent"] = structured
	}
	return res
}

// request maps the arguments onto the tool's route and returns the
// idempotency key apart.
func (t *mcpTool) request(args map[string]json.RawMessage) (*natsx.Request, string, error) {
	// The arguments as the tool publishes them: a GET tool's arguments
	// become query text, which would lose their JSON types (7 for a
	// string, "12" for an integer) before the route's check.
	if args == nil {
		args = map[string]json.RawMessage{} // no arguments is none
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, "", errs.Invalid("arguments are not valid JSON")
	}
	v, err := contract.DecodeJSON(raw)
	if err != nil {
		return nil, "", err
	}
	if err := t.input.Check(v); err != nil {
		return nil, "", err
	}
	req := &natsx.Request{Params: url.Values{}, Query: url.Values{}}
	body := map[string]json.RawMessage{}
	var key string
	for k, v := range args {
		switch {
		case k == "idempotency_key":
			if err := json.Unmarshal(v, &key); err != nil {
				return nil, "", errs.Invalid("idempotency_key must be a string", errs.Field(k, "must be a string"))
			}
		case slices.Contains(t.route.params, k):
			req.Params.Set(k, scalar(v))
		case t.query[k]:
			req.Query.Set(k, scalar(v))
		case t.route.Method == http.MethodGet:
			return nil, "", errs.Invalid("unknown argument "+k, errs.Field(k, "not an argument of "+t.Name))
		default:
			body[k] = v
		}
	}
	for _, name := range t.route.params {
		if req.Params.Get(name) == "" {
			return nil, "", errs.Invalid("missing argument "+name, errs.Field(name, "required"))
		}
	}
	if t.route.Flags&Upload != 0 {
		req.Body, req.ContentType, err = uploadForm(body)
		return req, key, err
	}
	if t.route.Method != http.MethodGet {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, "", errs.Invalid("arguments are not valid JSON")
		}
		req.Body, req.ContentType = b, "application/json"
	}
	return req, key, nil
}

// uploadForm is the multipart form an upload route takes, made of a
// tool's arguments: MCP has no file arguments, so the file comes as
// file_base64 with its filename and, optionally, its content_type (else
// the one its extension names); any other argument is a text field.
func uploadForm(args map[string]json.RawMessage) ([]byte, string, error) {
	var file, name, ctype string
	for k, dst := range map[string]*string{"file_base64": &file, "filename": &name, "content_type": &ctype} {
		if v, ok := args[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, "", errs.Invalid(k+" must be a string", errs.Field(k, "must be a string"))
			}
			delete(args, k)
		}
	}
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(file), ""))
	if err != nil || len(data) == 0 {
		return nil, "", errs.Invalid("file_base64 is not a file in base64", errs.Field("file_base64", "the file's bytes in standard base64, not empty"))
	}
	if ctype == "" {
		ctype = cmp.Or(fileTypes[strings.ToLower(path.Ext(name))], "application/octet-stream")
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": name}))
	h.Set("Content-Type", ctype)
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(data)
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if err == nil {
			err = w.WriteField(k, scalar(args[k]))
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("gateway.uploadForm: %w", err)
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// fileTypes are the content types of the files the upload routes take, by
// extension (not mime.TypeByExtension, which reads the system's tables).
var fileTypes = map[string]string{".pdf": "application/pdf", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".xml": "application/xml"}

// scalar turns a JSON argument into a path or query value.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.Trim(string(v), `"`)
}

// withDetails folds an error's field details into its message, for the
// JSON-RPC error object, which has no place for them.
func withDetails(err error) error {
	e := errs.As(err)
	if e == nil || len(e.Details) == 0 {
		return err
	}
	msg := e.Message
	for _, d := range e.Details {
		msg += "; " + cmp.Or(d.Field, "(message)") + ": " + d.Issue
	}
	return errs.Invalid(msg, e.Details...)
}
