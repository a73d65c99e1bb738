package e2e

// The documentation, checked black-box: every concrete claim of README.md,
// docs/tools.md, docs/protocol.md and ARCHITECTURE.md (an example call and
// its output, a field name, a default, a flag, an error code or text) is run
// against agentls. Texts the docs quote are asserted verbatim; numbers are
// checked against `agentls tools --limits`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// docsRaw is an LSP-framed connection to the agentls process that sees
// every byte, for what a client library would never send: a body that is
// not a JSON object or array is noted as bad, and so is a broken frame.
type docsRaw struct {
	*rawClient[map[string]any]
	taken map[int]bool // log indices reply handed out
}

func docsRawStart(t *testing.T, ws string) *docsRaw {
	t.Helper()
	return &docsRaw{startRaw(t, []string{"--root", ws}, nil, func(br *bufio.Reader, r *rawClient[map[string]any]) {
		for {
			body, err := readFrame(br)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					r.noteBad(err.Error())
				}
				return
			}
			var m map[string]any
			var batch []map[string]any
			switch {
			case json.Unmarshal(body, &m) == nil:
				r.add(m)
			case json.Unmarshal(body, &batch) == nil:
				r.add(batch...)
			default:
				r.noteBad(string(body))
			}
		}
	}), map[int]bool{}}
}

func (r *docsRaw) sendRaw(body string) { r.writeFrame([]byte(body)) }

// reply waits for the first reply to id (compared as JSON) not handed out
// before, skipping notifications and requests: ids repeat (null).
func (r *docsRaw) reply(id any) map[string]any {
	r.t.Helper()
	var hit map[string]any
	ok := r.watch(time.After(15*time.Second), func(log []map[string]any) bool {
		for i, f := range log {
			if _, isReq := f["method"]; !isReq && !r.taken[i] && sameJSON(f["id"], id) {
				r.taken[i], hit = true, f
				return true
			}
		}
		return false
	})
	if !ok && r.isExited() {
		r.t.Fatalf("connection closed before the reply to %s", compactJSON(id))
	}
	if !ok {
		r.t.Fatalf("no reply to %s in 15 s", compactJSON(id))
	}
	return hit
}

// initialize sends initialize (with opts as initializationOptions) and
// initialized.
func (r *docsRaw) initialize(id any, opts map[string]any) map[string]any {
	r.t.Helper()
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}, "initializationOptions": opts}})
	f := r.reply(id)
	if f["result"] == nil {
		r.t.Fatalf("initialize: %v", f)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return f
}

// docsMCP is `agentls mcp --root ws` spoken to in newline-delimited JSON.
type docsMCP struct{ *mcpRawClient }

func docsMCPStart(t *testing.T, ws string) docsMCP {
	t.Helper()
	m := docsMCP{startMCPRaw(t, []string{"mcp", "--root", ws}, nil)}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "docs", "version": "1"}}})
	if r := m.mustReply(0, 15*time.Second); r.Obj["result"] == nil {
		t.Fatalf("MCP initialize: %v", r.Obj)
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return m
}

// call sends a tools/call and returns the reply's result, its joined text
// parts and its isError.
func (m docsMCP) call(id any, name string, args any) (map[string]any, string, bool) {
	m.t.Helper()
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	res, _ := m.mustReply(id, 15*time.Second).Obj["result"].(map[string]any)
	var s []string
	parts, _ := res["content"].([]any)
	for _, p := range parts {
		if pm, _ := p.(map[string]any); pm["type"] == "text" {
			s = append(s, fmt.Sprint(pm["text"]))
		}
	}
	isErr, _ := res["isError"].(bool)
	return res, strings.Join(s, "\n"), isErr
}

// --- README ---------------------------------------------------------------

