package e2e

// Multi-root workspaces in both protocols (docs/protocol.md folders and MCP
// roots; docs/tools.md "Paths": relative to the first workspace folder,
// absolute paths inside any folder accepted).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
	writeFiles(t, d.A, map[string]string{
		"a.txt":    "alpha only file\n",
		"same.txt": "same in ALPHA\n",
	})
	writeFiles(t, d.B, map[string]string{
		"b.txt":        "beta only file\n",
		"same.txt":     "same in BETA\n",
		"sub/deep.txt": "beta deep MARKER18\n",
	})
	writeFiles(t, d.C, map[string]string{
		"c.txt":    "gamma outside file\n",
		"a.txt":    "gamma decoy a\n",
		"same.txt": "same in GAMMA\n",
	})
	return d
}

// rootsFolder is p as an LSP WorkspaceFolder, which has the shape of an MCP
// Root too.
func rootsFolder(p string) map[string]any {
	return map[string]any{"uri": fileURI(p), "name": filepath.Base(p)}
}

// rootsStart starts agentls with --root C and workspaceFolders folders.
func rootsStart(t *testing.T, d rootsDirs, folders ...string) (*harness.Client, context.Context) {
	t.Helper()
	var fs []any
	for _, f := range folders {
		fs = append(fs, rootsFolder(f))
	}
	return startIn(t, d.C, map[string]any{
		"workspaceFolders":      fs,
		"initializationOptions": map[string]any{"mode": "acceptEdits"},
	})
}

func rootsChangeFolders(t *testing.T, ctx context.Context, c *harness.Client, added, removed []string) {
	t.Helper()
	add, rem := []any{}, []any{}
	for _, f := range added {
		add = append(add, rootsFolder(f))
	}
	for _, f := range removed {
		rem = append(rem, rootsFolder(f))
	}
	armed := len(c.Notes(harness.WatcherReady))
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{
		"event": map[string]any{"added": add, "removed": rem},
	}); err != nil {
		t.Fatal(err)
	}
	if len(added) > 0 {
		// External changes are announced once the watchers are armed
		// again for the new folders (agentls/watcherReady).
		c.AwaitWatcher(armed + 1)
	}
}

