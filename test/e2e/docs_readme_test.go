package e2e

// The documentation, checked black-box: every concrete claim of
// README.md, docs/tools.md, docs/protocol.md and ARCHITECTURE.md (an example
// call and its output, a field name, a default, a flag, an error text) is
// run against the real binary. Texts the docs quote are asserted verbatim.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// docsStart starts agentls on ws and initializes it with params.
func docsStart(t *testing.T, ws string, params map[string]any, env ...string) (*harness.Client, map[string]any) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	res := c.Initialize(testCtx(t, 20*time.Second), params)
	return c, res
}

// docsRun runs agentls with args and returns stdout, stderr and exit code.
func docsRun(t *testing.T, dir string, args []string, env ...string) (string, string, int) {
	t.Helper()
	r := runAgentls(t, dir, env, args...)
	return r.stdout, r.stderr, r.code
}

func docsDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docsRaw is a hand-framed connection, for what a client library would
// never send.
type docsRaw struct {
	*rawClient[map[string]any]
	taken int // messages already returned by next
}

func docsStartRaw(t *testing.T, ws string) *docsRaw {
	t.Helper()
	return &docsRaw{rawClient: startRaw(t, []string{"--root", ws}, nil, lenientFrames(func(body []byte) []map[string]any {
		var m map[string]any
		var batch []map[string]any
		if json.Unmarshal(body, &m) == nil {
			return []map[string]any{m}
		}
		if json.Unmarshal(body, &batch) != nil {
			return nil
		}
		return batch
	}))}
}

func (r *docsRaw) send(body string) { r.writeFrame([]byte(body)) }

func (r *docsRaw) sendRaw(b string) { r.writeRaw([]byte(b)) }

// docsWait is how long next waits for a reply.
const docsWait = 10 * time.Second

// next returns the next message that is not a notification.
func (r *docsRaw) next() map[string]any {
	r.t.Helper()
	deadline := time.Now().Add(docsWait)
	for {
		m, ok := r.rawClient.next(&r.taken, deadline)
		if !ok && r.isExited() {
			r.t.Fatal("server closed its output")
		}
		if !ok {
			r.t.Fatalf("no reply within %v", docsWait)
		}
		if _, isNote := m["method"]; isNote {
			continue
		}
		return m
	}
}

// --- README ---------------------------------------------------------------

// README "The two commands": the quick-start call, several calls sharing a
// session, the first failing call ending the run, and deny rules and
// --mode readOnly still applying.
func TestDocsREADMECall(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	readme := docsDoc(t, "README.md")
	writeFiles(t, ws, map[string]string{"README.md": readme, "a.go": "package a\n\nfunc foo() {}\n"})
	n := strings.Count(readme, "\n")

	t.Run("quick start", func(t *testing.T) {
		out, errOut, code := docsRun(t, ws, []string{"call", "read", `{"path": "README.md", "limit": 5}`, "--root", "."})
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		wantContains(t, "quick start", out,
			fmt.Sprintf("README.md, lines 1-5 of %d", n),
			"     1→# agentls",
			"Use offset=6 to continue")
	})
	t.Run("calls share the session", func(t *testing.T) {
		out, errOut, code := docsRun(t, ws, []string{"call", "read", `{"path":"a.go"}`, "edit", `{"path":"a.go","edits":[{"oldText":"foo","newText":"bar"}]}`, "--root", ws})
		if code != 0 {
			t.Fatalf("exit %d: %s %s", code, out, errOut)
		}
		wantContains(t, "edit after read", out, "Edited a.go: 1 replacement")
		if b, _ := os.ReadFile(filepath.Join(ws, "a.go")); !strings.Contains(string(b), "func bar()") {
			t.Errorf("a.go not edited: %s", b)
		}
	})
	t.Run("first failing call ends the run", func(t *testing.T) {
		out, _, code := docsRun(t, ws, []string{"call", "read", `{"path":"missing.go"}`, "write", `{"path":"after.txt","content":"x"}`, "--root", ws})
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if _, err := os.Stat(filepath.Join(ws, "after.txt")); err == nil {
			t.Errorf("the call after the failing one ran:\n%s", out)
		}
	})
	t.Run("mode readOnly applies", func(t *testing.T) {
		out, _, code := docsRun(t, ws, []string{"call", "write", `{"path":"ro.txt","content":"x"}`, "--root", ws, "--mode", "readOnly"})
		if code != 1 {
			t.Errorf("exit %d, want 1: %s", code, out)
		}
		if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
			t.Error("--mode readOnly let a write through")
		}
	})
	t.Run("deny rules apply", func(t *testing.T) {
		ws2 := t.TempDir()
		writeFiles(t, ws2, map[string]string{".agentls/settings.json": `{"permissions": {"deny": ["Bash(touch:*)"]}}`})
		out, _, code := docsRun(t, ws2, []string{"call", "bash", `{"command":"touch denied.txt"}`, "--root", ws2})
		if code != 1 {
			t.Errorf("exit %d, want 1: %s", code, out)
		}
		if _, err := os.Stat(filepath.Join(ws2, "denied.txt")); err == nil {
			t.Error("a deny rule did not apply to agentls call")
		}
		wantContains(t, "denial", out, "Bash(touch:*)")
	})
}

// README: --version, the usage naming every subcommand, the test script.
func TestDocsREADMECommands(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	out, _, code := docsRun(t, ws, []string{"--version"})
	if code != 0 || !regexp.MustCompile(`^agentls \S+\n$`).MatchString(out) {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	version := strings.TrimSpace(strings.TrimPrefix(out, "agentls "))
	res := harness.Start(t, harness.Options{Root: ws, Process: true}).Initialize(testCtx(t, 20*time.Second), nil)
	if got := compactJSON(res["serverInfo"]); got != fmt.Sprintf(`{"name":"agentls","version":%q}`, version) {
		t.Errorf("serverInfo %s, --version says %s", got, version)
	}

	// Asked-for help goes to stdout with success; a bad flag gets the usage
	// on stderr and exit 2.
	usage, stderr, code := docsRun(t, ws, []string{"--help"})
	if code != 0 || stderr != "" {
		t.Errorf("--help: exit %d, stderr %q; want 0 and the usage on stdout", code, stderr)
	}
	if help, _, code := docsRun(t, ws, []string{"help"}); code != 0 || help != usage {
		t.Errorf("help: exit %d, output differs from --help:\n%s", code, help)
	}
	if out, bad, code := docsRun(t, ws, []string{"--no-such-flag"}); code != 2 || out != "" || !strings.Contains(bad, "no-such-flag") || !strings.Contains(bad, "usage:") {
		t.Errorf("a bad flag: exit %d, stdout %q, stderr %q", code, out, bad)
	}
	for _, sub := range []string{"agentls tools", "--format", "agentls call", "--mode", "agentls mcp", "--root", "agentls audit", "--tail", "--version", "log-file"} {
		wantContains(t, "--help", usage, sub)
	}

	script := filepath.Join("..", "..", "scripts", "test-all.sh")
	st, err := os.Stat(script)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("scripts/test-all.sh: %v, mode %v", err, st)
	} else {
		b, _ := os.ReadFile(script)
		wantContains(t, "test-all.sh", string(b), "AGENTLS_SKIP_VSCODE", "/var/cache/agentls-ci", "go test")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "bench", "search.sh")); err != nil {
		t.Errorf("README names bench/search.sh: %v", err)
	}
	// README's benchmark command names BenchmarkReadRoundTrip in ./test/e2e/.
	found := false
	files, _ := filepath.Glob("*_test.go")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("func BenchmarkReadRoundTrip(")) {
			found = true
		}
	}
	if !found {
		t.Error("README names BenchmarkReadRoundTrip in ./test/e2e/; no such benchmark")
	}
	// The MCP host snippets are valid JSON.
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(docsDoc(t, "README.md"), -1) {
		var v any
		if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
			t.Errorf("README JSON block does not parse: %v\n%s", err, m[1])
		}
	}
}

