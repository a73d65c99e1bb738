package e2e

// Contract tests of per-folder configuration in multi-root workspaces and
// its live reload, written from docs/protocol.md (didChangeWorkspaceFolders,
// MCP roots: "the configuration follows the folders"), docs/tools.md
// (extension tools, upstream MCP servers, permissions, limits) and issues 6
// and 9. Every folder here carries its own .agentls/tools/*.json tool, its
// own .agentls/mcp.json server (a python script in the folder, started by a
// relative command) and, where the test needs it, its own settings.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// folderCfgServerPy is a minimal stdio MCP server with one read-only tool,
// "where", answering where the process runs: its working directory, the
// real path of its script, its arguments and $A20C_DIR.
const folderCfgServerPy = `#!/usr/bin/env python3
import sys, json, os
def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except Exception:
        continue
    m, rid = msg.get("method"), msg.get("id")
    if m == "initialize":
        v = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": v, "capabilities": {"tools": {}}, "serverInfo": {"name": "a20c", "version": "1"}}})
    elif m == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "where", "description": "a20c upstream tool reporting the working directory it runs in", "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}]}})
    elif m == "tools/call":
        info = {"cwd": os.getcwd(), "script": os.path.realpath(sys.argv[0]), "argv": sys.argv[1:], "env": os.environ.get("A20C_DIR", "<unset>"), "pid": os.getpid()}
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "a20c-where " + json.dumps(info)}]}})
    elif m == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no " + str(m)}})
`

// folderCfgFolder is one workspace folder with its own configuration.
type folderCfgFolder struct {
	dir    string // symlinks resolved
	name   string // "a" or "b"
	marker string // a word on the upstream's command line
}

func (f folderCfgFolder) ext() string      { return "a20c_" + f.name + "_ext" }
func (f folderCfgFolder) server() string   { return "a20c" + f.name }
func (f folderCfgFolder) upstream() string { return f.server() + "__where" }
func (f folderCfgFolder) settings() string { return filepath.Join(f.dir, ".agentls", "settings.json") }

// folderCfgNewFolder makes folder name with an extension tool, an mcp.json
// (in the shape key: "servers" or "mcpServers") whose server is started by
// the relative command ./bin/a20c-srv with ${workspaceFolder} in its args
// and env, and, when settings is not "", .agentls/settings.json.
func folderCfgNewFolder(t *testing.T, name, key, settings string, files map[string]string) folderCfgFolder {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	f := folderCfgFolder{dir: resolvedWorkspace(t, files), name: name}
	f.marker = fmt.Sprintf("a20c-marker-%s-%d", name, time.Now().UnixNano())
	reapProcessesWithArg(t, f.marker)
	if err := os.MkdirAll(filepath.Join(f.dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "bin", "a20c-srv"), []byte(folderCfgServerPy), 0o755); err != nil {
		t.Fatal(err)
	}
	ext := map[string]any{
		"name":        f.ext(),
		"description": "a20c extension tool of folder " + name + " that prints a greeting",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		"command":     "echo a20c-ext-" + name + "-ran",
		"readOnly":    true,
	}
	b, _ := json.Marshal(ext)
	writeFile(t, filepath.Join(f.dir, ".agentls", "tools", f.ext()+".json"), string(b))
	cfg := map[string]any{key: map[string]any{f.server(): map[string]any{
		"command": "./bin/a20c-srv",
		"args":    []any{"${workspaceFolder}", f.marker},
		"env":     map[string]any{"A20C_DIR": "${workspaceFolder}"},
	}}}
	b, _ = json.Marshal(cfg)
	writeFile(t, filepath.Join(f.dir, ".agentls", "mcp.json"), string(b))
	if settings != "" {
		writeFile(t, f.settings(), settings)
	}
	return f
}

func (f folderCfgFolder) procs() int { return len(processesWithArg(f.marker)) }

// folderCfgFolderParam is a workspace folder as LSP sends it.
func folderCfgFolderParam(dir string) map[string]any {
	return map[string]any{"uri": fileURI(dir), "name": filepath.Base(dir)}
}

// folderCfgStart runs agentls on folders (the first one as --root too) with
// initializationOptions opts.
func folderCfgStart(t *testing.T, opts map[string]any, folders ...folderCfgFolder) (*harness.Client, context.Context) {
	t.Helper()
	return folderCfgStartEnv(t, nil, opts, folders...)
}

// folderCfgStartEnv is folderCfgStart with env added to the process's environment.
func folderCfgStartEnv(t *testing.T, env []string, opts map[string]any, folders ...folderCfgFolder) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: folders[0].dir, Env: append([]string{"XDG_CACHE_HOME=" + t.TempDir()}, env...)})
	ctx := testCtx(t, 60*time.Second)
	var wf []any
	for _, f := range folders {
		wf = append(wf, folderCfgFolderParam(f.dir))
	}
	params := map[string]any{"workspaceFolders": wf}
	if opts != nil {
		params["initializationOptions"] = opts
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// folderCfgChange sends workspace/didChangeWorkspaceFolders.
func folderCfgChange(t *testing.T, c *harness.Client, ctx context.Context, added, removed []folderCfgFolder) {
	t.Helper()
	ev := map[string]any{"added": []any{}, "removed": []any{}}
	for _, f := range added {
		ev["added"] = append(ev["added"].([]any), folderCfgFolderParam(f.dir))
	}
	for _, f := range removed {
		ev["removed"] = append(ev["removed"].([]any), folderCfgFolderParam(f.dir))
	}
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": ev}); err != nil {
		t.Fatalf("didChangeWorkspaceFolders: %v", err)
	}
}

// folderCfgList is tools/list (deferred tools too when deferred): name → tool.
func folderCfgList(t *testing.T, c *harness.Client, ctx context.Context, deferred bool) map[string]map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": deferred}, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		n, _ := tl["name"].(string)
		out[n] = tl
	}
	return out
}

// folderCfgSearch is the text of tool_search {query: "a20c", limit: 20}.
func folderCfgSearch(t *testing.T, c *harness.Client, ctx context.Context) string {
	t.Helper()
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "a20c", "limit": 20})
	if r.IsError {
		t.Fatalf("tool_search: %s", r.Text())
	}
	return r.Text()
}

