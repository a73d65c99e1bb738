package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// extensionTools returns 40 .agentls/tools definitions with realistic names,
// among them one about database migrations and run_tests.
func extensionTools() map[string]string {
	names := []struct{ name, desc string }{
		{"db_migrate", "Run the database schema migrations up to the latest version."},
		{"run_tests", "Run the Go tests whose names match a pattern."},
		{"deploy_preview", "Deploy the current branch to a preview environment."},
		{"lint_css", "Lint the stylesheets with stylelint."},
		{"format_sql", "Format SQL files in place."},
		{"open_pr", "Open a pull request for the current branch."},
	}
	for i := len(names); i < 40; i++ {
		names = append(names, struct{ name, desc string }{fmt.Sprintf("task_%02d", i), fmt.Sprintf("Project task number %d: build, package or check something unrelated.", i)})
	}
	files := map[string]string{}
	for _, n := range names {
		def := map[string]any{
			"name": n.name, "description": n.desc,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"pattern": map[string]any{"type": "string", "description": "what to act on"}}},
			"command":     "printf '%s\\n' ran-" + n.name + " {{pattern}}",
		}
		b, _ := json.Marshal(def)
		files[".agentls/tools/"+n.name+".json"] = string(b)
	}
	return files
}

// With 40 extension tools, tools/list shows the core set plus tool_search;
// a search for "database migration" finds the migration tool first, it
// becomes callable and tools/listChanged arrives.
func TestToolSearchOverFortyExtensionTools(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, extensionTools())
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		if n := tool["name"].(string); !strings.HasPrefix(n, "test_") { // test-only tools of the harness
			names = append(names, n)
		}
	}
	if got := strings.Join(names, ","); got != "read,ls,grep,find,edit,write,bash,tool_search" {
		t.Fatalf("tools/list = %s", got)
	}
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "database migration"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	first := strings.Index(r.Text(), "db_migrate")
	for _, other := range []string{"run_tests", "deploy_preview", "task_"} {
		if i := strings.Index(r.Text(), other); i >= 0 && i < first {
			t.Fatalf("%s ranked before db_migrate:\n%s", other, r.Text())
		}
	}
	if first < 0 || !strings.Contains(r.Text(), `"pattern"`) {
		t.Fatalf("search result lacks db_migrate and its schema:\n%s", r.Text())
	}
	if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Fatal("no tools/listChanged")
	}
	list.Tools = nil
	c.Call(ctx, "tools/list", nil, &list)
	found := false
	for _, tool := range list.Tools {
		found = found || tool["name"] == "db_migrate"
	}
	if !found {
		t.Fatal("db_migrate not active after the search")
	}
	if r := c.CallTool(ctx, "db_migrate", map[string]any{"pattern": "up"}); r.IsError || !strings.Contains(r.Text(), "ran-db_migrate\nup") {
		t.Fatalf("db_migrate: %s", r.Text())
	}
}

// Hostile arguments reach the command as data: the injected commands never run.
func TestExtensionToolQuotesHostileInput(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, extensionTools())
	pwned := filepath.Join(ws, "pwned")
	for _, in := range []string{
		"; touch " + pwned,
		"$(touch " + pwned + ")",
		"`touch " + pwned + "`",
		"'; touch " + pwned + "; echo '",
		"\"; touch " + pwned + "; echo \"",
		"a\ntouch " + pwned,
		"; rm -rf /",
	} {
		r := c.CallTool(ctx, "run_tests", map[string]any{"pattern": in})
		if r.IsError || !strings.Contains(r.Text(), "ran-run_tests\n"+in) {
			t.Errorf("input %q: %s", in, r.Text())
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("input %q ran an injected command", in)
		}
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
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), secret) {
				t.Errorf("the audit log holds the secret: %s", sc.Text())
			}
			var e map[string]any
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("bad line %q: %v", sc.Text(), err)
			}
			entries = append(entries, e)
		}
		fh.Close()
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

// A tool file written while the server runs (here by the model, through
// write) is picked up: tools/listChanged, then tools/list has the tool and
// it runs. A broken settings file is reported to the editor.
func TestExtensionToolsAndSettingsReloadLive(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"README.md": "hi\n"})
	def := `{"name": "hello", "description": "Says hello.", "inputSchema": {"type": "object"}, "command": "echo hello-from-tool", "deferred": false}`
	if r := c.CallTool(ctx, "write", map[string]any{"path": ".agentls/tools/hello.json", "content": def}); r.IsError {
		t.Fatalf("write: %s", r.Text())
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Fatal("no tools/listChanged after a tool file appeared")
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range list.Tools {
		found = found || tool.Name == "hello"
	}
	if !found {
		t.Fatalf("tools/list = %+v, want hello", list.Tools)
	}
	if r := c.CallTool(ctx, "hello", map[string]any{}); r.IsError || !strings.Contains(r.Text(), "hello-from-tool") {
		t.Fatalf("hello = %q", r.Text())
	}

	if r := c.CallTool(ctx, "write", map[string]any{"path": ".agentls/settings.json", "content": `{"permissions": {"deny": ["Bash(rm:*"]}}`}); r.IsError {
		t.Fatalf("write settings: %s", r.Text())
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings.json")
	}); !ok {
		t.Fatal("a broken settings file was not reported")
	}
}