// README's tool table: every limit is "stated in its description".
func TestDocsREADMEToolTable(t *testing.T) {
	t.Parallel()
	c, _ := docsStart(t, t.TempDir(), nil)
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(testCtx(t, 20*time.Second), "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	desc := map[string]string{}
	for _, tl := range list.Tools {
		desc[tl["name"].(string)] = tl["description"].(string)
	}
	want := map[string][]string{
		"read":        {"2000", "51200", "5242880"},
		"ls":          {"500", "5000"},
		"grep":        {"100", "1000", "20", "500", "51200"},
		"find":        {"1000", "10000"},
		"edit":        {"20"},
		"bash":        {"120", "600", "2000", "51200", "2 second"},
		"tool_search": {"5", "20"},
	}
	row := regexp.MustCompile("(?m)^\\| `(\\w+)` \\|")
	readme := docsDoc(t, "README.md")
	for _, m := range row.FindAllStringSubmatch(readme, -1) {
		if _, ok := desc[m[1]]; !ok && m[1] != "write" {
			if _, isTool := want[m[1]]; isTool {
				t.Errorf("README tool %s is not listed", m[1])
			}
		}
	}
	num := regexp.MustCompile(`\d+`)
	for tool, nums := range want {
		d := strings.ReplaceAll(desc[tool], ",", "")
		have := map[string]bool{}
		for _, n := range num.FindAllString(d, -1) {
			have[n] = true
		}
		for _, n := range nums {
			if strings.Contains(n, " ") {
				if !strings.Contains(d, n) {
					t.Errorf("%s description lacks %q", tool, n)
				}
				continue
			}
			if !have[n] {
				t.Errorf("README says %s's limit %s is stated in its description; it is not:\n%s", tool, n, d)
			}
		}
	}
}

// docsWalkSchema reports "$ref" keys and "type" arrays anywhere in v.
func docsWalkSchema(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$ref" {
				t.Errorf("%s: schema has $ref", where)
			}
			if k == "type" {
				if _, isArr := e.([]any); isArr {
					t.Errorf("%s: schema has a type union %v", where, e)
				}
			}
			docsWalkSchema(t, where, e)
		}
	case []any:
		for _, e := range x {
			docsWalkSchema(t, where, e)
		}
	}
}

// README "agentls tools --format openai|anthropic|mcp|vscode" and
// protocol.md "tools/list formats": each documented shape, over the CLI and
// over the wire; schemas without $ref or type unions.
func TestDocsToolListFormats(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	c, _ := docsStart(t, ws, nil)
	core := []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"}
	check := func(t *testing.T, format string, tools []map[string]any) {
		t.Helper()
		if len(tools) < len(core) { // the harness adds test-only tools
			t.Errorf("%d tools, want at least %d", len(tools), len(core))
		}
		var names []string
		for _, tl := range tools {
			switch format {
			case "mcp":
				for _, k := range []string{"name", "description", "inputSchema", "annotations", "_meta"} {
					if _, ok := tl[k]; !ok {
						t.Errorf("mcp tool lacks %s: %v", k, compactJSON(tl))
					}
				}
				ann, _ := tl["annotations"].(map[string]any)
				for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
					if _, ok := ann[k].(bool); !ok {
						t.Errorf("annotations.%s missing in %v", k, ann)
					}
				}
				meta, _ := tl["_meta"].(map[string]any)
				for _, k := range []string{"concurrencySafe", "deferred", "source"} {
					if _, ok := meta[k]; !ok {
						t.Errorf("_meta.%s missing in %v", k, meta)
					}
				}
				names = append(names, fmt.Sprint(tl["name"]))
				docsWalkSchema(t, format, tl["inputSchema"])
			case "openai":
				fn, _ := tl["function"].(map[string]any)
				if tl["type"] != "function" || fn["name"] == nil || fn["description"] == nil || fn["parameters"] == nil {
					t.Errorf("openai entry %v", compactJSON(tl))
				}
				names = append(names, fmt.Sprint(fn["name"]))
				docsWalkSchema(t, format, fn["parameters"])
			case "anthropic":
				if tl["name"] == nil || tl["description"] == nil || tl["input_schema"] == nil {
					t.Errorf("anthropic entry %v", compactJSON(tl))
				}
				names = append(names, fmt.Sprint(tl["name"]))
				docsWalkSchema(t, format, tl["input_schema"])
			case "vscode":
				n := fmt.Sprint(tl["name"])
				if !strings.HasPrefix(n, "agentls_") {
					t.Errorf("vscode entry name %q lacks agentls_", n)
				}
				names = append(names, strings.TrimPrefix(n, "agentls_"))
				docsWalkSchema(t, format, tl["inputSchema"])
			}
		}
		for _, w := range core {
			if !strings.Contains(","+strings.Join(names, ",")+",", ","+w+",") {
				t.Errorf("%s list lacks %s: %v", format, w, names)
			}
		}
	}
	for _, format := range []string{"mcp", "openai", "anthropic", "vscode"} {
		t.Run("wire "+format, func(t *testing.T) {
			var list struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := c.Call(testCtx(t, 20*time.Second), "tools/list", map[string]any{"format": format}, &list); err != nil {
				t.Fatal(err)
			}
			check(t, format, list.Tools)
		})
		t.Run("cli "+format, func(t *testing.T) {
			out, errOut, code := docsRun(t, ws, []string{"tools", "--format", format})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var tools []map[string]any
			if err := json.Unmarshal([]byte(out), &tools); err != nil {
				var wrapped struct {
					Tools []map[string]any `json:"tools"`
				}
				if err2 := json.Unmarshal([]byte(out), &wrapped); err2 != nil {
					t.Fatalf("not JSON: %v\n%.300s", err, out)
				}
				tools = wrapped.Tools
			}
			check(t, format, tools)
		})
	}
	t.Run("unknown format is -32602", func(t *testing.T) {
		err := c.Call(testCtx(t, 20*time.Second), "tools/list", map[string]any{"format": "gemini"}, nil)
		if rpcCode(err) != -32602 {
			t.Errorf("got %v, want -32602", err)
		}
	})
}

