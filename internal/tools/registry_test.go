package tools

import (
	"context"
	"strings"
	"testing"
)

func extTool(t *testing.T, name, desc string, deferred bool) *Tool {
	t.Helper()
	tool, err := NewTool(name, desc, map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	tool.Deferred = deferred
	return tool
}

// Replace is how changed extension tool files reach a running session.
func TestReplaceSwapsOneSourceAndNotifiesVisibleChanges(t *testing.T) {
	r := NewRegistry()
	// A core tool (Define's Source) named like the built-in read.
	r.MustRegister(Define(Spec[struct{}]{Name: "read", Run: func(context.Context, *Call, struct{}) (Result, error) { return Text(""), nil }}))
	r.MustRegister(extTool(t, "lint", "runs the linter", false), extTool(t, "deploy", "deploys", true), extTool(t, "gone", "removed later", false))
	r.Activate("deploy") // found by tool_search
	changes := 0
	r.OnChange(func() { changes++ })

	lint2 := extTool(t, "lint", "runs the linter", false) // same definition, new command
	errs := r.Replace("extension", []*Tool{
		lint2,
		extTool(t, "deploy", "deploys to staging", true),
		extTool(t, "fmt", "formats", false),
		extTool(t, "read", "shadows a core tool", false),
	})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"read"`) {
		t.Fatalf("errs = %v, want one for the name a core tool holds", errs)
	}
	if changes != 1 {
		t.Fatalf("listener called %d times, want once", changes)
	}
	if got, _ := r.Lookup("lint"); got != lint2 {
		t.Fatal("a tool that stayed still runs its old definition")
	}
	if _, ok := r.Lookup("gone"); ok {
		t.Fatal("a removed tool is still registered")
	}
	if got, _ := r.Lookup("read"); got.Source != "core" {
		t.Fatal("an extension tool replaced a core tool")
	}
	if !r.IsActive("deploy") {
		t.Fatal("a tool activated by tool_search was deactivated by a reload")
	}
	if !r.IsActive("fmt") {
		t.Fatal("a new tool that is not deferred is not active")
	}
	var names []string
	for _, tool := range r.List(true) {
		names = append(names, tool.Name)
	}
	if got, want := strings.Join(names, ","), "read,lint,deploy,fmt"; got != want {
		t.Fatalf("order = %s, want %s (stayed tools keep their place)", got, want)
	}

	// The same definitions again (fresh objects): nothing visible changed.
	r.Replace("extension", []*Tool{
		extTool(t, "lint", "runs the linter", false),
		extTool(t, "deploy", "deploys to staging", true),
		extTool(t, "fmt", "formats", false),
	})
	if changes != 1 {
		t.Fatalf("listener called for a reload that changed nothing visible")
	}
}
