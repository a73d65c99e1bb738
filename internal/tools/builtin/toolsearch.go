package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/toolsearch"
)

// Limits of the tool_search tool.
const (
	ToolSearchDefaultLimit = 5
	ToolSearchMaxLimit     = 20
	// ToolSearchListedNames caps the deferred names a fruitless search lists.
	ToolSearchListedNames = 50
)

type toolSearchInput struct {
	Query string `json:"query" jsonschema:"what the tool should do, in a few words (e.g. \"database migration\", \"read text file\")"`
	Limit int    `json:"limit,omitzero" jsonschema:"maximum number of tools to return"`
}

var toolSearchDescription = fmt.Sprintf(`Find and enable tools that are not in your tool list yet (deferred tools: project extension tools and MCP server tools).

When to use: when no listed tool fits the task and a project-specific one might exist (migrations, deployments, linters, an issue tracker, ...). Not for files or code: use {{grep}}, {{find}} and {{read}} for those.

Parameters: query (a few words about what you want to do; tool names, descriptions and parameter names are searched); limit (default %d, maximum %d).

Output: the best matches, best first, each with its name, description and JSON input schema. The matches are enabled at once: call them by name in your next step.

Errors: when nothing matches, the answer lists the names of up to %d deferred tools; search again with other words or call one of them by name.`, ToolSearchDefaultLimit, ToolSearchMaxLimit, ToolSearchListedNames)

// NewToolSearch returns the tool_search tool over reg. It is always active.
func NewToolSearch(reg *tools.Registry) *tools.Tool {
	return tools.Define(tools.Spec[toolSearchInput]{
		Name:        tools.ToolSearchName,
		Title:       "Search tools",
		Description: toolSearchDescription,
		Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Tweak: func(s map[string]any) {
			l := prop(s, "limit")
			l["minimum"] = 1.0
			l["maximum"] = float64(ToolSearchMaxLimit)
			l["description"] = fmt.Sprintf("maximum number of tools to return (default %d, maximum %d)", ToolSearchDefaultLimit, ToolSearchMaxLimit)
		},
		Run: func(ctx context.Context, c *tools.Call, in toolSearchInput) (tools.Result, error) {
			r := runToolSearch(reg, in, c.Names())
			// Tools a search cannot see yet (a server still starting)
			// would otherwise look like tools that do not exist.
			if notes := reg.SearchNotes(); len(notes) > 0 && len(r.Content) > 0 {
				r.Content[0].Text += "\n\n" + strings.Join(notes, "\n")
			}
			return r, nil
		},
	})
}

func runToolSearch(reg *tools.Registry, in toolSearchInput, names mention.Prefix) tools.Result {
	// Names in the text are the model's; details keep the registry's.
	shownNames := func(ns []string) string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = names.Of(n)
		}
		return strings.Join(out, ", ")
	}
	limit := in.Limit
	if limit <= 0 {
		limit = ToolSearchDefaultLimit
	}
	limit = min(limit, ToolSearchMaxLimit)
	if strings.TrimSpace(in.Query) == "" {
		return tools.Errorf("`query` is empty: give a few words for what the tool should do (e.g. \"read text file\", \"create issue\").")
	}
	// The query is echoed cut: a long one would fill the answer.
	shown := tools.TruncateRunes(in.Query, toolSearchEcho)
	var deferred, enabled []*tools.Tool
	for _, t := range reg.List(true) {
		switch {
		case !reg.IsActive(t.Name):
			deferred = append(deferred, t)
		case t.Deferred:
			enabled = append(enabled, t)
		}
	}
	hits := toolsearch.Rank(in.Query, searchDocs(deferred), limit)
	// A search that matches tools enabled by an earlier search says so,
	// rather than that nothing matches.
	if len(hits) == 0 {
		if hits := toolsearch.Rank(in.Query, searchDocs(enabled), limit); len(hits) > 0 {
			found := make([]string, len(hits))
			for i, h := range hits {
				found[i] = enabled[h.Index].Name
			}
			r := tools.Text(fmt.Sprintf("Already in your tool list (enabled by an earlier search or call) and matching %q: %s. Call them by name.", shown, shownNames(found)))
			r.SetDetail("activated", []string{})
			return r
		}
	}
	if len(deferred) == 0 {
		r := tools.Text(fmt.Sprintf("There are no deferred tools: every tool is already in your tool list (%s). Use one of those.", shownNames(reg.Names())))
		r.SetDetail("activated", []string{})
		return r
	}
	if len(hits) == 0 {
		listed := make([]string, 0, min(len(deferred), ToolSearchListedNames))
		for _, t := range deferred[:min(len(deferred), ToolSearchListedNames)] {
			listed = append(listed, t.Name)
		}
		more := ""
		if n := len(deferred) - len(listed); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		r := tools.Errorf("No deferred tool matches %q. Deferred tools: %s%s. Search again with other words, or call one of these by name.", shown, shownNames(listed), more)
		r.SetDetail("activated", []string{})
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tool(s) match %q, best first. They are now enabled: call them by name.\n", len(hits), shown)
	activated := make([]string, len(hits))
	matches := make([]map[string]any, len(hits))
	for i, h := range hits {
		t := deferred[h.Index]
		activated[i] = t.Name
		matches[i] = map[string]any{"name": t.Name, "score": h.Score, "source": t.Source}
		schema, err := json.Marshal(t.Schema)
		if err != nil {
			schema = []byte(`{"type":"object"}`)
		}
		fmt.Fprintf(&b, "\n## %s\n%s\nInput schema: %s\n", names.Of(t.Name), strings.TrimSpace(t.DescriptionFor(string(names))), schema)
	}
	reg.Activate(activated...)
	r := tools.Text(strings.TrimRight(b.String(), "\n"))
	r.SetDetail("activated", activated)
	r.SetDetail("matches", matches)
	return r
}

// ReservedNames are the names an extension tool may not take: every tool
// in reg (the core tools) and bash and tool_search, even where they are
// not registered.
func ReservedNames(reg *tools.Registry) []string {
	var out []string
	for _, t := range reg.List(true) {
		out = append(out, t.Name)
	}
	return append(out, "bash", tools.ToolSearchName)
}

// toolSearchEcho is how many characters of the query an answer repeats.
const toolSearchEcho = 100

// searchDocs is the search index of ts.
func searchDocs(ts []*tools.Tool) []toolsearch.Doc {
	docs := make([]toolsearch.Doc, len(ts))
	for i, t := range ts {
		docs[i] = toolsearch.Doc{Name: t.Name, Description: t.Description, Params: paramTexts(t.Schema)}
	}
	return docs
}

// paramTexts renders a schema's top-level properties as "name: description",
// sorted by name, for the search index.
func paramTexts(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		desc := ""
		if p, ok := props[n].(map[string]any); ok {
			desc, _ = p["description"].(string)
		}
		out[i] = n + ": " + desc
	}
	return out
}