// tools.md "Audit log": the JSON line's fields, the directory rules, and
// README's `agentls audit --tail 20`.
func TestDocsAuditLog(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "hello\n"})
	state := t.TempDir()
	// AGENTLS_AUDIT_DIR unset (empty): $XDG_STATE_HOME/agentls/audit/.
	env := []string{"AGENTLS_AUDIT_DIR=", "XDG_STATE_HOME=" + state}
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	out, errOut, code := docsRun(t, ws, []string{"call", "read", `{"path":"a.txt"}`, "bash", fmt.Sprintf(`{"command":"echo %s >/dev/null"}`, secret), "--root", ws}, env...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(state, "agentls", "audit", "*"))
	if len(files) != 1 {
		t.Fatalf("audit files under $XDG_STATE_HOME/agentls/audit: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per call, got:\n%s", b)
	}
	if strings.Contains(string(b), secret) {
		t.Errorf("audit arguments keep a secret:\n%s", b)
	}
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %s", l)
		}
		for _, k := range []string{"time", "callId", "tool", "arguments", "decision", "rule", "durationMs", "resultBytes", "isError"} {
			if _, ok := e[k]; !ok {
				t.Errorf("audit line lacks %s: %s", k, l)
			}
		}
		d := fmt.Sprint(e["decision"])
		if d != "allow" && d != "deny" && d != "invalid" && !strings.HasPrefix(d, "ask:") {
			t.Errorf("decision %q is none of the documented values", d)
		}
	}
	tail, _, code := docsRun(t, ws, []string{"audit", "--tail", "20"}, env...)
	if code != 0 || !strings.Contains(tail, "read") || !strings.Contains(tail, "bash") {
		t.Errorf("agentls audit --tail 20: exit %d\n%s", code, tail)
	}
	// AGENTLS_AUDIT_DIR overrides.
	dir := t.TempDir()
	docsRun(t, ws, []string{"call", "read", `{"path":"a.txt"}`, "--root", ws}, "AGENTLS_AUDIT_DIR="+dir, "XDG_STATE_HOME="+state)
	if got, _ := filepath.Glob(filepath.Join(dir, "*")); len(got) != 1 {
		t.Errorf("AGENTLS_AUDIT_DIR holds %v", got)
	}
}

// --- docs/protocol.md ---------------------------------------------------

// protocol.md's initialize result example, field by field, and docs/tools.md's
// instructions.
func TestDocsInitializeResult(t *testing.T) {
	t.Parallel()
	c, res := docsStart(t, t.TempDir(), nil)
	caps, _ := res["capabilities"].(map[string]any)
	if got := compactJSON(caps["workspace"]); got != `{"workspaceFolders":{"changeNotifications":true,"supported":true}}` {
		t.Errorf("capabilities.workspace = %s", got)
	}
	if got := compactJSON(caps["textDocumentSync"]); got != `{"change":2,"openClose":true}` {
		t.Errorf("capabilities.textDocumentSync = %s", got)
	}
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	if ag["protocolVersion"] != "1.0" {
		t.Errorf("protocolVersion = %v", ag["protocolVersion"])
	}
	checkWatcherStart(t, ag, c.WatcherMode)
	if c.WatcherMode != "inotify" {
		t.Errorf("watcher on Linux = %v, want inotify", c.WatcherMode)
	}
	tools := compactJSON(ag["tools"])
	for _, n := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
		wantContains(t, "experimental.agentls.tools", tools, `"`+n+`"`)
	}
	instr := strings.ToLower(fmt.Sprint(res["instructions"]))
	wantContains(t, "instructions", instr, "read a file before editing", "search when a path is unknown", "never guess file contents", "cat", "oldtext")
	// Every JSON block of protocol.md parses.
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(docsDoc(t, "docs/protocol.md"), -1) {
		var v any
		if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
			t.Errorf("protocol.md JSON block does not parse: %v\n%s", err, m[1])
		}
	}
}

// protocol.md "Lifecycle" and "Errors".
func TestDocsLifecycle(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := t.TempDir()
	t.Run("before initialize -32002", func(t *testing.T) {
		c := harness.Start(t, harness.Options{Root: ws})
		err := c.Call(testCtx(t, 20*time.Second), "tools/list", map[string]any{}, nil)
		if rpcCode(err) != -32002 {
			t.Errorf("got %v, want -32002", err)
		}
	})
	t.Run("shutdown, then -32600, exit 0", func(t *testing.T) {
		c, _ := docsStart(t, ws, nil)
		ctx := testCtx(t, 20*time.Second)
		var res json.RawMessage
		if err := c.Call(ctx, "shutdown", nil, &res); err != nil || string(res) != "null" {
			t.Errorf("shutdown: %v, result %s", err, res)
		}
		if err := c.Call(ctx, "tools/list", map[string]any{}, nil); rpcCode(err) != -32600 {
			t.Errorf("request after shutdown: %v, want -32600", err)
		}
		if err := c.Call(ctx, "shutdown", nil, nil); rpcCode(err) != -32600 {
			t.Errorf("second shutdown: %v, want -32600", err)
		}
		c.Conn.Notify(ctx, "exit", nil)
		if code := c.Wait(5 * time.Second); code != 0 {
			t.Errorf("exit after shutdown: code %d, want 0", code)
		}
	})
	t.Run("exit without shutdown is 1", func(t *testing.T) {
		c, _ := docsStart(t, ws, nil)
		c.Conn.Notify(testCtx(t, 20*time.Second), "exit", nil)
		if code := c.Wait(5 * time.Second); code != 1 {
			t.Errorf("code %d, want 1", code)
		}
	})
	t.Run("EOF exits within 1 s", func(t *testing.T) {
		c, _ := docsStart(t, ws, nil)
		start := time.Now()
		c.CloseStdin()
		if code := c.Wait(3 * time.Second); code == -1 || time.Since(start) > time.Second {
			t.Errorf("exit after EOF took %v (code %d)", time.Since(start), code)
		}
	})
	t.Run("errors", func(t *testing.T) {
		c, _ := docsStart(t, ws, nil)
		ctx := testCtx(t, 20*time.Second)
		if err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}}, nil); rpcCode(err) != -32600 {
			t.Errorf("second initialize: %v, want -32600", err)
		}
		if err := c.Call(ctx, "tools/nope", map[string]any{}, nil); rpcCode(err) != -32601 {
			t.Errorf("unknown method: %v, want -32601", err)
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": 5}, nil); rpcCode(err) != -32602 {
			t.Errorf("params that do not decode: %v, want -32602", err)
		}
		// `arguments` and params may be [] (Lua's {}).
		var r harness.Result
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "ls", "arguments": []any{}}, &r); err != nil || r.IsError {
			t.Errorf("arguments []: %v %s", err, r.Text())
		}
		var list struct {
			Tools []any `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", []any{}, &list); err != nil || len(list.Tools) == 0 {
			t.Errorf("tools/list params []: %v", err)
		}
	})
}

// protocol.md "Errors" for frames a client library never sends, and
// "Robustness".
func TestDocsRawFrames(t *testing.T) {
	t.Parallel()
	r := docsStartRaw(t, t.TempDir())
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := r.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	alive := func(id int) {
		t.Helper()
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, id))
		if m := r.next(); m["id"] != float64(id) || m["result"] == nil {
			t.Fatalf("connection did not go on: %v", m)
		}
	}
	r.send(`{not json`)
	if m := r.next(); replyCode(m) != -32700 || m["id"] != nil {
		t.Errorf("body not JSON: %v, want -32700 with id null", m)
	}
	alive(2)
	r.sendRaw("Content-Length: abc\r\n\r\n{}")
	if m := r.next(); replyCode(m) != -32700 || m["id"] != nil {
		t.Errorf("bad Content-Length: %v, want -32700 with id null", m)
	}
	alive(3)
	r.send(`{"id":7,"method":"tools/list"}`)
	if m := r.next(); replyCode(m) != -32600 || m["id"] != float64(7) {
		t.Errorf("not JSON-RPC 2.0: %v, want -32600 with id 7", m)
	}
	alive(4)
	r.send(`[1, 2]`)
	got := 0
	for i := 0; i < 2; i++ {
		if m := r.next(); replyCode(m) == -32600 {
			got++
		}
	}
	if got != 2 {
		t.Errorf("batch [1, 2]: %d -32600 replies, want 2", got)
	}
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`)
	alive(5)
}

