package tools

import "github.com/agentls/agentls/internal/mention"

// The core tools' descriptions and Instructions name other tools as
// {{name}}: a host may list the tools to its model under other names (VS
// Code: agentls_grep), and a hint must name a tool as that model sees it.
// Define keeps the marked text, so every client gets its own names.

// VSCodeToolPrefix is the prefix of the tool names in VS Code's
// languageModelTools contributions (the "vscode" format).
const VSCodeToolPrefix = "agentls_"

// Mentions replaces each {{name}} in text with prefix+name. Text without
// marks is returned as is.
func Mentions(text, prefix string) string { return mention.Prefix(prefix).Render(text) }

// DescriptionFor is the tool's description with its mentions of other
// tools named prefix+name.
func (t *Tool) DescriptionFor(prefix string) string {
	if t.template == "" {
		return t.Description
	}
	return Mentions(t.template, prefix)
}