// folderCfgWhereInfo is what the fake upstream's "where" tool reports.
type folderCfgWhereInfo struct {
	Cwd    string   `json:"cwd"`
	Script string   `json:"script"`
	Argv   []string `json:"argv"`
	Env    string   `json:"env"`
	Pid    int      `json:"pid"`
}

// folderCfgWhere decodes the "where" tool's answer.
func folderCfgWhere(t *testing.T, what, text string) folderCfgWhereInfo {
	t.Helper()
	var info folderCfgWhereInfo
	_, js, ok := strings.Cut(text, "a20c-where ")
	if !ok || json.Unmarshal([]byte(strings.TrimSpace(js)), &info) != nil {
		t.Fatalf("%s: no where report in %q", what, text)
	}
	return info
}

// folderCfgCheckWhere asserts the upstream declared by f runs in f with
// ${workspaceFolder} expanded to f.
func folderCfgCheckWhere(t *testing.T, f folderCfgFolder, info folderCfgWhereInfo) {
	t.Helper()
	if info.Cwd != f.dir {
		t.Errorf("%s: upstream cwd = %q, want its declaring folder %q", f.server(), info.Cwd, f.dir)
	}
	if want := filepath.Join(f.dir, "bin", "a20c-srv"); info.Script != want {
		t.Errorf("%s: relative command ./bin/a20c-srv ran %q, want %q", f.server(), info.Script, want)
	}
	if len(info.Argv) != 2 || info.Argv[0] != f.dir || info.Argv[1] != f.marker {
		t.Errorf("%s: args = %q, want [%q %q] (${workspaceFolder} = declaring folder)", f.server(), info.Argv, f.dir, f.marker)
	}
	if info.Env != f.dir {
		t.Errorf("%s: env A20C_DIR = %q, want %q", f.server(), info.Env, f.dir)
	}
}

// folderCfgListChangedSince waits for a tools/listChanged sent after t0.
func folderCfgListChangedSince(c *harness.Client, t0 time.Time, d time.Duration) bool {
	_, ok := c.WaitNote(d, func(n harness.Note) bool {
		return n.Method == "tools/listChanged" && n.At.After(t0)
	})
	return ok
}

// folderCfgLogSince waits for a window/logMessage after t0 containing every want.
func folderCfgLogSince(c *harness.Client, t0 time.Time, d time.Duration, wants ...string) (string, bool) {
	n, ok := c.WaitNote(d, func(n harness.Note) bool {
		if n.Method != "window/logMessage" || !n.At.After(t0) {
			return false
		}
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &p)
		for _, w := range wants {
			if !strings.Contains(p.Message, w) {
				return false
			}
		}
		return true
	})
	return string(n.Params), ok
}

// TestFoldersConfigTwoFolders: each folder's extension tool and upstream
// server are discovered by tool_search; an upstream runs in the folder whose
// mcp.json declares it, its relative command resolved there and
// ${workspaceFolder} expanded to that folder, in both config shapes.
func TestFoldersConfigTwoFolders(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "mcpServers", "", nil)
	c, ctx := folderCfgStart(t, bypassOptions(), a, b)

	// Upstream servers list their tools in the background: wait for them.
	waitUntil(10*time.Second, func() bool {
		l := folderCfgList(t, c, ctx, true)
		_, ua := l[a.upstream()]
		_, ub := l[b.upstream()]
		return ua && ub
	})
	deferred := folderCfgList(t, c, ctx, true)
	active := folderCfgList(t, c, ctx, false)
	t0 := time.Now()
	txt := folderCfgSearch(t, c, ctx)
	for _, f := range []folderCfgFolder{a, b} {
		for _, n := range []string{f.ext(), f.upstream()} {
			if !strings.Contains(txt, n) {
				t.Errorf("tool_search lacks %s:\n%s", n, txt)
			}
			if _, ok := active[n]; ok {
				t.Errorf("%s listed before tool_search (extension and upstream tools are deferred)", n)
			}
			if _, ok := deferred[n]; !ok {
				t.Errorf("%s not in tools/list includeDeferred before the search", n)
			}
		}
	}
	if !folderCfgListChangedSince(c, t0, 5*time.Second) {
		t.Errorf("no tools/listChanged after tool_search activated tools")
	}
	active = folderCfgList(t, c, ctx, false)
	for _, n := range []string{a.ext(), a.upstream(), b.ext(), b.upstream()} {
		if _, ok := active[n]; !ok {
			t.Errorf("%s not in tools/list after tool_search", n)
		}
	}
	for _, f := range []folderCfgFolder{a, b} {
		r := c.CallTool(ctx, f.upstream(), map[string]any{})
		if r.IsError {
			t.Fatalf("%s: %s", f.upstream(), r.Text())
		}
		folderCfgCheckWhere(t, f, folderCfgWhere(t, f.upstream(), r.Text()))
		r = c.CallTool(ctx, f.ext(), map[string]any{})
		wantResult(t, f.ext(), r, false, "a20c-ext-"+f.name+"-ran")
	}
}