func docsWaitLog(t *testing.T, c *harness.Client, substr string) string {
	t.Helper()
	n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), substr)
	})
	if !ok {
		t.Errorf("no window/logMessage containing %q; got %q", substr, logMessages(c, 0))
		return ""
	}
	return string(n.Params)
}

// protocol.md "initialize": initializationOptions validation and effect.
func TestDocsInitializationOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "a\n"})
	for _, tc := range []struct {
		name  string
		opts  any
		field string
	}{
		{"unknown mode", map[string]any{"mode": "yolo"}, "mode"},
		{"rules not strings", map[string]any{"permissions": map[string]any{"allow": "Bash"}}, "allow"},
		{"negative limit", map[string]any{"limits": map[string]any{"read": -1}}, "limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := harness.Start(t, harness.Options{Root: ws})
			err := c.Call(testCtx(t, 20*time.Second), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": tc.opts}, nil)
			if rpcCode(err) != -32602 || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("got %v, want -32602 naming %q", err, tc.field)
			}
		})
	}
	t.Run("unknown key is a warning", func(t *testing.T) {
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"colour": "blue"}})
		if msg := docsWaitLog(t, c, "colour"); msg != "" && !strings.Contains(msg, `"type":2`) {
			t.Errorf("unknown key reported as %s, want a warning (type 2)", msg)
		}
	})
	t.Run("[] is {}", func(t *testing.T) {
		c := harness.Start(t, harness.Options{Root: ws})
		if err := c.Call(testCtx(t, 20*time.Second), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": []any{}}, nil); err != nil {
			t.Errorf("initializationOptions []: %v", err)
		}
	})
	t.Run("mode and permissions apply", func(t *testing.T) {
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{
			"mode": "acceptEdits", "permissions": map[string]any{"deny": []string{"Read(a.txt)"}},
		}})
		ctx := testCtx(t, 20*time.Second)
		if r := c.CallTool(ctx, "write", map[string]any{"path": "new.txt", "content": "x\n"}); r.IsError {
			t.Errorf("acceptEdits write: %s", r.Text())
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError || !strings.Contains(r.Text(), "Read(a.txt)") {
			t.Errorf("deny Read(a.txt): %s", r.Text())
		}
	})
	t.Run("readOnly denies writes", func(t *testing.T) {
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "readOnly"}})
		if r := c.CallTool(testCtx(t, 20*time.Second), "write", map[string]any{"path": "ro.txt", "content": "x\n"}); !r.IsError {
			t.Errorf("readOnly write: %s", r.Text())
		}
		if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
			t.Error("readOnly wrote a file")
		}
	})
}

// protocol.md "Permission settings are also read from …" and README's rule
// syntax examples.
func TestDocsSettingsFiles(t *testing.T) {
	t.Parallel()
	ctxArgs := func(c *harness.Client, t *testing.T, tool string, args map[string]any) harness.Result {
		return c.CallTool(testCtx(t, 20*time.Second), tool, args)
	}
	t.Run("settings.json mode", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"mode": "readOnly"}`})
		c, _ := docsStart(t, ws, nil)
		if r := ctxArgs(c, t, "bash", map[string]any{"command": "touch x"}); !r.IsError || !strings.Contains(r.Text(), "readOnly") {
			t.Errorf("settings.json readOnly: %s", r.Text())
		}
	})
	t.Run("settings.local.json deny", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.local.json": `{"permissions": {"deny": ["Read(./.env)"]}}`, ".env": "A=1\n", "sub/.env": "B=2\n"})
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
		if r := ctxArgs(c, t, "read", map[string]any{"path": ".env"}); !r.IsError || !strings.Contains(r.Text(), "Read(./.env)") {
			t.Errorf("Read(./.env) deny: %s", r.Text())
		}
		if r := ctxArgs(c, t, "read", map[string]any{"path": "sub/.env"}); r.IsError {
			t.Errorf("Read(./.env) is anchored at the root, yet sub/.env: %s", r.Text())
		}
	})
	t.Run("user settings", func(t *testing.T) {
		ws, cfg := t.TempDir(), t.TempDir()
		writeFiles(t, cfg, map[string]string{"agentls/settings.json": `{"permissions": {"deny": ["Edit(/src/**/*.ts)"]}}`})
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}}, "XDG_CONFIG_HOME="+cfg)
		if r := ctxArgs(c, t, "write", map[string]any{"path": "src/a/b.ts", "content": "x\n"}); !r.IsError || !strings.Contains(r.Text(), "Edit(/src/**/*.ts)") {
			t.Errorf("Edit(/src/**/*.ts) deny: %s", r.Text())
		}
		if r := ctxArgs(c, t, "write", map[string]any{"path": "src/a/b.js", "content": "x\n"}); r.IsError {
			t.Errorf("b.js is not covered: %s", r.Text())
		}
	})
	t.Run("editor wins", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"mode": "readOnly"}`})
		c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
		if r := ctxArgs(c, t, "write", map[string]any{"path": "w.txt", "content": "x\n"}); r.IsError {
			t.Errorf("initializationOptions mode acceptEdits should win over the file's readOnly: %s", r.Text())
		}
	})
	t.Run("bash prefix rule", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.local.json": `{"permissions": {"allow": ["Bash(npm run test:*)"]}}`})
		c, _ := docsStart(t, ws, nil)
		if r := ctxArgs(c, t, "bash", map[string]any{"command": "npm run test --silent"}); strings.Contains(r.Text(), "approval") {
			t.Errorf("Bash(npm run test:*) should allow npm run test --silent: %s", r.Text())
		}
		if r := ctxArgs(c, t, "bash", map[string]any{"command": "npm run build"}); !r.IsError || !strings.Contains(r.Text(), "approval") {
			t.Errorf("npm run build should need approval: %s", r.Text())
		}
	})
	t.Run("workspace cannot select bypass", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"mode": "bypass"}`})
		c, _ := docsStart(t, ws, nil)
		if r := ctxArgs(c, t, "bash", map[string]any{"command": "touch by.txt"}); !r.IsError {
			t.Errorf("a workspace file selected bypass: %s", r.Text())
		}
		if _, err := os.Stat(filepath.Join(ws, "by.txt")); err == nil {
			t.Error("the command ran")
		}
	})
	t.Run("invalid rule reported, the file's other settings apply", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"mode": "readOnly", "permissions": {"deny": ["Bash(npm run"]}}`})
		c, _ := docsStart(t, ws, nil)
		msg := docsWaitLog(t, c, "settings.json")
		wantContains(t, "invalid rule log", msg, `"type":1`, "Bash(npm run", "column")
		// Only the bad rule is dropped: the file's readOnly mode applies.
		if r := ctxArgs(c, t, "bash", map[string]any{"command": "touch inv.txt"}); !strings.Contains(r.Text(), "readOnly") {
			t.Errorf("one invalid rule switched off the rest of its file: %s", r.Text())
		}
	})
}

// --- docs/tools.md ------------------------------------------------------

func docsBypass(t *testing.T, ws string, env ...string) *harness.Client {
	t.Helper()
	c, _ := docsStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}}, env...)
	return c
}

