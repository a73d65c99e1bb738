package mcp

import (
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// Each host's cap comes from the table by its clientInfo.name; any other
// client, or none named, gets UnknownHostBytes.
func TestHostOfKnowsTheHostsCaps(t *testing.T) {
	for name, want := range map[string]tools.HostCap{
		"codex-mcp-client":      {Bytes: 10_000},
		"gemini-cli-mcp-client": {Bytes: 40_000},
		"opencode":              {Bytes: 51_200, Lines: 2000},
		"claude-code":           {Bytes: 25_000},
		"Visual Studio Code":    {Bytes: UnknownHostBytes},
		"":                      {Bytes: UnknownHostBytes},
	} {
		if got := HostOf(name); got.Cap != want || got.Name != name {
			t.Errorf("HostOf(%q) = %+v, want cap %+v", name, got, want)
		}
	}
}

// Every tool listed has a title: the built-in tools their own, others one
// made of the name.
func TestListedToolsHaveTitles(t *testing.T) {
	for _, bt := range tools.Builtins(tools.DefaultLimits()) {
		st, err := sdkTool(bt)
		if err != nil {
			t.Fatal(err)
		}
		if st.Title == "" || st.Title == bt.Name {
			t.Errorf("%s: title %q", bt.Name, st.Title)
		}
	}
	for name, want := range map[string]string{"my_tool": "My tool", "github__search_issues": "Search issues (github)", "x": "X"} {
		tl, err := tools.NewTool(name, "d", map[string]any{"type": "object"})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := sdkTool(tl); st.Title != want {
			t.Errorf("%s: title %q, want %q", name, st.Title, want)
		}
	}
}
