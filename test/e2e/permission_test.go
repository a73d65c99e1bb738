package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// confirmScript answers tools/confirm requests from a queue and records them.
type confirmScript struct {
	mu       sync.Mutex
	answers  []map[string]any
	asked    []map[string]any
	block    chan struct{} // when set, the next confirm waits on it (or its ctx)
	canceled chan struct{}
	onAsk    func() // when set, called as each question arrives
}

func (s *confirmScript) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/confirm" {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
	}
	var p map[string]any
	json.Unmarshal(params, &p)
	s.mu.Lock()
	s.asked = append(s.asked, p)
	block, onAsk := s.block, s.onAsk
	var ans map[string]any
	if len(s.answers) > 0 {
		ans, s.answers = s.answers[0], s.answers[1:]
	}
	s.mu.Unlock()
	if onAsk != nil {
		onAsk()
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			close(s.canceled)
			return nil, ctx.Err()
		}
	}
	if ans == nil {
		ans = map[string]any{"decision": "rejectOnce"}
	}
	return ans, nil
}

func (s *confirmScript) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

func startConfirm(t *testing.T, files map[string]string, mode string) (*harness.Client, *confirmScript, string, context.Context) {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, files)
	c := harness.Start(t, harness.Options{Root: ws})
	s := &confirmScript{}
	c.OnRequest = s.handle
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	opts := map[string]any{}
	if mode != "" {
		opts["mode"] = mode
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": opts,
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	return c, s, ws, ctx
}

// The ask flow: the question carries the call's arguments and the would-be
// diff (not applied while it is open); allowOnce asks again, allowAlways
// does not for that file only, rejectAlways denies the same call without
// asking, a reject carries the user's message and changes nothing; bash
// previews the command and its classification, read-only bash never asks.
func TestAskFlowThroughTheEditor(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "one two three\n", "b.txt": "one\ntwo\n"}, "")
	a := filepath.Join(ws, "a.txt")
	var onDisk string
	s.onAsk = func() { onDisk = readFile(t, a) }
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}) // read-only: no question
	c.CallTool(ctx, "read", map[string]any{"path": "b.txt"})
	if n := s.count(); n != 0 {
		t.Fatalf("read asked %d times", n)
	}
	asks := func(what string, want int) {
		t.Helper()
		if s.count() != want {
			t.Fatalf("%s: asked %d times in all, want %d", what, s.count(), want)
		}
	}

	s.answers = []map[string]any{{"decision": "allowOnce"}}
	if r := c.CallTool(ctx, "edit", editCall("a.txt", "one", "ONE")); r.IsError {
		t.Fatalf("allowOnce: %s", r.Text())
	}
	asks("allowOnce", 1)
	q := s.asked[0]
	if q["tool"] != "edit" || q["callId"] == "" || q["reason"] == "" || !strings.Contains(compactJSON(q["arguments"]), "ONE") {
		t.Errorf("confirm params = %v", q)
	}
	if prev, _ := q["preview"].(map[string]any); prev == nil || !strings.Contains(prev["unifiedDiff"].(string), "+ONE two three") {
		t.Errorf("preview = %v", q["preview"])
	}
	if onDisk != "one two three\n" {
		t.Errorf("while the question was open the file held %q: the preview was applied", onDisk)
	}

	s.answers = []map[string]any{{"decision": "rejectOnce", "message": "not that word"}}
	r := c.CallTool(ctx, "edit", editCall("a.txt", "two", "TWO"))
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: not that word") {
		t.Fatalf("reject: %s", r.Text())
	}
	if got := readFile(t, a); got != "ONE two three\n" {
		t.Fatalf("file changed after reject: %q", got)
	}
	asks("rejectOnce", 2)

	s.answers = []map[string]any{{"decision": "allowAlways"}}
	c.CallTool(ctx, "edit", editCall("a.txt", "two", "TWO"))
	c.CallTool(ctx, "edit", editCall("a.txt", "three", "THREE"))
	asks("allowAlways, then the same file", 3)
	if got := readFile(t, a); got != "ONE TWO THREE\n" {
		t.Fatalf("content = %q", got)
	}
	s.answers = []map[string]any{{"decision": "rejectAlways", "message": "never b"}}
	if r := c.CallTool(ctx, "edit", editCall("b.txt", "two", "TWO")); !r.IsError || !strings.Contains(r.Text(), "never b") {
		t.Fatalf("rejectAlways: %s", r.Text())
	}
	asks("allowAlways for a.txt, then b.txt", 4)
	if r := c.CallTool(ctx, "edit", editCall("b.txt", "two", "TWO")); !r.IsError {
		t.Fatalf("after rejectAlways: %s", r.Text())
	}
	asks("rejectAlways, then the same call", 4)

	s.answers = []map[string]any{{"decision": "allowAlways"}}
	c.CallTool(ctx, "bash", map[string]any{"command": "rm -f gone.txt"})
	asks("rm", 5)
	if p, _ := s.asked[4]["preview"].(map[string]any); p["kind"] != "command" || p["command"] != "rm -f gone.txt" || p["destructive"] != true || p["readOnly"] != false {
		t.Errorf("bash preview %v", p)
	}
	c.CallTool(ctx, "bash", map[string]any{"command": "rm -f gone.txt"})
	asks("allowAlways, then the identical command", 5)
	c.CallTool(ctx, "bash", map[string]any{"command": "mkdir made"})
	asks("allowAlways for rm, then mkdir", 6)
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "ls -la && cat /dev/null | wc -l"}); r.IsError {
		t.Errorf("read-only bash: %s", r.Text())
	}
	asks("read-only bash", 6)

	r = c.CallTool(ctx, "write", map[string]any{"path": "new/file.txt", "content": "hello\n"})
	if d, _ := s.asked[6]["preview"].(map[string]any)["unifiedDiff"].(string); !r.IsError || !strings.Contains(d, "+hello") {
		t.Errorf("rejected write: %s; preview %v", r.Text(), s.asked[6]["preview"])
	}
	if _, err := os.Stat(filepath.Join(ws, "new/file.txt")); err == nil {
		t.Errorf("a rejected write created the file")
	}
}