// tools.md "Shared behaviour" and protocol.md "tools/call".
func TestDocsToolCallShared(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "one\ntwo\n"})
	c := docsBypass(t, ws)
	ctx := testCtx(t, 20*time.Second)
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	if !regexp.MustCompile(`^call-\d+$`).MatchString(r.CallID) {
		t.Errorf("generated callId %q, want call-N", r.CallID)
	}
	if _, ok := r.Details["durationMs"].(float64); !ok {
		t.Errorf("details.durationMs missing: %v", r.Details)
	}
	var echoed harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-1"}, &echoed); err != nil || echoed.CallID != "mine-1" {
		t.Errorf("callId not echoed: %v %q", err, echoed.CallID)
	}
	// Aliases and repairs are listed in details.normalized.
	r = c.CallTool(ctx, "read", map[string]any{"file_path": "a.txt", "limit": "1"})
	if r.IsError || !strings.Contains(r.Text(), "a.txt, lines 1-1 of 2") || r.Details["normalized"] == nil {
		t.Errorf("alias/numeric string repair: %s, details %v", r.Text(), compactJSON(r.Details))
	}
	// A missing field names it and ends with the usage line quoted in tools.md.
	r = c.CallTool(ctx, "read", map[string]any{})
	if !r.IsError || !strings.Contains(r.Text(), "path") || !strings.HasSuffix(strings.TrimSpace(r.Text()), "Usage: read {path: string, offset?: integer, limit?: integer}") {
		t.Errorf("missing path: %q", r.Text())
	}
	// docs/tools.md: "`offset` must be a line number ≥ 1, got -3".
	r = c.CallTool(ctx, "read", map[string]any{"path": "a.txt", "offset": -3})
	wantContains(t, "negative offset", r.Text(), "offset", "-3")
	if !r.IsError {
		t.Error("offset -3 is not an error")
	}
	// An unknown tool lists the available tools and the closest name.
	r = c.CallTool(ctx, "reed", map[string]any{"path": "a.txt"})
	if !r.IsError {
		t.Error("unknown tool is not an error result")
	}
	wantContains(t, "unknown tool", r.Text(), `"read"`, "bash", "tool_search", "write")
	// A panicking tool is a result.
	if r, err := c.TryCallTool(ctx, "test_panic", map[string]any{}); err != nil || !r.IsError {
		t.Errorf("panic: %v %v", err, r.Text())
	}
}

