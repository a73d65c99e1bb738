package e2e

// Odd workspace folders (docs/protocol.md, docs/tools.md "Paths" and
// "Permissions"): paths are relative to the first folder; a printed path
// passes back as it is (the first folder's files relative, another folder's
// absolute); grep/find without a path search every folder, a folder inside
// another searched once with it; each folder's path rules hold for its files.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// nestedFolders is the workspaceFolders param for dirs.
func nestedFolders(dirs ...string) []map[string]any {
	out := []map[string]any{}
	for _, d := range dirs {
		out = append(out, map[string]any{"uri": fileURI(d), "name": filepath.Base(d)})
	}
	return out
}

// nestedStart starts agentls (no --root) in acceptEdits mode on the
// workspaceFolders folders.
func nestedStart(t *testing.T, folders []map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	return startOpts(t, harness.Options{}, map[string]any{"workspaceFolders": folders, "initializationOptions": map[string]any{"mode": "acceptEdits"}})
}

// nestedStartFolders starts a session over folders in acceptEdits mode.
func nestedStartFolders(t *testing.T, folders ...string) (*harness.Client, context.Context) {
	t.Helper()
	return nestedStart(t, nestedFolders(folders...))
}

var nestedGrepLine = regexp.MustCompile(`^(.+?):(\d+): `)

// nestedPaths is the paths grep (match lines) or find (path lines) printed.
func nestedPaths(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if m := nestedGrepLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		} else if l != "" && !strings.HasPrefix(l, "[") && !strings.Contains(l, ": ") {
			out = append(out, l)
		}
	}
	return out
}

func nestedSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// nestedAbs resolves a printed path against the first folder, symlinks
// resolved when real.
func nestedAbs(first, p string, real bool) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(first, filepath.FromSlash(p))
	}
	if r, err := filepath.EvalSymlinks(p); err == nil && real {
		return r
	}
	return p
}

// nestedCheckOnce runs grep and find over the whole workspace, checks each
// fixture file comes out once, named as in want, and that every printed
// path reads back the file it names (lines: absolute path → first line).
func nestedCheckOnce(t *testing.T, ctx context.Context, c *harness.Client, first string, want []string, lines map[string]string, args ...map[string]any) {
	t.Helper()
	for _, call := range []struct{ tool, pattern string }{{"grep", "needle"}, {"find", "*.txt"}} {
		a := map[string]any{"pattern": call.pattern}
		for _, more := range args {
			for k, v := range more {
				a[k] = v
			}
		}
		r := c.CallTool(ctx, call.tool, a)
		wantResult(t, call.tool, r, false)
		got := nestedPaths(r.Text())
		nestedSame(t, fmt.Sprintf("%s %v paths", call.tool, a), got, want)
		for _, p := range got {
			body, ok := lines[nestedAbs(first, p, false)]
			if !ok {
				t.Errorf("%s: printed path %q names no file of the fixture", call.tool, p)
				continue
			}
			rr := c.CallTool(ctx, "read", map[string]any{"path": p})
			wantResult(t, "read "+p, rr, false, ", lines 1-1 of 1\n     1→"+body)
			if h, _, _ := strings.Cut(rr.Text(), ", lines "); nestedAbs(first, h, true) != nestedAbs(first, p, true) {
				t.Errorf("read %s: header names %q, not the file read", p, h)
			}
		}
	}
}

// nestedNested is outer/ with inner/ inside it, a file in each and a deeper
// one, and each file's first line by absolute path.
func nestedNested(t *testing.T) (outer, inner string, lines map[string]string) {
	t.Helper()
	outer = filepath.Join(resolvedWorkspace(t, nil), "outer")
	inner = filepath.Join(outer, "inner")
	writeFiles(t, outer, map[string]string{"o.txt": "needle outer\n", "inner/i.txt": "needle inner\n", "inner/sub/d.txt": "needle deep\n"})
	return outer, inner, map[string]string{
		filepath.Join(outer, "o.txt"): "needle outer", filepath.Join(inner, "i.txt"): "needle inner", filepath.Join(inner, "sub", "d.txt"): "needle deep",
	}
}

// nestedChange sends workspace/didChangeWorkspaceFolders.
func nestedChange(t *testing.T, ctx context.Context, c *harness.Client, added, removed []string) {
	t.Helper()
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{
		"event": map[string]any{"added": nestedFolders(added...), "removed": nestedFolders(removed...)},
	}); err != nil {
		t.Fatal(err)
	}
}