// README "The two commands": the quick-start call, several calls sharing a
// session, the first failing call ending the run, deny rules and --mode
// readOnly still applying, `tools --all`, the masked echo of each call.
func TestDocsREADMECall(t *testing.T) {
	t.Parallel()
	t.Run("quick start", func(t *testing.T) {
		t.Parallel()
		lines := strings.Count(docsDoc(t, "README.md"), "\n")
		o := runAgentls(t, docsRepo(t), nil, "call", "read", `{"path": "README.md", "limit": 5}`, "--root", ".")
		if o.code != 0 {
			t.Fatalf("exit %d, stderr %s", o.code, o.stderr)
		}
		wantContains(t, "quick start", o.stdout, fmt.Sprintf("README.md, lines 1-5 of %d", lines), "     1→# agentls", "Use offset=6 to continue")
	})
	t.Run("calls share the session", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{"a.go": "package a\n\nvar x = 1\n"})
		o := runAgentls(t, ws, nil, "call", "read", `{"path":"a.go"}`, "edit", `{"path":"a.go","edits":[{"oldText":"x = 1","newText":"x = 2"}]}`, "--root", ws)
		wantContains(t, "edit after read", o.stdout, "Edited a.go: 1 replacement")
		if o.code != 0 || readFile(t, filepath.Join(ws, "a.go")) != "package a\n\nvar x = 2\n" {
			t.Errorf("read then edit in one run: exit %d; file %q", o.code, readFile(t, filepath.Join(ws, "a.go")))
		}
	})
	for _, tc := range []struct {
		name, settings string
		args           []string
		file, want     string
	}{
		{"first failing call ends the run", "", []string{"read", `{"path":"missing.txt"}`, "write", `{"path":"new.txt","content":"x"}`}, "new.txt", ""},
		{"mode readOnly applies", "", []string{"write", `{"path":"new.txt","content":"x"}`, "--mode", "readOnly"}, "new.txt", ""},
		{"deny rules apply", `{"permissions": {"deny": ["Bash(touch:*)"]}}`, []string{"bash", `{"command":"touch denied.txt"}`}, "denied.txt", "Bash(touch:*)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, nil)
			if tc.settings != "" {
				writeFile(t, filepath.Join(ws, ".agentls/settings.json"), tc.settings)
			}
			o := runAgentls(t, ws, nil, append(append([]string{"call"}, tc.args...), "--root", ws)...)
			if o.code != 1 {
				t.Errorf("exit %d, want 1: %s", o.code, o.stdout)
			}
			if _, err := os.Stat(filepath.Join(ws, tc.file)); err == nil {
				t.Errorf("%s was created:\n%s", tc.file, o.stdout)
			}
			wantContains(t, tc.name, o.stdout, tc.want)
		})
	}
	t.Run("tools --all lists the deferred tools", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{".agentls/tools/run_tests.json": `{"name":"run_tests","description":"Run the unit tests","inputSchema":{"type":"object","properties":{}},"command":"true","readOnly":true}`})
		for _, tc := range []struct {
			args []string
			want bool
		}{{[]string{"tools", "--all", "--root", ws}, true}, {[]string{"tools", "--all"}, true}, {[]string{"tools", "--root", ws}, false}} {
			o := runAgentls(t, ws, nil, tc.args...)
			var tools []map[string]any
			if err := json.Unmarshal([]byte(o.stdout), &tools); err != nil {
				t.Fatalf("agentls %q: %v\n%s", tc.args, err, o.stdout)
			}
			if got := strings.Contains(compactJSON(tools), `"name":"run_tests"`); got != tc.want {
				t.Errorf("agentls %q lists run_tests: %v, want %v", tc.args, got, tc.want)
			}
		}
	})
	t.Run("the echoed arguments are masked", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
		tok := "ghp_" + channelsRand("docs-echo", 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
		o := runAgentls(t, ws, nil, "call", "grep", `{"pattern":"`+tok+`"}`, "read", `{"path":"a.txt"}`, "--root", ws)
		if strings.Contains(o.stdout+o.stderr, tok) || !strings.Contains(o.stdout, "== grep") {
			t.Errorf("call echo: exit %d, output:\n%s%s", o.code, o.stdout, o.stderr)
		}
	})
}

// README and `agentls --help`: --version (and serverInfo), the usage
// naming every subcommand and the flags the docs use, each subcommand's
// --help, a bad flag; the scripts and benchmarks README names; its JSON
// snippets parse.
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

	// Asked-for help goes to stdout with success; a bad flag gets the usage
	// on stderr and exit 2.
	usage := runAgentls(t, ws, nil, "--help")
	if usage.code != 0 || usage.stderr != "" {
		t.Errorf("--help: exit %d, stderr %q; want 0 and the usage on stdout", usage.code, usage.stderr)
	}
	if help := runAgentls(t, ws, nil, "help"); help.code != 0 || help.stdout != usage.stdout {
		t.Errorf("help: exit %d, output differs from --help:\n%s", help.code, help.stdout)
	}
	if bad := runAgentls(t, ws, nil, "--no-such-flag"); bad.code != 2 || bad.stdout != "" || !strings.Contains(bad.stderr, "no-such-flag") || !strings.Contains(bad.stderr, "usage:") {
		t.Errorf("a bad flag: exit %d, stdout %q, stderr %q", bad.code, bad.stdout, bad.stderr)
	}
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--help"}, []string{"agentls tools", "--format", "--all", "agentls call", "--mode", "agentls mcp", "--root", "agentls audit [--tail N]", "agentls --version", "-log-file"}},
		{[]string{"tools", "--help"}, []string{"-format", "-all", "-root", "-limits", "mcp, openai, anthropic or vscode"}},
		{[]string{"call", "--help"}, []string{"-mode", "-json", "-root"}},
		{[]string{"mcp", "--help"}, []string{"-root"}},
		{[]string{"audit", "--help"}, []string{"-tail"}},
	} {
		o := runAgentls(t, ws, nil, tc.args...)
		if o.code != 0 {
			t.Errorf("agentls %q: exit %d, want 0; stderr:\n%s", tc.args, o.code, o.stderr)
		}
		wantContains(t, fmt.Sprint(tc.args), o.stdout+o.stderr, tc.wants...)
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
// protocol.md "tools/list formats": each documented shape, over the CLI and
// over the wire; schemas without $ref or type unions.
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
		t.Run("cli "+format, func(t *testing.T) {
			o := runAgentls(t, ws, nil, "tools", "--format", format)
			if o.code != 0 {
				t.Fatalf("exit %d: %s", o.code, o.stderr)
			}
			var tools []map[string]any
			if err := json.Unmarshal([]byte(o.stdout), &tools); err != nil {
				var wrapped struct {
					Tools []map[string]any `json:"tools"`
				}
				if err2 := json.Unmarshal([]byte(o.stdout), &wrapped); err2 != nil {
					t.Fatalf("not JSON: %v\n%.300s", err, o.stdout)
				}
				tools = wrapped.Tools
			}
			check(t, format, tools)
		})
	}
	t.Run("unknown format is -32602", func(t *testing.T) {
		if err := c.Call(testCtx(t, 20*time.Second), "tools/list", map[string]any{"format": "gemini"}, nil); rpcCode(err) != -32602 {
			t.Errorf("got %v, want -32602", err)
		}
	})
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