// rootsMatchPaths is the distinct paths of grep's `path:line: text` lines.
func rootsMatchPaths(text string) []string {
	re := regexp.MustCompile(`^(.+?):(\d+): `)
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if m := re.FindStringSubmatch(l); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// Every tool reaches files in both folders; relative paths and bash resolve
// against the first folder (docs/tools.md), and workspaceFolders win over
// --root.
func TestRootsTwoFolders(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	c, ctx := rootsStart(t, d, d.A, d.B)

	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		wants   []string
		lacks   []string
	}{
		{"read abs in A", "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}, false, []string{"alpha only file"}, nil},
		{"read abs in B", "read", map[string]any{"path": filepath.Join(d.B, "b.txt")}, false, []string{"beta only file"}, nil},
		{"read abs deep in B", "read", map[string]any{"path": filepath.Join(d.B, "sub", "deep.txt")}, false, []string{"beta deep MARKER18"}, nil},
		{"read file URI in B", "read", map[string]any{"path": fileURI(filepath.Join(d.B, "b.txt"))}, false, []string{"beta only file"}, nil},
		{"relative resolves in first folder", "read", map[string]any{"path": "a.txt"}, false, []string{"alpha only file"}, []string{"gamma decoy"}},
		{"ambiguous relative takes first folder", "read", map[string]any{"path": "same.txt"}, false, []string{"same in ALPHA"}, []string{"same in BETA", "same in GAMMA"}},
		{"ls B", "ls", map[string]any{"path": d.B}, false, []string{"b.txt", "same.txt", "sub/"}, []string{"a.txt"}},
		{"ls A", "ls", map[string]any{"path": d.A}, false, []string{"a.txt", "same.txt"}, []string{"b.txt"}},
		{"grep in B", "grep", map[string]any{"pattern": "MARKER18", "path": d.B}, false, []string{"deep.txt", "beta deep MARKER18"}, nil},
		{"find in B", "find", map[string]any{"pattern": "*.txt", "path": d.B}, false, []string{"b.txt", "deep.txt"}, []string{"a.txt"}},
		{"bash runs in the first folder", "bash", map[string]any{"command": "pwd"}, false, []string{d.A}, nil},
		{"bash cwd inside B", "bash", map[string]any{"command": "pwd", "cwd": filepath.Join(d.B, "sub")}, false, []string{filepath.Join(d.B, "sub")}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			wantResult(t, tc.name, r, tc.isError, tc.wants...)
			wantLacks(t, tc.name, r.Text(), tc.lacks...)
		})
	}

	t.Run("edit in B after read", func(t *testing.T) {
		p := filepath.Join(d.B, "b.txt")
		wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": p}), false)
		r := c.CallTool(ctx, "edit", editCall(p, "beta only", "beta EDITED"))
		wantResult(t, "edit B", r, false)
		if got := readFile(t, p); got != "beta EDITED file\n" {
			t.Errorf("B/b.txt = %q", got)
		}
	})

	t.Run("read stamp of A/same.txt does not cover B/same.txt", func(t *testing.T) {
		wantResult(t, "read rel", c.CallTool(ctx, "read", map[string]any{"path": "same.txt"}), false, "same in ALPHA")
		pb := filepath.Join(d.B, "same.txt")
		r := c.CallTool(ctx, "edit", editCall(pb, "BETA", "CHANGED"))
		wantResult(t, "edit unread B/same.txt", r, true, "read")
		if got := readFile(t, pb); got != "same in BETA\n" {
			t.Errorf("B/same.txt changed without a read: %q", got)
		}
	})

	t.Run("relative edit changes the first folder only", func(t *testing.T) {
		wantResult(t, "read rel", c.CallTool(ctx, "read", map[string]any{"path": "same.txt"}), false)
		r := c.CallTool(ctx, "edit", editCall("same.txt", "ALPHA", "ALPHA2"))
		wantResult(t, "edit rel", r, false)
		if got := readFile(t, filepath.Join(d.A, "same.txt")); got != "same in ALPHA2\n" {
			t.Errorf("A/same.txt = %q", got)
		}
		if got := readFile(t, filepath.Join(d.B, "same.txt")); got != "same in BETA\n" {
			t.Errorf("B/same.txt = %q", got)
		}
	})

	t.Run("write creates in B", func(t *testing.T) {
		p := filepath.Join(d.B, "new", "made.txt")
		wantResult(t, "write", c.CallTool(ctx, "write", map[string]any{"path": p, "content": "made\n"}), false)
		if got := readFile(t, p); got != "made\n" {
			t.Errorf("B/new/made.txt = %q", got)
		}
	})
}

