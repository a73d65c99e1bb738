package e2e

// Per-folder configuration in multi-root workspaces and its live reload
// (docs/protocol.md: "the configuration follows the folders"; docs/tools.md
// extension tools, upstream MCP servers, permissions, limits). Every folder
// here carries its own .agentls/tools/*.json tool and its own
// .agentls/mcp.json server (a python script in the folder, started by a
// relative command).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// folderCfgServerPy is a stdio MCP server with one read-only tool, "where",
// answering where the process runs: its working directory, the real path of
// its script, its arguments and $FC_DIR.
const folderCfgServerPy = `#!/usr/bin/env python3
import sys, json, os
def send(rid, **kw): print(json.dumps(dict(jsonrpc="2.0", id=rid, **kw)), flush=True)
for line in sys.stdin:
    try: msg = json.loads(line)
    except Exception: continue
    m, rid = msg.get("method"), msg.get("id")
    if m == "initialize": send(rid, result={"protocolVersion": (msg.get("params") or {}).get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "fc", "version": "1"}})
    elif m == "tools/list": send(rid, result={"tools": [{"name": "where", "description": "fcfg upstream tool reporting the working directory it runs in", "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}]})
    elif m == "tools/call": send(rid, result={"content": [{"type": "text", "text": "fc-where " + json.dumps({"cwd": os.getcwd(), "script": os.path.realpath(sys.argv[0]), "argv": sys.argv[1:], "env": os.environ.get("FC_DIR", "<unset>"), "pid": os.getpid()})}]})
    elif m == "ping": send(rid, result={})
    elif rid is not None: send(rid, error={"code": -32601, "message": "no " + str(m)})
`

// folderCfgFolder is one workspace folder with its own configuration.
type folderCfgFolder struct {
	dir    string // symlinks resolved
	name   string // "a" or "b"
	marker string // a word on the upstream's command line
}

func (f folderCfgFolder) ext() string      { return "fcfg_" + f.name + "_ext" }
func (f folderCfgFolder) server() string   { return "fcfg" + f.name }
func (f folderCfgFolder) upstream() string { return f.server() + "__where" }
func (f folderCfgFolder) procs() int       { return len(processesWithArg(f.marker)) }

// folderCfgServer is an mcp.json entry starting the folder's server by the
// relative command ./bin/fc-srv, ${workspaceFolder} in its args and env.
func folderCfgServer(marker string) map[string]any {
	return map[string]any{"command": "./bin/fc-srv", "args": []any{"${workspaceFolder}", marker}, "env": map[string]any{"FC_DIR": "${workspaceFolder}"}}
}

// folderCfgTool is an extension tool file running command.
func folderCfgTool(name, command string) string {
	return compactJSON(map[string]any{"name": name, "description": "fcfg tool " + name + " that prints a greeting",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}, "command": command, "readOnly": true})
}