// TestFoldersConfigRemoveFolder: removing folder B takes B's extension and
// upstream tools out of tools/list and tool_search, ends B's settings
// rules and stops B's upstream process; adding B back restores all three.
func TestFoldersConfigRemoveFolder(t *testing.T) {
	t.Parallel()
	const denied = "echo a20c-b-denied now"
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", `{"permissions": {"deny": ["Bash(echo a20c-b-denied:*)"]}}`, nil)
	c, ctx := folderCfgStart(t, bypassOptions(), a, b)

	folderCfgSearch(t, c, ctx)
	r := c.CallTool(ctx, b.upstream(), map[string]any{})
	first := folderCfgWhere(t, "B upstream before removal", r.Text())
	wantResult(t, "B's deny rule with B in the workspace", c.CallTool(ctx, "bash", map[string]any{"command": denied}), true, "Bash(echo a20c-b-denied:*)")
	if a.procs() == 0 || b.procs() == 0 {
		t.Fatalf("upstream processes not running: a=%d b=%d", a.procs(), b.procs())
	}

	t0 := time.Now()
	folderCfgChange(t, c, ctx, nil, []folderCfgFolder{b})
	if !folderCfgListChangedSince(c, t0, 10*time.Second) {
		t.Errorf("no tools/listChanged after B (with active tools) was removed")
	}
	gone := func() bool {
		l := folderCfgList(t, c, ctx, true)
		_, e := l[b.ext()]
		_, u := l[b.upstream()]
		return !e && !u
	}
	if !waitUntil(10*time.Second, gone) {
		t.Errorf("B's tools still in tools/list includeDeferred after B was removed: %v", folderCfgKeys(folderCfgList(t, c, ctx, true)))
	}
	l := folderCfgList(t, c, ctx, false)
	for _, n := range []string{a.ext(), a.upstream()} {
		if _, ok := l[n]; !ok {
			t.Errorf("A's active tool %s left tools/list when B was removed", n)
		}
	}
	txt := folderCfgSearch(t, c, ctx)
	wantLacks(t, "tool_search after B removed", txt, b.ext(), b.upstream())
	r = c.CallTool(ctx, b.upstream(), map[string]any{})
	if !r.IsError {
		t.Errorf("B's upstream tool still callable after B was removed: %s", r.Text())
	}
	wantResult(t, "B's deny rule after B removed", c.CallTool(ctx, "bash", map[string]any{"command": denied}), false, "a20c-b-denied now")
	if !waitUntil(5*time.Second, func() bool { return b.procs() == 0 }) {
		t.Errorf("B's upstream still running 5 s after B was removed: pids %v", processesWithArg(b.marker))
	}
	if a.procs() == 0 {
		t.Errorf("A's upstream stopped when B was removed")
	}
	r = c.CallTool(ctx, a.upstream(), map[string]any{})
	folderCfgCheckWhere(t, a, folderCfgWhere(t, "A upstream after B removed", r.Text()))

	// B back.
	folderCfgChange(t, c, ctx, []folderCfgFolder{b}, nil)
	if !waitUntil(15*time.Second, func() bool {
		txt := folderCfgSearch(t, c, ctx)
		return strings.Contains(txt, b.ext()) && strings.Contains(txt, b.upstream())
	}) {
		t.Fatalf("B's tools not found by tool_search after B was added back:\n%s", folderCfgSearch(t, c, ctx))
	}
	r = c.CallTool(ctx, b.upstream(), map[string]any{})
	if r.IsError {
		t.Fatalf("B upstream after re-add: %s", r.Text())
	}
	again := folderCfgWhere(t, "B upstream after re-add", r.Text())
	folderCfgCheckWhere(t, b, again)
	if again.Pid == first.Pid {
		t.Errorf("B's upstream has the pid it had before removal (%d): it was never stopped", first.Pid)
	}
	wantResult(t, "B's ext tool after re-add", c.CallTool(ctx, b.ext(), map[string]any{}), false, "a20c-ext-b-ran")
	wantResult(t, "B's deny rule after re-add", c.CallTool(ctx, "bash", map[string]any{"command": denied}), true, "Bash(echo a20c-b-denied:*)")
}

func folderCfgKeys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFoldersConfigLiveSettings: B's .agentls/settings.json is read again on
// change: a new deny rule holds for the very next call on B's files (and only
// B's: a path rule is anchored at its folder); an edit that makes the file
// invalid keeps its previous rules and is reported naming B's file; a fixed
// file applies; a deleted file's rules go.
func TestFoldersConfigLiveSettings(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", map[string]string{"same.txt": "a20c A same\n"})
	b := folderCfgNewFolder(t, "b", "servers", `{"permissions": {"deny": ["Read(./other.txt)"]}}`, map[string]string{"same.txt": "a20c B same\n"})
	c, ctx := folderCfgStart(t, nil, a, b) // default mode: reads run unless a rule says otherwise
	bFile := filepath.Join(b.dir, "same.txt")
	aFile := filepath.Join(a.dir, "same.txt")
	read := func(p string) harness.Result { return c.CallTool(ctx, "read", map[string]any{"path": p}) }

	wantResult(t, "B read before the edit", read(bFile), false, "a20c B same")

	writeFile(t, b.settings(), `{"permissions": {"deny": ["Read(./other.txt)", "Read(./same.txt)"]}}`)
	r := read(bFile)
	wantResult(t, "B read right after a deny rule was added", r, true, "Read(./same.txt)")
	wantContains(t, "denial names B's settings file by its absolute path", r.Text(), b.settings())
	wantLacks(t, "denial", r.Text(), "a20c B same")
	wantResult(t, "A's namesake is not B's file", read(aFile), false, "a20c A same")
	wantResult(t, "relative path names A's file", read("same.txt"), false, "a20c A same")

	steps := []struct {
		name, body string
		logWants   []string
	}{
		{"bad JSON", `{"permissions": {"deny": [`, nil},
		{"invalid rule", `{"permissions": {"deny": ["Read(./same.txt"]}}`, []string{"Read(./same.txt", "column"}},
		{"wrong type", `{"permissions": {"deny": "Read(./same.txt)"}}`, nil},
	}
	for _, s := range steps {
		t0 := time.Now()
		writeFile(t, b.settings(), s.body)
		r := read(bFile)
		wantResult(t, s.name+": B keeps its deny rule", r, true, "Read(./same.txt)")
		wantLacks(t, s.name, r.Text(), "a20c B same")
		if msg, ok := folderCfgLogSince(c, t0, 5*time.Second, append([]string{b.settings()}, s.logWants...)...); !ok {
			t.Errorf("%s: no window/logMessage naming %s %q; logs: %q", s.name, b.settings(), s.logWants, logMessages(c, 0))
		} else {
			t.Logf("%s: %s", s.name, msg)
		}
	}

	writeFile(t, b.settings(), `{"permissions": {"deny": ["Read(./other.txt)"], "allow": []}}`)
	wantResult(t, "B read after the rule was dropped", read(bFile), false, "a20c B same")
	writeFile(t, b.settings(), `{"permissions": {"deny": ["Read(./same.txt)"]}}`)
	wantResult(t, "B read after the rule came back", read(bFile), true, "Read(./same.txt)")
	if err := os.Remove(b.settings()); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "B read after B's settings file was deleted", read(bFile), false, "a20c B same")
}

// folderCfgReadDesc is read's description in tools/list.
func folderCfgReadDesc(t *testing.T, c *harness.Client, ctx context.Context) string {
	t.Helper()
	d, _ := folderCfgList(t, c, ctx, false)["read"]["description"].(string)
	return d
}

