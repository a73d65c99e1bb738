package e2e

// The documentation, checked black-box: every concrete claim of README.md,
// docs/tools.md, docs/protocol.md and ARCHITECTURE.md (an example call and
// its output, a field name, a default, a flag, an error code or text) is run
// against agentls. Texts the docs quote are asserted verbatim; numbers are
// checked against `agentls tools --limits`.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// docsRepo is the repository root (two levels above test/e2e).
func docsRepo(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// docsDoc returns a documentation file of the repository.
func docsDoc(t *testing.T, rel string) string {
	t.Helper()
	return readFile(t, filepath.Join(docsRepo(t), rel))
}

// docsLimits is `agentls tools --limits`.
func docsLimits(t *testing.T) map[string]int {
	t.Helper()
	o := runAgentls(t, t.TempDir(), nil, "tools", "--limits")
	var m map[string]int
	if err := json.Unmarshal([]byte(o.stdout), &m); o.code != 0 || err != nil {
		t.Fatalf("tools --limits: exit %d, %v: %s%s", o.code, err, o.stdout, o.stderr)
	}
	return m
}

// docsWant fails unless r's error flag is isErr and its text holds every
// want, compared case and all (the docs quote these texts).
func docsWant(t *testing.T, what string, r harness.Result, isErr bool, wants ...string) {
	t.Helper()
	if r.IsError != isErr {
		t.Errorf("%s: isError=%v, want %v; text:\n%s", what, r.IsError, isErr, r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("%s: text lacks %q; got:\n%s", what, w, r.Text())
		}
	}
}

// docsPEM is a private key whose body lines are random base64.
func docsPEM(lines int) (string, []string) {
	var body []string
	for i := 0; i < lines; i++ {
		body = append(body, channelsRand(fmt.Sprintf("docs-pem-%d", i), 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"))
	}
	return "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----\n", body
}

// --- README ---------------------------------------------------------------

// README "The two commands": the quick-start call, run on README.md itself.
// The rest of `agentls call` (several calls, the first failure ending the
// run, modes and rules, the masked echo) is pinned by the scripts.
func TestDocsREADMECall(t *testing.T) {
	t.Parallel()
	lines := strings.Count(docsDoc(t, "README.md"), "\n")
	o := runAgentls(t, docsRepo(t), nil, "call", "read", `{"path": "README.md", "limit": 5}`, "--root", ".")
	if o.code != 0 {
		t.Fatalf("exit %d, stderr %s", o.code, o.stderr)
	}
	wantContains(t, "quick start", o.stdout, fmt.Sprintf("README.md, lines 1-5 of %d", lines), "     1→# agentls", "Use offset=6 to continue")
}

// README: --version (and serverInfo), the scripts and benchmarks it names,
// its JSON snippets parse. The usage and each --help: TestCLIBadInvocationAndHelp.
func TestDocsCLI(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	o := runAgentls(t, ws, nil, "--version")
	if o.code != 0 || !regexp.MustCompile(`^agentls \S+\n$`).MatchString(o.stdout) {
		t.Errorf("--version: exit %d, %q", o.code, o.stdout)
	}
	version := strings.TrimSpace(strings.TrimPrefix(o.stdout, "agentls "))
	res := harness.Start(t, harness.Options{Root: ws, Process: true}).Initialize(testCtx(t, 20*time.Second), nil)
	if got := compactJSON(res["serverInfo"]); got != fmt.Sprintf(`{"name":"agentls","version":%q}`, version) {
		t.Errorf("serverInfo %s, --version says %s", got, version)
	}

	repo := docsRepo(t)
	if st, err := os.Stat(filepath.Join(repo, "scripts", "test-all.sh")); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("scripts/test-all.sh: %v, mode %v", err, st)
	} else {
		wantContains(t, "test-all.sh", readFile(t, filepath.Join(repo, "scripts", "test-all.sh")), "AGENTLS_SKIP_VSCODE", "/var/cache/agentls-ci", "go test")
	}
	if _, err := os.Stat(filepath.Join(repo, "bench", "search.sh")); err != nil {
		t.Errorf("README names bench/search.sh: %v", err)
	}
	found := false
	files, _ := filepath.Glob("*_test.go")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		found = found || bytes.Contains(b, []byte("func BenchmarkReadRoundTrip("))
	}
	if !found {
		t.Error("README names BenchmarkReadRoundTrip in ./test/e2e/; no such benchmark")
	}
	for _, doc := range []string{"README.md", "docs/protocol.md"} {
		for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(docsDoc(t, doc), -1) {
			var v any
			if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
				t.Errorf("%s JSON block does not parse: %v\n%s", doc, err, m[1])
			}
		}
	}
}