func TestCancelWhileAskingCancelsTheConfirm(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "x\n"}, "")
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	s.block = make(chan struct{})
	s.canceled = make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-s.block:
		default:
			close(s.block)
		}
	})
	errCh := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "edit", "arguments": editCall("a.txt", "x", "y")}, &r)
		errCh <- err
	}()
	if !waitUntil(5*time.Second, func() bool { return s.count() > 0 }) {
		t.Fatal("never asked")
	}
	// Other calls proceed while the question is pending.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
	// A fresh client numbers its requests: initialize=1, read=2, edit=3.
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 3})
	if err := <-errCh; rpcCode(err) != -32800 {
		t.Fatalf("err = %v, want -32800", err)
	}
	select {
	case <-s.canceled:
	case <-time.After(2 * time.Second):
		t.Fatal("the pending tools/confirm was not cancelled")
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "x\n" {
		t.Fatalf("file changed: %q", got)
	}
}

func TestSecretFilesAskAndStayOutOfSearches(t *testing.T) {
	t.Parallel()
	files := map[string]string{".env": "API_TOKEN=findme-in-env-file\n", "src/a.go": "// findme-in-env-file mentioned in code\n"}
	// Without the confirm capability no tools/confirm is sent: an ask is a
	// denial telling the model why.
	c, _, ctx := startWith(t, files, map[string]any{})
	sent := 0
	c.OnRequest = func(context.Context, string, json.RawMessage) (any, error) {
		sent++
		return map[string]any{"decision": "allowOnce"}, nil
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": ".env"})
	if !r.IsError || sent != 0 || !strings.Contains(r.Text(), "needs the user's approval") || !strings.Contains(r.Text(), ".env") {
		t.Fatalf("read .env (%d requests sent): %s", sent, r.Text())
	}
	g := c.CallTool(ctx, "grep", map[string]any{"pattern": "findme-in-env-file"})
	if strings.Contains(g.Text(), ".env:") || !strings.Contains(g.Text(), "src/a.go:1:") {
		t.Fatalf("grep shows .env or misses a.go: %s", g.Text())
	}
	// With the capability, reading .env asks the user.
	c2, s, _, ctx2 := startConfirm(t, files, "")
	s.answers = []map[string]any{{"decision": "rejectOnce", "message": "no secrets please"}}
	r = c2.CallTool(ctx2, "read", map[string]any{"path": ".env"})
	if !r.IsError || s.count() != 1 || !strings.Contains(r.Text(), "denied by the user: no secrets please") || strings.Contains(r.Text(), "findme") {
		t.Fatalf("read .env with confirm: asked %d, %s", s.count(), r.Text())
	}
	if q := s.asked[0]; q["tool"] != "read" || !strings.Contains(fmt.Sprint(q["reason"]), "secret") || q["callId"] != r.CallID {
		t.Errorf("question %v: want read, a reason naming the secret-file default and the result's callId %q", q, r.CallID)
	}
}

// A scripted session of 20 calls (allowed, asked, denied, failed) leaves 20
// audit entries with the right decisions and no secret values.
func TestAuditLogOfAScriptedSession(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	auditDir := t.TempDir()
	const secret = "sk-proj-Q3vT8yK2mW9xR4pL7nB1cZ6aD0fH5jE2gU8iO3sX"
	writeFiles(t, ws, map[string]string{"a.txt": "alpha\n", ".env": "OPENAI_API_KEY=" + secret + "\n"})
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_AUDIT_DIR=" + auditDir}})
	s := &confirmScript{}
	c.OnRequest = s.handle
	ctx := t.Context()
	c.Initialize(ctx, map[string]any{
		"initializationOptions": map[string]any{"permissions": map[string]any{"deny": []any{"Bash(rm:*)"}}},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	type step struct {
		tool     string
		args     map[string]any
		answer   string
		decision string
	}
	steps := []step{
		{"read", map[string]any{"path": "a.txt"}, "", "allow"},
		{"grep", map[string]any{"pattern": "alpha"}, "", "allow"},
		{"ls", map[string]any{}, "", "allow"},
		{"find", map[string]any{"pattern": "*.txt"}, "", "allow"},
		{"bash", map[string]any{"command": "echo " + secret}, "", "allow"},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "alpha", "newText": "beta"}}}, "allowOnce", "ask:allowOnce"},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "beta", "newText": "gamma"}}}, "rejectOnce", "ask:rejectOnce"},
		{"write", map[string]any{"path": "b.txt", "content": "token " + secret}, "allowOnce", "ask:allowOnce"},
		{"bash", map[string]any{"command": "rm -f b.txt"}, "", "deny"},
		{"bash", map[string]any{"command": "touch c.txt"}, "rejectOnce", "ask:rejectOnce"},
		{"read", map[string]any{"path": "missing.txt"}, "", "allow"},
		{"read", map[string]any{}, "", "invalid"},
		{"nope", map[string]any{}, "", "invalid"},
		{"read", map[string]any{"path": ".env"}, "allowOnce", "ask:allowOnce"},
		{"bash", map[string]any{"command": "exit 3"}, "allowOnce", "allow"},
		{"read", map[string]any{"path": "b.txt"}, "", "allow"},
		{"ls", map[string]any{"path": "nope"}, "", "allow"},
		{"grep", map[string]any{"pattern": "(("}, "", "allow"},
		{"find", map[string]any{"pattern": "["}, "", "allow"},
		{"read", map[string]any{"path": "a.txt", "offset": 1}, "", "allow"},
	}
	for i, st := range steps {
		if st.answer != "" {
			s.answers = []map[string]any{{"decision": st.answer}}
		} else {
			s.answers = nil
		}
		var r harness.Result
		if err := c.Call(ctx, "tools/call", map[string]any{"name": st.tool, "arguments": st.args, "callId": fmt.Sprintf("s%02d", i)}, &r); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	c.Shutdown(ctx)
	var entries []map[string]any
	files, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	for _, f := range files {
		for _, line := range strings.Split(strings.TrimSpace(readFile(t, f)), "\n") {
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil || strings.Contains(line, secret) {
				t.Fatalf("an audit line that is not JSON (%v) or holds the secret: %q", err, line)
			}
			entries = append(entries, e)
		}
	}
	if len(entries) != len(steps) {
		t.Fatalf("%d audit entries, want %d", len(entries), len(steps))
	}
	byID := map[string]map[string]any{}
	for _, e := range entries {
		byID[fmt.Sprint(e["callId"])] = e
	}
	for i, st := range steps {
		e := byID[fmt.Sprintf("s%02d", i)]
		if e == nil {
			t.Errorf("step %d (%s) has no entry", i, st.tool)
			continue
		}
		if e["decision"] != st.decision {
			t.Errorf("step %d (%s %v): decision %v, want %s (rule %v)", i, st.tool, st.args, e["decision"], st.decision, e["rule"])
		}
		for _, k := range []string{"time", "tool", "durationMs", "resultBytes", "isError"} {
			if _, ok := e[k]; !ok {
				t.Errorf("step %d: entry lacks %s: %v", i, k, e)
			}
		}
	}
}