// protocol.md "Lifecycle": exit without shutdown is code 1; closing stdin
// cancels every running call (its processes killed) and the process exits
// within 1 s.
func TestDocsLifecycle(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	t.Run("exit without shutdown is 1", func(t *testing.T) {
		c, ctx := startIn(t, t.TempDir(), nil)
		c.Conn.Notify(ctx, "exit", nil)
		if code := c.Wait(5 * time.Second); code != 1 {
			t.Errorf("code %d, want 1", code)
		}
	})
	t.Run("EOF exits within 1 s", func(t *testing.T) {
		c, _ := startIn(t, t.TempDir(), nil)
		start := time.Now()
		c.CloseStdin()
		if code := c.Wait(3 * time.Second); code == -1 || time.Since(start) > time.Second {
			t.Errorf("exit after EOF took %v (code %d)", time.Since(start), code)
		}
	})
	t.Run("EOF cancels a running command", func(t *testing.T) {
		marker := fmt.Sprintf("docs-eof-%d", time.Now().UnixNano())
		c, ctx := startIn(t, t.TempDir(), bypass())
		go c.TryCallTool(ctx, "bash", map[string]any{"command": "sh -c 'sleep 60; true' " + marker})
		if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(marker)) > 0 }) {
			t.Fatal("the bash command never started")
		}
		start := time.Now()
		c.CloseStdin()
		if code := c.Wait(5 * time.Second); code == -1 {
			t.Fatal("agentls did not exit after EOF")
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("exit took %v after EOF with a command running, docs say within 1 s", d)
		}
		if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
			t.Errorf("the bash command survived EOF: pids %v", processesWithArg(marker))
			reapProcessesWithArg(t, marker)
		}
	})
}

// protocol.md "Errors", sent raw: every code of the table, in the order a
// session meets them, and nothing on stdout that is not a frame.
func TestDocsErrorCodes(t *testing.T) {
	t.Parallel()
	r := docsRawStart(t, t.TempDir())
	code := func(what string, msg map[string]any, want int) {
		t.Helper()
		r.sendJSON(msg)
		if c := replyCode(r.reply(msg["id"])); c != want {
			t.Errorf("%s: code %d, want %d", what, c, want)
		}
	}
	req := func(id any, method string, params any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	}
	code("request before initialize", req(1, "tools/list", map[string]any{}), -32002)
	r.initialize(2, nil)
	code("second initialize", req(3, "initialize", map[string]any{"capabilities": map[string]any{}}), -32600)
	code("unknown method", req(4, "no/such", nil), -32601)
	code("unknown tools/list format", req(5, "tools/list", map[string]any{"format": "gemini"}), -32602)
	code("tools/call params that do not decode", req(6, "tools/call", map[string]any{"name": 5}), -32602)
	r.sendRaw(`{not json`)
	if f := r.reply(nil); replyCode(f) != -32700 {
		t.Errorf("body that is not JSON: %v, want -32700 with id null", f)
	}
	r.sendRaw(`{"id": 7, "method": "tools/list"}`)
	if c := replyCode(r.reply(7)); c != -32600 {
		t.Errorf("not JSON-RPC 2.0 (no jsonrpc field): code %d, want -32600 with the id echoed", c)
	}
	// Arguments and params may be [] (Lua's {}).
	r.sendJSON(req(8, "tools/list", []any{}))
	if f := r.reply(8); !strings.Contains(compactJSON(f["result"]), `"name":"read"`) {
		t.Errorf("tools/list with params []: %v", f)
	}
	r.sendJSON(req(9, "tools/call", map[string]any{"name": "ls", "arguments": []any{}}))
	if f := r.reply(9); f["error"] != nil || strings.Contains(compactJSON(f["result"]), `"isError":true`) {
		t.Errorf("tools/call with arguments []: %v", f)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 10, "method": "shutdown"})
	if f := r.reply(10); f["error"] != nil || f["result"] != nil {
		t.Errorf("shutdown: %v, want the result null", f)
	}
	for i, m := range []string{"tools/list", "shutdown"} {
		code(m+" after shutdown", map[string]any{"jsonrpc": "2.0", "id": 11 + i, "method": m}, -32600)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if c := r.exitCode(5 * time.Second); c != 0 {
		t.Errorf("exit after shutdown: code %d, want 0", c)
	}
	if bad := r.badFrames(); len(bad) > 0 {
		t.Errorf("stdout carried something that is not a protocol frame: %q", bad[0])
	}
}