// tools.md "read".
func TestDocsRead(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
	writeFiles(t, ws, map[string]string{
		"three.txt":   "a\nb\nc\n",
		"long.txt":    long.String(),
		"wide.txt":    strings.Repeat("x", 2500) + "\n",
		"crlf.txt":    "a\r\nb\r\n",
		"bom.txt":     "\ufeffhello\n",
		"image.txt":   png,
		"text.png":    "just text\n",
		"prog":        "\x7fELF\x02\x01\x01\x00" + strings.Repeat("\x00", 100),
		"huge.txt":    strings.Repeat("y", 60000) + "\n",
		"dir/x.txt":   "x\n",
		"config.yaml": "k: v\n",
	})
	c := docsBypass(t, ws)
	ctx := testCtx(t, 20*time.Second)
	read := func(args map[string]any) harness.Result { return c.CallTool(ctx, "read", args) }

	r := read(map[string]any{"path": "three.txt"})
	if r.Text() != "three.txt, lines 1-3 of 3\n     1→a\n     2→b\n     3→c" {
		t.Errorf("format: %q", r.Text())
	}
	r = read(map[string]any{"path": "long.txt"})
	wantContains(t, "2500 lines", r.Text(), "long.txt, lines 1-1998 of 2500", "  1998→line 1998", "offset=1999")
	if strings.Contains(r.Text(), "line 1999\n") || strings.Count(r.Text(), "\n")+1 > 2000 {
		t.Error("more than 2000 lines")
	}
	r = read(map[string]any{"path": "long.txt", "limit": 5000})
	if !strings.Contains(r.Text(), "lines 1-1998 of 2500") || !strings.Contains(compactJSON(r.Details["normalized"]), "limit") {
		t.Errorf("limit 5000 lowered to 2000 and reported: %.200s / %v", r.Text(), r.Details["normalized"])
	}
	r = read(map[string]any{"path": "three.txt", "offset": 0})
	if r.IsError || !strings.HasPrefix(r.Text(), "three.txt, lines 1-3 of 3") {
		t.Errorf("offset 0 means 1: %q", r.Text())
	}
	r = read(map[string]any{"path": "three.txt", "offset": 10})
	if !r.IsError || !strings.Contains(r.Text(), "3") {
		t.Errorf("offset past the end names the line count: %q", r.Text())
	}
	r = read(map[string]any{"path": "wide.txt"})
	wantContains(t, "line cut", r.Text(), "… [line cut: 2000 of 2500 characters shown]")
	r = read(map[string]any{"path": "crlf.txt"})
	if strings.Contains(r.Text(), "\r") || !strings.Contains(strings.SplitN(r.Text(), "\n", 2)[0], "CRLF") {
		t.Errorf("CRLF: %q", r.Text())
	}
	r = read(map[string]any{"path": "bom.txt"})
	if !strings.Contains(r.Text(), "     1→hello") || strings.Contains(r.Text(), "\ufeff") {
		t.Errorf("BOM: %q", r.Text())
	}
	r = read(map[string]any{"path": "image.txt"})
	image := false
	for _, p := range r.Content {
		if p["type"] == "image" && p["mimeType"] == "image/png" && p["data"] != "" {
			image = true
		}
	}
	if !image || r.IsError {
		t.Errorf("PNG named .txt: %v", compactJSON(r.Content))
	}
	r = read(map[string]any{"path": "text.png"})
	if r.IsError || !strings.Contains(r.Text(), "1→just text") {
		t.Errorf(".png holding text: %q", r.Text())
	}
	r = read(map[string]any{"path": "prog"})
	if !r.IsError || !strings.Contains(r.Text(), "ELF executable") || !strings.Contains(r.Text(), "108") {
		t.Errorf("ELF: %q", r.Text())
	}
	r = read(map[string]any{"path": "huge.txt"})
	if !strings.Contains(r.Text(), "60000 bytes") || !strings.Contains(r.Text(), "sed -n '1p' huge.txt | cut -b") {
		t.Errorf("first line over 51,200 bytes: %q", r.Text())
	}
	r = read(map[string]any{"path": "dir"})
	if !r.IsError || !strings.Contains(r.Text(), "ls") {
		t.Errorf("directory: %q", r.Text())
	}
	r = read(map[string]any{"path": "dir/config.yaml"})
	if !r.IsError || !strings.Contains(r.Text(), "config.yaml") {
		t.Errorf("missing file suggests the same name elsewhere: %q", r.Text())
	}
	fifo := filepath.Join(ws, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err == nil {
		r = read(map[string]any{"path": "fifo"})
		if !r.IsError || !strings.Contains(r.Text(), "not a regular file") {
			t.Errorf("FIFO: %q", r.Text())
		}
	}
}

// tools.md "ls", "find", "grep".
func TestDocsListings(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".gitignore":          "build/\n*.log\n",
		".hidden":             "secret sauce\n",
		"b.txt":               "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n",
		"a.log":               "alpha\n",
		"build/out.txt":       "alpha\n",
		"src/x.ts":            "alpha\n",
		"src/deep/y.spec.ts":  "alpha\n",
		"src/deep/readme.md":  "x\n",
		".git/HEAD":           "ref: refs/heads/main\n",
		"key.txt":             "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAnotreallyakeybutlongenoughtolookbase64AAAA\nMIIEowIBAAKCAQEAanotherlineofbase64lookingtextBBBBBBBBBBB\n-----END RSA PRIVATE KEY-----\n",
		"sub/one.txt":         "1\n",
		"sub/two.txt":         "2\n",
		"sub/three.txt":       "3\n",
		"unrelated/alpha.cfg": "q\n",
	})
	if err := os.Symlink("b.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	c := docsBypass(t, ws)
	ctx := testCtx(t, 20*time.Second)
	call := func(tool string, args map[string]any) harness.Result {
		r := c.CallTool(ctx, tool, args)
		// A final newline is not part of what the docs show.
		for _, p := range r.Content {
			if s, ok := p["text"].(string); ok {
				p["text"] = strings.TrimSuffix(s, "\n")
			}
		}
		return r
	}

	t.Run("ls", func(t *testing.T) {
		r := call("ls", map[string]any{})
		txt := r.Text()
		wantContains(t, "ls", txt, ".gitignore\n", ".hidden\n", "src/\n", "link@ -> b.txt", "[2 ignored entries hidden")
		if strings.Contains(txt, ".git/") || strings.Contains(txt, "a.log") || strings.Contains(txt, "build/") {
			t.Errorf(".git or ignored entries shown:\n%s", txt)
		}
		if strings.Index(txt, "a.log") >= 0 || strings.Index(txt, ".gitignore") > strings.Index(txt, "b.txt") {
			t.Errorf("not sorted by byte order:\n%s", txt)
		}
		r = call("ls", map[string]any{"path": "sub", "limit": 2})
		wantContains(t, "ls limit notice", r.Text(), "2 of 3", "limit=")
		if r = call("ls", map[string]any{"path": "b.txt"}); !r.IsError || !strings.Contains(r.Text(), "read") {
			t.Errorf("ls of a file: %q", r.Text())
		}
		if r = call("ls", map[string]any{"path": "nope"}); !r.IsError || !strings.Contains(r.Text(), "find") {
			t.Errorf("ls of a missing path: %q", r.Text())
		}
		if r = call("ls", map[string]any{"path": "build"}); !strings.Contains(strings.ToLower(r.Text()), "ignored") {
			t.Errorf("ls of an ignored directory says so: %q", r.Text())
		}
	})
	t.Run("find", func(t *testing.T) {
		r := call("find", map[string]any{"pattern": "*.ts"})
		if r.Text() != "src/deep/y.spec.ts\nsrc/x.ts" {
			t.Errorf("*.ts: %q", r.Text())
		}
		if r = call("find", map[string]any{"pattern": "./src/**/*.spec.ts"}); r.Text() != "src/deep/y.spec.ts" {
			t.Errorf("./src/**/*.spec.ts: %q", r.Text())
		}
		if r = call("find", map[string]any{"pattern": "alpha"}); !strings.Contains(r.Text(), "*alpha*") {
			t.Errorf("no-wildcard pattern should suggest *alpha*: %q", r.Text())
		}
		if r = call("find", map[string]any{"pattern": "[abc"}); !r.IsError || !strings.Contains(r.Text(), "[") {
			t.Errorf("invalid glob: %q", r.Text())
		}
		if r = call("find", map[string]any{"pattern": ".hidden"}); r.Text() != ".hidden" {
			t.Errorf("hidden files included: %q", r.Text())
		}
		if r = call("find", map[string]any{"pattern": "*.txt", "path": "sub", "limit": 2}); !strings.Contains(r.Text(), "limit=4") {
			t.Errorf("limit notice gives limit=N doubled: %q", r.Text())
		}
	})
	t.Run("grep", func(t *testing.T) {
		r := call("grep", map[string]any{"pattern": "alpha"})
		if r.Text() != "b.txt:1: alpha\nsrc/deep/y.spec.ts:1: alpha\nsrc/x.ts:1: alpha" {
			t.Errorf("grep alpha: %q", r.Text())
		}
		r = call("grep", map[string]any{"pattern": "^(beta|iota)$", "path": "b.txt", "context": 1})
		if r.Text() != "b.txt-1- alpha\nb.txt:2: beta\nb.txt-3- gamma\n--\nb.txt-8- theta\nb.txt:9: iota\nb.txt-10- kappa" {
			t.Errorf("context: %q", r.Text())
		}
		if r = call("grep", map[string]any{"pattern": "sauce"}); r.Text() != ".hidden:1: secret sauce" {
			t.Errorf("hidden files searched by default: %q", r.Text())
		}
		if r = call("grep", map[string]any{"pattern": "(unclosed"}); !r.IsError || !strings.Contains(r.Text(), "(") {
			t.Errorf("invalid pattern: %q", r.Text())
		}
		r = call("grep", map[string]any{"pattern": "MIIE", "path": "key.txt"})
		if strings.Contains(r.Text(), "notreallyakey") || !strings.Contains(r.Text(), "[REDACTED:private-key]") {
			t.Errorf("PEM body lines: %q", r.Text())
		}
		if r = call("grep", map[string]any{"pattern": "alpha", "path": "build"}); !strings.Contains(r.Text(), "includeIgnored: true") {
			t.Errorf("ignored path: %q", r.Text())
		}
		// AGENTLS_GREP_BACKEND=go: byte-identical text.
		goc := docsBypass(t, ws, "AGENTLS_GREP_BACKEND=go")
		for _, args := range []map[string]any{{"pattern": "alpha"}, {"pattern": "^(beta|iota)$", "context": 1}} {
			want := call("grep", args).Text()
			if got := strings.TrimSuffix(goc.CallTool(ctx, "grep", args).Text(), "\n"); got != want {
				t.Errorf("Go backend %v:\n%q\nrg:\n%q", args, got, want)
			}
		}
	})
}