// README's tool table: its rows verbatim, its numbers the enforced defaults
// (`agentls tools --limits`), stated in each tool's description, and the
// schema maxima.
func TestDocsREADMEToolTable(t *testing.T) {
	t.Parallel()
	readme := docsDoc(t, "README.md")
	lim := docsLimits(t)
	for _, tc := range []struct {
		row   string
		pairs map[string]int
	}{
		{"| `read` | numbered lines of a file; images as image parts; binary refused with its type | 2000 lines and 51,200 bytes per result, header and notices included, lines cut at 2000 characters, images up to 5 MiB |", map[string]int{"readLines": 2000, "readBytes": 51200, "readLineChars": 2000}},
		{"| 500 entries (max 5000), 65,536 bytes per result |", map[string]int{"lsEntries": 500}},
		{"| 100 matches (max 1000), context ≤ 20, lines cut at 500 characters, 51,200 bytes |", map[string]int{"grepMatches": 100, "grepLineChars": 500, "grepBytes": 51200}},
		{"| 1000 paths (max 10000), 65,536 bytes per result |", map[string]int{"findPaths": 1000}},
		{"| timeout 120 s (max 600; a job has none unless given), 2000 lines / 51,200 bytes per result (the output's tail and the notices), 2 s kill grace; jobs: 1 s wait for an early failure, 8 running, finished kept 30 min (32 jobs) |", map[string]int{"bashTimeout": 120, "bashMaxTimeout": 600, "bashLines": 2000, "bashBytes": 51200}},
		{"files up to 64 MiB |", nil},
		{"content and replaced file up to 64 MiB |", nil},
	} {
		if !strings.Contains(readme, tc.row) {
			t.Errorf("README tool table lacks %q", tc.row)
		}
		for k, v := range tc.pairs {
			if lim[k] != v {
				t.Errorf("README states %s=%d; tools --limits says %d", k, v, lim[k])
			}
		}
	}

	c, ctx := startIn(t, t.TempDir(), nil)
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	tools := map[string]map[string]any{}
	for _, tl := range list.Tools {
		tools[tl["name"].(string)] = tl
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\|").FindAllStringSubmatch(readme, -1) {
		if _, ok := tools[m[1]]; !ok && regexp.MustCompile(`^(read|ls|grep|find|edit|write|bash|tool_search)$`).MatchString(m[1]) {
			t.Errorf("README tool %s is not listed", m[1])
		}
	}
	// Every number README's table states is in the tool's description.
	num := regexp.MustCompile(`\d+`)
	for tool, nums := range map[string][]string{
		"read": {"2000", "51200", "5242880"}, "ls": {"500", "5000"}, "grep": {"100", "1000", "20", "500", "51200"},
		"find": {"1000", "10000"}, "edit": {"20", "64 MiB"}, "write": {"64 MiB"}, "bash": {"120", "600", "2000", "51200", "2 second"}, "tool_search": {"5", "20"},
	} {
		d := strings.ReplaceAll(fmt.Sprint(tools[tool]["description"]), ",", "")
		have := map[string]bool{}
		for _, n := range num.FindAllString(d, -1) {
			have[n] = true
		}
		for _, n := range nums {
			if strings.Contains(n, " ") && !strings.Contains(d, n) || !strings.Contains(n, " ") && !have[n] {
				t.Errorf("README says %s's limit %s is stated in its description; it is not:\n%s", tool, n, d)
			}
		}
	}
	for key, want := range map[string]string{"ls.limit": "5000", "grep.limit": "1000", "grep.context": "20", "find.limit": "10000", "bash.timeout": "600", "tool_search.limit": "20"} {
		name, prop, _ := strings.Cut(key, ".")
		props, _ := tools[name]["inputSchema"].(map[string]any)["properties"].(map[string]any)
		if p, _ := props[prop].(map[string]any); fmt.Sprint(p["maximum"]) != want {
			t.Errorf("%s schema maximum = %v, README says %s", key, p["maximum"], want)
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
			if _, isArr := e.([]any); k == "type" && isArr {
				t.Errorf("%s: schema has a type union %v", where, e)
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
// protocol.md "tools/list formats": each documented shape over the wire
// (the CLI prints the same: TestCLIToolsMatchServer); schemas without $ref
// or type unions.
func TestDocsToolListFormats(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	c, _ := startIn(t, ws, nil)
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
	}
}

// tools.md "Audit log": the JSON line's fields and values, the directory
// rules, README's `agentls audit --tail 20` and `--json`.
func TestDocsAuditLog(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\n"})
	state := t.TempDir()
	// AGENTLS_AUDIT_DIR unset (empty): $XDG_STATE_HOME/agentls/audit/.
	env := []string{"AGENTLS_AUDIT_DIR=", "XDG_STATE_HOME=" + state}
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	if o := runAgentls(t, ws, env, "call", "read", `{"path":"a.txt"}`, "bash", fmt.Sprintf(`{"command":"echo %s >/dev/null"}`, secret), "--root", ws); o.code != 0 {
		t.Fatalf("exit %d: %s %s", o.code, o.stdout, o.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(state, "agentls", "audit", "*"))
	if len(files) != 1 {
		t.Fatalf("audit files under $XDG_STATE_HOME/agentls/audit: %v", files)
	}
	b := readFile(t, files[0])
	lines := strings.Split(strings.TrimSpace(b), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per call, got:\n%s", b)
	}
	if strings.Contains(b, secret) {
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
		if d := fmt.Sprint(e["decision"]); d != "allow" && d != "deny" && d != "invalid" && !strings.HasPrefix(d, "ask:") {
			t.Errorf("decision %q is none of the documented values", d)
		}
	}
	if tail := runAgentls(t, ws, env, "audit", "--tail", "20"); tail.code != 0 || !strings.Contains(tail.stdout, "read") || !strings.Contains(tail.stdout, "bash") {
		t.Errorf("agentls audit --tail 20: exit %d\n%s", tail.code, tail.stdout)
	}
	o := runAgentls(t, ws, env, "audit", "--tail", "1", "--json")
	var e map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(o.stdout)), &e); err != nil || e["tool"] != "bash" {
		t.Errorf("audit --tail 1 --json: %v\n%s", err, o.stdout)
	}
	// AGENTLS_AUDIT_DIR overrides.
	dir := t.TempDir()
	runAgentls(t, ws, []string{"AGENTLS_AUDIT_DIR=" + dir, "XDG_STATE_HOME=" + state}, "call", "read", `{"path":"a.txt"}`, "--root", ws)
	if got, _ := filepath.Glob(filepath.Join(dir, "*")); len(got) != 1 {
		t.Errorf("AGENTLS_AUDIT_DIR holds %v", got)
	}
}

// --- docs/protocol.md ---------------------------------------------------

// protocol.md's initialize result example, field by field, and docs/tools.md's
// instructions.
func TestDocsInitializeResult(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	res := c.Initialize(testCtx(t, 20*time.Second), nil)
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
	wantContains(t, "experimental.agentls.tools", compactJSON(ag["tools"]), `"read"`, `"ls"`, `"grep"`, `"find"`, `"edit"`, `"write"`, `"bash"`, `"tool_search"`)
	wantContains(t, "instructions", fmt.Sprint(res["instructions"]), "Read a file before editing", "cat", "oldText")
	wantContains(t, "instructions", strings.ToLower(fmt.Sprint(res["instructions"])), "search when a path is unknown", "never guess file contents")
}

// docsWaitLog waits for a window/logMessage holding substr and returns its params.
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

// protocol.md "initialize": a value that changes the meaning fails with
// -32602 naming the field, [] is {}, an unknown key is a warning, and the
// options take effect.
func TestDocsInitializationOptions(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	for _, tc := range []struct {
		name  string
		opts  any
		field string // "": accepted
	}{
		{"unknown mode", map[string]any{"mode": "yolo"}, "mode"},
		{"rules not an array", map[string]any{"permissions": map[string]any{"allow": "Bash"}}, "allow"},
		{"rules not strings", map[string]any{"permissions": map[string]any{"deny": []any{1}}}, "deny"},
		{"negative limit", map[string]any{"limits": map[string]any{"read": -1}}, "limits"},
		{"grouped limit out of range", map[string]any{"limits": map[string]any{"read": map[string]any{"lines": 0}}}, "read"},
		{"[] is {}", []any{}, ""},
		{"limits as []", map[string]any{"limits": []any{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := harness.Start(t, harness.Options{Root: ws})
			err := c.Call(testCtx(t, 20*time.Second), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": tc.opts}, nil)
			if tc.field == "" && err != nil || tc.field != "" && (rpcCode(err) != -32602 || !strings.Contains(err.Error(), tc.field)) {
				t.Errorf("%v: got %v, want -32602 naming %q (none: accepted)", tc.opts, err, tc.field)
			}
		})
	}
	t.Run("unknown key is a warning", func(t *testing.T) {
		c, _ := startIn(t, ws, map[string]any{"initializationOptions": map[string]any{"colour": "blue"}})
		if msg := docsWaitLog(t, c, "colour"); msg != "" && !strings.Contains(msg, `"type":2`) {
			t.Errorf("unknown key reported as %s, want a warning (type 2)", msg)
		}
	})
	t.Run("mode and permissions apply", func(t *testing.T) {
		c, ctx := startIn(t, ws, map[string]any{"initializationOptions": map[string]any{
			"mode": "acceptEdits", "permissions": map[string]any{"deny": []string{"Read(a.txt)"}},
		}})
		docsWant(t, "acceptEdits write", c.CallTool(ctx, "write", map[string]any{"path": "new.txt", "content": "x\n"}), false)
		docsWant(t, "deny Read(a.txt)", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), true, "Read(a.txt)")
	})
	t.Run("readOnly denies writes", func(t *testing.T) {
		c, ctx := startIn(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "readOnly"}})
		docsWant(t, "readOnly write", c.CallTool(ctx, "write", map[string]any{"path": "ro.txt", "content": "x\n"}), true)
		if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
			t.Error("readOnly wrote a file")
		}
	})
}

