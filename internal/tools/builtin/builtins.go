package builtin

import "github.com/agentls/agentls/internal/tools"

// Builtins returns the core tools enforcing and describing l, in the order
// tools/list shows them.
func Builtins(l tools.Limits) []*tools.Tool {
	return []*tools.Tool{NewRead(l), NewLs(l), NewGrep(l), NewFind(l), NewEdit(), NewWrite(), NewBash(l)}
}

// instructionsTemplate is the short system-prompt text offered to clients
// (the initialize result's instructions, as MCP does), with tool mentions as
// {{name}}: InstructionsFor renders it.
const instructionsTemplate = `You work in a code workspace through the agentls tools.
- Read a file before editing it; {{edit}} and {{write}} refuse files you have not read (or that changed since you read them).
- Search when a path is unknown: {{grep}} for content, {{find}} for file names, {{ls}} for a directory. Never guess file contents.
- Prefer these tools over shell equivalents (cat, grep, find, sed) in {{bash}}.
- Keep {{edit}} oldText small but unique; include a little surrounding context when a snippet repeats.
- When output is cut, the notice says exactly how to get more (offset, limit, or a spill file to read).`

// InstructionsFor is Instructions naming the tools prefix+name.
func InstructionsFor(prefix string) string {
	return tools.Mentions(instructionsTemplate, prefix)
}