// One folder named twice (identically, with a trailing slash, through a
// symlink and by its real path) is one folder: nothing is listed twice, ls
// offers no other folder, and the edit guard knows every spelling of a file
// is that file.
func TestFoldersNestedSameFolderTwice(t *testing.T) {
	t.Parallel()
	base := resolvedWorkspace(t, nil)
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	writeFiles(t, real, map[string]string{"a.txt": "needle a\n", "d/b.txt": "needle b\n"})
	symlink(t, real, link)
	lines := map[string]string{}
	for _, d := range []string{link, real} {
		lines[filepath.Join(d, "a.txt")], lines[filepath.Join(d, "d", "b.txt")] = "needle a", "needle b"
	}
	for _, tc := range []struct {
		name    string
		folders []map[string]any
		via     string // the other spelling of the folder, when the folders have one
	}{
		{"identical", nestedFolders(real, real), real},
		{"trailing slash", []map[string]any{{"uri": fileURI(real), "name": "a"}, {"uri": fileURI(real) + "/", "name": "b"}}, real},
		{"link only", nestedFolders(link), link},
		{"link then real", nestedFolders(link, real), link},
		{"real then link", nestedFolders(real, link), link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(real, "a.txt"), "needle a\n")
			c, ctx := nestedStart(t, tc.folders)
			first, _ := url.Parse(tc.folders[0]["uri"].(string))
			nestedCheckOnce(t, ctx, c, first.Path, []string{"a.txt", "d/b.txt"}, lines)
			wantLacks(t, "ls", c.CallTool(ctx, "ls", map[string]any{}).Text(), "more folder")
			via := tc.via
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(via, "a.txt")})
			wantResult(t, "edit via the real path after a read via "+via, c.CallTool(ctx, "edit", editCall(filepath.Join(real, "a.txt"), "needle a", "needle A")), false, "Edited a.txt: 1 replacement")
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(real, "a.txt")})
			wantResult(t, "edit via "+via+" after a read via the real path", c.CallTool(ctx, "edit", editCall(filepath.Join(via, "a.txt"), "needle A", "needle a")), false, "Edited a.txt: 1 replacement")
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(via, "a.txt")})
			writeFile(t, filepath.Join(real, "a.txt"), "needle a, changed outside\n")
			wantResult(t, "edit after an external change", c.CallTool(ctx, "edit", editCall(filepath.Join(real, "a.txt"), "changed", "clobbered")), true)
		})
	}
}

// Folder URIs are percent-decoded: spaces, unicode and a literal '%', in
// upper- or lower-case hex.
func TestFoldersNestedOddURIs(t *testing.T) {
	t.Parallel()
	base := resolvedWorkspace(t, nil)
	odd := filepath.Join(base, "a b", "ünï €", "50% off")
	other := filepath.Join(base, "second folder")
	writeFiles(t, odd, map[string]string{"x y.txt": "needle odd\n"})
	writeFiles(t, other, map[string]string{"z.txt": "needle other\n"})
	enc := fileURI(odd) + "/"
	if !strings.Contains(enc, "a%20b") || !strings.Contains(enc, "50%25%20off") {
		t.Fatalf("fixture URI not encoded: %s", enc)
	}
	lower := "file://" + strings.ReplaceAll(strings.ReplaceAll(url.PathEscape(odd), "%2F", "/"), "%C3", "%c3")
	lines := map[string]string{filepath.Join(odd, "x y.txt"): "needle odd", filepath.Join(other, "z.txt"): "needle other"}
	for name, uri := range map[string]string{"encoded with a trailing slash": enc, "lower-case hex": lower} {
		t.Run(name, func(t *testing.T) {
			c, ctx := nestedStart(t, []map[string]any{{"uri": uri, "name": "odd"}, {"uri": fileURI(other), "name": "second"}})
			nestedCheckOnce(t, ctx, c, odd, []string{"x y.txt", filepath.Join(other, "z.txt")}, lines)
			wantResult(t, "ls", c.CallTool(ctx, "ls", map[string]any{}), false, "x y.txt", "reached by absolute paths: "+other)
			wantResult(t, "bash cwd is the decoded first folder", c.CallTool(ctx, "bash", map[string]any{"command": "pwd"}), false, odd)
		})
	}
}