// a path in neither folder, `..` escapes and
// symlinks leaving every folder are refused; a symlink from B into A is
// inside the workspace.
func TestRootsOutside(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	symlink(t, filepath.Join(d.C, "c.txt"), filepath.Join(d.B, "out.txt"))
	symlink(t, d.C, filepath.Join(d.B, "outdir"))
	symlink(t, filepath.Join(d.A, "a.txt"), filepath.Join(d.B, "to_a.txt"))
	c, ctx := rootsStart(t, d, d.A, d.B)

	refused := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read abs in C (the --root)", "read", map[string]any{"path": filepath.Join(d.C, "c.txt")}},
		{"read dotdot from B to C", "read", map[string]any{"path": d.B + "/../gamma/c.txt"}},
		{"read relative dotdot", "read", map[string]any{"path": "../gamma/c.txt"}},
		{"read symlink B->C file", "read", map[string]any{"path": filepath.Join(d.B, "out.txt")}},
		{"read through symlinked dir B->C", "read", map[string]any{"path": filepath.Join(d.B, "outdir", "c.txt")}},
		{"ls C", "ls", map[string]any{"path": d.C}},
		{"grep C", "grep", map[string]any{"pattern": "gamma", "path": d.C}},
		{"find C", "find", map[string]any{"pattern": "*.txt", "path": d.C}},
		{"write in C", "write", map[string]any{"path": filepath.Join(d.C, "new.txt"), "content": "x\n"}},
		{"bash cwd C", "bash", map[string]any{"command": "pwd", "cwd": d.C}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			wantResult(t, tc.name, r, true)
			wantLacks(t, tc.name, r.Text(), "gamma outside file")
		})
	}
	if _, err := os.Stat(filepath.Join(d.C, "new.txt")); err == nil {
		t.Errorf("write outside the folders created %s", filepath.Join(d.C, "new.txt"))
	}

	t.Run("outside message names the folders", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(d.C, "c.txt")})
		txt := r.Text()
		wantResult(t, "read C", r, true, "outside")
		for _, f := range []string{d.A, d.B} {
			if !strings.Contains(txt, f) && !strings.Contains(txt, filepath.Base(f)) {
				t.Errorf("refusal does not name folder %s:\n%s", f, txt)
			}
		}
	})

	t.Run("symlink from B into A is inside", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(d.B, "to_a.txt")})
		wantResult(t, "read B/to_a.txt", r, false, "alpha only file")
	})
}

// folder A's .gitignore hides nothing in
// folder B, and B's hides nothing in A.
func TestRootsIgnorePerFolder(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	writeFiles(t, d.A, map[string]string{".gitignore": "*.log\n", "a.log": "IGN18 alpha log\n", "a.tmp": "IGN18 alpha tmp\n"})
	writeFiles(t, d.B, map[string]string{".gitignore": "*.tmp\n", "b.log": "IGN18 beta log\n", "b.tmp": "IGN18 beta tmp\n"})
	c, ctx := rootsStart(t, d, d.A, d.B)

	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string
		lacks []string
	}{
		{"find all", "find", map[string]any{"pattern": "*.{log,tmp}"}, []string{"a.tmp", "b.log"}, []string{"a.log", "b.tmp"}},
		{"grep all", "grep", map[string]any{"pattern": "IGN18"}, []string{"IGN18 alpha tmp", "IGN18 beta log"}, []string{"IGN18 alpha log", "IGN18 beta tmp"}},
		{"find in B", "find", map[string]any{"pattern": "*.log", "path": d.B}, []string{"b.log"}, nil},
		{"grep in B", "grep", map[string]any{"pattern": "IGN18", "path": d.B}, []string{"IGN18 beta log"}, []string{"IGN18 beta tmp"}},
		{"ls B", "ls", map[string]any{"path": d.B}, []string{"b.log"}, []string{"b.tmp"}},
		{"ls A", "ls", map[string]any{"path": d.A}, []string{"a.tmp"}, []string{"a.log"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			wantResult(t, tc.name, r, false, tc.wants...)
			wantLacks(t, tc.name, r.Text(), tc.lacks...)
		})
	}
}