// folderCfgNewFolder makes folder name with files, an extension tool, an
// mcp.json (in the shape key: "servers" or "mcpServers") and, when settings
// is not "", .agentls/settings.json.
func folderCfgNewFolder(t *testing.T, name, key, settings string, files map[string]string) folderCfgFolder {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	f := folderCfgFolder{dir: resolvedWorkspace(t, files), name: name, marker: fmt.Sprintf("fc-marker-%s-%d", name, time.Now().UnixNano())}
	reapProcessesWithArg(t, f.marker)
	writeFile(t, filepath.Join(f.dir, "bin", "fc-srv"), folderCfgServerPy)
	if err := os.Chmod(filepath.Join(f.dir, "bin", "fc-srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.dir, ".agentls", "tools", f.ext()+".json"), folderCfgTool(f.ext(), "echo fc-ext-"+name+"-ran"))
	writeFile(t, filepath.Join(f.dir, ".agentls", "mcp.json"), compactJSON(map[string]any{key: map[string]any{f.server(): folderCfgServer(f.marker)}}))
	if settings != "" {
		writeFile(t, filepath.Join(f.dir, ".agentls", "settings.json"), settings)
	}
	return f
}

// folderCfgStart runs agentls in bypass mode on folders (the first one as
// --root too).
func folderCfgStart(t *testing.T, env []string, folders ...folderCfgFolder) (*harness.Client, context.Context) {
	t.Helper()
	var dirs []string
	for _, f := range folders {
		dirs = append(dirs, f.dir)
	}
	c := harness.Start(t, harness.Options{Root: folders[0].dir, Env: append([]string{"XDG_CACHE_HOME=" + t.TempDir()}, env...)})
	ctx := testCtx(t, 60*time.Second)
	c.Initialize(ctx, map[string]any{"workspaceFolders": nestedFolders(dirs...), "initializationOptions": bypassOptions()})
	return c, ctx
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
		out[tl["name"].(string)] = tl
	}
	return out
}

// folderCfgSearch is the text of tool_search {query: "fcfg", limit: 20}.
func folderCfgSearch(t *testing.T, call func(string, any) harness.Result) string {
	t.Helper()
	r := call("tool_search", map[string]any{"query": "fcfg", "limit": 20})
	if r.IsError {
		t.Fatalf("tool_search: %s", r.Text())
	}
	return r.Text()
}

// folderCfgFound waits until tool_search finds every one of names.
func folderCfgFound(t *testing.T, call func(string, any) harness.Result, names ...string) bool {
	t.Helper()
	return waitUntil(15*time.Second, func() bool {
		txt := folderCfgSearch(t, call)
		for _, n := range names {
			if !strings.Contains(txt, n) {
				return false
			}
		}
		return true
	})
}

// folderCfgWhereInfo is what the fake upstream's "where" tool reports.
type folderCfgWhereInfo struct {
	Cwd, Script, Env string
	Argv             []string
	Pid              int
}

// folderCfgWhere decodes the "where" tool's answer; when f is given, it
// asserts f's upstream runs in f, its relative command resolved there and
// ${workspaceFolder} expanded to f.
func folderCfgWhere(t *testing.T, text string, f ...folderCfgFolder) folderCfgWhereInfo {
	t.Helper()
	var info folderCfgWhereInfo
	if _, js, ok := strings.Cut(text, "fc-where "); !ok || json.Unmarshal([]byte(strings.TrimSpace(js)), &info) != nil {
		t.Fatalf("no where report in %q", text)
	}
	for _, f := range f {
		if info.Cwd != f.dir || info.Script != filepath.Join(f.dir, "bin", "fc-srv") || len(info.Argv) != 2 || info.Argv[0] != f.dir || info.Argv[1] != f.marker || info.Env != f.dir {
			t.Errorf("%s: %+v, want it run in and for its declaring folder %s", f.server(), info, f.dir)
		}
	}
	return info
}

func folderCfgListChangedSince(c *harness.Client, t0 time.Time) bool { // a tools/listChanged after t0
	_, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" && n.At.After(t0) })
	return ok
}

// Each folder's extension tool and upstream server (in either mcp.json
// shape) are found by tool_search (their deferral: tool_search_test.go); an
// upstream runs in the folder whose mcp.json declares it, and a server from
// the user's mcp.json runs in the first folder.
func TestFolderToolsAndServersRunInTheirFolder(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "mcpServers", "", nil)
	user := folderCfgFolder{dir: a.dir, name: "user", marker: fmt.Sprintf("fc-marker-user-%d", time.Now().UnixNano())}
	reapProcessesWithArg(t, user.marker)
	cfgHome := t.TempDir()
	writeFile(t, filepath.Join(cfgHome, "agentls", "mcp.json"), compactJSON(map[string]any{"mcpServers": map[string]any{user.server(): folderCfgServer(user.marker)}}))
	c, ctx := folderCfgStart(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, a, b)
	call := func(name string, args any) harness.Result { return c.CallTool(ctx, name, args) }

	if !folderCfgFound(t, call, a.ext(), a.upstream(), b.ext(), b.upstream(), user.upstream()) {
		t.Fatalf("tool_search does not find every folder's tools:\n%s", folderCfgSearch(t, call))
	}
	for _, f := range []folderCfgFolder{a, b, user} {
		folderCfgWhere(t, call(f.upstream(), map[string]any{}).Text(), f)
	}
	for _, f := range []folderCfgFolder{a, b} {
		wantResult(t, f.ext(), call(f.ext(), map[string]any{}), false, "fc-ext-"+f.name+"-ran")
	}
}