// The workspace is workspaceFolders, else rootUri, else rootPath, else
// --root (docs/protocol.md initialize).
func TestFoldersNestedRootURIOnly(t *testing.T) {
	t.Parallel()
	a := resolvedWorkspace(t, map[string]string{"which.txt": "needle A\n"})
	b := resolvedWorkspace(t, map[string]string{"which.txt": "needle B\n"})
	root := resolvedWorkspace(t, map[string]string{"which.txt": "needle root\n"})
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"rootUri", map[string]any{"rootUri": fileURI(a)}, "needle A"},
		{"rootUri with trailing slash", map[string]any{"rootUri": fileURI(a) + "/"}, "needle A"},
		{"rootPath", map[string]any{"rootPath": a}, "needle A"},
		{"rootUri over rootPath", map[string]any{"rootUri": fileURI(a), "rootPath": b}, "needle A"},
		{"workspaceFolders over rootUri", map[string]any{"rootUri": fileURI(a), "workspaceFolders": nestedFolders(b)}, "needle B"},
		{"null workspaceFolders", map[string]any{"rootUri": fileURI(b), "workspaceFolders": nil}, "needle B"},
		{"--root last", map[string]any{}, "needle root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := startIn(t, root, tc.params)
			wantResult(t, "read which.txt", c.CallTool(ctx, "read", map[string]any{"path": "which.txt"}), false, "1→"+tc.want)
			nestedSame(t, "grep", nestedPaths(c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text()), []string{"which.txt"})
		})
	}
}

// With no usable folder (missing, or a file) initialize fails with -32602
// naming it, and the client may then initialize again. (One beside a good
// folder: TestUnusableWorkspaceFolderIsSkippedAndShownToTheUser.)
func TestFoldersNestedMissingAtStart(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "needle a\n"})
	gone, file := filepath.Join(ws, "no such dir"), filepath.Join(ws, "a.txt")
	for _, tc := range []struct {
		name     string
		params   map[string]any
		bad, why string
	}{
		{"missing rootUri", map[string]any{"rootUri": fileURI(gone)}, gone, "does not exist"},
		{"a file as folder", map[string]any{"workspaceFolders": nestedFolders(file)}, file, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := harness.Start(t, harness.Options{}), testCtx(t, 20*time.Second)
			tc.params["capabilities"] = map[string]any{}
			if err := c.Call(ctx, "initialize", tc.params, &map[string]any{}); rpcCode(err) != -32602 || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("initialize with %s: %v; want -32602 naming it and %q", tc.bad, err, tc.why)
			}
			c.Initialize(ctx, map[string]any{"workspaceFolders": nestedFolders(ws)})
			wantResult(t, "read in the good folder", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false, "1→needle a")
		})
	}
}

// Removing the first folder makes the second the first: relative paths,
// bash and printed paths follow. (A removed folder's reads forgotten when it
// comes back: TestFolderConfigurationFollowsTheFolder.)
func TestFoldersNestedRemoveFirst(t *testing.T) {
	t.Parallel()
	base := resolvedWorkspace(t, nil)
	a, b := filepath.Join(base, "A"), filepath.Join(base, "B")
	writeFiles(t, a, map[string]string{"a.txt": "needle a\n", "same.txt": "needle same A\n"})
	writeFiles(t, b, map[string]string{"b.txt": "needle b\n", "same.txt": "needle same B\n"})
	lines := map[string]string{
		filepath.Join(a, "a.txt"): "needle a", filepath.Join(a, "same.txt"): "needle same A",
		filepath.Join(b, "b.txt"): "needle b", filepath.Join(b, "same.txt"): "needle same B",
	}
	c, ctx := nestedStartFolders(t, a, b)
	nestedCheckOnce(t, ctx, c, a, []string{"a.txt", "same.txt", filepath.Join(b, "b.txt"), filepath.Join(b, "same.txt")}, lines)
	nestedChange(t, ctx, c, nil, []string{a})
	wantResult(t, "read same.txt after removing A", c.CallTool(ctx, "read", map[string]any{"path": "same.txt"}), false, "same.txt, lines 1-1 of 1\n     1→needle same B")
	nestedCheckOnce(t, ctx, c, b, []string{"b.txt", "same.txt"}, lines)
	r := c.CallTool(ctx, "ls", map[string]any{})
	wantResult(t, "ls", r, false, "b.txt", "same.txt")
	wantLacks(t, "ls", r.Text(), "a.txt", "more folder")
	wantResult(t, "read in the removed folder", c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(a, "a.txt")}), true, "outside the workspace")
	wantResult(t, "bash runs in the new first folder", c.CallTool(ctx, "bash", map[string]any{"command": "pwd"}), false, b)
}