// each folder's .agentls/settings.json
// is read (docs/protocol.md: settings are read from the folders, and again
// from added ones); its deny rules apply to paths in that folder.
func TestRootsSettingsPerFolder(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	writeFiles(t, d.A, map[string]string{
		".agentls/settings.json": `{"permissions": {"deny": ["Read(adeny.txt)"]}}`,
		"adeny.txt":              "alpha denied\n",
	})
	writeFiles(t, d.B, map[string]string{
		".agentls/settings.json": `{"permissions": {"deny": ["Read(bdeny.txt)", "Read(/sub/anch.txt)", "Bash(echo settings18*)"]}}`,
		"bdeny.txt":              "beta denied\n",
		"sub/anch.txt":           "beta anchored\n",
	})
	writeFiles(t, d.C, map[string]string{
		".agentls/settings.json": `{"permissions": {"deny": ["Read(cdeny.txt)"]}}`,
		"cdeny.txt":              "gamma denied\n",
	})
	c, ctx := rootsStart(t, d, d.A, d.B)

	cases := []struct {
		name    string
		path    string
		isError bool
		wants   []string
	}{
		{"A's rule on A's file", filepath.Join(d.A, "adeny.txt"), true, []string{"adeny.txt"}},
		{"B's rule on B's file", filepath.Join(d.B, "bdeny.txt"), true, []string{"bdeny.txt"}},
		{"B's anchored rule on B/sub", filepath.Join(d.B, "sub", "anch.txt"), true, []string{"anch.txt"}},
		{"B's other file readable", filepath.Join(d.B, "b.txt"), false, []string{"beta only file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			wantResult(t, tc.name, r, tc.isError, tc.wants...)
			if tc.isError {
				wantLacks(t, tc.name, r.Text(), "denied\n", "anchored\n")
			}
		})
	}

	t.Run("B's tool rule applies", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "echo settings18"})
		wantResult(t, "bash denied by B's settings", r, true, "denied by the rule Bash(echo settings18*)", filepath.Join(d.B, ".agentls", "settings.json"))
	})

	t.Run("added folder's settings apply", func(t *testing.T) {
		rootsChangeFolders(t, ctx, c, []string{d.C}, nil)
		p := filepath.Join(d.C, "cdeny.txt")
		var r harness.Result
		ok := waitUntil(10*time.Second, func() bool {
			r = c.CallTool(ctx, "read", map[string]any{"path": p})
			return !strings.Contains(strings.ToLower(r.Text()), "outside")
		})
		if !ok {
			t.Fatalf("added folder C never became part of the workspace: %s", r.Text())
		}
		wantResult(t, "read C/cdeny.txt", r, true, "cdeny.txt")
		wantLacks(t, "read C/cdeny.txt", r.Text(), "gamma denied")
	})
}

// rootsWaitChange waits for workspace/externalChange of p with kind.
func rootsWaitChange(t *testing.T, c *harness.Client, p, kind string, readStale bool) {
	t.Helper()
	n, ok := c.WaitNote(8*time.Second, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" {
			return false
		}
		var v struct {
			URI  string `json:"uri"`
			Kind string `json:"kind"`
		}
		json.Unmarshal(n.Params, &v)
		return v.URI == fileURI(p) && v.Kind == kind
	})
	if !ok {
		var got []string
		for _, n := range c.Notes("workspace/externalChange") {
			got = append(got, string(n.Params))
		}
		t.Fatalf("no workspace/externalChange {uri: %s, kind: %s}; got %q", fileURI(p), kind, got)
	}
	var v struct {
		ReadStale *bool `json:"readStale"`
	}
	json.Unmarshal(n.Params, &v)
	if v.ReadStale == nil || *v.ReadStale != readStale {
		t.Errorf("externalChange %s: readStale = %v, want %v (%s)", p, v.ReadStale, readStale, n.Params)
	}
}

// files read in the second folder and in a
// folder added mid-session are watched; the folder removed is not.
func TestRootsExternalChange(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	c, ctx := rootsStart(t, d, d.A, d.B)

	t.Run("second initial folder", func(t *testing.T) {
		p := filepath.Join(d.B, "b.txt")
		wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": p}), false)
		writeFile(t, p, "beta changed outside\n")
		rootsWaitChange(t, c, p, "changed", true)
		r := c.CallTool(ctx, "edit", editCall(p, "outside", "inside"))
		wantResult(t, "edit after external change", r, true, "read")
	})

	t.Run("added folder", func(t *testing.T) {
		rootsChangeFolders(t, ctx, c, []string{d.C}, nil)
		p := filepath.Join(d.C, "c.txt")
		wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": p}), false, "gamma outside file")
		writeFile(t, p, "gamma changed outside\n")
		rootsWaitChange(t, c, p, "changed", true)
		q := filepath.Join(d.C, "same.txt")
		wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": q}), false)
		if err := os.Remove(q); err != nil {
			t.Fatal(err)
		}
		rootsWaitChange(t, c, q, "deleted", true)
	})
}