// A folder brings its configuration when added (its settings from the first
// call after, an invalid settings.local.json reported, its tools and
// server), takes it along when removed (tools leave tools/list with
// tools/listChanged, its rules end, its server stops) and brings it back
// when re-added, with what the model read there forgotten. Removing the
// first folder is no different, and the second becomes the one relative
// paths resolve in.
func TestFolderConfigurationFollowsTheFolder(t *testing.T) {
	t.Parallel()
	const deniedB, deniedA = "echo fc-b-denied now", "echo fc-a-denied now"
	a := folderCfgNewFolder(t, "a", "servers", `{"permissions": {"deny": ["Bash(echo fc-a-denied:*)"]}, "limits": {"readLines": 7}}`,
		map[string]string{"f.txt": numberedLines(20, func(i int) string { return fmt.Sprint("fc A ", i) })})
	b := folderCfgNewFolder(t, "b", "mcpServers", `{"permissions": {"deny": ["Bash(echo fc-b-denied:*)"]}}`, map[string]string{
		".agentls/settings.local.json": `{"permissions": {"allow": [`,
		"f.txt":                        numberedLines(20, func(i int) string { return fmt.Sprint("fc B ", i) }),
	})
	c, ctx := folderCfgStart(t, nil, a)
	call := func(name string, args any) harness.Result { return c.CallTool(ctx, name, args) }
	bash := func(cmd string) harness.Result { return call("bash", map[string]any{"command": cmd}) }
	wantResult(t, "B's rule before B is added", bash(deniedB), false, "fc-b-denied now")
	wantLacks(t, "tool_search before B is added", folderCfgSearch(t, call), b.ext(), b.upstream())

	t0 := time.Now()
	nestedChange(t, ctx, c, []string{b.dir}, nil)
	wantResult(t, "B's deny rule on the first call after B was added", bash(deniedB), true, "Bash(echo fc-b-denied:*)")
	local := filepath.Join(b.dir, ".agentls", "settings.local.json")
	if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && n.At.After(t0) && strings.Contains(string(n.Params), local)
	}); !ok {
		t.Errorf("B's invalid settings.local.json not reported naming %s; logs: %q", local, logMessages(c, 0))
	}
	if !folderCfgFound(t, call, b.ext(), b.upstream()) {
		t.Fatalf("added folder B's tools not found by tool_search")
	}
	first := folderCfgWhere(t, call(b.upstream(), map[string]any{}).Text(), b)
	bFile := filepath.Join(b.dir, "f.txt")
	wantResult(t, "read B/f.txt", call("read", map[string]any{"path": bFile}), false, "fc B 1")

	t0 = time.Now()
	nestedChange(t, ctx, c, nil, []string{b.dir})
	if !folderCfgListChangedSince(c, t0) {
		t.Errorf("no tools/listChanged after B (with active tools) was removed")
	}
	if !waitUntil(10*time.Second, func() bool { l := folderCfgList(t, c, ctx, true); return l[b.ext()] == nil && l[b.upstream()] == nil }) {
		t.Errorf("B's tools still listed after B was removed")
	}
	wantLacks(t, "tool_search after B removed", folderCfgSearch(t, call), b.ext(), b.upstream())
	wantResult(t, "B's upstream tool after B was removed", call(b.upstream(), map[string]any{}), true)
	wantResult(t, "B's deny rule after B was removed", bash(deniedB), false, "fc-b-denied now")
	if !waitUntil(10*time.Second, func() bool { return b.procs() == 0 }) {
		t.Errorf("B's upstream still running after B was removed: %v", processesWithArg(b.marker))
	}
	if a.procs() == 0 {
		t.Errorf("A's upstream stopped when B was removed")
	}

	nestedChange(t, ctx, c, []string{b.dir}, nil)
	if !folderCfgFound(t, call, b.ext(), b.upstream()) {
		t.Fatalf("B's tools not found by tool_search after B was added back")
	}
	if again := folderCfgWhere(t, call(b.upstream(), map[string]any{}).Text(), b); again.Pid == first.Pid {
		t.Errorf("B's upstream has the pid it had before removal (%d): it was never stopped", first.Pid)
	}
	wantResult(t, "B's deny rule after re-add", bash(deniedB), true, "Bash(echo fc-b-denied:*)")
	wantResult(t, "edit in B after re-add without a new read", call("edit", editCall(bFile, "fc B 1\n", "fc B one\n")), true, "read")

	wantResult(t, "relative read with A first", call("read", map[string]any{"path": "f.txt"}), false, "fc A 1", "lines 1-5 of 20")
	nestedChange(t, ctx, c, nil, []string{a.dir})
	wantResult(t, "relative read after A was removed", call("read", map[string]any{"path": "f.txt"}), false, "fc B 1", "lines 1-20 of 20")
	wantResult(t, "A's deny rule after A was removed", bash(deniedA), false, "fc-a-denied now")
	if !waitUntil(10*time.Second, func() bool { return a.procs() == 0 }) {
		t.Errorf("A's upstream still running after A was removed: %v", processesWithArg(a.marker))
	}
	l := folderCfgList(t, c, ctx, true)
	if l[a.ext()] != nil || l[a.upstream()] != nil || l[b.ext()] == nil || l[b.upstream()] == nil {
		t.Errorf("after A was removed: A's tools listed %v %v, B's %v %v", l[a.ext()] != nil, l[a.upstream()] != nil, l[b.ext()] != nil, l[b.upstream()] != nil)
	}
}

