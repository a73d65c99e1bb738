package e2e

// initializationOptions.toolNamePrefix: a client whose model sees the tools
// under prefixed names (VS Code: agentls_grep) gets descriptions and
// instructions that name them so; tools keep their bare names on the wire.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

func TestToolNamePrefixNamesToolsInDescriptionsAndInstructions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list := func(c *harness.Client) map[string]string {
		var r struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", map[string]any{}, &r); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tl := range r.Tools {
			name, _ := tl["name"].(string)
			out[name], _ = tl["description"].(string)
		}
		return out
	}

	root := t.TempDir()
	c := harness.Start(t, harness.Options{Root: root})
	init := c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"toolNamePrefix": "agentls_"}})
	if ins, _ := init["instructions"].(string); !strings.Contains(ins, "agentls_edit and agentls_write refuse") || strings.Contains(ins, "{{") {
		t.Errorf("instructions do not name agentls_edit/agentls_write:\n%s", ins)
	}
	tools := list(c)
	if _, ok := tools["read"]; !ok {
		t.Fatalf("tools/list names are not bare: %v", tools)
	}
	if d := tools["read"]; !strings.Contains(d, "Use agentls_grep to find where something is and agentls_find to locate files") {
		t.Errorf("read's description does not name agentls_grep/agentls_find:\n%s", d)
	}
	if d := tools["bash"]; !strings.Contains(d, "agentls_read, agentls_grep, agentls_find, agentls_ls, agentls_edit and agentls_write are faster") {
		t.Errorf("bash's description does not name the prefixed tools:\n%s", d)
	}
	if r := c.CallTool(ctx, "ls", map[string]any{}); r.IsError {
		t.Errorf("a bare-named call failed with the prefix set: %s", r.Text())
	}
	// The refusals of the permission rules and the edit guard, written
	// outside the tools, name the tools so too.
	if r := c.CallTool(ctx, "write", map[string]any{"path": ".git/config", "content": "x"}); !strings.Contains(r.Text(), "git commands through agentls_bash") {
		t.Errorf("a write into .git does not point to agentls_bash: %s", r.Text())
	}
	writeFile(t, filepath.Join(root, "main.go"), "package main\n")
	if r := c.CallTool(ctx, "edit", map[string]any{"path": "main.go", "edits": []map[string]any{{"oldText": "main", "newText": "x"}}}); !strings.Contains(r.Text(), "agentls_read main.go first: agentls_edit and agentls_write") {
		t.Errorf("an edit of a file not read does not point to agentls_read: %s", r.Text())
	}

	bare := harness.Start(t, harness.Options{Root: t.TempDir()})
	bare.Initialize(ctx, nil)
	for name, d := range list(bare) {
		if strings.Contains(d, "agentls_") || strings.Contains(d, "{{") {
			t.Errorf("%s: without the option the description names prefixed or marked tools:\n%s", name, d)
		}
	}

	bad := harness.Start(t, harness.Options{Root: t.TempDir()})
	var res map[string]any
	err := bad.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"toolNamePrefix": "no spaces"}}, &res)
	if err == nil || !strings.Contains(err.Error(), "toolNamePrefix") {
		t.Errorf("a prefix with a space: initialize err = %v, want one naming toolNamePrefix", err)
	}
}