// tools.md "edit" and "write".
func TestDocsEditWrite(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	writeFiles(t, ws, map[string]string{"src/a.go": b.String(), "dup.txt": "x\nx\n", "old.txt": "old\n"})
	c := docsBypass(t, ws)
	ctx := testCtx(t, 20*time.Second)
	c.CallTool(ctx, "read", map[string]any{"path": "src/a.go", "limit": 10}) // a partial read counts
	r := c.CallTool(ctx, "edit", map[string]any{"path": "src/a.go", "edits": []map[string]any{
		{"oldText": "l10\nl11\nl12\n", "newText": "L10\nL11\nL12\n"},
		{"oldText": "l40\n", "newText": "L40\n"},
	}})
	if r.Text() != "Edited src/a.go: 2 replacements, lines 10-12 and 40." {
		t.Errorf("edit result: %q", r.Text())
	}
	d := r.Details
	for _, k := range []string{"kind", "uri", "path", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
		if _, ok := d[k]; !ok {
			t.Errorf("edit details lack %s: %v", k, compactJSON(d))
		}
	}
	if d["kind"] != "edit" || !strings.HasPrefix(fmt.Sprint(d["oldHash"]), "sha256:") || !strings.HasPrefix(fmt.Sprint(d["newHash"]), "sha256:") || d["firstChangedLine"] != float64(10) {
		t.Errorf("edit details: %v", compactJSON(d))
	}
	if n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		return n.Method == "tools/details" && strings.Contains(string(n.Params), `"callId":"`+r.CallID+`"`)
	}); !ok || !strings.Contains(string(n.Params), `"tool":"edit"`) {
		t.Errorf("no tools/details for %s", r.CallID)
	}

	c.CallTool(ctx, "read", map[string]any{"path": "dup.txt"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"oldText": "x", "newText": "y"}}})
	if !r.IsError {
		t.Error("ambiguous edit applied")
	}
	wantContains(t, "several matches", r.Text(), "add context or set replaceAll", "1", "2")
	r = c.CallTool(ctx, "edit", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"oldText": "x", "newText": "x", "replaceAll": true}}})
	if !r.IsError || !strings.Contains(r.Text(), "no change") {
		t.Errorf("identical result: %q", r.Text())
	}
	// A legacy single edit with other agents' names.
	r = c.CallTool(ctx, "edit", map[string]any{"file_path": "dup.txt", "old_string": "x\nx", "new_string": "y\ny"})
	if r.IsError {
		t.Errorf("legacy edit: %q", r.Text())
	}
	r = c.CallTool(ctx, "edit", map[string]any{"path": "src/a.go", "dryRun": true, "edits": []map[string]any{{"oldText": "l1\n", "newText": "one\n"}}})
	if got, _ := os.ReadFile(filepath.Join(ws, "src/a.go")); r.IsError || !strings.HasPrefix(string(got), "l1\n") || r.Details["unifiedDiff"] == nil {
		t.Errorf("dryRun wrote or gave no diff: %q", r.Text())
	}

	r = c.CallTool(ctx, "write", map[string]any{"path": "new/dir/f.txt", "content": "hi\n"})
	if r.IsError || r.Details["kind"] != "create" || r.Details["matchLevel"] != "none" || r.Details["unifiedDiff"] == nil {
		t.Errorf("create: %q %v", r.Text(), compactJSON(r.Details))
	}
	if r = c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "new\n"}); !r.IsError || !strings.Contains(r.Text(), "read") {
		t.Errorf("replace without a read: %q", r.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": "old.txt"})
	if r = c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "old\n"}); !r.IsError || !strings.Contains(r.Text(), "no change") {
		t.Errorf("identical write: %q", r.Text())
	}
	if r = c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "new\n"}); r.IsError || r.Details["kind"] != "write" {
		t.Errorf("replace after read: %q %v", r.Text(), r.Details["kind"])
	}
}

// tools.md "bash" and "Secret masking".
func TestDocsBashAndSecrets(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	key := "sk-proj-" + strings.Repeat("Ab3dEf7hIj", 5)
	writeFiles(t, ws, map[string]string{"a.txt": "a\n", ".env": "OPENAI_API_KEY=" + key + "\n", "sub/k": ""})
	c := docsBypass(t, ws)
	ctx := testCtx(t, 20*time.Second)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `echo "$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$GIT_EDITOR|$EDITOR|$VISUAL|$AGENTLS|$TERM|$NO_COLOR"; pwd`, "cwd": "sub"})
	wantContains(t, "bash env", r.Text(), "cat|cat|0|true|true|true|1|dumb|1", filepath.Join(ws, "sub"))
	if r = c.CallTool(ctx, "bash", map[string]any{"command": "exit 3"}); !r.IsError || !strings.Contains(r.Text(), "[Exit code 3]") {
		t.Errorf("exit 3: %q", r.Text())
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "true", "timeout": 120000})
	if r.IsError || !strings.Contains(compactJSON(r.Details["normalized"]), "timeout") {
		t.Errorf("timeout in ms: %q %v", r.Text(), r.Details["normalized"])
	}
	if r = c.CallTool(ctx, "bash", map[string]any{"command": "true", "timeout": 700}); !r.IsError || !strings.Contains(r.Text(), "600") {
		t.Errorf("timeout 700: %q", r.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	if r = c.CallTool(ctx, "bash", map[string]any{"command": "echo more >> a.txt"}); !strings.Contains(r.Text(), "Changed by this command") || !strings.Contains(r.Text(), "a.txt") {
		t.Errorf("changed files: %q", r.Text())
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": ".env"})
	if !strings.Contains(r.Text(), "OPENAI_API_KEY=[REDACTED:openai-key]") || strings.Contains(r.Text(), key) || r.Details["redactions"] == nil {
		t.Errorf(".env: %q %v", r.Text(), compactJSON(r.Details))
	}
	if r = c.CallTool(ctx, "bash", map[string]any{"command": "cat .env"}); strings.Contains(r.Text(), key) {
		t.Errorf("bash output keeps the key: %q", r.Text())
	}
}

// protocol.md "tools/confirm" and "tools/diagnostics".
func TestDocsConfirmAndDiagnostics(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n", ".env": "A=1\n", "gone.txt": "x\n",
		".agentls/settings.json": `{"permissions": {"ask": ["Bash(rm:*)"]}}`})
	c := harness.Start(t, harness.Options{Root: ws})
	var confirm map[string]any
	var reasons []string
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p map[string]any
		json.Unmarshal(params, &p)
		switch method {
		case "tools/confirm":
			confirm = p
			reasons = append(reasons, fmt.Sprint(p["rule"]))
			if strings.Contains(compactJSON(p["arguments"]), "rejected.txt") {
				return map[string]any{"decision": "rejectOnce", "message": "not now"}, nil
			}
			return map[string]any{"decision": "allowOnce"}, nil
		case "tools/diagnostics":
			uris, _ := p["uris"].([]any)
			var items []any
			for _, u := range uris {
				var diags []any
				if p["waitMs"].(float64) > 0 {
					diags = []any{map[string]any{
						"range":    map[string]any{"start": map[string]any{"line": 2, "character": 11}, "end": map[string]any{"line": 2, "character": 17}},
						"severity": 1, "message": "undefined: BROKEN", "source": "compiler",
					}}
				}
				items = append(items, map[string]any{"uri": u, "diagnostics": diags})
			}
			return map[string]any{"items": items}, nil
		}
		return nil, fmt.Errorf("unexpected %s", method)
	}
	c.Initialize(testCtx(t, 20*time.Second), map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true, "diagnostics": true}}}})
	ctx := testCtx(t, 20*time.Second)
	r := c.CallTool(ctx, "write", map[string]any{"path": "rejected.txt", "content": "x\n"})
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: not now") {
		t.Errorf("rejectOnce: %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "rejected.txt")); err == nil {
		t.Error("a rejected write changed the disk")
	}
	for _, k := range []string{"callId", "tool", "arguments", "reason", "preview"} {
		if _, ok := confirm[k]; !ok {
			t.Errorf("tools/confirm params lack %s: %v", k, compactJSON(confirm))
		}
	}
	if confirm["rule"] != "mode:default" {
		t.Errorf("rule %v, want mode:default; params %s", confirm["rule"], compactJSON(confirm))
	}
	if reason, _ := confirm["reason"].(string); !strings.Contains(reason, "the user must approve") {
		t.Errorf("reason %q is not a sentence for the user", reason)
	}
	pv, _ := confirm["preview"].(map[string]any)
	for _, k := range []string{"kind", "path", "uri", "unifiedDiff", "edits"} {
		if _, ok := pv[k]; !ok {
			t.Errorf("preview lacks %s: %v", k, compactJSON(pv))
		}
	}
	// docs/protocol.md: preview is the call's details; a new file's details say "create".
	if pv["kind"] != "create" {
		t.Errorf("preview of a new file has kind %v; the write's details kind is create", pv["kind"])
	}
	reasons = nil
	c.CallTool(ctx, "read", map[string]any{"path": ".env"})
	c.CallTool(ctx, "bash", map[string]any{"command": "rm gone.txt"})
	want := []string{"builtin:secret-file", "Bash(rm:*) (.agentls/settings.json)"}
	if len(reasons) != 2 || !strings.Contains(reasons[0], want[0]) || !strings.Contains(reasons[1], want[1]) {
		t.Errorf("rules %q, want them to name %q", reasons, want)
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": "package a\n", "newText": "package a\n\nvar x = BROKEN\n"}}})
	wantContains(t, "diagnostics", r.Text(), "The editor reports new problems in a.go:\n  L3:12 error: undefined: BROKEN (compiler)")
	dd, _ := r.Details["diagnostics"].(map[string]any)
	if dd == nil {
		if arr, ok := r.Details["diagnostics"].([]any); ok && len(arr) > 0 {
			dd, _ = arr[0].(map[string]any)
		}
	}
	for _, k := range []string{"uri", "new", "total"} {
		if _, ok := dd[k]; !ok {
			t.Errorf("details.diagnostics lacks %s: %v", k, compactJSON(r.Details["diagnostics"]))
		}
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "touch made.txt"})
	if pv, _ := confirm["preview"].(map[string]any); pv["kind"] != "command" || pv["command"] != "touch made.txt" || pv["readOnly"] != false {
		t.Errorf("bash preview: %v", compactJSON(confirm["preview"]))
	}
}