// folderCfgCut is the line count of a read of a 20-line file: the N of
// "lines 1-N of 20", and the header and notice beside them when cut (0
// when the header is not there).
func folderCfgCut(t *testing.T, c *harness.Client, ctx context.Context, path string) int {
	t.Helper()
	r := c.CallTool(ctx, "read", map[string]any{"path": path})
	for n := 1; n <= 20; n++ {
		if strings.Contains(r.Text(), fmt.Sprintf("lines 1-%d of 20", n)) {
			if n < 20 {
				wantContains(t, "read cut at "+fmt.Sprint(n), r.Text(), fmt.Sprintf("offset=%d", n+1))
				return n + 2
			}
			return n
		}
	}
	t.Errorf("read %s: no \"lines 1-N of 20\" header:\n%s", path, r.Text())
	return 0
}

// TestFoldersConfigLimits: limits in a folder's settings file are in force
// for the session's built-in tools (stated in read's description and
// enforced), the editor's limits win over every file, a live change of B's
// limits or B's removal rebuilds the tools with tools/listChanged, and a
// wrong value in B's file is reported and ignored.
func TestFoldersConfigLimits(t *testing.T) {
	t.Parallel()
	twenty := map[string]string{"twenty.txt": numberedLines(20, func(i int) string { return fmt.Sprintf("a20c line %d", i) })}
	limits := func(n int) string { return fmt.Sprintf(`{"limits": {"readLines": %d}}`, n) }

	t.Run("OnlyB", func(t *testing.T) {
		t.Parallel()
		a := folderCfgNewFolder(t, "a", "servers", "", twenty)
		b := folderCfgNewFolder(t, "b", "servers", limits(7), twenty)
		c, ctx := folderCfgStart(t, bypassOptions(), a, b)
		for _, f := range []folderCfgFolder{a, b} {
			if n := folderCfgCut(t, c, ctx, filepath.Join(f.dir, "twenty.txt")); n != 7 {
				t.Errorf("read in folder %s with B's readLines 7: cut at %d", f.name, n)
			}
		}
		wantContains(t, "read description with B's readLines 7", folderCfgReadDesc(t, c, ctx), "7 lines")

		// Live change of B's limit.
		t0 := time.Now()
		writeFile(t, b.settings(), limits(9))
		if !folderCfgListChangedSince(c, t0, 10*time.Second) {
			t.Errorf("no tools/listChanged after B's limits changed")
		}
		if !waitUntil(5*time.Second, func() bool { return folderCfgCut(t, c, ctx, filepath.Join(b.dir, "twenty.txt")) == 9 }) {
			t.Errorf("B's new readLines 9 not in force")
		}
		wantContains(t, "read description after B's change", folderCfgReadDesc(t, c, ctx), "9 lines")

		// A wrong value: reported, B's limits ignored (the default is back).
		t0 = time.Now()
		writeFile(t, b.settings(), `{"limits": {"readLines": 0}}`)
		if _, ok := folderCfgLogSince(c, t0, 10*time.Second, b.settings()); !ok {
			t.Errorf("wrong readLines in B's file not reported naming %s; logs: %q", b.settings(), logMessages(c, 0))
		}
		if !waitUntil(5*time.Second, func() bool { return folderCfgCut(t, c, ctx, filepath.Join(b.dir, "twenty.txt")) == 20 }) {
			t.Errorf("B's invalid limits file not ignored")
		}

		// B removed: its limits leave with it.
		writeFile(t, b.settings(), limits(7))
		if !waitUntil(5*time.Second, func() bool { return folderCfgCut(t, c, ctx, filepath.Join(a.dir, "twenty.txt")) == 7 }) {
			t.Fatalf("B's readLines 7 not back in force")
		}
		t0 = time.Now()
		folderCfgChange(t, c, ctx, nil, []folderCfgFolder{b})
		if !folderCfgListChangedSince(c, t0, 10*time.Second) {
			t.Errorf("no tools/listChanged after B (which set limits) was removed")
		}
		if !waitUntil(5*time.Second, func() bool { return folderCfgCut(t, c, ctx, filepath.Join(a.dir, "twenty.txt")) == 20 }) {
			t.Errorf("B's readLines still in force after B was removed")
		}
		wantContains(t, "read description after B removed", folderCfgReadDesc(t, c, ctx), "2000 lines")
	})

	t.Run("AAndBDisagree", func(t *testing.T) {
		t.Parallel()
		a := folderCfgNewFolder(t, "a", "servers", limits(5), twenty)
		b := folderCfgNewFolder(t, "b", "servers", limits(7), twenty)
		c, ctx := folderCfgStart(t, bypassOptions(), a, b)
		na := folderCfgCut(t, c, ctx, filepath.Join(a.dir, "twenty.txt"))
		nb := folderCfgCut(t, c, ctx, filepath.Join(b.dir, "twenty.txt"))
		desc := folderCfgReadDesc(t, c, ctx)
		t.Logf("A readLines 5, B readLines 7: read in A cut at %d, in B at %d", na, nb)
		// docs/protocol.md: per name, the first folder's files win over a
		// later folder's.
		if na != 5 || nb != 5 {
			t.Errorf("read cut at %d in A and %d in B, want the first folder's 5 in both", na, nb)
		}
		wantContains(t, "read description states the limit enforced", desc, fmt.Sprintf("%d lines", na))
	})

	t.Run("EditorWins", func(t *testing.T) {
		t.Parallel()
		a := folderCfgNewFolder(t, "a", "servers", limits(5), twenty)
		b := folderCfgNewFolder(t, "b", "servers", limits(7), twenty)
		c, ctx := folderCfgStart(t, map[string]any{"mode": "bypass", "limits": map[string]any{"readLines": 11}}, a, b)
		for _, f := range []folderCfgFolder{a, b} {
			if n := folderCfgCut(t, c, ctx, filepath.Join(f.dir, "twenty.txt")); n != 11 {
				t.Errorf("read in folder %s: cut at %d, want the editor's 11", f.name, n)
			}
		}
		wantContains(t, "read description", folderCfgReadDesc(t, c, ctx), "11 lines")
	})
}

// folderCfgMCP is an `agentls mcp` session whose client declares roots and
// answers roots/list with the folders set last.
type folderCfgMCP struct {
	m     *mcpRawClient
	mu    sync.Mutex
	roots []folderCfgFolder
	next  int
}