// protocol.md "Errors" for frames a client library never sends, and
// "Robustness": the connection goes on after each.
func TestDocsRawFrames(t *testing.T) {
	t.Parallel()
	r := docsRawStart(t, t.TempDir())
	r.initialize(1, nil)
	alive := func(id int) {
		t.Helper()
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": map[string]any{}})
		if m := r.reply(id); m["result"] == nil {
			t.Fatalf("connection did not go on: %v", m)
		}
	}
	r.writeRaw([]byte("Content-Length: abc\r\n\r\n{}"))
	if m := r.reply(nil); replyCode(m) != -32700 {
		t.Errorf("bad Content-Length: %v, want -32700 with id null", m)
	}
	alive(2)
	r.sendRaw(`[1, 2]`)
	for i := 0; i < 2; i++ {
		if m := r.reply(nil); replyCode(m) != -32600 {
			t.Errorf("batch [1, 2], reply %d: %v, want -32600", i+1, m)
		}
	}
	r.sendRaw(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`)
	alive(3)
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

// protocol.md "Permission settings are also read from …" and README's rule
// syntax examples.
func TestDocsSettingsFiles(t *testing.T) {
	t.Parallel()
	acceptEdits := map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}}
	npmTest := map[string]string{".agentls/settings.local.json": `{"permissions": {"allow": ["Bash(npm run test:*)"]}}`}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		user   string // $XDG_CONFIG_HOME/agentls/settings.json
		params map[string]any
		tool   string
		args   map[string]any
		isErr  bool
		want   string
	}{
		{"settings.json mode", map[string]string{".agentls/settings.json": `{"mode": "readOnly"}`}, "", nil, "bash", map[string]any{"command": "touch x"}, true, "readOnly"},
		{"settings.local.json deny", map[string]string{".agentls/settings.local.json": `{"permissions": {"deny": ["Read(./.env)"]}}`, ".env": "A=1\n"}, "", bypass(), "read", map[string]any{"path": ".env"}, true, "Read(./.env)"},
		{"a ./ rule is anchored at the root", map[string]string{".agentls/settings.local.json": `{"permissions": {"deny": ["Read(./.env)"]}}`, "sub/.env": "B=2\n"}, "", bypass(), "read", map[string]any{"path": "sub/.env"}, false, ""},
		{"user settings", nil, `{"permissions": {"deny": ["Edit(/src/**/*.ts)"]}}`, acceptEdits, "write", map[string]any{"path": "src/a/b.ts", "content": "x\n"}, true, "Edit(/src/**/*.ts)"},
		{"a user rule covers only its glob", nil, `{"permissions": {"deny": ["Edit(/src/**/*.ts)"]}}`, acceptEdits, "write", map[string]any{"path": "src/a/b.js", "content": "x\n"}, false, ""},
		{"the editor wins", map[string]string{".agentls/settings.json": `{"mode": "readOnly"}`}, "", acceptEdits, "write", map[string]any{"path": "w.txt", "content": "x\n"}, false, ""},
		{"bash prefix rule: another command asks", npmTest, "", nil, "bash", map[string]any{"command": "npm run build"}, true, "approval"},
		{"a workspace file cannot select bypass", map[string]string{".agentls/settings.json": `{"mode": "bypass"}`}, "", nil, "bash", map[string]any{"command": "touch by.txt"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t, tc.files)
			cfg := newWorkspace(t, nil)
			if tc.user != "" {
				writeFile(t, filepath.Join(cfg, "agentls", "settings.json"), tc.user)
			}
			c, ctx := startIn(t, ws, tc.params, "XDG_CONFIG_HOME="+cfg)
			docsWant(t, tc.name, c.CallTool(ctx, tc.tool, tc.args), tc.isErr, tc.want)
			if _, err := os.Stat(filepath.Join(ws, "by.txt")); err == nil {
				t.Error("a workspace file selected bypass: the command ran")
			}
		})
	}
	t.Run("bash prefix rule allows its prefix", func(t *testing.T) {
		c, ctx := startIn(t, newWorkspace(t, npmTest), nil)
		if r := c.CallTool(ctx, "bash", map[string]any{"command": "npm run test --silent"}); strings.Contains(r.Text(), "approval") {
			t.Errorf("Bash(npm run test:*) should allow npm run test --silent: %s", r.Text())
		}
	})
	t.Run("invalid rule reported, the file's other settings apply", func(t *testing.T) {
		ws := newWorkspace(t, map[string]string{".agentls/settings.json": `{"mode": "readOnly", "permissions": {"deny": ["Bash(npm run"]}}`})
		c, ctx := startIn(t, ws, nil)
		wantContains(t, "invalid rule log", docsWaitLog(t, c, "settings.json"), `"type":1`, "Bash(npm run", "column")
		// Only the bad rule is dropped: the file's readOnly mode applies.
		docsWant(t, "the file's mode", c.CallTool(ctx, "bash", map[string]any{"command": "touch inv.txt"}), true, "readOnly")
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

// protocol.md "tools/call" and tools.md "Shared behaviour": the callId
// echoed or generated as call-N and stamped on tools/details, durationMs,
// the lenient input rules reported in details.normalized, the usage line,
// unknown tools and a panicking tool as results.
func TestDocsToolCallShared(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "hello\nworld\n"})
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	w := c.CallTool(ctx, "write", map[string]any{"path": "b.txt", "content": "x\n"})
	for _, id := range []string{r.CallID, w.CallID} {
		if !regexp.MustCompile(`^call-\d+$`).MatchString(id) || r.CallID == w.CallID {
			t.Errorf("generated callIds %q and %q, docs: call-N, one per call", r.CallID, w.CallID)
		}
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "tools/details" && strings.Contains(string(n.Params), `"callId":"`+w.CallID+`"`)
	}); !ok {
		t.Errorf("no tools/details stamped with the generated callId %q", w.CallID)
	}
	var e harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-1"}, &e); err != nil || e.CallID != "mine-1" {
		t.Errorf("callId not echoed: %q, %v", e.CallID, err)
	}
	if _, ok := e.Details["durationMs"].(float64); !ok {
		t.Errorf("details.durationMs missing or not a number: %v", e.Details)
	}
	for _, tc := range []struct {
		name, tool string
		args       any
		isErr      bool
		norm       string
		wants      []string
	}{
		{"file_path alias", "read", map[string]any{"file_path": "a.txt"}, false, "file_path", []string{"1→hello"}},
		{"numeric string", "read", map[string]any{"path": "a.txt", "limit": "1"}, false, "limit", []string{"a.txt, lines 1-1 of 2"}},
		{"unknown field dropped", "read", map[string]any{"path": "a.txt", "colour": "red"}, false, "colour", []string{"1→hello"}},
		{"nested under input", "read", map[string]any{"input": map[string]any{"path": "a.txt"}}, false, "input", []string{"1→hello"}},
		{"@ prefix", "read", map[string]any{"path": "@a.txt"}, false, "", []string{"1→hello"}},
		{"ignore_case style", "grep", map[string]any{"pattern": "HELLO", "ignore_case": true}, false, "ignore_case", []string{"a.txt:1: hello"}},
		{"grep -F", "grep", map[string]any{"pattern": "h.llo", "-F": true}, false, "-F", []string{"No matches"}},
		{"run_in_background starts a job", "bash", map[string]any{"command": "echo x", "run_in_background": true}, false, "", []string{"job-1", "x\n", "exited 0"}},
		{"multiline refused", "grep", map[string]any{"pattern": "a", "multiline": true}, true, "", []string{"context"}},
		{"find case_sensitive refused", "find", map[string]any{"pattern": "*.txt", "case_sensitive": false}, true, "", []string{"pattern"}},
		{"missing field and the usage line", "read", map[string]any{}, true, "", []string{"path", "Usage: read {path: string, offset?: integer, limit?: integer}"}},
		{"negative offset", "read", map[string]any{"path": "a.txt", "offset": -3}, true, "", []string{"`offset` must be a line number ≥ 1, got -3"}},
		{"unknown tool lists the tools", "reed", map[string]any{"path": "a.txt"}, true, "", []string{`"read"`, "bash", "tool_search", "write"}},
		{"unknown tool view", "view", map[string]any{"path": "a.txt"}, true, "", []string{"Did you mean \"read\""}},
		{"unknown tool glob", "glob", map[string]any{"pattern": "*"}, true, "", []string{"Did you mean \"find\""}},
		{"mcp__agentls__grep", "mcp__agentls__grep", map[string]any{"pattern": "x"}, true, "", []string{"Did you mean \"grep\""}},
		{"a panicking tool is a result", "test_panic", map[string]any{}, true, "", nil},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		docsWant(t, tc.name, r, tc.isErr, tc.wants...)
		if tc.norm != "" && !strings.Contains(fmt.Sprint(r.Details["normalized"]), tc.norm) {
			t.Errorf("%s: details.normalized %v does not mention %q", tc.name, r.Details["normalized"], tc.norm)
		}
	}
	if r := c.CallTool(ctx, "read", map[string]any{}); !strings.HasSuffix(strings.TrimSpace(r.Text()), "Usage: read {path: string, offset?: integer, limit?: integer}") {
		t.Errorf("the usage line is not last: %q", r.Text())
	}
}

// protocol.md "$/cancelRequest": the -32800 reply, read on the wire, for a
// number and a string id.
func TestDocsCancelReplyCode(t *testing.T) {
	t.Parallel()
	for _, id := range []any{7, "s-7"} {
		r := docsRawStart(t, t.TempDir())
		r.initialize(1, nil)
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "test_block", "arguments": map[string]any{}}})
		// A cancel that overtakes the call is lost: repeat it until the reply.
		stop := make(chan struct{})
		go func() {
			for {
				r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		f := r.reply(id)
		close(stop)
		if c := replyCode(f); c != -32800 {
			t.Errorf("cancel of id %v: code %d, want -32800", id, c)
		}
	}
}

// "A cancelled bash command … is stopped, not undone: its process group is
// killed and the reply is -32800, but what it did before that (a file it
// wrote) stays done."
func TestDocsCancelBash(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := docsRawStart(t, ws)
	r.initialize(1, bypassOptions())
	cmd := fmt.Sprintf("touch done.txt && sleep 60 && echo docs-cancel-%d", time.Now().UnixNano())
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}}})
	waitFile(t, filepath.Join(ws, "done.txt"), 10*time.Second)
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(cmd)) > 0 }) {
		t.Fatal("the command's shell is not running")
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": 2}})
	if c := replyCode(r.reply(2)); c != -32800 {
		t.Errorf("cancelled bash: code %d, want -32800", c)
	}
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(cmd)) == 0 }) {
		t.Errorf("the cancelled command still runs")
		reapProcessesWithArg(t, cmd)
	}
	if _, err := os.Stat(filepath.Join(ws, "done.txt")); err != nil {
		t.Errorf("what the command did was undone: %v", err)
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

// README "MCP hosts" and protocol.md "agentls mcp": annotations in
// tools/list, a tool call with _meta.callId and _meta.details, an unknown
// tool as an isError result with the closest name, bad lines answered with
// the session going on, the exit at the end of input.
func TestDocsMCP(t *testing.T) {
	t.Parallel()
	m := docsMCPStart(t, newWorkspace(t, map[string]string{"a.txt": "hello\nworld\n"}))
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	wantContains(t, "mcp tools/list", compactJSON(m.mustReply(1, 15*time.Second).Obj["result"]), `"readOnlyHint"`, `"destructiveHint"`, `"idempotentHint"`, `"openWorldHint"`, `"source":"core"`, `"name":"tool_search"`)
	res, text, isErr := m.call(2, "read", map[string]any{"path": "a.txt"})
	if isErr || !strings.Contains(text, "a.txt, lines 1-2 of 2\n     1→hello") {
		t.Errorf("MCP read: isError %v, text %q", isErr, text)
	}
	meta, _ := res["_meta"].(map[string]any)
	if meta["callId"] == nil || meta["details"] == nil {
		t.Errorf("MCP result lacks _meta.callId or _meta.details: %v", res)
	}
	if _, text, isErr := m.call(3, "reed", map[string]any{"path": "a.txt"}); !isErr || !strings.Contains(text, `"read"`) || !strings.Contains(text, "write") {
		t.Errorf("MCP unknown tool: isError %v, text %q (want the closest name and the tools there are)", isErr, text)
	}
	for _, tc := range []struct {
		line string
		id   any
		code int
	}{{"{not json", nil, -32700}, {`{"id": 9, "method": "ping"}`, 9, -32600}, {"[]", nil, -32600}} {
		m.writeRaw([]byte(tc.line + "\n"))
		if c := replyCode(m.mustReply(tc.id, 15*time.Second).Obj); c != tc.code {
			t.Errorf("MCP line %s: code %d, want %d", tc.line, c, tc.code)
		}
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "ping"})
	if r := m.mustReply(4, 15*time.Second).Obj; r["error"] != nil {
		t.Errorf("the session did not go on after bad lines: %v", r)
	}
	m.stdin.Close()
	select {
	case <-m.exited:
	case <-time.After(3 * time.Second):
		t.Error("agentls mcp did not exit at end of input")
	}
}

// protocol.md "agentls mcp", ending: "At the end of input, the requests
// read before it are still answered …: tool calls get 250 ms to finish,
// then are cancelled (commands are killed) …; after at most 500 ms more the
// session ends and the process exits."
func TestDocsMCPEnding(t *testing.T) {
	t.Parallel()
	// MCP has no bypass option and this client no elicitation: a workspace
	// allow rule lets the command run.
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\n", ".agentls/settings.json": `{"permissions":{"allow":["Bash(sleep:*)"]}}`})
	// The shell's command line is the marker: bash -c stays the parent of sleep.
	marker := fmt.Sprintf("sleep 60 && echo docs-mcp-%d", time.Now().UnixNano())
	m := docsMCPStart(t, ws)
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": marker}}})
	if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatal("the MCP bash command never started")
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}})
	start := time.Now()
	m.stdin.Close()
	if r := m.mustReply(2, 15*time.Second).Obj; !strings.Contains(compactJSON(r["result"]), "hello") {
		t.Errorf("read piped before EOF: %v", r)
	}
	if r := m.mustReply(1, 15*time.Second).Obj; r["error"] == nil && r["result"] == nil {
		t.Errorf("bash running at EOF got no answer: %v", r)
	}
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("agentls mcp did not exit after EOF")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("exit %v after EOF; docs: 250 ms + at most 500 ms", d)
	}
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("the command outlived agentls mcp: %v", processesWithArg(marker))
		reapProcessesWithArg(t, marker)
	}
}

// --- docs/tools.md ------------------------------------------------------

// ARCHITECTURE.md's invariants that show from outside: paths are resolved
// once and refused when they leave the workspace; a crash's temp files are
// removed at the next start; a write is atomic and never replaces what it
// did not read.
func TestDocsInvariants(t *testing.T) {
	t.Parallel()
	outside := newWorkspace(t, map[string]string{"secret.txt": "outside\n"})
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n", "sub/.agentls-tmp-123": "half", ".agentls-tmp-abc": "half-written"})
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "out.txt"))
	symlink(t, outside, filepath.Join(ws, "outdir"))
	symlink(t, filepath.Join(outside, "nope"), filepath.Join(ws, "dangling"))
	c, ctx := startIn(t, ws, bypass())
	if !waitUntil(5*time.Second, func() bool {
		_, e1 := os.Stat(filepath.Join(ws, ".agentls-tmp-abc"))
		_, e2 := os.Stat(filepath.Join(ws, "sub/.agentls-tmp-123"))
		return e1 != nil && e2 != nil
	}) {
		t.Errorf("leftover .agentls-tmp-* files were not removed at start")
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "out.txt"}, "outside the workspace"},
		{"read", map[string]any{"path": "outdir/secret.txt"}, "outside"},
		{"read", map[string]any{"path": "../x"}, ".."},
		{"read", map[string]any{"path": filepath.Join(outside, "secret.txt")}, "outside"},
		{"read", map[string]any{"path": "~/x"}, "~"},
		{"read", map[string]any{"path": "/dev/null"}, "refused"},
		{"read", map[string]any{"path": "a\x00.txt"}, "NUL"},
		{"write", map[string]any{"path": "out.txt", "content": "x"}, "outside"},
		{"write", map[string]any{"path": "outdir/new.txt", "content": "x"}, "outside"},
		{"write", map[string]any{"path": "dangling", "content": "x"}, "outside"},
		{"ls", map[string]any{"path": "outdir"}, "outside"},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		docsWant(t, fmt.Sprintf("%s %v", tc.tool, tc.args), r, true, tc.want)
		if strings.Contains(r.Text(), "outside\n") && !strings.Contains(r.Text(), "refused") {
			t.Errorf("%s %v leaked the outside file", tc.tool, tc.args)
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "outside\n" {
		t.Errorf("a write through a symlink changed the outside file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "nope")); err == nil {
		t.Errorf("a write through a dangling symlink created a file outside")
	}
	if r := c.CallTool(ctx, "grep", map[string]any{"pattern": "outside"}); strings.Contains(r.Text(), ":1: outside") {
		t.Errorf("grep followed a symlink out of the workspace:\n%s", r.Text())
	}
	if r := c.CallTool(ctx, "find", map[string]any{"pattern": "secret*"}); strings.Contains(r.Text(), "secret.txt") {
		t.Errorf("find followed a symlink out of the workspace:\n%s", r.Text())
	}
	// "A write never replaces what it did not read."
	docsWant(t, "write without a read", c.CallTool(ctx, "write", map[string]any{"path": "a.txt", "content": "b\n"}), true)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "a\n" {
		t.Errorf("write without a read replaced the file: %q", got)
	}
}

// tools.md "grep", with each backend: the match and byte limits and their
// continuation, binary files, patterns and paths refused, hidden files
// searched and .git never, PEM bodies masked.
func TestDocsGrep(t *testing.T) {
	t.Parallel()
	pem, body := docsPEM(12)
	ws := newWorkspace(t, map[string]string{
		"big.txt":    numberedLines(300, func(i int) string { return fmt.Sprintf("match %s %d", strings.Repeat("x", 400), i) }),
		"bin.dat":    "bin\x00ary hello\n",
		".hid/h.txt": "hello hidden\n",
		".git/x":     "hello git\n",
		"key.pem":    pem,
		"small.txt":  "one hello\n",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "ff"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			if _, err := exec.LookPath("rg"); backend == "rg" && err != nil {
				t.Skip("rg not on PATH")
			}
			c, ctx := startIn(t, ws, bypass(), "AGENTLS_GREP_BACKEND="+backend)
			docsWant(t, "over 100 matches", c.CallTool(ctx, "grep", map[string]any{"pattern": "match"}), false, "limit=200")
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "match", "limit": 1000})
			last := regexp.MustCompile(`(?m)^big\.txt:(\d+): `).FindAllStringSubmatch(r.Text(), -1)
			if len(last) == 0 {
				t.Fatalf("no matches:\n%s", limitsHead(r.Text()))
			}
			n, _ := strconv.Atoi(last[len(last)-1][1])
			docsWant(t, "over 51,200 bytes", r, false, "51200", fmt.Sprintf(`read {"path": "big.txt", "offset": %d}`, n+1))
			if len(r.Text()) > 51200+1024 {
				t.Errorf("grep text is %d bytes, limit 51,200", len(r.Text()))
			}
			for _, tc := range []struct {
				name  string
				args  map[string]any
				isErr bool
				want  string
			}{
				{"binary path", map[string]any{"pattern": "hello", "path": "bin.dat"}, false, "binary"},
				{"NUL pattern", map[string]any{"pattern": "a\x00b"}, true, "NUL"},
				{"newline pattern", map[string]any{"pattern": "a\nb"}, true, "newline"},
				{"FIFO path", map[string]any{"pattern": "x", "path": "ff"}, true, "not a regular file"},
				{"invalid regex", map[string]any{"pattern": "("}, true, ""},
			} {
				docsWant(t, tc.name, c.CallTool(ctx, "grep", tc.args), tc.isErr, tc.want)
			}
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "hello"})
			docsWant(t, "hidden searched, .git never", r, false, ".hid/h.txt:1: hello hidden", "small.txt:1: one hello")
			wantLacks(t, ".git or a binary file searched", r.Text(), "hello git", "bin.dat:")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": body[5][:20], "literal": true, "context": 2})
			docsWant(t, "PEM body masked", r, false, "[REDACTED:private-key]")
			for _, b := range body {
				wantLacks(t, "PEM body line", r.Text(), b[:20])
			}
		})
	}
}

// tools.md "edit" and "write": the result texts and details, the
// refusals, dry runs, the legacy single edit with CRLF kept, create and
// replace.
func TestDocsEditWrite(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{
		"src/a.go": numberedLines(50, func(i int) string { return fmt.Sprintf("l%d", i) }),
		"b.go":     "package a\n\nvar x = 1\nvar y = 1\n",
		"c.txt":    "a\r\nb\r\n",
		"dup.txt":  "x\nx\n",
		"old.txt":  "old\n",
	})
	docsWant(t, "edit before read", c.CallTool(ctx, "edit", editCall("b.go", "x = 1", "x = 2")), true, "read")
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
	c.CallTool(ctx, "read", map[string]any{"path": "b.go"})
	c.CallTool(ctx, "read", map[string]any{"path": "dup.txt"})
	for _, tc := range []struct {
		name  string
		args  map[string]any
		wants []string
	}{
		{"two matches", editCall("b.go", "= 1", "= 2"), []string{"add context or set replaceAll", "3", "4"}},
		{"identical result", editCall("b.go", "var x = 1", "var x = 1"), []string{"no change"}},
		{"identical with replaceAll", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"oldText": "x", "newText": "x", "replaceAll": true}}}, []string{"no change"}},
		{"not found", editCall("b.go", "var z = 1", "q"), []string{"var"}},
	} {
		docsWant(t, tc.name, c.CallTool(ctx, "edit", tc.args), true, tc.wants...)
	}
	r = c.CallTool(ctx, "edit", map[string]any{"path": "b.go", "dryRun": true, "edits": []map[string]any{{"oldText": "= 1", "newText": "= 2", "replaceAll": true}}})
	if r.IsError || r.Details["unifiedDiff"] == nil || readFile(t, filepath.Join(ws, "b.go")) != "package a\n\nvar x = 1\nvar y = 1\n" {
		t.Errorf("dryRun wrote or gave no diff: %q", r.Text())
	}
	docsWant(t, "replaceAll", c.CallTool(ctx, "edit", map[string]any{"path": "b.go", "edits": []map[string]any{{"oldText": "= 1", "newText": "= 2", "replaceAll": true}}}), false, "Edited b.go: 2 replacements, lines 3 and 4.")
	// The legacy single edit with other agents' names; CRLF kept.
	c.CallTool(ctx, "read", map[string]any{"path": "c.txt"})
	docsWant(t, "legacy single edit", c.CallTool(ctx, "edit", map[string]any{"file_path": "c.txt", "old_string": "a\nb", "new_string": "a\nz"}), false, "Edited c.txt")
	if got := readFile(t, filepath.Join(ws, "c.txt")); got != "a\r\nz\r\n" {
		t.Errorf("CRLF not kept: %q", got)
	}

	r = c.CallTool(ctx, "write", map[string]any{"path": "new/dir/f.txt", "content": "hi\n"})
	if r.IsError || r.Details["kind"] != "create" || r.Details["matchLevel"] != "none" || r.Details["unifiedDiff"] == nil {
		t.Errorf("create: %q %v", r.Text(), compactJSON(r.Details))
	}
	docsWant(t, "replace without a read", c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "new\n"}), true, "read")
	c.CallTool(ctx, "read", map[string]any{"path": "old.txt"})
	docsWant(t, "identical write", c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "old\n"}), true, "no change")
	if r = c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "new\n"}); r.IsError || r.Details["kind"] != "write" {
		t.Errorf("replace after read: %q %v", r.Text(), r.Details["kind"])
	}
}

// tools.md "bash" and "Secret masking": the refused commands (they do not
// run), the exit code, the environment, the timeout's units and maximum,
// a long output's failure lines and spill file, the files a command
// changed, masked secrets.
func TestDocsBashAndSecrets(t *testing.T) {
	t.Parallel()
	key := "sk-proj-" + strings.Repeat("Ab3dEf7hIj", 5)
	c, ws, ctx := start(t, map[string]string{"a.txt": "a\n", ".env": "OPENAI_API_KEY=" + key + "\n", "sub/k": ""})
	for _, tc := range []struct {
		name    string
		args    map[string]any
		isErr   bool
		want    string
		ran     string // a file the command makes, "" when it is not to run
		refused string // the file of a command that must not run
	}{
		{"NUL command", map[string]any{"command": "touch ran1; echo a\x00b"}, true, "NUL", "", "ran1"},
		{"command of 131,072 bytes", map[string]any{"command": "touch ran2; : " + strings.Repeat("a", 131072-len("touch ran2; : "))}, true, "131071", "", "ran2"},
		{"command of 131,071 bytes", map[string]any{"command": "touch ran3; : " + strings.Repeat("a", 131071-len("touch ran3; : "))}, false, "", "ran3", ""},
		{"exit 3", map[string]any{"command": "exit 3"}, true, "[Exit code 3]", "", ""},
		{"environment", map[string]any{"command": `echo "$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$GIT_EDITOR|$EDITOR|$VISUAL|$AGENTLS|$TERM|$NO_COLOR"; pwd; cat`, "cwd": "sub"}, false, "cat|cat|0|true|true|true|1|dumb|1\n" + filepath.Join(ws, "sub"), "", ""},
		{"timeout 700", map[string]any{"command": "echo x", "timeout": 700}, true, "600", "", ""},
	} {
		docsWant(t, tc.name, c.CallTool(ctx, "bash", tc.args), tc.isErr, tc.want)
		for f, want := range map[string]bool{tc.ran: true, tc.refused: false} {
			if _, err := os.Stat(filepath.Join(ws, f)); f != "" && (err == nil) != want {
				t.Errorf("%s: %s exists=%v, want %v (refused commands must not run)", tc.name, f, err == nil, want)
			}
		}
	}
	r := c.CallTool(ctx, "bash", map[string]any{"command": "echo ms", "timeout": 120000})
	if r.IsError || !strings.Contains(compactJSON(r.Details["normalized"]), "timeout") {
		t.Errorf("timeout in ms: %q %v", r.Text(), r.Details["normalized"])
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo 'FAIL: TestBuried'; seq 1 2500"})
	docsWant(t, "long output", r, false, "FAIL: TestBuried", "2500")
	if strings.Index(r.Text(), "FAIL: TestBuried") > strings.Index(r.Text(), "\n2500") {
		t.Errorf("the failure line is not listed before the tail")
	}
	if m := regexp.MustCompile(`read \{"path": "([^"]+)"`).FindStringSubmatch(r.Text()); m == nil {
		t.Errorf("no read call for the spill file in:\n%s", limitsHead(r.Text()))
	} else {
		docsWant(t, "read the spill file", c.CallTool(ctx, "read", map[string]any{"path": m[1], "limit": 2}), false, "FAIL: TestBuried")
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	docsWant(t, "changed files", c.CallTool(ctx, "bash", map[string]any{"command": "echo more >> a.txt"}), false, "Changed by this command", "a.txt")
	r = c.CallTool(ctx, "read", map[string]any{"path": ".env"})
	if !strings.Contains(r.Text(), "OPENAI_API_KEY=[REDACTED:openai-key]") || strings.Contains(r.Text(), key) || r.Details["redactions"] == nil {
		t.Errorf(".env: %q %v", r.Text(), compactJSON(r.Details))
	}
	wantLacks(t, "bash output", c.CallTool(ctx, "bash", map[string]any{"command": "cat .env"}).Text(), key)
}