// Limits in a folder's settings file hold for the whole session's built-in
// tools (enforced and stated in read's description); the first folder's win
// over a later one's, the editor's over every file's. (Lifted when the
// folder is removed: TestFolderConfigurationFollowsTheFolder.)
func TestFolderLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		la, lb, want int // 0: no limits in the folder's settings
		editor       map[string]any
	}{
		{"only B", 0, 7, 7, bypassOptions()},
		{"the first folder wins", 5, 7, 5, bypassOptions()},
		{"the editor wins", 5, 7, 11, map[string]any{"mode": "bypass", "limits": map[string]any{"readLines": 11}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dirs []string
			for _, n := range []int{tc.la, tc.lb} {
				files := map[string]string{"twenty.txt": numberedLines(20, func(i int) string { return fmt.Sprint("fc line ", i) })}
				if n != 0 {
					files[".agentls/settings.json"] = fmt.Sprintf(`{"limits": {"readLines": %d}}`, n)
				}
				dirs = append(dirs, resolvedWorkspace(t, files))
			}
			c, ctx := startIn(t, dirs[0], map[string]any{"workspaceFolders": nestedFolders(dirs...), "initializationOptions": tc.editor})
			for _, d := range dirs { // the header and notice count: want-2 lines shown
				wantResult(t, "read in "+d, c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(d, "twenty.txt")}), false,
					fmt.Sprintf("lines 1-%d of 20", tc.want-2), fmt.Sprintf("offset=%d", tc.want-1))
			}
			d, _ := folderCfgList(t, c, ctx, false)["read"]["description"].(string)
			wantContains(t, "read description", d, fmt.Sprintf("%d lines", tc.want))
		})
	}
}

// The second folder's .agentls/tools and .agentls/mcp.json are watched like
// the first's: a new tool file is found, a removed one leaves the list with
// tools/listChanged, and an edited mcp.json starts the new server there and
// stops only the removed one.
func TestFolderToolAndServerFilesReloadLive(t *testing.T) {
	slow(t)
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", "", nil)
	c, ctx := folderCfgStart(t, nil, a, b)
	call := func(name string, args any) harness.Result { return c.CallTool(ctx, name, args) }
	folderCfgSearch(t, call)
	tools := filepath.Join(b.dir, ".agentls", "tools")

	writeFile(t, filepath.Join(tools, "fcfg_b_new.json"), folderCfgTool("fcfg_b_new", "echo fc-b-new-ran"))
	if !folderCfgFound(t, call, "fcfg_b_new") {
		t.Errorf("a tool file added to B's .agentls/tools is not found by tool_search")
	} else {
		wantResult(t, "new B tool", call("fcfg_b_new", map[string]any{}), false, "fc-b-new-ran")
	}
	t0 := time.Now()
	os.Remove(filepath.Join(tools, b.ext()+".json"))
	if !folderCfgListChangedSince(c, t0) || !waitUntil(5*time.Second, func() bool { return folderCfgList(t, c, ctx, true)[b.ext()] == nil }) {
		t.Errorf("B's removed tool file: no tools/listChanged, or %s still listed", b.ext())
	}

	b2 := fmt.Sprint("fc-marker-b2-", time.Now().UnixNano())
	reapProcessesWithArg(t, b2)
	mcpJSON := filepath.Join(b.dir, ".agentls", "mcp.json")
	writeFile(t, mcpJSON, compactJSON(map[string]any{"servers": map[string]any{b.server(): folderCfgServer(b.marker), "fcfgbtwo": folderCfgServer(b2)}}))
	if !folderCfgFound(t, call, "fcfgbtwo__where") {
		t.Fatalf("server added to B's mcp.json not found by tool_search")
	}
	if info := folderCfgWhere(t, call("fcfgbtwo__where", map[string]any{}).Text()); info.Cwd != b.dir || info.Env != b.dir {
		t.Errorf("server added live to B's mcp.json runs in %q with ${workspaceFolder}=%q, want %q", info.Cwd, info.Env, b.dir)
	}
	writeFile(t, mcpJSON, compactJSON(map[string]any{"servers": map[string]any{"fcfgbtwo": folderCfgServer(b2)}}))
	if !waitUntil(10*time.Second, func() bool { return b.procs() == 0 }) {
		t.Errorf("server removed from B's mcp.json still running")
	}
	if !waitUntil(5*time.Second, func() bool { return folderCfgList(t, c, ctx, true)[b.upstream()] == nil }) {
		t.Errorf("%s still listed after its server left B's mcp.json", b.upstream())
	}
	if len(processesWithArg(b2)) == 0 {
		t.Errorf("the unchanged server fcfgbtwo stopped when another entry was removed")
	}
}