func folderCfgStartMCP(t *testing.T, roots ...folderCfgFolder) *folderCfgMCP {
	t.Helper()
	s := &folderCfgMCP{roots: roots, next: 100}
	s.m = startMCPRaw(t, []string{"mcp", "--root", roots[0].dir}, []string{"XDG_CACHE_HOME=" + t.TempDir()})
	s.m.setHandler(func(req mcpMsg) (any, int) {
		switch req.Method {
		case "roots/list":
			s.mu.Lock()
			defer s.mu.Unlock()
			var rs []any
			for _, f := range s.roots {
				rs = append(rs, map[string]any{"uri": fileURI(f.dir), "name": f.name})
			}
			return map[string]any{"roots": rs}, 0
		case "ping":
			return map[string]any{}, 0
		}
		return nil, -32601
	})
	s.m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{"roots": map[string]any{"listChanged": true}},
		"clientInfo":      map[string]any{"name": "a20c", "version": "1"},
	}})
	s.m.mustReply(1, 10*time.Second)
	s.m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

// setRoots changes the answer to roots/list and tells the server.
func (s *folderCfgMCP) setRoots(roots ...folderCfgFolder) {
	s.mu.Lock()
	s.roots = roots
	s.mu.Unlock()
	s.m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
}

// request sends method with params and returns the reply's result.
func (s *folderCfgMCP) request(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	s.mu.Lock()
	s.next++
	id := s.next
	s.mu.Unlock()
	s.m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	rep := s.m.mustReply(id, 30*time.Second)
	if rep.Error != nil {
		t.Fatalf("MCP %s: error %d %s", method, rep.Error.Code, rep.Error.Message)
	}
	res, _ := rep.Obj["result"].(map[string]any)
	return res
}

// call is tools/call's text and isError.
func (s *folderCfgMCP) call(t *testing.T, name string, args any) (string, bool) {
	t.Helper()
	res := s.request(t, "tools/call", map[string]any{"name": name, "arguments": args})
	isErr, _ := res["isError"].(bool)
	var parts []string
	cs, _ := res["content"].([]any)
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		if txt, ok := cm["text"].(string); ok {
			parts = append(parts, txt)
		}
	}
	return strings.Join(parts, "\n"), isErr
}

// names is the tool names of tools/list.
func (s *folderCfgMCP) names(t *testing.T) []string {
	t.Helper()
	res := s.request(t, "tools/list", map[string]any{})
	var out []string
	ts, _ := res["tools"].([]any)
	for _, tl := range ts {
		tm, _ := tl.(map[string]any)
		n, _ := tm["name"].(string)
		out = append(out, n)
	}
	return out
}

// TestFoldersConfigMCPRoots: under `agentls mcp`, the configuration follows
// the client's roots: both roots' extension and upstream tools are found,
// each upstream runs in its folder; dropping root B removes B's tools
// (with notifications/tools/list_changed), B's rules and B's upstream
// process; bringing B back restores them.
func TestFoldersConfigMCPRoots(t *testing.T) {
	t.Parallel()
	const denied = "echo a20c-b-denied now"
	twenty := map[string]string{"twenty.txt": numberedLines(20, func(i int) string { return fmt.Sprintf("a20c line %d", i) })}
	a := folderCfgNewFolder(t, "a", "mcpServers", "", twenty)
	b := folderCfgNewFolder(t, "b", "servers", `{"permissions": {"deny": ["Bash(echo a20c-b-denied:*)"]}, "limits": {"readLines": 7}}`, nil)
	s := folderCfgStartMCP(t, a, b)
	aTwenty := filepath.Join(a.dir, "twenty.txt")
	out, _ := s.call(t, "read", map[string]any{"path": aTwenty})
	wantContains(t, "MCP read with root B's readLines 7", out, "lines 1-5 of 20", "offset=6")

	txt, _ := s.call(t, "tool_search", map[string]any{"query": "a20c", "limit": 20})
	for _, n := range []string{a.ext(), a.upstream(), b.ext(), b.upstream()} {
		if !strings.Contains(txt, n) {
			t.Errorf("MCP tool_search lacks %s:\n%s", n, txt)
		}
	}
	for _, f := range []folderCfgFolder{a, b} {
		out, isErr := s.call(t, f.upstream(), map[string]any{})
		if isErr {
			t.Fatalf("MCP %s: %s", f.upstream(), out)
		}
		folderCfgCheckWhere(t, f, folderCfgWhere(t, "MCP "+f.upstream(), out))
	}
	out, isErr := s.call(t, "bash", map[string]any{"command": denied})
	if !isErr || !strings.Contains(out, "Bash(echo a20c-b-denied:*)") {
		t.Errorf("MCP: B's deny rule with B a root: isError %v %q", isErr, out)
	}
	before := s.names(t)
	if !upstreamLifeHas(before, b.upstream()) || !upstreamLifeHas(before, b.ext()) {
		t.Fatalf("MCP tools/list lacks B's activated tools: %v", before)
	}

	mark := s.m.count()
	s.setRoots(a)
	if !waitUntil(10*time.Second, func() bool { return b.procs() == 0 }) {
		t.Errorf("MCP: B's upstream still running 10 s after root B was dropped: %v", processesWithArg(b.marker))
	}
	if _, ok := s.m.waitFrom(mark, 10*time.Second, mcpMethod("notifications/tools/list_changed")); !ok {
		t.Errorf("MCP: no notifications/tools/list_changed after root B (with listed tools) was dropped")
	}
	after := s.names(t)
	if upstreamLifeHas(after, b.upstream()) || upstreamLifeHas(after, b.ext()) {
		t.Errorf("MCP tools/list still has B's tools after root B was dropped: %v", after)
	}
	if !upstreamLifeHas(after, a.upstream()) || !upstreamLifeHas(after, a.ext()) {
		t.Errorf("MCP tools/list lost A's tools when B was dropped: %v", after)
	}
	txt, _ = s.call(t, "tool_search", map[string]any{"query": "a20c", "limit": 20})
	wantLacks(t, "MCP tool_search after B dropped", txt, b.ext(), b.upstream())
	out, isErr = s.call(t, "bash", map[string]any{"command": denied})
	if isErr || !strings.Contains(out, "a20c-b-denied now") {
		t.Errorf("MCP: B's deny rule still applies after root B was dropped: isError %v %q", isErr, out)
	}
	if a.procs() == 0 {
		t.Errorf("MCP: A's upstream stopped when B was dropped")
	}
	out, _ = s.call(t, "read", map[string]any{"path": aTwenty})
	wantContains(t, "MCP read after root B (readLines 7) was dropped", out, "lines 1-20 of 20")

	s.setRoots(a, b)
	if !waitUntil(15*time.Second, func() bool {
		txt, _ := s.call(t, "tool_search", map[string]any{"query": "a20c", "limit": 20})
		return strings.Contains(txt, b.ext()) && strings.Contains(txt, b.upstream())
	}) {
		t.Fatalf("MCP: B's tools not found after root B came back")
	}
	out, isErr = s.call(t, b.upstream(), map[string]any{})
	if isErr {
		t.Fatalf("MCP %s after B came back: %s", b.upstream(), out)
	}
	folderCfgCheckWhere(t, b, folderCfgWhere(t, "MCP B upstream after re-add", out))
	out, isErr = s.call(t, "bash", map[string]any{"command": denied})
	if !isErr || !strings.Contains(out, "Bash(echo a20c-b-denied:*)") {
		t.Errorf("MCP: B's deny rule after B came back: isError %v %q", isErr, out)
	}
}

