package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
)

// countingConfirmer records the questions and answers each with answer
// (or err).
type countingConfirmer struct {
	mu     sync.Mutex
	asked  []policy.ConfirmRequest
	answer policy.ConfirmAnswer
	err    error
}

func (c *countingConfirmer) Confirm(_ context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, req)
	return c.answer, c.err
}

func (c *countingConfirmer) questions() []policy.ConfirmRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]policy.ConfirmRequest(nil), c.asked...)
}

type approvalSetup struct {
	settings     string // .agentls/settings.json, "" for none
	mode         string
	hostApproves bool
	confirmer    policy.Confirmer
}

func newApprovalSession(t *testing.T, files map[string]string, o approvalSetup) (*Session, string) {
	t.Helper()
	dir := t.TempDir()
	if o.settings != "" {
		files[".agentls/settings.json"] = o.settings
	}
	for name, data := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	opts := Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-",
		UserConfigDir: t.TempDir(), Confirmer: o.confirmer, HostApproves: o.hostApproves, Editor: &settings.Settings{Mode: o.mode}}
	if o.hostApproves {
		opts.Client = "MCP host"
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func run(t *testing.T, s *Session, name string, args any) tools.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	return s.Executor.Call(context.Background(), tools.Request{Name: name, Arguments: b}, nil)
}

func text(r tools.Result) string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func edit(path, old, new string) map[string]any {
	return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}}
}

