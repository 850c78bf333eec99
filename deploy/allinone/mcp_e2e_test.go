package allinone_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// rpc sends one JSON-RPC message to /mcp.
func (p *platform) mcpCall(t *testing.T, key string, id int, method string, params any) resp {
	t.Helper()
	return p.call("POST", "/mcp", key, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func toolResult(t *testing.T, r resp) (map[string]any, bool) {
	t.Helper()
	res, ok := r.Body["result"].(map[string]any)
	if r.Status != 200 || !ok {
		t.Fatalf("tools/call: %d %s", r.Status, r.Raw)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	return sc, res["isError"] == true
}

// TestMCP: tools run through the same scope check, services and audit as
// REST, and postings record the mcp surface.
func TestMCP(t *testing.T) {
	p, tenantKey, _ := setup(t, nil, "MCP GmbH")
	writer, reader := p.apiKey(tenantKey, "journal:write", "journal:read", "config:read"), p.apiKey(tenantKey, "journal:read")

	if r := p.call("POST", "/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize"}); r.Status != 401 {
		t.Fatalf("no credential: %d", r.Status)
	}
	init := p.mcpCall(t, writer, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	if v := init.str("result", "protocolVersion"); v != "2025-06-18" {
		t.Fatalf("initialize: %s", init.Raw)
	}
	if r := p.call("POST", "/mcp", writer, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); r.Status != 202 {
		t.Fatalf("notification: %d %s", r.Status, r.Raw)
	}

	names := func(key string) []string {
		var out []string
		r := p.mcpCall(t, key, 2, "tools/list", map[string]any{})
		res, _ := r.Body["result"].(map[string]any)
		list, _ := res["tools"].([]any)
		for _, it := range list {
			m := it.(map[string]any)
			if m["inputSchema"] == nil || m["description"] == "" {
				t.Fatalf("tool without schema or description: %v", m)
			}
			out = append(out, m["name"].(string))
		}
		return out
	}
	if got := names(writer); !slices.Contains(got, "post_booking") || !slices.Contains(got, "list_tax_codes") {
		t.Fatalf("writer tools: %v", got)
	}
	if got := names(reader); slices.Contains(got, "post_booking") || !slices.Contains(got, "list_journal") {
		t.Fatalf("a read-only key must not be offered post_booking: %v", got)
	}

	booking := map[string]any{"booking_date": "2025-03-14", "description": "Büromaterial via MCP", "idempotency_key": "mcp-1",
		"lines": []map[string]any{{"account_debit": "6815", "account_credit": "1800", "amount": 119.00, "tax_code": "VSt19"}}}
	sc, isErr := toolResult(t, p.mcpCall(t, writer, 3, "tools/call", map[string]any{"name": "post_booking", "arguments": booking}))
	if isErr || sc["event_count"] != float64(2) {
		t.Fatalf("post_booking: %v", sc)
	}
	intent := sc["intent_id"].(string)
	again, _ := toolResult(t, p.mcpCall(t, writer, 4, "tools/call", map[string]any{"name": "post_booking", "arguments": booking}))
	if again["intent_id"] != intent {
		t.Fatalf("idempotent retry posted again: %v vs %s", again, intent)
	}
	got, isErr := toolResult(t, p.mcpCall(t, reader, 5, "tools/call", map[string]any{"name": "get_intent", "arguments": map[string]any{"intent_id": intent}}))
	if isErr {
		t.Fatalf("get_intent: %v", got)
	}
	entries := got["entries"].([]any)
	prov := entries[0].(map[string]any)["provenance_summary"].(map[string]any)
	if prov["surface"] != "mcp" || len(entries) != 2 {
		t.Fatalf("provenance of an MCP posting: %v (%d entries)", prov, len(entries))
	}

	// The reader may not post: refused like REST, as a tool error.
	refused, isErr := toolResult(t, p.mcpCall(t, reader, 6, "tools/call", map[string]any{"name": "post_booking", "arguments": booking}))
	if !isErr || refused["code"] != "FORBIDDEN" {
		t.Fatalf("read-only key posting: %v", refused)
	}
	bad := map[string]any{"booking_date": "2025-02-30", "description": "x", "lines": []map[string]any{{"account_debit": "6815", "account_credit": "1800", "amount": 1}}}
	invalid, isErr := toolResult(t, p.mcpCall(t, writer, 7, "tools/call", map[string]any{"name": "post_booking", "arguments": bad}))
	if !isErr || invalid["code"] != "INVALID_INPUT" {
		t.Fatalf("invalid booking: %v", invalid)
	}
	if r := p.mcpCall(t, writer, 8, "tools/call", map[string]any{"name": "drop_tables", "arguments": map[string]any{}}); r.Body["error"] == nil {
		t.Fatalf("unknown tool: %s", r.Raw)
	}
	if r := p.mcpCall(t, writer, 9, "no/such/method", nil); r.Body["error"] == nil {
		t.Fatalf("unknown method: %s", r.Raw)
	}
	// Each call is audited with the mcp surface, refusals included.
	eventually(t, 3*time.Second, func() error {
		n := count(t, p.owner, "SELECT count(*) FROM identity.audit_log WHERE surface = 'mcp' AND route = 'POST /v1/bookings' AND status = 403")
		if n != 1 {
			return fmt.Errorf("%d refused MCP postings audited", n)
		}
		return nil
	})
	var raw json.RawMessage = init.Raw
	_ = raw
}
