package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/tools"
)

// A tool's Check refuses exactly what its run refuses, in the same words,
// and changes nothing: the permission step can trust it to skip a question.
func TestCheckRefusesWhatTheRunRefusesAndWritesNothing(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{
		"main.go":  []byte("package main\n\nfunc main() {}\nfunc main() {}\n"),
		"other.go": []byte("package other\n"),
		"sub/f":    []byte("x\n"),
	})
	guard := editguard.New(x.Env.FS)
	x.Env.Guard = guard
	call(t, x, "read", `{"path":"main.go"}`)
	prepared := func(name string, args any) *tools.Prepared {
		t.Helper()
		b, _ := json.Marshal(args)
		p, r, ok := x.PrepareCall(tools.Request{Name: name, Arguments: b}, nil, false)
		if !ok {
			t.Fatalf("prepare: %v", r)
		}
		return p
	}
	edit := func(path, old, new string) map[string]any {
		return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}}
	}
	for _, tc := range []struct {
		name string
		tool string
		args any
	}{
		{"edit of a file not read", "edit", edit("other.go", "other", "x")},
		{"edit whose old text is missing", "edit", edit("main.go", "nothere", "x")},
		{"edit whose old text matches twice", "edit", edit("main.go", "func main() {}", "x")},
		{"edit of a missing file", "edit", edit("gone.go", "a", "b")},
		{"edit of a directory", "edit", edit("sub", "a", "b")},
		{"write over a file not read", "write", map[string]any{"path": "other.go", "content": "y\n"}},
		{"write of the same content", "write", map[string]any{"path": "main.go", "content": "package main\n\nfunc main() {}\nfunc main() {}\n"}},
		{"bash in a missing cwd", "bash", map[string]any{"command": "touch made", "cwd": "nodir"}},
		{"bash in a file", "bash", map[string]any{"command": "touch made", "cwd": "sub/f"}},
		{"bash that does not parse", "bash", map[string]any{"command": "touch 'made"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, refusal := prepared(tc.tool, tc.args).Check(context.Background())
			if refusal == nil || !refusal.IsError {
				t.Fatalf("Check passed a call that fails")
			}
			if tc.tool == "bash" && tc.name == "bash that does not parse" {
				return // the run leaves parsing to bash itself
			}
			b, _ := json.Marshal(tc.args)
			got := x.Call(context.Background(), tools.Request{Name: tc.tool, Arguments: b}, nil)
			if tools.ResultText(*refusal) != tools.ResultText(got) {
				t.Errorf("Check says %q, the run %q", tools.ResultText(*refusal), tools.ResultText(got))
			}
		})
	}
	t.Run("a call that would run plans its change and writes nothing", func(t *testing.T) {
		plan, refusal := prepared("edit", map[string]any{"path": "main.go", "edits": []any{map[string]any{"oldText": "package main", "newText": "package app"}}}).Check(context.Background())
		if refusal != nil {
			t.Fatalf("refused: %v", tools.ResultText(*refusal))
		}
		if d, _ := plan.Preview["unifiedDiff"].(string); d == "" || plan.Preview["kind"] != "edit" || plan.Preview["path"] != "main.go" {
			t.Errorf("preview %v", plan.Preview)
		}
		plan, refusal = prepared("write", map[string]any{"path": "new/file.txt", "content": "hi\n"}).Check(context.Background())
		if refusal != nil || plan.Preview["kind"] != "create" {
			t.Errorf("write of a new file: %v %v", refusal, plan.Preview)
		}
		if _, refusal = prepared("bash", map[string]any{"command": "touch made"}).Check(context.Background()); refusal != nil {
			t.Errorf("bash: %v", tools.ResultText(*refusal))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package main\n\nfunc main() {}\nfunc main() {}\n" {
			t.Errorf("main.go changed: %q", b)
		}
		for _, p := range []string{"new", "made"} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				t.Errorf("%s was created", p)
			}
		}
	})
}
