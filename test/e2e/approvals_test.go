package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// preparation is a tools/prepare answer (docs/protocol.md).
type preparation struct {
	Decision string         `json:"decision"`
	Title    string         `json:"title"`
	Message  string         `json:"message"`
	Preview  map[string]any `json:"preview"`
	Reason   string         `json:"reason"`
	Error    string         `json:"error"`
	Token    string         `json:"token"`
}

func prepareCall(t *testing.T, ctx context.Context, c *harness.Client, name string, args any) preparation {
	t.Helper()
	var p preparation
	if err := c.Call(ctx, "tools/prepare", map[string]any{"name": name, "arguments": args}, &p); err != nil {
		t.Fatalf("tools/prepare %s: %v", name, err)
	}
	return p
}

func approvedCall(t *testing.T, ctx context.Context, c *harness.Client, name string, args any, token string) harness.Result {
	t.Helper()
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args, "approved": token}, &r); err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return r
}

func TestConfirmShowsTheChangeAndIsNotSentForACallThatWouldFail(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"}, "")
	c.CallTool(ctx, "read", map[string]any{"path": "main.go"})

	r := c.CallTool(ctx, "edit", editCall("main.go", "func nothere() {}", "x"))
	if !r.IsError || s.count() != 0 {
		t.Fatalf("an edit whose old text is not in the file: isError %v, %d tools/confirm sent, want an error and none: %s", r.IsError, s.count(), r.Text())
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "touch made", "cwd": "missing"})
	if !r.IsError || s.count() != 0 || !strings.Contains(r.Text(), "does not exist") {
		t.Fatalf("bash in a missing cwd: %d tools/confirm sent: %s", s.count(), r.Text())
	}

	s.answers = []map[string]any{{"decision": "allowOnce"}}
	if r := c.CallTool(ctx, "edit", editCall("main.go", "func main() {}", "func main() { run() }")); r.IsError {
		t.Fatalf("edit: %s", r.Text())
	}
	if s.count() != 1 {
		t.Fatalf("%d tools/confirm sent, want 1", s.count())
	}
	q := s.asked[0]
	title, _ := q["title"].(string)
	msg, _ := q["message"].(string)
	if title != "agentls: Edit main.go" {
		t.Errorf("title %q", title)
	}
	wantContains(t, "message", msg, "`main.go`", "```diff", "-func main() {}", "+func main() { run() }")
	if prev, _ := q["preview"].(map[string]any); prev == nil || prev["unifiedDiff"] == nil {
		t.Errorf("the structured preview is gone: %v", q["preview"])
	}
	if got := readFile(t, filepath.Join(ws, "main.go")); !strings.Contains(got, "run()") {
		t.Errorf("main.go = %q", got)
	}
}

