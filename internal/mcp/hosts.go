package mcp

import "github.com/agentls/agentls/internal/tools"

// Host is the MCP client as agentls sizes results for it: the name it
// gave at initialize (clientInfo.name) and the most of one tool result it
// passes to its model uncut (Cap).
type Host struct {
	Name string
	Cap  tools.HostCap
}

// UnknownHostBytes is the result budget for a client not in hostCaps: the
// smallest cap among the hosts measured that count characters or bytes
// (Gemini CLI's), which is within what the others take too.
const UnknownHostBytes = 39_000

// hostCaps are the output caps of the MCP hosts agentls knows, keyed by
// the clientInfo.name each sends. Each cap is in bytes of text, derived
// from how that host counts (docs/tools.md gives the source of each):
//
//   - Codex keeps 1.2 × its model's truncation policy of a tool output:
//     Bytes(10,000) by default (12,000 bytes), Tokens(10,000) for the codex
//     models, counted as bytes/4 (48,000 bytes). 10,000 bytes holds under
//     both, with room for the result's JSON form.
//   - Gemini CLI cuts the middle out of a result over 40,000 characters
//     (UTF-16 code units; a text has at least as many UTF-8 bytes),
//     counted with the 41-character <untrusted_context> envelope it wraps
//     the text in: 39,959 of the server's own. 39,000 leaves room for a
//     longer envelope.
//   - opencode cuts a result over 50 KiB or 2,000 lines.
//   - Claude Code cuts a result over MAX_MCP_OUTPUT_TOKENS, default 25,000
//     tokens, counted by the model's tokenizer: a token is at least one
//     byte, so 25,000 bytes is never more than 25,000 tokens.
//   - agentls itself (an upstream server of another agentls) has no cap:
//     the downstream governs the result with its own budgets and its own
//     host's cap, and cuts it keeping the head, with a notice.
var hostCaps = map[string]tools.HostCap{
	"agentls":               {},
	"codex-mcp-client":      {Bytes: 10_000},
	"gemini-cli-mcp-client": {Bytes: 39_000},
	"opencode":              {Bytes: 50 * 1024, Lines: 2000},
	"claude-code":           {Bytes: 25_000},
}

// HostOf is the host named clientName, with its cap from the table or,
// unknown, UnknownHostBytes.
func HostOf(clientName string) Host {
	c, ok := hostCaps[clientName]
	if !ok {
		c = tools.HostCap{Bytes: UnknownHostBytes}
	}
	return Host{Name: clientName, Cap: c}
}
