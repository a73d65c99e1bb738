package e2e

// The documentation, checked black-box: every concrete claim of README.md,
// docs/tools.md, docs/protocol.md and ARCHITECTURE.md (an example call and
// its output, a field name, a default, a flag, an error code or text) is run
// against agentls. Texts the docs quote are asserted verbatim; numbers are
// checked against `agentls tools --limits`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// README: the scripts and benchmarks it names exist, its JSON snippets
// parse. --version: TestCLIVersion; the usage and each --help:
// TestCLIBadInvocationAndHelp.
func TestDocsCLI(t *testing.T) {
	t.Parallel()
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
// (`agentls tools --limits`), every tool it names listed. That descriptions
// and schemas state the same numbers: governance/description_numbers_are_limits.
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

// --- docs/tools.md ------------------------------------------------------
