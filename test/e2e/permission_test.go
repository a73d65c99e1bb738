package e2e

import (
	"context"
	"encoding/json"
	"errors"
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
}

func (s *confirmScript) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/confirm" {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
	}
	var p map[string]any
	json.Unmarshal(params, &p)
	s.mu.Lock()
	s.asked = append(s.asked, p)
	block := s.block
	var ans map[string]any
	if len(s.answers) > 0 {
		ans, s.answers = s.answers[0], s.answers[1:]
	}
	s.mu.Unlock()
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

func TestAskFlowThroughTheEditor(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "one two three\n"}, "")
	a := filepath.Join(ws, "a.txt")
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}) // read-only: no question
	if n := s.count(); n != 0 {
		t.Fatalf("read asked %d times", n)
	}

	// allowOnce: the edit runs; the same kind of call asks again.
	s.answers = []map[string]any{{"decision": "allowOnce"}}
	if r := c.CallTool(ctx, "edit", editCall("a.txt", "one", "ONE")); r.IsError {
		t.Fatalf("allowOnce: %s", r.Text())
	}
	if s.count() != 1 {
		t.Fatalf("asked %d times", s.count())
	}
	q := s.asked[0]
	if q["tool"] != "edit" || q["callId"] == "" || q["reason"] == "" {
		t.Errorf("confirm params = %v", q)
	}
	if prev, _ := q["preview"].(map[string]any); prev == nil || !strings.Contains(prev["unifiedDiff"].(string), "+ONE two three") {
		t.Errorf("preview = %v", q["preview"])
	}

	// reject: isError with the user's message, file unchanged.
	s.answers = []map[string]any{{"decision": "rejectOnce", "message": "not that word"}}
	r := c.CallTool(ctx, "edit", editCall("a.txt", "two", "TWO"))
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user") || !strings.Contains(r.Text(), "not that word") {
		t.Fatalf("reject: %s", r.Text())
	}
	if got := readFile(t, a); got != "ONE two three\n" {
		t.Fatalf("file changed after reject: %q", got)
	}
	if s.count() != 2 {
		t.Fatalf("asked %d times", s.count())
	}

	// allowAlways: this edit and later ones of the same file do not ask.
	s.answers = []map[string]any{{"decision": "allowAlways"}}
	if r := c.CallTool(ctx, "edit", editCall("a.txt", "two", "TWO")); r.IsError {
		t.Fatalf("allowAlways: %s", r.Text())
	}
	if r := c.CallTool(ctx, "edit", editCall("a.txt", "three", "THREE")); r.IsError {
		t.Fatalf("after allowAlways: %s", r.Text())
	}
	if s.count() != 3 {
		t.Fatalf("asked %d times after allowAlways, want 3", s.count())
	}
	if got := readFile(t, a); got != "ONE TWO THREE\n" {
		t.Fatalf("content = %q", got)
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
	deadline := time.Now().Add(5 * time.Second)
	for s.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.count() == 0 {
		t.Fatal("never asked")
	}
	// Other calls proceed while the question is pending.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
	// A fresh client numbers its requests: initialize=1, read=2, edit=3.
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 3})
	err := <-errCh
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32800 {
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
	// Without the confirm capability, an ask is a denial telling the model why.
	c, _, ctx := startWith(t, files, map[string]any{})
	r := c.CallTool(ctx, "read", map[string]any{"path": ".env"})
	if !r.IsError || !strings.Contains(r.Text(), "needs the user's approval") || !strings.Contains(r.Text(), ".env") {
		t.Fatalf("read .env: %s", r.Text())
	}
	g := c.CallTool(ctx, "grep", map[string]any{"pattern": "findme-in-env-file"})
	if strings.Contains(g.Text(), ".env:") || !strings.Contains(g.Text(), "src/a.go:1:") {
		t.Fatalf("grep shows .env or misses a.go: %s", g.Text())
	}
	// With the capability, reading .env asks the user.
	c2, s, _, ctx2 := startConfirm(t, files, "")
	s.answers = []map[string]any{{"decision": "rejectOnce"}}
	r = c2.CallTool(ctx2, "read", map[string]any{"path": ".env"})
	if !r.IsError || s.count() != 1 {
		t.Fatalf("read .env with confirm: asked %d, %s", s.count(), r.Text())
	}
}

func TestModesAndDenyRules(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n"}
	cases := []struct {
		name    string
		opts    map[string]any
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"readOnly denies bash that writes", map[string]any{"mode": "readOnly"}, "bash", map[string]any{"command": "touch b"}, true, "read-only"},
		{"readOnly allows read-only bash", map[string]any{"mode": "readOnly"}, "bash", map[string]any{"command": "ls"}, false, "a.txt"},
		{"acceptEdits allows write", map[string]any{"mode": "acceptEdits"}, "write", map[string]any{"path": "new.txt", "content": "n\n"}, false, "Created new.txt"},
		{"acceptEdits asks for other bash (denied without confirm)", map[string]any{"mode": "acceptEdits"}, "bash", map[string]any{"command": "touch b"}, true, "approval"},
		{"deny rule beats bypass", map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"Bash(touch:*)"}}}, "bash", map[string]any{"command": "echo x && touch b"}, true, "Bash(touch:*)"},
		{"allow rule lets a command run", map[string]any{"permissions": map[string]any{"allow": []any{"Bash(touch:*)"}}}, "bash", map[string]any{"command": "touch c"}, false, ""},
		{"prefix rule does not allow a chained command", map[string]any{"permissions": map[string]any{"allow": []any{"Bash(touch:*)"}}}, "bash", map[string]any{"command": "touch c && rm -f a.txt"}, true, "approval"},
		{".git is never written", map[string]any{"mode": "bypass"}, "write", map[string]any{"path": ".git/config", "content": "x"}, true, ".git"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ws, ctx := startWith(t, files, map[string]any{"initializationOptions": tc.opts})
			r := c.CallTool(ctx, tc.tool, tc.args)
			if r.IsError != tc.isError || !strings.Contains(r.Text(), tc.want) {
				t.Fatalf("isError=%v: %s", r.IsError, r.Text())
			}
			if tc.isError {
				if _, err := os.Stat(filepath.Join(ws, "b")); err == nil {
					t.Fatal("a denied command ran")
				}
			}
		})
	}
}

func TestInvalidRuleInSettingsFileIsReportedAndSkippedAlone(t *testing.T) {
	t.Parallel()
	c, _, ctx := startWith(t, map[string]string{
		".agentls/settings.json": `{"permissions": {"allow": ["Bash(touch:*)", "Bash(npm test"]}}`,
	}, map[string]any{})
	if _, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings.json") && strings.Contains(string(n.Params), "unclosed '('")
	}); !ok {
		t.Fatalf("no log message naming the file and the rule: %v", c.Notes("window/logMessage"))
	}
	// Only the bad rule is dropped: the file's valid allow rule applies.
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "touch x"}); r.IsError {
		t.Fatalf("one invalid rule switched off the file's valid allow: %s", r.Text())
	}
}