// --- MCP: mcpRawClient playing a client that declares roots -----------

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
	return rootsStartMCPEnv(t, nil, roots, args...)
}

// rootsStartMCPEnv is rootsStartMCP with env added to the process's.
func rootsStartMCPEnv(t *testing.T, env []string, roots []map[string]any, args ...string) (*rootsMCP, context.Context) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	m := &rootsMCP{mcpRawClient: startMCPRaw(t, append([]string{"mcp"}, args...), env), roots: roots}
	m.setHandler(m.answer)
	caps := map[string]any{}
	if roots != nil {
		caps["roots"] = map[string]any{"listChanged": true}
	}
	m.call(t, ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "roots-test", "version": "0"},
	})
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

// the client's roots define the workspace
// (issue 9), over --root; relative paths go to the first root; a path
// outside them is refused; grep without a path covers every root and its
// paths read back.
func TestRootsMCPClientRoots(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, []map[string]any{rootsFolder(d.A), rootsFolder(d.B)}, "--root", d.C)

	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		wants   []string
		lacks   []string
	}{
		{"relative in first root", "read", map[string]any{"path": "a.txt"}, false, []string{"alpha only file"}, []string{"gamma decoy"}},
		{"ambiguous relative", "read", map[string]any{"path": "same.txt"}, false, []string{"same in ALPHA"}, []string{"BETA", "GAMMA"}},
		{"abs in second root", "read", map[string]any{"path": filepath.Join(d.B, "b.txt")}, false, []string{"beta only file"}, nil},
		{"--root is outside", "read", map[string]any{"path": filepath.Join(d.C, "c.txt")}, true, nil, []string{"gamma outside file"}},
		{"dotdot escape", "read", map[string]any{"path": "../gamma/c.txt"}, true, nil, []string{"gamma outside file"}},
		{"grep in second root", "grep", map[string]any{"pattern": "MARKER18", "path": d.B}, false, []string{"beta deep MARKER18"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := m.tool(t, ctx, tc.tool, tc.args)
			wantResult(t, tc.name, r, tc.isError, tc.wants...)
			wantLacks(t, tc.name, r.Text(), tc.lacks...)
		})
	}
	if m.asked() == 0 {
		t.Errorf("agentls never sent roots/list to a client declaring roots")
	}

	t.Run("grep round trip", func(t *testing.T) {
		r := m.tool(t, ctx, "grep", map[string]any{"pattern": "only file"})
		wantResult(t, "grep", r, false, "alpha only file", "beta only file")
		paths := rootsMatchPaths(r.Text())
		if len(paths) != 2 {
			t.Fatalf("want 2 paths, got %q in:\n%s", paths, r.Text())
		}
		for _, p := range paths {
			wantResult(t, "read back "+p, m.tool(t, ctx, "read", map[string]any{"path": p}), false, "only file")
		}
	})

	t.Run("edit needs a read in root B", func(t *testing.T) {
		p := filepath.Join(d.B, "same.txt")
		r := m.tool(t, ctx, "edit", editCall(p, "BETA", "X"))
		wantResult(t, "edit unread", r, true, "read")
		if got := readFile(t, p); got != "same in BETA\n" {
			t.Errorf("B/same.txt = %q", got)
		}
	})
}