// docsLimitRow is one row of docs/protocol.md's Limits table.
type docsLimitRow struct {
	name          string
	def, min, max int
}

// The Limits table of docs/protocol.md states exactly the defaults `agentls
// tools --limits` prints, and its ranges are the ones initialize enforces (a
// value out of range fails with -32602 naming the field; the bounds
// themselves are accepted).
func TestDocsLimitsTable(t *testing.T) {
	slow(t)
	t.Parallel()
	var rows []docsLimitRow
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\| (\\d+) \\| (\\d+)–(\\d+) \\|").FindAllStringSubmatch(docsDoc(t, "docs/protocol.md"), -1) {
		d, _ := strconv.Atoi(m[2])
		lo, _ := strconv.Atoi(m[3])
		hi, _ := strconv.Atoi(m[4])
		rows = append(rows, docsLimitRow{m[1], d, lo, hi})
	}
	if len(rows) < 10 {
		t.Fatalf("docs/protocol.md Limits table: parsed %d rows", len(rows))
	}
	lim := docsLimits(t)
	if len(lim) != len(rows) {
		t.Errorf("tools --limits has %d names, the docs table %d: %v", len(lim), len(rows), lim)
	}
	for _, r := range rows {
		if got, ok := lim[r.name]; !ok || got != r.def {
			t.Errorf("limit %s: docs default %d, tools --limits %d (present %v)", r.name, r.def, got, ok)
		}
		for _, v := range []struct {
			val int
			ok  bool
		}{{r.min - 1, false}, {r.max + 1, false}, {r.min, true}, {r.max, true}} {
			t.Run(fmt.Sprintf("%s=%d", r.name, v.val), func(t *testing.T) {
				t.Parallel()
				c := harness.Start(t, harness.Options{Root: t.TempDir()})
				err := c.Call(testCtx(t, 20*time.Second), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"limits": map[string]any{r.name: v.val}}}, nil)
				if v.ok && err != nil {
					t.Errorf("limits.%s=%d (in the documented range): %v", r.name, v.val, err)
				}
				if !v.ok && (rpcCode(err) != -32602 || !strings.Contains(fmt.Sprint(err), r.name)) {
					t.Errorf("limits.%s=%d (out of range): want -32602 naming the field, got %v", r.name, v.val, err)
				}
			})
		}
	}
}

