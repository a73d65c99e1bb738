package e2e

// Multi-root workspaces in both protocols (docs/protocol.md folders and MCP
// roots; docs/tools.md "Paths": relative to the first workspace folder,
// absolute paths inside any folder accepted).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// rootsDirs is three sibling folders with symlinks resolved: A and B become
// workspace folders, C stays outside (it is --root, a decoy).
type rootsDirs struct{ A, B, C string }

func rootsNewDirs(t *testing.T) rootsDirs {
	t.Helper()
	base := resolvedWorkspace(t, nil)
	d := rootsDirs{A: filepath.Join(base, "alpha"), B: filepath.Join(base, "beta"), C: filepath.Join(base, "gamma")}
	writeFiles(t, d.A, map[string]string{"a.txt": "alpha only file\n", "same.txt": "same in ALPHA\n"})
	writeFiles(t, d.B, map[string]string{"b.txt": "beta only file\n", "same.txt": "same in BETA\n", "sub/deep.txt": "beta deep MARKER18\n"})
	writeFiles(t, d.C, map[string]string{"c.txt": "gamma outside file\n", "a.txt": "gamma decoy a\n", "same.txt": "same in GAMMA\n"})
	return d
}

// rootsFolder is p as an LSP WorkspaceFolder, which has the shape of an MCP
// Root too.
func rootsFolder(p string) map[string]any {
	return map[string]any{"uri": fileURI(p), "name": filepath.Base(p)}
}

// Files read in the second folder and in a folder added mid-session are
// watched: a change or deletion from outside is announced as readStale.
func TestRootsExternalChange(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	c, ctx := startIn(t, d.C, map[string]any{"workspaceFolders": nestedFolders(d.A, d.B), "initializationOptions": map[string]any{"mode": "acceptEdits"}})
	waitChange := func(p, kind string) {
		t.Helper()
		if !watchTreeWait(c, kind, true, p) {
			t.Fatalf("no workspace/externalChange {uri: %s, kind: %s, readStale}; got %+v", fileURI(p), kind, watchTreeChanges(c))
		}
	}
	p := filepath.Join(d.B, "b.txt")
	wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": p}), false)
	writeFile(t, p, "beta changed outside\n")
	waitChange(p, "changed")

	armed := len(c.Notes(harness.WatcherReady))
	nestedChange(t, ctx, c, []string{d.C}, nil)
	c.AwaitWatcher(armed + 1) // changes are announced once the watchers are armed for the new folder
	p, q := filepath.Join(d.C, "c.txt"), filepath.Join(d.C, "same.txt")
	wantResult(t, "read in the added folder", c.CallTool(ctx, "read", map[string]any{"path": p}), false, "gamma outside file")
	wantResult(t, "read in the added folder", c.CallTool(ctx, "read", map[string]any{"path": q}), false)
	writeFile(t, p, "gamma changed outside\n")
	waitChange(p, "changed")
	if err := os.Remove(q); err != nil {
		t.Fatal(err)
	}
	waitChange(q, "deleted")
}

// rootsMCP is an MCP session whose client answers roots/list with the roots
// it holds and counts those requests.
type rootsMCP struct {
	*mcpRawClient

	rootsMu    sync.Mutex // guards the fields below
	nextID     int
	roots      []map[string]any
	rootsAsked int
}

// rootsStartMCP runs `agentls mcp args...`; roots nil means the client does
// not declare the roots capability.
func rootsStartMCP(t *testing.T, roots []map[string]any, args ...string) (*rootsMCP, context.Context) {
	t.Helper()
	return rootsStartMCPIn(t, "", nil, roots, args...)
}

// rootsStartMCPIn is rootsStartMCP with env added to the process's, run in
// the working directory cwd ("": the test's).
func rootsStartMCPIn(t *testing.T, cwd string, env []string, roots []map[string]any, args ...string) (*rootsMCP, context.Context) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	cmd := harness.Command(t, append([]string{"mcp"}, args...), env...)
	cmd.Dir = cwd
	m := &rootsMCP{mcpRawClient: startMCPRawCmd(t, cmd), roots: roots}
	m.setHandler(m.answer)
	caps := map[string]any{}
	if roots != nil {
		caps["roots"] = map[string]any{"listChanged": true}
	}
	m.call(t, ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps, "clientInfo": map[string]any{"name": "roots-test", "version": "0"}})
	m.notify("notifications/initialized", map[string]any{})
	return m, ctx
}

// answer is the client's side of roots/list and ping; anything else is
// refused.
func (m *rootsMCP) answer(req mcpMsg) (any, int) {
	switch req.Method {
	case "roots/list":
		m.rootsMu.Lock()
		defer m.rootsMu.Unlock()
		m.rootsAsked++
		return map[string]any{"roots": append([]map[string]any{}, m.roots...)}, 0
	case "ping":
		return map[string]any{}, 0
	}
	return nil, -32601
}