// TestFoldersConfigLiveFolderFiles: the second folder's .agentls/tools and
// .agentls/mcp.json are watched like the first's: a new tool file is found,
// a redefined active tool runs its new command, a removed one leaves the
// list with tools/listChanged, a bad file is reported naming it, and an
// edited mcp.json starts the new server and stops the removed one.
func TestFoldersConfigLiveFolderFiles(t *testing.T) {
	slow(t)
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", "", nil)
	c, ctx := folderCfgStart(t, bypassOptions(), a, b)
	folderCfgSearch(t, c, ctx)
	wantResult(t, "B ext before", c.CallTool(ctx, b.ext(), map[string]any{}), false, "a20c-ext-b-ran")
	toolFile := func(name, command string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "description": "a20c live tool " + name, "inputSchema": map[string]any{"type": "object"}, "command": command, "readOnly": true})
		return string(b)
	}

	writeFile(t, filepath.Join(b.dir, ".agentls", "tools", "a20c_b_new.json"), toolFile("a20c_b_new", "echo a20c-b-new-ran"))
	if !waitUntil(5*time.Second, func() bool { return strings.Contains(folderCfgSearch(t, c, ctx), "a20c_b_new") }) {
		t.Errorf("a tool file added to B's .agentls/tools is not found by tool_search")
	} else {
		wantResult(t, "new B tool", c.CallTool(ctx, "a20c_b_new", map[string]any{}), false, "a20c-b-new-ran")
	}

	writeFile(t, filepath.Join(b.dir, ".agentls", "tools", b.ext()+".json"), toolFile(b.ext(), "echo a20c-ext-b-redefined"))
	if !waitUntil(5*time.Second, func() bool {
		return strings.Contains(c.CallTool(ctx, b.ext(), map[string]any{}).Text(), "a20c-ext-b-redefined")
	}) {
		t.Errorf("B's redefined tool still runs its old command")
	}

	t0 := time.Now()
	if err := os.Remove(filepath.Join(b.dir, ".agentls", "tools", b.ext()+".json")); err != nil {
		t.Fatal(err)
	}
	if !folderCfgListChangedSince(c, t0, 5*time.Second) {
		t.Errorf("no tools/listChanged after B's active tool file was removed")
	}
	if !waitUntil(5*time.Second, func() bool { _, ok := folderCfgList(t, c, ctx, true)[b.ext()]; return !ok }) {
		t.Errorf("%s still listed after its file was removed", b.ext())
	}

	t0 = time.Now()
	bad := filepath.Join(b.dir, ".agentls", "tools", "a20c_b_bad.json")
	writeFile(t, bad, `{"name": "a20c_b_bad", "description": "x", "inputSchema": {"type": "object"}, "command": "echo x", "timout": 5}`)
	if _, ok := folderCfgLogSince(c, t0, 5*time.Second, bad, "timout"); !ok {
		t.Errorf("bad tool file in B not reported naming %s and the unknown field; logs: %q", bad, logMessages(c, 0))
	}
	if strings.Contains(folderCfgSearch(t, c, ctx), "a20c_b_bad") {
		t.Errorf("an invalid tool file was not skipped")
	}

	// mcp.json of B: add a second server, then drop the first.
	b2 := "a20c-marker-b2-" + fmt.Sprint(time.Now().UnixNano())
	reapProcessesWithArg(t, b2)
	entry := func(marker string) map[string]any {
		return map[string]any{"command": "./bin/a20c-srv", "args": []any{"${workspaceFolder}", marker}, "env": map[string]any{"A20C_DIR": "${workspaceFolder}"}}
	}
	cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{b.server(): entry(b.marker), "a20cbtwo": entry(b2)}})
	writeFile(t, filepath.Join(b.dir, ".agentls", "mcp.json"), string(cfg))
	if !waitUntil(15*time.Second, func() bool { return strings.Contains(folderCfgSearch(t, c, ctx), "a20cbtwo__where") }) {
		t.Fatalf("server added to B's mcp.json not found by tool_search")
	}
	r := c.CallTool(ctx, "a20cbtwo__where", map[string]any{})
	if r.IsError {
		t.Fatalf("a20cbtwo__where: %s", r.Text())
	}
	if info := folderCfgWhere(t, "added B server", r.Text()); info.Cwd != b.dir || info.Env != b.dir {
		t.Errorf("server added live to B's mcp.json runs in %q with ${workspaceFolder}=%q, want %q", info.Cwd, info.Env, b.dir)
	}
	cfg, _ = json.Marshal(map[string]any{"servers": map[string]any{"a20cbtwo": entry(b2)}})
	writeFile(t, filepath.Join(b.dir, ".agentls", "mcp.json"), string(cfg))
	if !waitUntil(10*time.Second, func() bool { return b.procs() == 0 }) {
		t.Errorf("server removed from B's mcp.json still running: %v", processesWithArg(b.marker))
	}
	if !waitUntil(5*time.Second, func() bool { _, ok := folderCfgList(t, c, ctx, true)[b.upstream()]; return !ok }) {
		t.Errorf("%s still listed after its server left B's mcp.json", b.upstream())
	}
	if len(processesWithArg(b2)) == 0 {
		t.Errorf("the unchanged server a20cbtwo stopped when another entry was removed")
	}
}