// protocol.md "tools/confirm" and "tools/diagnostics": the question's
// params and preview, asked once; a rejection as "denied by the user"
// with nothing changed; the rule each question names; new problems after
// an edit; without the capability an ask is an isError result.
func TestDocsConfirmAndDiagnostics(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.go": "package a\n", ".env": "A=1\n", "gone.txt": "x\n",
		".agentls/settings.json": `{"permissions": {"ask": ["Bash(rm:*)"]}}`})
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	var asked []map[string]any
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p map[string]any
		json.Unmarshal(params, &p)
		switch method {
		case "tools/confirm":
			mu.Lock()
			asked = append(asked, p)
			mu.Unlock()
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
	last := func() map[string]any {
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return nil
		}
		return asked[len(asked)-1]
	}
	ctx := testCtx(t, 20*time.Second)
	c.Initialize(ctx, map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true, "diagnostics": true}}}})
	docsWant(t, "rejectOnce", c.CallTool(ctx, "write", map[string]any{"path": "rejected.txt", "content": "x\n"}), true, "denied by the user: not now")
	if _, err := os.Stat(filepath.Join(ws, "rejected.txt")); err == nil {
		t.Error("a rejected write changed the disk")
	}
	confirm := last()
	if len(asked) != 1 {
		t.Errorf("tools/confirm asked %d times for one call, want 1", len(asked))
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
	for _, tc := range []struct{ tool, arg, rule string }{{"read", ".env", "builtin:secret-file"}, {"bash", "rm gone.txt", "Bash(rm:*) (.agentls/settings.json)"}} {
		key := map[string]string{"read": "path", "bash": "command"}[tc.tool]
		c.CallTool(ctx, tc.tool, map[string]any{key: tc.arg})
		if got := fmt.Sprint(last()["rule"]); !strings.Contains(got, tc.rule) {
			t.Errorf("%s %s: rule %q, want it to name %q", tc.tool, tc.arg, got, tc.rule)
		}
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": "package a\n", "newText": "package a\n\nvar x = BROKEN\n"}}})
	wantContains(t, "diagnostics", r.Text(), "The editor reports new problems in a.go:\n  L3:12 error: undefined: BROKEN (compiler)")
	dd, _ := r.Details["diagnostics"].(map[string]any)
	if arr, ok := r.Details["diagnostics"].([]any); ok && len(arr) > 0 {
		dd, _ = arr[0].(map[string]any)
	}
	for _, k := range []string{"uri", "new", "total"} {
		if _, ok := dd[k]; !ok {
			t.Errorf("details.diagnostics lacks %s: %v", k, compactJSON(r.Details["diagnostics"]))
		}
	}
	c.CallTool(ctx, "bash", map[string]any{"command": "touch made.txt"})
	if pv, _ := last()["preview"].(map[string]any); pv["kind"] != "command" || pv["command"] != "touch made.txt" || pv["readOnly"] != false {
		t.Errorf("bash preview: %v", compactJSON(last()["preview"]))
	}

	c2, ctx2 := startIn(t, ws, nil)
	docsWant(t, "ask without the capability", c2.CallTool(ctx2, "write", map[string]any{"path": "n.txt", "content": "x\n"}), true, "approval")
}

// --- docs/tools.md ------------------------------------------------------

// tools.md "Secret masking": PEM body lines are masked in the unified diff
// and TextEdits of write and edit (also in tools/details); window/logMessage
// texts are masked.
func TestDocsSecretsInDiffsAndLogs(t *testing.T) {
	t.Parallel()
	pem, body := docsPEM(20)
	tok := "ghp_" + channelsRand("docs-gh", 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
	ws := newWorkspace(t, map[string]string{"k.pem": pem, ".agentls/settings.json": `{"permissions":{"allow":["Read(` + tok + `"]}}`})
	c, ctx := startIn(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "bypass", tok: 1}})
	leak := func(where, s string) {
		t.Helper()
		wantLacks(t, where, s, tok)
		for i, b := range body {
			if strings.Contains(s, b) {
				t.Errorf("%s carries PEM body line %d unmasked", where, i+1)
				return
			}
		}
	}
	w := c.CallTool(ctx, "write", map[string]any{"path": "new.pem", "content": pem})
	docsWant(t, "write a key", w, false)
	leak("write details", compactJSON(w.Details))
	c.CallTool(ctx, "read", map[string]any{"path": "k.pem"})
	e := c.CallTool(ctx, "edit", map[string]any{"path": "k.pem", "edits": []any{map[string]any{"oldText": body[10], "newText": "CHANGED"}}})
	docsWant(t, "edit inside a key", e, false)
	if e.Details["unifiedDiff"] == nil {
		t.Errorf("edit details lack unifiedDiff: %s", compactJSON(e.Details))
	}
	leak("edit details", compactJSON(e.Details))
	var notes strings.Builder
	for _, n := range c.Notes("") {
		notes.Write(n.Params)
	}
	leak("notifications", notes.String())
	if logs := strings.Join(logMessages(c, 0), "\n"); !strings.Contains(logs, "[REDACTED") {
		t.Errorf("logMessages (settings rule and option name quoting a token) show no masking:\n%s", logs)
	}
}