// docsMCP is a newline-delimited JSON-RPC client of `agentls mcp`.
type docsMCP struct {
	t   *testing.T
	in  io.WriteCloser
	out chan map[string]any
	cmd *exec.Cmd
}

func docsStartMCP(t *testing.T, args []string, env ...string) *docsMCP {
	t.Helper()
	cmd := harness.Command(t, append([]string{"mcp"}, args...), env...)
	in, out := harness.StartPiped(t, cmd)
	m := &docsMCP{t: t, in: in, out: make(chan map[string]any, 64), cmd: cmd}
	go func() { // ends at EOF of the process's stdout
		defer close(m.out)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var v map[string]any
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				m.out <- v
			}
		}
	}()
	stopOnCleanup(t, cmd, in)
	return m
}

func (m *docsMCP) send(line string) { io.WriteString(m.in, line+"\n") }

// reply waits for the reply with the given id (nil: id null).
func (m *docsMCP) reply(id any) map[string]any {
	m.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case v, ok := <-m.out:
			if !ok {
				m.t.Fatal("agentls mcp closed its output")
			}
			if _, isReq := v["method"]; isReq {
				continue
			}
			if fmt.Sprint(v["id"]) == fmt.Sprint(id) {
				return v
			}
		case <-timeout:
			m.t.Fatalf("no reply %v within 10 s", id)
		}
	}
}

func (m *docsMCP) init() {
	m.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a4d","version":"1"}}}`)
	m.reply(0)
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// README "MCP hosts" and protocol.md "agentls mcp".
func TestDocsMCPServer(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "hello\n"})
	m := docsStartMCP(t, []string{"--root", ws})
	m.init()
	m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	list := compactJSON(m.reply(1)["result"])
	wantContains(t, "mcp tools/list", list, `"readOnlyHint"`, `"destructiveHint"`, `"idempotentHint"`, `"openWorldHint"`, `"source":"core"`, `"name":"tool_search"`)
	m.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`)
	res, _ := m.reply(2)["result"].(map[string]any)
	meta, _ := res["_meta"].(map[string]any)
	if !strings.Contains(compactJSON(res["content"]), "a.txt, lines 1-1 of 1") || meta["callId"] == nil || meta["details"] == nil {
		t.Errorf("mcp read: %s", compactJSON(res))
	}
	m.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"reed","arguments":{}}}`)
	res, _ = m.reply(3)["result"].(map[string]any)
	if res["isError"] != true || !strings.Contains(compactJSON(res), `\"read\"`) {
		t.Errorf("unknown tool over MCP: %s", compactJSON(res))
	}
	m.send(`not json`)
	if r := m.reply(nil); replyCode(r) != -32700 {
		t.Errorf("not JSON: %v", r)
	}
	m.send(`{"id":9,"method":"ping"}`)
	if r := m.reply(9); replyCode(r) != -32600 {
		t.Errorf("not JSON-RPC 2.0: %v", r)
	}
	m.send(`[]`)
	if r := m.reply(nil); replyCode(r) != -32600 {
		t.Errorf("empty batch: %v", r)
	}
	m.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	m.reply(4)
	m.in.Close()
	done := make(chan error, 1)
	go func() { done <- m.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Error("agentls mcp did not exit at end of input")
	}
}

// tools.md "Extension tools" and "Upstream MCP servers", README's mcp.json
// shapes: an upstream (agentls mcp itself) under "servers" and under
// "mcpServers", ${env:NAME} expanded; a deferred extension tool.
func TestDocsUpstreamAndExtensions(t *testing.T) {
	t.Parallel()
	inner := t.TempDir()
	writeFiles(t, inner, map[string]string{"inner.txt": "from the inner workspace\n"})
	bin := harness.Binary(t)
	for _, key := range []string{"servers", "mcpServers"} {
		t.Run(key, func(t *testing.T) {
			ws := t.TempDir()
			cfg := fmt.Sprintf(`{%q: {"inner": {"command": %q, "args": ["mcp", "--root", "${env:A4D_INNER}"]}}}`, key, bin)
			writeFiles(t, ws, map[string]string{
				".agentls/mcp.json": cfg,
				".agentls/tools/shout.json": `{"name": "shout_words", "description": "Print words in upper case.",
					"inputSchema": {"type": "object", "properties": {"words": {"type": "string"}}, "required": ["words"]},
					"command": "echo {{words}} | tr a-z A-Z", "readOnly": true}`,
			})
			c := docsBypass(t, ws, "A4D_INNER="+inner)
			ctx := testCtx(t, 20*time.Second)
			var list struct {
				Tools []map[string]any `json:"tools"`
			}
			c.Call(ctx, "tools/list", map[string]any{}, &list)
			if l := compactJSON(list.Tools); strings.Contains(l, "shout_words") || strings.Contains(l, "inner__read") {
				t.Errorf("deferred tools listed before tool_search")
			}
			r := c.CallTool(ctx, "tool_search", map[string]any{"query": "upper case words"})
			wantContains(t, "tool_search extension", r.Text(), "shout_words")
			if r = c.CallTool(ctx, "shout_words", map[string]any{"words": "hi; rm -rf /"}); r.Text() != "HI; RM -RF /" && strings.TrimSpace(r.Text()) != "HI; RM -RF /" {
				t.Errorf("extension tool: %q", r.Text())
			}
			r = c.CallTool(ctx, "inner__read", map[string]any{"path": "inner.txt"})
			if r.IsError || !strings.Contains(r.Text(), "from the inner workspace") {
				t.Errorf("upstream tool inner__read: %q", r.Text())
			}
		})
	}
	t.Run("mcp__ rules", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{
			".agentls/mcp.json":      fmt.Sprintf(`{"servers": {"inner": {"command": %q, "args": ["mcp", "--root", %q]}}}`, bin, inner),
			".agentls/settings.json": `{"permissions": {"deny": ["mcp__inner__read"]}}`,
		})
		c := docsBypass(t, ws)
		r := c.CallTool(testCtx(t, 20*time.Second), "inner__read", map[string]any{"path": "inner.txt"})
		if !r.IsError || strings.Contains(r.Text(), "from the inner workspace") {
			t.Errorf("mcp__inner__read deny: %q", r.Text())
		}
	})
}