// TestFoldersConfigPathRules: a folder's path rules hold for that folder's
// files, anchored at its root (also in grep results); the editor's path
// rules are relative to each folder alike.
func TestFoldersConfigPathRules(t *testing.T) {
	t.Parallel()
	files := func(who string) map[string]string {
		return map[string]string{"x.txt": "a20c-needle " + who + " x\n", "y.txt": "a20c-needle " + who + " y\n"}
	}
	a := folderCfgNewFolder(t, "a", "servers", `{"permissions": {"deny": ["Read(./x.txt)"]}}`, files("A"))
	b := folderCfgNewFolder(t, "b", "servers", "", files("B"))
	c, ctx := folderCfgStart(t, map[string]any{"permissions": map[string]any{"deny": []any{"Read(./y.txt)"}}}, a, b)
	cases := []struct {
		name, path string
		denied     bool
		want       string
	}{
		{"A's rule on A's file", filepath.Join(a.dir, "x.txt"), true, "Read(./x.txt)"},
		{"A's rule not on B's file", filepath.Join(b.dir, "x.txt"), false, "a20c-needle B x"},
		{"editor rule on A's file", filepath.Join(a.dir, "y.txt"), true, "Read(./y.txt)"},
		{"editor rule on B's file", filepath.Join(b.dir, "y.txt"), true, "Read(./y.txt)"},
	}
	for _, tc := range cases {
		r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
		wantResult(t, tc.name, r, tc.denied, tc.want)
	}
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "a20c-needle"})
	wantContains(t, "grep over both folders", r.Text(), "a20c-needle B x")
	wantLacks(t, "grep over both folders", r.Text(), "a20c-needle A x", "a20c-needle A y", "a20c-needle B y")
}

// TestFoldersConfigAddedLater: a folder added after start brings its
// settings (an invalid settings.local.json is reported naming it, its
// valid settings.json applies to the next call), tools and servers; what
// the model read there is forgotten when it is removed and added again.
func TestFoldersConfigAddedLater(t *testing.T) {
	t.Parallel()
	const denied = "echo a20c-b-denied now"
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "mcpServers", `{"permissions": {"deny": ["Bash(echo a20c-b-denied:*)"]}}`, map[string]string{
		".agentls/settings.local.json": `{"permissions": {"allow": [`,
		"f.txt":                        "a20c B f\n",
	})
	c, ctx := folderCfgStart(t, bypassOptions(), a)
	wantResult(t, "bash before B is added", c.CallTool(ctx, "bash", map[string]any{"command": denied}), false, "a20c-b-denied now")
	wantLacks(t, "tool_search before B is added", folderCfgSearch(t, c, ctx), b.ext(), b.upstream())

	t0 := time.Now()
	folderCfgChange(t, c, ctx, []folderCfgFolder{b}, nil)
	wantResult(t, "B's deny rule on the first call after B was added", c.CallTool(ctx, "bash", map[string]any{"command": denied}), true, "Bash(echo a20c-b-denied:*)")
	local := filepath.Join(b.dir, ".agentls", "settings.local.json")
	if _, ok := folderCfgLogSince(c, t0, 5*time.Second, local); !ok {
		t.Errorf("B's invalid settings.local.json not reported naming %s; logs: %q", local, logMessages(c, 0))
	}
	if !waitUntil(15*time.Second, func() bool {
		txt := folderCfgSearch(t, c, ctx)
		return strings.Contains(txt, b.ext()) && strings.Contains(txt, b.upstream())
	}) {
		t.Fatalf("added folder B's tools not found by tool_search")
	}
	r := c.CallTool(ctx, b.upstream(), map[string]any{})
	if r.IsError {
		t.Fatalf("%s: %s", b.upstream(), r.Text())
	}
	folderCfgCheckWhere(t, b, folderCfgWhere(t, "B upstream added later", r.Text()))

	// Read in B, remove B, add it back: the read is forgotten.
	f := filepath.Join(b.dir, "f.txt")
	wantResult(t, "read B/f.txt", c.CallTool(ctx, "read", map[string]any{"path": f}), false, "a20c B f")
	folderCfgChange(t, c, ctx, nil, []folderCfgFolder{b})
	folderCfgChange(t, c, ctx, []folderCfgFolder{b}, nil)
	r = c.CallTool(ctx, "edit", editCall(f, "a20c B f", "a20c B g"))
	wantResult(t, "edit after B was removed and re-added without a new read", r, true, "read")
	if got := readFile(t, f); got != "a20c B f\n" {
		t.Errorf("file changed by a refused edit: %q", got)
	}
}

// TestFoldersConfigRemoveFirstFolder: removing the first folder takes its
// configuration along like any other folder's (tools, server, rules,
// limits) and the second folder becomes the one relative paths resolve in.
func TestFoldersConfigRemoveFirstFolder(t *testing.T) {
	t.Parallel()
	const denied = "echo a20c-a-denied now"
	a := folderCfgNewFolder(t, "a", "servers", `{"permissions": {"deny": ["Bash(echo a20c-a-denied:*)"]}, "limits": {"readLines": 7}}`, map[string]string{"f.txt": numberedLines(20, func(i int) string { return fmt.Sprintf("a20c A %d", i) })})
	b := folderCfgNewFolder(t, "b", "servers", "", map[string]string{"f.txt": numberedLines(20, func(i int) string { return fmt.Sprintf("a20c B %d", i) })})
	c, ctx := folderCfgStart(t, bypassOptions(), a, b)
	folderCfgSearch(t, c, ctx)
	wantResult(t, "A's upstream", c.CallTool(ctx, a.upstream(), map[string]any{}), false, "a20c-where")
	wantResult(t, "A's deny rule", c.CallTool(ctx, "bash", map[string]any{"command": denied}), true, "Bash(echo a20c-a-denied:*)")
	wantResult(t, "relative read with A first", c.CallTool(ctx, "read", map[string]any{"path": "f.txt"}), false, "a20c A 1", "lines 1-5 of 20")

	folderCfgChange(t, c, ctx, nil, []folderCfgFolder{a})
	wantResult(t, "relative read after A was removed", c.CallTool(ctx, "read", map[string]any{"path": "f.txt"}), false, "a20c B 1", "lines 1-20 of 20")
	wantResult(t, "A's deny rule after A was removed", c.CallTool(ctx, "bash", map[string]any{"command": denied}), false, "a20c-a-denied now")
	if !waitUntil(10*time.Second, func() bool { return a.procs() == 0 }) {
		t.Errorf("A's upstream still running after A was removed: %v", processesWithArg(a.marker))
	}
	l := folderCfgList(t, c, ctx, true)
	for _, n := range []string{a.ext(), a.upstream()} {
		if _, ok := l[n]; ok {
			t.Errorf("%s still listed after A was removed", n)
		}
	}
	for _, n := range []string{b.ext(), b.upstream()} {
		if _, ok := l[n]; !ok {
			t.Errorf("%s left the list when A was removed", n)
		}
	}
	r := c.CallTool(ctx, b.upstream(), map[string]any{})
	folderCfgCheckWhere(t, b, folderCfgWhere(t, "B upstream after A removed", r.Text()))
}