func TestCallsThatWouldFailAreRefusedWithoutAQuestion(t *testing.T) {
	files := map[string]string{"main.go": "package main\n\nfunc main() {}\n", "other.go": "package main\n", "sub/x.txt": "x\n"}
	c := &countingConfirmer{answer: policy.ConfirmAnswer{Decision: policy.AllowOnce}}
	s, dir := newApprovalSession(t, files, approvalSetup{confirmer: c})
	run(t, s, "read", map[string]any{"path": "main.go"})
	cases := []struct {
		name string
		tool string
		args any
		want string
	}{
		{"edit of a file not read", "edit", edit("other.go", "package main", "package other"), "read"},
		{"edit whose old text is not in the file", "edit", edit("main.go", "func nothere() {}", "x"), "main.go"},
		{"edit whose old text matches twice", "edit", map[string]any{"path": "main.go", "edits": []any{map[string]any{"oldText": "main", "newText": "x"}}}, "matches"},
		{"edit of a missing file", "edit", edit("gone.go", "a", "b"), "does not exist"},
		{"write replacing a file not read", "write", map[string]any{"path": "other.go", "content": "package other\n"}, "read"},
		{"edit outside the workspace", "edit", edit("../outside.go", "a", "b"), "outside"},
		{"bash in a missing cwd", "bash", map[string]any{"command": "touch made", "cwd": "nodir"}, "does not exist"},
		{"bash that does not parse", "bash", map[string]any{"command": "touch 'made"}, "does not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(c.questions())
			r := run(t, s, tc.tool, tc.args)
			if !r.IsError || !strings.Contains(strings.ToLower(text(r)), tc.want) {
				t.Fatalf("want an error naming %q, got %v: %s", tc.want, r.IsError, text(r))
			}
			if n := len(c.questions()) - before; n != 0 {
				t.Errorf("the user was asked %d times about a call that fails", n)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Error("a refused bash call ran")
	}
	// The same edit that matches is asked about, with the diff.
	r := run(t, s, "edit", edit("main.go", "func main() {}", "func main() { println() }"))
	if r.IsError {
		t.Fatalf("edit failed: %s", text(r))
	}
	q := c.questions()
	if len(q) != 1 {
		t.Fatalf("asked %d times, want once", len(q))
	}
	if q[0].Title != "agentls: Edit main.go" || !strings.Contains(q[0].Message, "```diff") || !strings.Contains(q[0].Message, "+func main() { println() }") {
		t.Errorf("question title %q message %q: want the path and the diff", q[0].Title, q[0].Message)
	}
}

func TestTheQuestionIsMasked(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	files := map[string]string{"conf.txt": "token = old\n"}
	c := &countingConfirmer{answer: policy.ConfirmAnswer{Decision: policy.RejectOnce}}
	s, _ := newApprovalSession(t, files, approvalSetup{confirmer: c})
	run(t, s, "read", map[string]any{"path": "conf.txt"})
	args, _ := json.Marshal(edit("conf.txt", "old", secret))
	p := s.Executor.Prepare(context.Background(), tools.Request{Name: "edit", Arguments: args})
	if raw, _ := json.Marshal(p); p.Decision != "ask" || strings.Contains(string(raw), secret) {
		t.Errorf("tools/prepare shows the secret or does not ask: %s", raw)
	}
	run(t, s, "edit", edit("conf.txt", "old", secret))
	q := c.questions()
	if len(q) != 1 {
		t.Fatalf("asked %d times", len(q))
	}
	if strings.Contains(q[0].Message, secret) || strings.Contains(q[0].Title, secret) {
		t.Errorf("the question shows the secret: %s", q[0].Message)
	}
}

func TestMCPHostApprovesWhatOnlyTheDefaultModeWouldAsk(t *testing.T) {
	files := map[string]string{"main.go": "package main\n"}
	t.Run("default mode: the edit runs without a question", func(t *testing.T) {
		c := &countingConfirmer{err: &policy.CannotAsk{Reason: "the MCP host could not ask the user: it does not support elicitation"}}
		s, dir := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true})
		run(t, s, "read", map[string]any{"path": "main.go"})
		if r := run(t, s, "edit", edit("main.go", "package main", "package app")); r.IsError {
			t.Fatalf("edit refused: %s", text(r))
		}
		if r := run(t, s, "bash", map[string]any{"command": "touch made"}); r.IsError {
			t.Fatalf("bash refused: %s", text(r))
		}
		if len(c.questions()) != 0 {
			t.Errorf("asked %d times", len(c.questions()))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package app\n" {
			t.Errorf("main.go is %q", b)
		}
	})
	t.Run("the user's ask rule asks, and a host that cannot ask says how to allow it", func(t *testing.T) {
		c := &countingConfirmer{err: &policy.CannotAsk{Reason: "the MCP host could not ask the user: it does not support elicitation"}}
		s, dir := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true, settings: `{"permissions":{"ask":["Edit(main.go)"]}}`})
		run(t, s, "read", map[string]any{"path": "main.go"})
		r := run(t, s, "edit", edit("main.go", "package main", "package app"))
		if !r.IsError {
			t.Fatal("edit ran")
		}
		for _, want := range []string{"the MCP host could not ask the user", "Edit(main.go)", "remove"} {
			if !strings.Contains(text(r), want) {
				t.Errorf("refusal lacks %q: %s", want, text(r))
			}
		}
		if len(c.questions()) != 1 {
			t.Errorf("asked %d times, want once", len(c.questions()))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package main\n" {
			t.Errorf("main.go changed: %q", b)
		}
	})
	t.Run("a chosen mode's ask gives the settings snippet for this call", func(t *testing.T) {
		c := &countingConfirmer{err: &policy.CannotAsk{Reason: "the MCP host could not ask the user: it does not support elicitation"}}
		s, _ := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true, mode: policy.ModeAcceptEdits})
		r := run(t, s, "bash", map[string]any{"command": "touch made"})
		if !r.IsError || !strings.Contains(text(r), `.agentls/settings.local.json in the workspace: {"permissions":{"allow":["Bash(touch made)"]}}`) {
			t.Errorf("want the snippet, got: %s", text(r))
		}
	})
	t.Run("destructive commands still ask", func(t *testing.T) {
		c := &countingConfirmer{answer: policy.ConfirmAnswer{Decision: policy.RejectOnce, Declined: true}}
		s, dir := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true})
		r := run(t, s, "bash", map[string]any{"command": "rm -rf main.go"})
		if !r.IsError || len(c.questions()) != 1 {
			t.Fatalf("want one question and a refusal, got %d questions: %s", len(c.questions()), text(r))
		}
		// The user settings file is named by its path in this session.
		if !strings.Contains(text(r), "declined") || !strings.Contains(text(r), "user settings (/") || !strings.Contains(text(r), "agentls/settings.json)") {
			t.Errorf("refusal: %s", text(r))
		}
		if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
			t.Error("main.go was removed")
		}
	})
	t.Run("deny rules and readOnly mode hold without a question", func(t *testing.T) {
		c := &countingConfirmer{answer: policy.ConfirmAnswer{Decision: policy.AllowOnce}}
		s, _ := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true, settings: `{"permissions":{"deny":["Edit(main.go)"]}}`})
		run(t, s, "read", map[string]any{"path": "main.go"})
		if r := run(t, s, "edit", edit("main.go", "package main", "package app")); !r.IsError || !strings.Contains(text(r), "denied by the rule") {
			t.Errorf("deny rule: %s", text(r))
		}
		s2, _ := newApprovalSession(t, cloneFiles(files), approvalSetup{confirmer: c, hostApproves: true, mode: policy.ModeReadOnly})
		if r := run(t, s2, "bash", map[string]any{"command": "touch made"}); !r.IsError || !strings.Contains(text(r), "readOnly") {
			t.Errorf("readOnly: %s", text(r))
		}
		if len(c.questions()) != 0 {
			t.Errorf("asked %d times", len(c.questions()))
		}
	})
}

