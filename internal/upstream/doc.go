// Package upstream runs the MCP servers a project or user configures
// (.agentls/mcp.json, the user config dir's agentls/mcp.json) and offers
// their tools as deferred agentls tools named <server>__<tool>.
//
// It owns the client side only: the config loader (both the .vscode/mcp.json
// {"servers": …} shape and the {"mcpServers": …} shape, with ${env:NAME},
// ${NAME:-default}, ${workspaceFolder} and ${userHome} expanded), connecting
// to each server in the background over stdio (a child process in the
// folder that configures it; stdout lines that are not JSON-RPC are skipped,
// stderr is logged and its end quoted when the server fails), streamable
// HTTP or SSE (with the configured headers, never logged), proxying calls
// (with progress and cancellation), and reconnecting a crashed process or a
// broken HTTP session with backoff. Governance (permission rules, result
// budget, masking, audit) stays in the executor every call goes through.
package upstream