// TestFoldersConfigUserServer: a server from the user's mcp.json runs in the
// first folder, its relative command and ${workspaceFolder} resolved there.
func TestFoldersConfigUserServer(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", "", nil)
	cfgHome := t.TempDir()
	marker := fmt.Sprintf("a20c-marker-user-%d", time.Now().UnixNano())
	reapProcessesWithArg(t, marker)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"a20cuser": map[string]any{
		"command": "./bin/a20c-srv", "args": []any{"${workspaceFolder}", marker}, "env": map[string]any{"A20C_DIR": "${workspaceFolder}"},
	}}})
	writeFile(t, filepath.Join(cfgHome, "agentls", "mcp.json"), string(cfg))
	c, ctx := folderCfgStartEnv(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, bypassOptions(), a, b)
	wantContains(t, "tool_search", folderCfgSearch(t, c, ctx), "a20cuser__where")
	r := c.CallTool(ctx, "a20cuser__where", map[string]any{})
	if r.IsError {
		t.Fatalf("a20cuser__where: %s", r.Text())
	}
	info := folderCfgWhere(t, "user server", r.Text())
	want := folderCfgFolder{dir: a.dir, name: "user", marker: marker}
	if info.Cwd != want.dir || info.Env != want.dir || len(info.Argv) == 0 || info.Argv[0] != want.dir || info.Script != filepath.Join(a.dir, "bin", "a20c-srv") {
		t.Errorf("user's server: %+v, want it run in the first folder %s", info, a.dir)
	}
}

// TestFoldersConfigFolderCannotLift: the second folder's settings obey the
// same limits as the first's: a workspace file cannot select bypass nor
// lift a built-in ask; its command allow rules hold for the session while
// the folder is there, and stop when it is removed.
func TestFoldersConfigFolderCannotLift(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", `{"mode": "bypass", "permissions": {"allow": ["Read(./.env)", "Bash(touch:*)"]}}`, map[string]string{".env": "A20C_TOKEN=a20c-plain-value\n"})
	c, ctx := folderCfgStart(t, nil, a, b) // default mode, no confirm capability: an ask is a denial
	r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(b.dir, ".env")})
	wantResult(t, "B's allow rule on its .env (built-in ask)", r, true, "approval")
	wantLacks(t, "B's .env", r.Text(), "a20c-plain-value")
	r = c.CallTool(ctx, "write", map[string]any{"path": filepath.Join(b.dir, "new.txt"), "content": "x\n"})
	wantResult(t, "write with B's mode bypass (not selectable by a workspace file)", r, true, "approval")
	if _, err := os.Stat(filepath.Join(b.dir, "new.txt")); err == nil {
		t.Errorf("write ran under a workspace file's bypass")
	}
	touch := "touch " + filepath.Join(a.dir, "a20c-touched")
	wantResult(t, "B's Bash(touch:*) allow rule", c.CallTool(ctx, "bash", map[string]any{"command": touch}), false)
	folderCfgChange(t, c, ctx, nil, []folderCfgFolder{b})
	touch2 := "touch " + filepath.Join(a.dir, "a20c-touched2")
	wantResult(t, "B's allow rule after B was removed", c.CallTool(ctx, "bash", map[string]any{"command": touch2}), true, "approval")
	if _, err := os.Stat(filepath.Join(a.dir, "a20c-touched2")); err == nil {
		t.Errorf("command ran under a removed folder's allow rule")
	}
}

// TestFoldersConfigDuplicateNames: two folders declaring a server, or an
// extension tool, of the same name. The docs say a tool "whose name is
// taken … is not offered, and window/logMessage says so" and that a server
// runs in "the workspace folder whose .agentls/mcp.json declares it": a
// declaration that is not honoured must be reported, not dropped silently.
func TestFoldersConfigDuplicateNames(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", "", nil)
	for _, f := range []folderCfgFolder{a, b} {
		cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{"a20cdup": map[string]any{
			"command": "./bin/a20c-srv", "args": []any{"${workspaceFolder}", f.marker}, "env": map[string]any{"A20C_DIR": "${workspaceFolder}"},
		}}})
		writeFile(t, filepath.Join(f.dir, ".agentls", "mcp.json"), string(cfg))
		ext, _ := json.Marshal(map[string]any{"name": "a20c_dup_ext", "description": "a20c duplicate tool", "inputSchema": map[string]any{"type": "object"}, "command": "echo a20c-dup-" + f.name, "readOnly": true})
		writeFile(t, filepath.Join(f.dir, ".agentls", "tools", "a20c_dup_ext.json"), string(ext))
	}
	c, ctx := folderCfgStart(t, bypassOptions(), a, b)
	t0 := time.Now()
	txt := folderCfgSearch(t, c, ctx)
	t.Logf("tool_search took %v:\n%s", time.Since(t0).Round(time.Millisecond), txt)
	if !strings.Contains(txt, "a20cdup__where") || !strings.Contains(txt, "a20c_dup_ext") {
		t.Fatalf("duplicates not offered at all:\n%s", txt)
	}
	r := c.CallTool(ctx, "a20cdup__where", map[string]any{})
	info := folderCfgWhere(t, "dup server", r.Text())
	t.Logf("a20cdup__where runs in %s (A %s, B %s); processes A %v B %v", info.Cwd, a.dir, b.dir, processesWithArg(a.marker), processesWithArg(b.marker))
	t.Logf("a20c_dup_ext: %s", c.CallTool(ctx, "a20c_dup_ext", map[string]any{}).Text())
	for _, name := range []string{"a20cdup", "a20c_dup_ext"} {
		if _, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), name)
		}); !ok {
			t.Errorf("%s declared in both folders: no window/logMessage says one declaration is not used; logs: %q", name, logMessages(c, 0))
		}
	}
}
