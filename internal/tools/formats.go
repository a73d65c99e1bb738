package tools

import "fmt"

// Formats accepted by tools/list and `agentls tools --format`.
var Formats = []string{"mcp", "openai", "anthropic", "vscode"}

// Describe renders tools in a client format: "mcp" (default), "openai",
// "anthropic" (each ready to paste into a model request) or "vscode"
// (package.json languageModelTools contributions).
func Describe(ts []*Tool, format string, registry *Registry) ([]map[string]any, error) {
	return DescribeFor(ts, format, registry, "")
}

// DescribeFor is Describe for a client whose model sees the tools named
// prefix+name (initializationOptions.toolNamePrefix): descriptions name
// other tools that way. The "vscode" format always uses VSCodeToolPrefix,
// the names it contributes.
func DescribeFor(ts []*Tool, format string, registry *Registry, prefix string) ([]map[string]any, error) {
	if format == "vscode" {
		prefix = VSCodeToolPrefix
	}
	out := make([]map[string]any, 0, len(ts))
	for _, t := range ts {
		desc := t.DescriptionFor(prefix)
		switch format {
		case "", "mcp":
			labels := t.staticLabels()
			deferred := t.Deferred
			if registry != nil {
				deferred = !registry.IsActive(t.Name)
			}
			out = append(out, map[string]any{
				"name":        t.Name,
				"description": desc,
				"inputSchema": t.Schema,
				"annotations": t.Annotations(),
				"_meta":       map[string]any{"concurrencySafe": labels.ConcurrencySafe, "deferred": deferred, "source": t.Source},
			})
		case "openai":
			out = append(out, map[string]any{
				"type":     "function",
				"function": map[string]any{"name": t.Name, "description": desc, "parameters": t.Schema},
			})
		case "anthropic":
			out = append(out, map[string]any{"name": t.Name, "description": desc, "input_schema": t.Schema})
		case "vscode":
			out = append(out, map[string]any{
				"name":                    prefix + t.Name,
				"displayName":             "agentls " + t.Name,
				"toolReferenceName":       prefix + t.Name,
				"modelDescription":        desc,
				"userDescription":         firstSentence(desc),
				"canBeReferencedInPrompt": true,
				"icon":                    vscodeIcon(t.Name),
				"tags":                    vscodeTags(t.Name),
				"inputSchema":             t.Schema,
			})
		default:
			return nil, fmt.Errorf("unknown format %q: use one of mcp, openai, anthropic, vscode", format)
		}
	}
	return out, nil
}

// Annotations are the MCP tool annotations. Labels that depend on the input
// are reported for the most cautious input: bash is not read-only because some
// commands are not.
func (t *Tool) Annotations() map[string]any {
	if h := t.Hints; h != nil {
		return map[string]any{
			"readOnlyHint":    h.ReadOnly,
			"destructiveHint": !h.ReadOnly && h.Destructive,
			"idempotentHint":  t.Idempotent,
			"openWorldHint":   t.OpenWorld,
		}
	}
	l := t.staticLabels()
	return map[string]any{
		"readOnlyHint":    l.ReadOnly,
		"destructiveHint": !l.ReadOnly || l.Destructive,
		"idempotentHint":  t.Idempotent,
		"openWorldHint":   t.OpenWorld,
	}
}

// staticLabels are the labels that hold for every input: a tool whose
// labels depend on the input (bash, edit) is reported with the cautious
// answer, not read-only and not concurrency-safe.
func (t *Tool) staticLabels() (l Labels) {
	defer func() {
		if recover() != nil {
			l = Labels{}
		}
	}()
	if t.dynamic || t.decode == nil || t.labels == nil {
		return Labels{}
	}
	in, err := t.decode(map[string]any{})
	if err != nil {
		return Labels{}
	}
	return t.labels(in)
}

func firstSentence(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == '\n' {
			return s[:i+1]
		}
	}
	return s
}

// vscodeIcon is the codicon VS Code shows beside a tool (its tool picker and
// the chat's tool-call lines).
func vscodeIcon(name string) string {
	switch name {
	case "read":
		return "$(file)"
	case "ls":
		return "$(folder-opened)"
	case "grep":
		return "$(search)"
	case "find":
		return "$(go-to-file)"
	case "edit":
		return "$(edit)"
	case "write":
		return "$(new-file)"
	case "bash":
		return "$(terminal)"
	case ToolSearchName:
		return "$(tools)"
	}
	return "$(tools)"
}

// vscodeTags say roughly what a tool does, for hosts that pick tools by tag;
// "agentls" picks every tool of this extension.
func vscodeTags(name string) []string {
	switch name {
	case "read", "ls":
		return []string{"agentls", "files", "read"}
	case "grep", "find":
		return []string{"agentls", "files", "search"}
	case "edit", "write":
		return []string{"agentls", "files", "edit"}
	case "bash":
		return []string{"agentls", "terminal"}
	case ToolSearchName:
		return []string{"agentls", "tools"}
	}
	return []string{"agentls"}
}