func cloneFiles(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestPrepareAnswersWithoutRunning(t *testing.T) {
	files := map[string]string{"main.go": "package main\n"}
	c := &countingConfirmer{answer: policy.ConfirmAnswer{Decision: policy.AllowOnce}}
	s, dir := newApprovalSession(t, files, approvalSetup{confirmer: c, settings: `{"permissions":{"deny":["Bash(rm:*)"]}}`})
	prep := func(name string, args any) tools.Preparation {
		b, _ := json.Marshal(args)
		return s.Executor.Prepare(context.Background(), tools.Request{Name: name, Arguments: b})
	}
	if p := prep("read", map[string]any{"path": "main.go"}); p.Decision != "allow" {
		t.Errorf("read: %+v", p)
	}
	if p := prep("edit", edit("main.go", "package main", "package app")); p.Decision != "fail" || !strings.Contains(p.Error, "read") {
		t.Errorf("edit before a read: %+v", p)
	}
	run(t, s, "read", map[string]any{"path": "main.go"})
	if p := prep("edit", edit("main.go", "nothere", "x")); p.Decision != "fail" || p.Token != "" {
		t.Errorf("edit that cannot match: %+v", p)
	}
	if p := prep("bash", map[string]any{"command": "rm -f main.go"}); p.Decision != "deny" || !strings.Contains(p.Reason, "Bash(rm:*)") {
		t.Errorf("denied bash: %+v", p)
	}
	if p := prep("nosuchtool", map[string]any{}); p.Decision != "fail" || !strings.Contains(p.Error, "unknown tool") {
		t.Errorf("unknown tool: %+v", p)
	}
	args := edit("main.go", "package main", "package app")
	p := prep("edit", args)
	if p.Decision != "ask" || p.Token == "" || !strings.Contains(p.Message, "-package main") || p.Preview["unifiedDiff"] == nil {
		t.Fatalf("edit: %+v", p)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package main\n" {
		t.Fatalf("prepare wrote main.go: %q", b)
	}
	if len(c.questions()) != 0 {
		t.Fatalf("prepare asked the user")
	}
	b, _ := json.Marshal(args)
	call := func(token string, a []byte) tools.Result {
		return s.Executor.Call(context.Background(), tools.Request{Name: "edit", Arguments: a, Approved: token}, nil)
	}
	// A token for other arguments is spent and the call asks.
	other, _ := json.Marshal(edit("main.go", "package main", "package other"))
	if r := call(p.Token, other); r.IsError || len(c.questions()) != 1 {
		t.Fatalf("mismatched token: %d questions, %s", len(c.questions()), text(r))
	}
	run(t, s, "read", map[string]any{"path": "main.go"})
	back, _ := json.Marshal(edit("main.go", "package other", "package main"))
	p = prep("edit", edit("main.go", "package other", "package main"))
	if r := call(p.Token, back); r.IsError || len(c.questions()) != 1 {
		t.Fatalf("valid token: %d questions (want no new one), %s", len(c.questions()), text(r))
	}
	run(t, s, "read", map[string]any{"path": "main.go"})
	if r := call(p.Token, b); r.IsError || len(c.questions()) != 2 {
		t.Fatalf("reused token: %d questions (want a new one), %s", len(c.questions()), text(r))
	}
}