func (m *rootsMCP) notify(method string, params any) {
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request with a fresh id and returns its result, failing t
// on an error reply or none before ctx's deadline.
func (m *rootsMCP) call(t *testing.T, ctx context.Context, method string, params any) json.RawMessage {
	t.Helper()
	m.rootsMu.Lock()
	m.nextID++
	id := m.nextID
	m.rootsMu.Unlock()
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	deadline, _ := ctx.Deadline()
	r, ok := m.reply(id, time.Until(deadline))
	if !ok {
		t.Fatalf("%s: no reply; got:\n%s", method, lastBytes(m.dump(), 4000))
	}
	if r.Error != nil {
		t.Fatalf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	return r.Result
}

func (m *rootsMCP) setRoots(roots []map[string]any) {
	m.rootsMu.Lock()
	m.roots = roots
	m.rootsMu.Unlock()
	m.notify("notifications/roots/list_changed", map[string]any{})
}

func (m *rootsMCP) asked() int {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	return m.rootsAsked
}

// tool calls a tool and returns the result as a harness.Result.
func (m *rootsMCP) tool(t *testing.T, ctx context.Context, name string, args any) harness.Result {
	t.Helper()
	raw := m.call(t, ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	var r harness.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("tools/call %s: %v in %s", name, err, raw)
	}
	return r
}

// The client's file roots define the workspace over --root (roots that are
// not file:// do not become folders): relative paths go to the first file
// root and a path outside them is refused. After
// notifications/roots/list_changed agentls asks roots/list again and the
// next call sees the new set. (How tools reach two folders:
// folders/two_folders_every_tool_reaches_both.txtar; a new root's settings
// and reads forgotten with a removed one: TestFolderConfigurationFollowsTheFolder.)
func TestRootsMCPClientRoots(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	writeFile(t, filepath.Join(d.A, ".agentls", "tools", "roots__probe.json"), folderCfgTool("roots__probe", "echo probe"))
	m, ctx := rootsStartMCP(t, []map[string]any{{"uri": "https://example.com/repo", "name": "web"}, rootsFolder(d.A), {"uri": "untitled:Untitled-1", "name": "untitled"}, rootsFolder(d.B)}, "--root", d.C)
	listed := func() string { return string(m.call(t, ctx, "tools/list", map[string]any{})) }
	read := func(what, path string, isError bool, text string) { // text is in a result, never in a refusal
		t.Helper()
		if r := m.tool(t, ctx, "read", map[string]any{"path": path}); r.IsError != isError || strings.Contains(r.Text(), text) == isError {
			t.Errorf("%s: isError=%v %q; want isError=%v, and %q only in a result", what, r.IsError, r.Text(), isError, text)
		}
	}
	read("relative in the first file root", "a.txt", false, "alpha only file")
	read("abs in the second file root", filepath.Join(d.B, "b.txt"), false, "beta only file")
	read("--root is outside", filepath.Join(d.C, "c.txt"), true, "gamma outside file")
	wantResult(t, "tool_search enables root A's tool", m.tool(t, ctx, "tool_search", map[string]any{"query": "roots probe"}), false, "roots__probe")
	wantContains(t, "tools/list with root A", listed(), `"roots__probe"`, `"title":"Probe (roots)"`)
	before := m.asked()
	if before == 0 {
		t.Errorf("agentls never sent roots/list to a client declaring roots")
	}

	m.setRoots([]map[string]any{rootsFolder(d.C)})
	read("the new root on the next call", filepath.Join(d.C, "c.txt"), false, "gamma outside file")
	if m.asked() <= before {
		t.Errorf("roots/list not asked again after list_changed (asked %d times)", m.asked())
	}
	read("a removed root", filepath.Join(d.A, "a.txt"), true, "alpha only file")
	read("relative now in the new root", "a.txt", false, "gamma decoy a")
	if !waitUntil(5*time.Second, func() bool { return !strings.Contains(listed(), "roots__probe") }) {
		t.Errorf("root A's extension tool still in tools/list after root A left")
	}
}

// A stray roots/list_changed from a client that never declared roots does
// not make agentls ask roots/list: --root stays the workspace. (Not asked
// at start: internal/mcp TestRootsAskedOnlyWhenDeclared.)
func TestRootsMCPNoRootsCapability(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, nil, "--root", d.C)
	m.notify("notifications/roots/list_changed", map[string]any{})
	wantResult(t, "relative in --root", m.tool(t, ctx, "read", map[string]any{"path": "c.txt"}), false, "gamma outside file")
	r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")})
	wantResult(t, "outside --root", r, true)
	wantLacks(t, "outside --root", r.Text(), "alpha only file")
	if n := m.asked(); n != 0 {
		t.Errorf("roots/list sent %d times to a client without the roots capability", n)
	}
}
