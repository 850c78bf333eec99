package gateway

// ToolRoutes maps each MCP tool to the route it runs ("METHOD /pattern"),
// so a contract test can drive every tool with its route's cases.
func ToolRoutes() map[string]string {
	out := make(map[string]string, len(tools))
	for _, t := range tools {
		out[t.Name] = t.Route
	}
	return out
}