func TestPrepareSaysWhatACallNeedsAndItsTokenApprovesItOnce(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"main.go": "package main\n", "b.txt": "b\n"}, "")
	main := filepath.Join(ws, "main.go")

	if p := prepareCall(t, ctx, c, "read", map[string]any{"path": "main.go"}); p.Decision != "allow" || p.Token != "" {
		t.Errorf("read: %+v", p)
	}
	if p := prepareCall(t, ctx, c, "edit", editCall("main.go", "package main", "package app")); p.Decision != "fail" || !strings.Contains(p.Error, "read") || p.Token != "" {
		t.Errorf("edit before a read: %+v", p)
	}
	c.CallTool(ctx, "read", map[string]any{"path": "main.go"})
	if p := prepareCall(t, ctx, c, "edit", editCall("main.go", "nothere", "x")); p.Decision != "fail" || p.Error == "" {
		t.Errorf("edit that cannot match: %+v", p)
	}

	args := editCall("main.go", "package main", "package app")
	p := prepareCall(t, ctx, c, "edit", args)
	if p.Decision != "ask" || p.Token == "" || p.Title != "agentls: Edit main.go" || !strings.Contains(p.Message, "+package app") || p.Preview["unifiedDiff"] == nil || p.Reason == "" {
		t.Fatalf("edit: %+v", p)
	}
	if got := readFile(t, main); got != "package main\n" || s.count() != 0 {
		t.Fatalf("tools/prepare changed the file (%q) or asked (%d)", got, s.count())
	}
	// A mismatched token is spent and the call asks as usual.
	s.answers = []map[string]any{{"decision": "rejectOnce"}}
	if r := approvedCall(t, ctx, c, "edit", editCall("main.go", "package main", "package other"), p.Token); !r.IsError || s.count() != 1 {
		t.Fatalf("mismatched token: %d tools/confirm, %s", s.count(), r.Text())
	}
	if r := approvedCall(t, ctx, c, "edit", args, p.Token); !r.IsError || s.count() != 2 {
		t.Fatalf("a token tried once already: %d tools/confirm, %s", s.count(), r.Text())
	}
	p = prepareCall(t, ctx, c, "edit", args)
	if r := approvedCall(t, ctx, c, "edit", args, p.Token); r.IsError || s.count() != 2 {
		t.Fatalf("valid token: %d tools/confirm (want no new one): %s", s.count(), r.Text())
	}
	if got := readFile(t, main); got != "package app\n" {
		t.Fatalf("main.go = %q", got)
	}
	// Reused: asks.
	c.CallTool(ctx, "read", map[string]any{"path": "main.go"})
	back := editCall("main.go", "package app", "package main")
	p = prepareCall(t, ctx, c, "edit", back)
	if r := approvedCall(t, ctx, c, "edit", back, p.Token); r.IsError || s.count() != 2 {
		t.Fatalf("valid token: %s", r.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": "main.go"})
	s.answers = []map[string]any{{"decision": "rejectOnce"}}
	if r := approvedCall(t, ctx, c, "edit", editCall("main.go", "package main", "package app"), p.Token); !r.IsError || s.count() != 3 {
		t.Fatalf("reused token: %d tools/confirm (want a new one): %s", s.count(), r.Text())
	}

	// A deny rule written after the token was issued still holds.
	c.CallTool(ctx, "read", map[string]any{"path": "b.txt"})
	bArgs := editCall("b.txt", "b", "B")
	p = prepareCall(t, ctx, c, "edit", bArgs)
	if p.Decision != "ask" {
		t.Fatalf("edit b.txt: %+v", p)
	}
	writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"permissions":{"deny":["Edit(b.txt)"]}}`})
	time.Sleep(50 * time.Millisecond)
	if r := approvedCall(t, ctx, c, "edit", bArgs, p.Token); !r.IsError || !strings.Contains(r.Text(), "denied by the rule Edit(b.txt)") {
		t.Fatalf("deny rule after the token: %s", r.Text())
	}
	if p := prepareCall(t, ctx, c, "edit", bArgs); p.Decision != "deny" || !strings.Contains(p.Reason, "Edit(b.txt)") || p.Token != "" {
		t.Errorf("prepare under a deny rule: %+v", p)
	}
	if got := readFile(t, filepath.Join(ws, "b.txt")); got != "b\n" {
		t.Errorf("b.txt = %q", got)
	}
}

func TestMCPErrorResultsCarryNoInternalDetails(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "x\n", ".agentls/settings.json": `{"permissions":{"deny":["Edit(a.txt)"]}}`})
	c := mcpRawStart(t, ws)
	c.initialize("2025-06-18", nil)
	r := c.call("edit", editCall("a.txt", "x", "y"))
	if !r.IsError {
		t.Fatalf("edit ran: %s", r.text())
	}
	raw, _ := json.Marshal(r.Meta)
	if strings.Contains(string(raw), "details") || strings.Contains(string(raw), "permission") {
		t.Errorf("_meta of an error result: %s", raw)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatal(err)
	}
}
