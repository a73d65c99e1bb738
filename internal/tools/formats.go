package tools

import "fmt"

// Formats accepted by tools/list and `agentls tools --format`.
var Formats = []string{"mcp", "openai", "anthropic", "vscode"}

// Describe renders tools in a client format: "mcp" (default), "openai",
// "anthropic" (each ready to paste into a model request) or "vscode"
// (package.json languageModelTools contributions).
func Describe(ts []*Tool, format string, registry *Registry) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(ts))
	for _, t := range ts {
		switch format {
		case "", "mcp":
			labels := t.staticLabels()
			deferred := t.Deferred
			if registry != nil {
				deferred = !registry.IsActive(t.Name)
			}
			out = append(out, map[string]any{
				"name":        t.Name,
				"description": t.Description,
				"inputSchema": t.Schema,
				"annotations": t.Annotations(),
				"_meta":       map[string]any{"concurrencySafe": labels.ConcurrencySafe, "deferred": deferred, "source": t.Source},
			})
		case "openai":
			out = append(out, map[string]any{
				"type":     "function",
				"function": map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Schema},
			})
		case "anthropic":
			out = append(out, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Schema})
		case "vscode":
			out = append(out, map[string]any{
				"name":                    "agentls_" + t.Name,
				"displayName":             "agentls " + t.Name,
				"toolReferenceName":       "agentls_" + t.Name,
				"modelDescription":        t.Description,
				"userDescription":         firstSentence(t.Description),
				"canBeReferencedInPrompt": true,
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