// The editor's path rules are relative to each folder alike, in grep
// results too. (A folder's own rules, anchored at its root:
// folders/settings_of_each_folder.txtar.)
func TestFolderPathRulesAnchorAtTheirFolder(t *testing.T) {
	t.Parallel()
	files := func(who string) map[string]string {
		return map[string]string{"x.txt": "fc-needle " + who + " x\n", "y.txt": "fc-needle " + who + " y\n"}
	}
	a, b := resolvedWorkspace(t, files("A")), resolvedWorkspace(t, files("B"))
	c, ctx := startIn(t, a, map[string]any{"workspaceFolders": nestedFolders(a, b), "initializationOptions": map[string]any{"permissions": map[string]any{"deny": []any{"Read(./y.txt)"}}}})
	for _, d := range []string{a, b} {
		wantResult(t, "editor rule in "+d, c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(d, "y.txt")}), true, "Read(./y.txt)")
	}
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "fc-needle"}).Text()
	wantContains(t, "grep over both folders", r, "fc-needle A x", "fc-needle B x")
	wantLacks(t, "grep over both folders", r, "fc-needle A y", "fc-needle B y")
}

// The second folder's settings obey the same limits as the first's: a
// workspace file cannot select bypass nor lift a built-in ask; its command
// allow rules hold while the folder is there, and stop when it is removed.
func TestSecondFolderCannotLiftProtection(t *testing.T) {
	t.Parallel()
	a := resolvedWorkspace(t, nil)
	b := resolvedWorkspace(t, map[string]string{".env": "FC_TOKEN=fc-plain-value\n",
		".agentls/settings.json": `{"mode": "bypass", "permissions": {"allow": ["Read(./.env)", "Bash(touch:*)"]}}`})
	c, ctx := startIn(t, a, map[string]any{"workspaceFolders": nestedFolders(a, b)}) // default mode, no confirm capability: an ask is a refusal
	r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(b, ".env")})
	wantResult(t, "B's allow rule on its .env (a built-in ask)", r, true, "approval")
	wantLacks(t, "B's .env", r.Text(), "fc-plain-value")
	wantResult(t, "write under B's mode bypass", c.CallTool(ctx, "write", map[string]any{"path": filepath.Join(b, "new.txt"), "content": "x\n"}), true, "approval")
	wantResult(t, "B's Bash(touch:*) allow rule", c.CallTool(ctx, "bash", map[string]any{"command": "touch " + filepath.Join(a, "t1")}), false)
	nestedChange(t, ctx, c, nil, []string{b})
	wantResult(t, "B's allow rule after B was removed", c.CallTool(ctx, "bash", map[string]any{"command": "touch " + filepath.Join(a, "t2")}), true, "approval")
	if _, err := os.Stat(filepath.Join(a, "t2")); err == nil {
		t.Errorf("command ran under a removed folder's allow rule")
	}
}

// Two folders declaring a server, or an extension tool, of the same name:
// one is offered, and the declaration not honoured is reported in
// window/logMessage, not dropped silently.
func TestDuplicateDeclarationsAcrossFoldersAreReported(t *testing.T) {
	t.Parallel()
	a := folderCfgNewFolder(t, "a", "servers", "", nil)
	b := folderCfgNewFolder(t, "b", "servers", "", nil)
	for _, f := range []folderCfgFolder{a, b} {
		writeFile(t, filepath.Join(f.dir, ".agentls", "mcp.json"), compactJSON(map[string]any{"servers": map[string]any{"fcfgdup": folderCfgServer(f.marker)}}))
		writeFile(t, filepath.Join(f.dir, ".agentls", "tools", "fcfg_dup_ext.json"), folderCfgTool("fcfg_dup_ext", "echo fc-dup-"+f.name))
	}
	c, ctx := folderCfgStart(t, nil, a, b)
	call := func(name string, args any) harness.Result { return c.CallTool(ctx, name, args) }
	wantContains(t, "tool_search", folderCfgSearch(t, call), "fcfgdup__where", "fcfg_dup_ext")
	folderCfgWhere(t, call("fcfgdup__where", map[string]any{}).Text())
	for _, name := range []string{"fcfgdup", "fcfg_dup_ext"} {
		if _, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), name)
		}); !ok {
			t.Errorf("%s declared in both folders: no window/logMessage says one declaration is not used; logs: %q", name, logMessages(c, 0))
		}
	}
}