// tools.md "Extension tools" and "Upstream MCP servers", README's mcp.json
// shapes: an upstream (agentls mcp itself) under "servers" and under
// "mcpServers", ${env:NAME} expanded; a deferred extension tool; mcp__
// rules.
func TestDocsUpstreamAndExtensions(t *testing.T) {
	t.Parallel()
	inner := newWorkspace(t, map[string]string{"inner.txt": "from the inner workspace\n"})
	bin := harness.Binary(t)
	for _, key := range []string{"servers", "mcpServers"} {
		t.Run(key, func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{
				".agentls/mcp.json": fmt.Sprintf(`{%q: {"inner": {"command": %q, "args": ["mcp", "--root", "${env:A4D_INNER}"]}}}`, key, bin),
				".agentls/tools/shout.json": `{"name": "shout_words", "description": "Print words in upper case.",
					"inputSchema": {"type": "object", "properties": {"words": {"type": "string"}}, "required": ["words"]},
					"command": "echo {{words}} | tr a-z A-Z", "readOnly": true}`,
			})
			c, ctx := startIn(t, ws, bypass(), "A4D_INNER="+inner)
			var list struct {
				Tools []map[string]any `json:"tools"`
			}
			c.Call(ctx, "tools/list", map[string]any{}, &list)
			wantLacks(t, "tools/list before tool_search", compactJSON(list.Tools), "shout_words", "inner__read")
			wantContains(t, "tool_search extension", c.CallTool(ctx, "tool_search", map[string]any{"query": "upper case words"}).Text(), "shout_words")
			if r := c.CallTool(ctx, "shout_words", map[string]any{"words": "hi; rm -rf /"}); strings.TrimSpace(r.Text()) != "HI; RM -RF /" {
				t.Errorf("extension tool: %q", r.Text())
			}
			docsWant(t, "upstream tool inner__read", c.CallTool(ctx, "inner__read", map[string]any{"path": "inner.txt"}), false, "from the inner workspace")
		})
	}
	t.Run("mcp__ rules", func(t *testing.T) {
		ws := newWorkspace(t, map[string]string{
			".agentls/mcp.json":      fmt.Sprintf(`{"servers": {"inner": {"command": %q, "args": ["mcp", "--root", %q]}}}`, bin, inner),
			".agentls/settings.json": `{"permissions": {"deny": ["mcp__inner__read"]}}`,
		})
		c, ctx := startIn(t, ws, bypass())
		r := c.CallTool(ctx, "inner__read", map[string]any{"path": "inner.txt"})
		docsWant(t, "mcp__inner__read deny", r, true)
		wantLacks(t, "mcp__inner__read deny", r.Text(), "from the inner workspace")
	})
}