// Adding a folder nested in an existing one (or one that contains it), or
// removing the outer one: nothing is listed twice, printed names follow the
// first folder, and a read of a file still in the workspace holds.
func TestFoldersNestedAddNested(t *testing.T) {
	t.Parallel()
	outer, inner, lines := nestedNested(t)
	t.Run("inner added to outer", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, outer)
		nestedChange(t, ctx, c, []string{inner}, nil)
		nestedCheckOnce(t, ctx, c, outer, []string{"inner/i.txt", "inner/sub/d.txt", "o.txt"}, lines)
		wantLacks(t, "ls", c.CallTool(ctx, "ls", map[string]any{}).Text(), "more folder")
		c.CallTool(ctx, "read", map[string]any{"path": "inner/i.txt"})
		wantResult(t, "edit via the inner folder's name", c.CallTool(ctx, "edit", editCall(filepath.Join(inner, "i.txt"), "needle inner", "needle inner")), true, "no change")
	})
	t.Run("outer added to inner", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, inner)
		c.CallTool(ctx, "read", map[string]any{"path": "i.txt"})
		nestedChange(t, ctx, c, []string{outer}, nil)
		wantResult(t, "edit after the add", c.CallTool(ctx, "edit", editCall(filepath.Join(inner, "i.txt"), "needle inner", "needle Inner")), false, "Edited ")
		writeFile(t, filepath.Join(inner, "i.txt"), "needle inner\n")
		nestedCheckOnce(t, ctx, c, inner, []string{"i.txt", "sub/d.txt", filepath.Join(outer, "o.txt")}, lines)
	})
	t.Run("outer removed, inner stays", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, outer, inner)
		c.CallTool(ctx, "read", map[string]any{"path": "inner/i.txt"})
		nestedChange(t, ctx, c, nil, []string{outer})
		wantResult(t, "edit of a file still in the workspace", c.CallTool(ctx, "edit", editCall("i.txt", "needle inner", "needle Inner")), false, "Edited i.txt: 1 replacement")
		writeFile(t, filepath.Join(inner, "i.txt"), "needle inner\n")
		nestedCheckOnce(t, ctx, c, inner, []string{"i.txt", "sub/d.txt"}, lines)
		wantResult(t, "o.txt is outside now", c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(outer, "o.txt")}), true, "outside the workspace")
	})
}

// A file of a nested folder is watched once: one externalChange per change,
// whichever folder comes first.
func TestFoldersNestedNestedExternalChangeOnce(t *testing.T) {
	t.Parallel()
	for _, order := range []string{"outer only", "outer first", "inner first", "outer twice"} {
		t.Run(order, func(t *testing.T) {
			outer, inner, _ := nestedNested(t)
			c, ctx := nestedStartFolders(t, map[string][]string{"outer only": {outer}, "outer first": {outer, inner}, "inner first": {inner, outer}, "outer twice": {outer, outer}}[order]...)
			x, y := filepath.Join(inner, "i.txt"), filepath.Join(outer, "o.txt")
			changes := func(p string) (n int) {
				for _, e := range extChanges(c, p) {
					if e.Kind == "changed" {
						n++
					}
				}
				return n
			}
			for _, p := range []string{x, y} { // y is the barrier: a duplicate for x would come before y's
				wantResult(t, "read "+p, c.CallTool(ctx, "read", map[string]any{"path": p}), false)
			}
			for _, p := range []string{x, y} {
				// Replaced in one step (write aside, rename over): one change,
				// where a slow truncate-and-write may be two.
				writeFile(t, p+".new", "changed outside\n")
				if err := os.Rename(p+".new", p); err != nil {
					t.Fatal(err)
				}
				if !waitUntil(10*time.Second, func() bool { return changes(p) > 0 }) {
					t.Fatalf("no workspace/externalChange for %s", p)
				}
			}
			if n := changes(x); n != 1 {
				t.Errorf("%d externalChange notifications for one change of %s", n, x)
			}
		})
	}
}
