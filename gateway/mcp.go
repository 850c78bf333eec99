package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// The MCP endpoint (Streamable HTTP transport, JSON responses): POST /mcp
// carries one JSON-RPC 2.0 message. The bearer credential is the same as
// for REST; every tool call passes the same scope check, rate limit, service
// call and audit record as the REST route it is bound to.

var mcpVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

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
	route *compiled
}

func (g *Gateway) mcpTools() (map[string]mcpTool, error) {
	out := map[string]mcpTool{}
	for _, t := range tools {
		var rt *compiled
		for i := range g.router.routes {
			if r := &g.router.routes[i]; r.Method == t.Method && r.Pattern == t.Pattern {
				rt = r
			}
		}
		if rt == nil {
			return nil, fmt.Errorf("mcp tool %s: no route %s %s", t.Name, t.Method, t.Pattern)
		}
		out[t.Name] = mcpTool{tool: t, route: rt}
	}
	return out, nil
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	setRouteLabel(r, "POST /mcp")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, r, errs.E(errs.MethodNotAllowed, "this MCP endpoint takes JSON-RPC messages by POST and offers no event stream"))
		return
	}
	start := time.Now()
	base := gatewayv1.Call{RequestID: requestIDOf(r), Surface: "mcp", Method: "POST", Route: "POST /mcp", ClientIP: g.clientIP(r), At: start.UTC()}
	claims, err := g.authenticate(r.Context(), r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ledger"`)
		g.auditMCP(base, start, errs.Status(errs.CodeOf(err)), errs.CodeOf(err))
		writeError(w, r, err)
		return
	}
	base.TenantID, base.KeyID, base.UserID, base.Actor = claims.TenantID, claims.KeyID, claims.UserID, claims.Actor()
	if !g.allow(w, r, claims.Actor(), g.cfg.RateLimitPerMinute, func(err error) {
		g.auditMCP(base, start, http.StatusTooManyRequests, errs.RateLimited)
		writeError(w, r, err)
	}) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
	var req rpcRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || req.JSONRPC != "2.0" || req.Method == "" {
		g.auditMCP(base, start, http.StatusBadRequest, errs.InvalidInput)
		writeJSON(w, http.StatusBadRequest, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: &rpcError{Code: -32600, Message: "expected one JSON-RPC 2.0 request object"}})
		return
	}
	if len(req.ID) == 0 { // a notification: nothing to answer
		w.WriteHeader(http.StatusAccepted)
		return
	}
	c := *claims
	c.Surface = "mcp"
	ctx := auth.WithClaims(r.Context(), &c)
	resp := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		version := mcpVersions[0]
		if slices.Contains(mcpVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		resp.Result = map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "ledger-platform", "version": "0.1.0"},
			"instructions": "German double-entry bookkeeping (SKR04, GoBD). Amounts are EUR with at most 2 decimals. " +
				"The journal is append-only: correct with reverse_intent. Start with whoami, search_accounts and list_tax_codes.",
		}
		g.auditMCP(base, start, http.StatusOK, "")
	case "ping":
		resp.Result = map[string]any{}
		g.auditMCP(base, start, http.StatusOK, "")
	case "tools/list":
		list := []map[string]any{}
		for _, t := range tools {
			rt := g.mcp[t.Name].route
			if authorize(claims, rt.Route) != nil {
				continue // only what this credential may run
			}
			list = append(list, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.Schema})
		}
		resp.Result = map[string]any{"tools": list}
		g.auditMCP(base, start, http.StatusOK, "")
	case "tools/call":
		resp.Result, resp.Error = g.callTool(ctx, claims, req.Params, base, start)
	default:
		resp.Error = &rpcError{Code: -32601, Message: "unknown method " + req.Method}
		g.auditMCP(base, start, http.StatusNotFound, errs.NotFound)
	}
	writeJSON(w, http.StatusOK, resp)
}

// callTool runs a tool through its route. Refusals and service errors are
// tool results with isError set, so an agent sees the error body and code.
func (g *Gateway) callTool(ctx context.Context, claims *auth.Claims, raw json.RawMessage, call gatewayv1.Call, start time.Time) (any, *rpcError) {
	var p struct {
		Name      string                     `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: "params must be {name, arguments}"}
	}
	t, ok := g.mcp[p.Name]
	if !ok {
		return nil, &rpcError{Code: -32602, Message: "unknown tool " + p.Name}
	}
	rt := t.route
	call.Method, call.Route, call.Scope = rt.Method, rt.Method+" "+rt.Pattern, rt.Scope
	result := func(status int, code string, body []byte) (any, *rpcError) {
		call.ErrorCode = code
		g.auditMCP(call, start, status, code)
		res := map[string]any{"content": []map[string]any{{"type": "text", "text": string(body)}}, "isError": code != ""}
		var structured map[string]any
		if json.Unmarshal(body, &structured) == nil {
			res["structuredContent"] = structured
		}
		return res, nil
	}
	fail := func(err error) (any, *rpcError) {
		code, msg, details := errs.Public(err)
		if e := errs.As(err); e != nil {
			code, msg, details = e.Code, e.Message, e.Details
		}
		b, _ := json.Marshal(errs.Body{Error: msg, Code: code, Details: details, RequestID: call.RequestID})
		return result(errs.Status(code), code, b)
	}
	if err := authorize(claims, rt.Route); err != nil {
		return fail(err)
	}
	req := &natsx.Request{Params: url.Values{}, Query: url.Values{}}
	body := map[string]json.RawMessage{}
	var idemKey string
	for k, v := range p.Arguments {
		switch {
		case k == "idempotency_key":
			if err := json.Unmarshal(v, &idemKey); err != nil || len(idemKey) > maxIdempotencyKey {
				return fail(errs.Invalid("idempotency_key must be a string of at most 255 characters", errs.Field("idempotency_key", "invalid")))
			}
		case slices.Contains(rt.names, k):
			req.Params.Set(k, scalar(v))
			if k == rt.names[0] {
				call.TargetID = scalar(v)
			}
		case slices.Contains(t.Query, k):
			req.Query.Set(k, scalar(v))
		case rt.Method == http.MethodGet:
			return fail(errs.Invalid("unknown argument "+k, errs.Field(k, "not an argument of "+t.Name)))
		default:
			body[k] = v
		}
	}
	for _, name := range rt.names {
		if req.Params.Get(name) == "" {
			return fail(errs.Invalid("missing argument "+name, errs.Field(name, "required")))
		}
	}
	if rt.Method != http.MethodGet {
		b, err := json.Marshal(body)
		if err != nil {
			return fail(errs.Invalid("arguments are not valid JSON"))
		}
		req.Body, req.ContentType = b, "application/json"
	}
	if idemKey != "" {
		ctx = natsx.WithIdempotencyKey(ctx, idemKey)
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.RequestTimeout)
	defer cancel()
	reply, err := g.client.Do(ctx, rt.Subject, req)
	if err != nil {
		return fail(err)
	}
	return result(reply.Status, reply.ErrCode, reply.Body)
}

// scalar turns a JSON argument into a path or query value.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.Trim(string(v), `"`)
}

func (g *Gateway) auditMCP(c gatewayv1.Call, start time.Time, status int, code string) {
	c.Status, c.ErrorCode = status, code
	c.DurationMS = time.Since(start).Milliseconds()
	g.audit.record(&c)
	g.metrics.requests.WithLabelValues("POST", "/mcp", strconv.Itoa(status)).Inc()
}
