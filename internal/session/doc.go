// Package session assembles one agentls session: the operations layer over
// the workspace folders, the tool registry, and the executor with its
// governance. The editor protocol (internal/rpc), the one-shot CLI
// (`agentls call`) and the MCP server all drive the same Session, so no tool
// has a second implementation.
package session