// after notifications/roots/list_changed
// agentls asks roots/list again and the next call sees the new set; the
// new root's settings apply (docs/protocol.md: configuration follows the
// folders).
func TestRootsMCPListChanged(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	writeFiles(t, d.C, map[string]string{
		".agentls/settings.json": `{"permissions": {"deny": ["Read(cdeny.txt)"]}}`,
		"cdeny.txt":              "gamma denied\n",
	})
	other := t.TempDir()
	m, ctx := rootsStartMCP(t, []map[string]any{rootsFolder(d.A)}, "--root", other)

	wantResult(t, "A before", m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}), false, "alpha only file")
	wantResult(t, "C before", m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.C, "c.txt")}), true)
	before := m.asked()

	m.setRoots([]map[string]any{rootsFolder(d.C)})
	r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.C, "c.txt")})
	wantResult(t, "C on the next call", r, false, "gamma outside file")
	if m.asked() <= before {
		t.Errorf("roots/list not asked again after list_changed (asked %d times)", m.asked())
	}
	r = m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")})
	wantResult(t, "A after removal", r, true)
	wantLacks(t, "A after removal", r.Text(), "alpha only file")
	wantResult(t, "relative now in C", m.tool(t, ctx, "read", map[string]any{"path": "a.txt"}), false, "gamma decoy a")
	r = m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.C, "cdeny.txt")})
	wantResult(t, "C's settings deny", r, true, "cdeny.txt")
	wantLacks(t, "C's settings deny", r.Text(), "gamma denied")

	// Stamps from the removed root do not survive its return.
	m.setRoots([]map[string]any{rootsFolder(d.A), rootsFolder(d.B)})
	pb := filepath.Join(d.B, "b.txt")
	wantResult(t, "read B", m.tool(t, ctx, "read", map[string]any{"path": pb}), false)
	m.setRoots([]map[string]any{rootsFolder(d.A)})
	wantResult(t, "B removed", m.tool(t, ctx, "read", map[string]any{"path": pb}), true)
	writeFile(t, pb, "beta changed while gone\n")
	m.setRoots([]map[string]any{rootsFolder(d.A), rootsFolder(d.B)})
	r = m.tool(t, ctx, "edit", editCall(pb, "changed", "EDITED"))
	wantResult(t, "edit B after re-add", r, true, "read")
	if got := readFile(t, pb); got != "beta changed while gone\n" {
		t.Errorf("B/b.txt = %q", got)
	}
}

// a client without the roots
// capability gets --root and is never sent roots/list.
func TestRootsMCPNoRootsCapability(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, nil, "--root", d.C)
	wantResult(t, "relative in --root", m.tool(t, ctx, "read", map[string]any{"path": "c.txt"}), false, "gamma outside file")
	wantResult(t, "abs in --root", m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.C, "same.txt")}), false, "same in GAMMA")
	r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")})
	wantResult(t, "outside --root", r, true)
	wantLacks(t, "outside --root", r.Text(), "alpha only file")
	if n := m.asked(); n != 0 {
		t.Errorf("roots/list sent %d times to a client without the roots capability", n)
	}
	// A stray list_changed from a client that never declared roots must
	// not make agentls ask either ("never sent roots/list").
	m.notify("notifications/roots/list_changed", map[string]any{})
	wantResult(t, "still --root", m.tool(t, ctx, "read", map[string]any{"path": "c.txt"}), false, "gamma outside file")
	if n := m.asked(); n != 0 {
		t.Errorf("after a stray roots/list_changed: roots/list sent %d times to a client without the roots capability", n)
	}
}

// roots whose URI is not file:// do not
// become folders; the session goes on with the file roots.
func TestRootsMCPNonFileRoots(t *testing.T) {
	t.Parallel()
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, []map[string]any{
		{"uri": "https://example.com/repo", "name": "web"},
		rootsFolder(d.B),
		{"uri": "untitled:Untitled-1", "name": "untitled"},
	}, "--root", d.C)
	r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.B, "b.txt")})
	wantResult(t, "file root next to non-file roots", r, false, "beta only file")
	r = m.tool(t, ctx, "read", map[string]any{"path": "b.txt"})
	wantResult(t, "relative goes to the first file root", r, false, "beta only file")
	r = m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.C, "c.txt")})
	wantResult(t, "--root not used when file roots exist", r, true)
}