// tools.md "tool_search": an empty query refused, a search activating a
// deferred tool (tools/listChanged), a repeated search, the query not
// echoed at length, a deferred tool called by name.
func TestDocsToolSearch(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{
		".agentls/tools/run_tests.json":  `{"name":"run_tests","description":"Run the unit tests matching a pattern","inputSchema":{"type":"object","properties":{"pattern":{"type":"string"}}},"command":"echo {{pattern}}","readOnly":true}`,
		".agentls/tools/db_migrate.json": `{"name":"db_migrate","description":"Apply database migrations","inputSchema":{"type":"object","properties":{}},"command":"true"}`,
	})
	waitTool(t, c, ctx, "run_tests")
	for _, q := range []string{"", "   "} {
		docsWant(t, fmt.Sprintf("query %q", q), c.CallTool(ctx, "tool_search", map[string]any{"query": q}), true, "query")
	}
	before := len(c.Notes("tools/listChanged"))
	docsWant(t, "first search", c.CallTool(ctx, "tool_search", map[string]any{"query": "unit tests"}), false, "## run_tests", "Input schema:")
	if !waitUntil(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
		t.Errorf("no tools/listChanged after tool_search activated run_tests")
	}
	docsWant(t, "repeated search", c.CallTool(ctx, "tool_search", map[string]any{"query": "unit tests"}), false, "Already in your tool list", "run_tests")
	q := strings.Repeat("zq", 150)
	wantLacks(t, "the answer to a long query", c.CallTool(ctx, "tool_search", map[string]any{"query": q}).Text(), q[:101])
	docsWant(t, "a deferred tool called by name", c.CallTool(ctx, "db_migrate", map[string]any{}), false)
}

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
