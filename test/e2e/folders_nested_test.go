package e2e

// Odd workspace folders. Written from docs/protocol.md
// (initialize rootUri/workspaceFolders, workspace/didChangeWorkspaceFolders),
// docs/protocol.md and docs/tools.md "Paths" and "Permissions": paths are
// relative to the first folder; a printed path passes back as it is (the
// first folder's files relative, another folder's absolute); grep/find
// without a path search every folder, a folder inside another searched once
// with it; each folder's path rules hold for its files.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// nestedURI is p as a file:// URI, percent-encoded as editors send it.
func nestedURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// nestedFolders is the workspaceFolders param for dirs.
func nestedFolders(dirs ...string) []map[string]any {
	out := []map[string]any{}
	for _, d := range dirs {
		out = append(out, map[string]any{"uri": nestedURI(d), "name": filepath.Base(d)})
	}
	return out
}

// nestedTmp is a fresh temp dir with symlinks resolved (macOS /var → /private/var).
func nestedTmp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func nestedPut(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func nestedGet(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nestedStart starts agentls (no --root) and initializes it with params
// (workspaceFolders, rootUri, …); opts go to initializationOptions.
func nestedStart(t *testing.T, params map[string]any, opts map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if params == nil {
		params = map[string]any{}
	}
	if opts != nil {
		params["initializationOptions"] = opts
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// nestedStartFolders starts a session over folders in acceptEdits mode.
func nestedStartFolders(t *testing.T, folders ...string) (*harness.Client, context.Context) {
	t.Helper()
	return nestedStart(t, map[string]any{"workspaceFolders": nestedFolders(folders...)}, map[string]any{"mode": "acceptEdits"})
}

// nestedBackends are the two grep searchers (ripgrep when on PATH, and Go).
var nestedBackends = []struct{ name, env string }{{"rg", "AGENTLS_GREP_BACKEND=rg"}, {"go", "AGENTLS_GREP_BACKEND=go"}}

var nestedGrepLine = regexp.MustCompile(`^(.+?):(\d+): `)

// nestedGrepPaths is the paths of grep's match lines, in output order.
func nestedGrepPaths(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if m := nestedGrepLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// nestedListed is find's path lines (notices and blank lines dropped).
func nestedListed(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func nestedSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func nestedWant(t *testing.T, what string, r harness.Result, isErr bool, wants ...string) {
	t.Helper()
	if r.IsError != isErr {
		t.Errorf("%s: isError=%v, want %v; text:\n%s", what, r.IsError, isErr, r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("%s: text lacks %q:\n%s", what, w, r.Text())
		}
	}
}

func nestedLacks(t *testing.T, what string, r harness.Result, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if strings.Contains(r.Text(), n) {
			t.Errorf("%s: text has %q:\n%s", what, n, r.Text())
		}
	}
}

// nestedReadsBack reads every printed path back and checks it names the file
// it should: a relative path resolves in first, and the file's first line is
// lines[its absolute path].
func nestedReadsBack(t *testing.T, ctx context.Context, c *harness.Client, what, first string, paths []string, lines map[string]string) {
	t.Helper()
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(first, filepath.FromSlash(p))
		}
		body, ok := lines[abs]
		if !ok {
			t.Errorf("%s: printed path %q names no file of the fixture", what, p)
			continue
		}
		r := c.CallTool(ctx, "read", map[string]any{"path": p})
		nestedWant(t, what+": read "+p, r, false, ", lines 1-1 of 1\n     1→"+body)
		if h, _, _ := strings.Cut(r.Text(), ", lines "); nestedReal(nestedAbs(first, h)) != nestedReal(abs) {
			t.Errorf("%s: read %s: header names %q, not the file read", what, p, h)
		}
	}
}

// nestedReal is p with symlinks resolved (p itself when that fails).
func nestedReal(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// nestedAbs resolves a printed path against the first folder.
func nestedAbs(first, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(first, filepath.FromSlash(p))
}

// nestedNested is outer/ with inner/ inside it, a file in each and a deeper one.
func nestedNested(t *testing.T) (outer, inner string) {
	t.Helper()
	outer = filepath.Join(nestedTmp(t), "outer")
	inner = filepath.Join(outer, "inner")
	nestedPut(t, outer, map[string]string{
		"o.txt":           "needle outer\n",
		"inner/i.txt":     "needle inner\n",
		"inner/sub/d.txt": "needle deep\n",
	})
	return outer, inner
}

func TestFoldersNestedNestedRoundTrip(t *testing.T) {
	t.Parallel()
	outer, inner := nestedNested(t)
	cases := []nestedNestedCase{
		{
			name:    "outer first",
			folders: []string{outer, inner},
			want: map[string]string{
				"inner/i.txt":     "needle inner",
				"inner/sub/d.txt": "needle deep",
				"o.txt":           "needle outer",
			},
			grep: []string{"inner/i.txt", "inner/sub/d.txt", "o.txt"},
			ls:   []string{"inner/", "o.txt"},
			more: "", // inside the first folder: reached relatively, not named
		},
		{
			name:    "inner first",
			folders: []string{inner, outer},
			want: map[string]string{
				"i.txt":                       "needle inner",
				"sub/d.txt":                   "needle deep",
				filepath.Join(outer, "o.txt"): "needle outer",
			},
			grep: []string{"i.txt", "sub/d.txt", filepath.Join(outer, "o.txt")},
			ls:   []string{"i.txt", "sub/"},
			more: outer,
		},
	}
	lines := map[string]string{
		filepath.Join(outer, "o.txt"):        "needle outer",
		filepath.Join(inner, "i.txt"):        "needle inner",
		filepath.Join(inner, "sub", "d.txt"): "needle deep",
	}
	for _, tc := range cases {
		for _, be := range nestedBackends {
			t.Run(tc.name+"/"+be.name, func(t *testing.T) { nestedNestedRoundTrip(t, tc, lines, be.env) })
		}
	}
}

// nestedNestedCase is one order of the nested folders and what it prints.
type nestedNestedCase struct {
	name    string
	folders []string
	// printed names, in the documented order: the first folder's files
	// first (relative), then the others' (absolute)
	want map[string]string
	grep []string
	ls   []string // the entries of ls {} before the more-folders note
	more string   // the folder the note names; "": no note
}

// nestedNestedRoundTrip checks grep/find/ls/read/edit over nested folders.
func nestedNestedRoundTrip(t *testing.T, tc nestedNestedCase, lines map[string]string, env string) {
	c, ctx := nestedStart(t, map[string]any{"workspaceFolders": nestedFolders(tc.folders...)}, map[string]any{"mode": "acceptEdits"}, env)
	for _, path := range []any{nil, "."} {
		args := map[string]any{"pattern": "needle"}
		if path != nil {
			args["path"] = path
		}
		r := c.CallTool(ctx, "grep", args)
		nestedWant(t, "grep", r, false)
		got := nestedGrepPaths(r.Text())
		nestedSame(t, fmt.Sprintf("grep path=%v (each file once, first folder's first, relative there)", path), got, tc.grep)
		nestedReadsBack(t, ctx, c, "grep", tc.folders[0], got, lines)

		args = map[string]any{"pattern": "*.txt"}
		if path != nil {
			args["path"] = path
		}
		r = c.CallTool(ctx, "find", args)
		nestedWant(t, "find", r, false)
		got = nestedListed(r.Text())
		nestedSame(t, fmt.Sprintf("find path=%v", path), got, tc.grep)
		nestedReadsBack(t, ctx, c, "find", tc.folders[0], got, lines)
	}

	r := c.CallTool(ctx, "ls", map[string]any{})
	if tc.more == "" {
		nestedWant(t, "ls {}", r, false)
		wantLacks(t, "ls {}: a folder inside the first is not another folder", r.Text(), "more folder")
	} else {
		nestedWant(t, "ls {}", r, false,
			fmt.Sprintf("[The workspace has 1 more folder(s), reached by absolute paths: %s.", tc.more),
			fmt.Sprintf(`ls {"path": %q}`, tc.more))
	}
	var entries []string
	for _, l := range strings.Split(r.Text(), "\n")[1:] {
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		entries = append(entries, l)
	}
	nestedSame(t, "ls {} entries", entries, tc.ls)

	// The note's ls call lists the other folder; the entries it
	// prints, joined to the directory, read back.
	if tc.more != "" {
		r = c.CallTool(ctx, "ls", map[string]any{"path": tc.more})
		nestedWant(t, "ls other folder", r, false)
		for _, l := range strings.Split(r.Text(), "\n")[1:] {
			if strings.HasSuffix(l, ".txt") {
				p := filepath.Join(tc.more, l)
				rr := c.CallTool(ctx, "read", map[string]any{"path": p})
				nestedWant(t, "read "+p, rr, false, "     1→needle")
			}
		}
	}

	// An edit through each printed name changes the right file, and
	// its message names it as printed.
	for name := range tc.want {
		c.CallTool(ctx, "read", map[string]any{"path": name})
		e := c.CallTool(ctx, "edit", map[string]any{"path": name, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}})
		nestedWant(t, "edit "+name, e, false, "Edited "+name+": 1 replacement")
		c.CallTool(ctx, "read", map[string]any{"path": name})
		e2 := c.CallTool(ctx, "edit", map[string]any{"path": name, "edits": []any{map[string]any{"oldText": "pin", "newText": "needle"}}})
		nestedWant(t, "edit back "+name, e2, false)
	}
}

// Each folder's path rules hold for its files, anchored at its root; a file
// of the inner folder is a file of both (docs/tools.md "Permissions").
func TestFoldersNestedNestedSettings(t *testing.T) {
	t.Parallel()
	outer, inner := nestedNested(t)
	nestedPut(t, outer, map[string]string{
		".agentls/settings.json":       `{"permissions": {"deny": ["Read(/inner/s1.txt)", "Edit(/inner/e1.txt)"]}}`,
		"inner/.agentls/settings.json": `{"permissions": {"deny": ["Read(/s2.txt)", "Edit(/e2.txt)", "Read(/o.txt)"]}}`,
		"inner/s1.txt":                 "needle s1\n",
		"inner/s2.txt":                 "needle s2\n",
		"inner/e1.txt":                 "needle e1\n",
		"inner/e2.txt":                 "needle e2\n",
	})
	for _, order := range [][]string{{outer, inner}, {inner, outer}} {
		t.Run(filepath.Base(order[0])+" first", func(t *testing.T) {
			c, ctx := nestedStartFolders(t, order...)
			spell := func(rel string) []string { // the file's names: absolute, and relative to the first folder when inside it
				abs := filepath.Join(outer, filepath.FromSlash(rel))
				out := []string{abs}
				if r, err := filepath.Rel(order[0], abs); err == nil && !strings.HasPrefix(r, "..") {
					out = append(out, filepath.ToSlash(r))
				}
				return out
			}
			for _, tc := range []struct {
				rel, rule string
			}{
				{"inner/s1.txt", "Read(/inner/s1.txt)"}, // the outer folder's rule
				{"inner/s2.txt", "Read(/s2.txt)"},       // the inner folder's rule
			} {
				for _, p := range spell(tc.rel) {
					r := c.CallTool(ctx, "read", map[string]any{"path": p})
					nestedWant(t, "read "+p, r, true, tc.rule)
					nestedLacks(t, "read "+p, r, "needle")
				}
			}
			for _, tc := range []struct {
				rel, rule string
			}{
				{"inner/e1.txt", "Edit(/inner/e1.txt)"},
				{"inner/e2.txt", "Edit(/e2.txt)"},
			} {
				for _, p := range spell(tc.rel) {
					c.CallTool(ctx, "read", map[string]any{"path": p})
					r := c.CallTool(ctx, "write", map[string]any{"path": p, "content": "changed\n"})
					nestedWant(t, "write "+p, r, true, tc.rule)
					r = c.CallTool(ctx, "edit", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}})
					nestedWant(t, "edit "+p, r, true, tc.rule)
				}
				if got := nestedGet(t, filepath.Join(outer, filepath.FromSlash(tc.rel))); !strings.HasPrefix(got, "needle") {
					t.Errorf("%s changed despite %s: %q", tc.rel, tc.rule, got)
				}
			}
			// The inner folder's /o.txt is inner/o.txt, not the outer folder's o.txt.
			for _, p := range spell("o.txt") {
				r := c.CallTool(ctx, "read", map[string]any{"path": p})
				nestedWant(t, "read "+p+" (inner's Read(/o.txt) names another file)", r, false, "1→needle outer")
			}
			// Read rules filter grep and find too, whichever folder holds them.
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
			nestedLacks(t, "grep", r, "s1.txt", "s2.txt")
			nestedWant(t, "grep", r, false, "needle e1", "needle outer")
			r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
			nestedLacks(t, "find", r, "s1.txt", "s2.txt")
			nestedWant(t, "find", r, false, "e1.txt")
		})
	}
}

// Read-before-edit across the spellings of one file: a read through one name
// allows an edit through the other, and an external change is caught
// whichever name the edit uses.
func TestFoldersNestedNestedEditGuard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		inner bool // the inner folder first
	}{{"outer first", false}, {"inner first", true}} {
		t.Run(tc.name, func(t *testing.T) {
			outer, inner := nestedNested(t)
			folders := []string{outer, inner}
			rel := "inner/i.txt"
			if tc.inner {
				folders = []string{inner, outer}
				rel = "i.txt"
			}
			abs := filepath.Join(inner, "i.txt")
			c, ctx := nestedStartFolders(t, folders...)
			n := 0
			for _, pair := range [][2]string{{rel, abs}, {abs, rel}} {
				readAs, editAs := pair[0], pair[1]
				n++
				c.CallTool(ctx, "read", map[string]any{"path": readAs})
				cur := nestedGet(t, abs)
				next := fmt.Sprintf("needle inner %d", n)
				r := c.CallTool(ctx, "edit", map[string]any{"path": editAs, "edits": []any{map[string]any{"oldText": strings.TrimSuffix(cur, "\n"), "newText": next}}})
				nestedWant(t, "edit "+editAs+" after read "+readAs, r, false, "Edited ")
				if got := nestedGet(t, abs); got != next+"\n" {
					t.Errorf("after edit via %s: file %q", editAs, got)
				}

				c.CallTool(ctx, "read", map[string]any{"path": readAs})
				r = c.CallTool(ctx, "write", map[string]any{"path": editAs, "content": next + " written\n"})
				nestedWant(t, "write "+editAs+" after read "+readAs, r, false)

				// External change after the read: caught through either name.
				c.CallTool(ctx, "read", map[string]any{"path": readAs})
				ext := next + " changed outside, longer\n"
				if err := os.WriteFile(abs, []byte(ext), 0o644); err != nil {
					t.Fatal(err)
				}
				r = c.CallTool(ctx, "edit", map[string]any{"path": editAs, "edits": []any{map[string]any{"oldText": "changed outside", "newText": "clobbered"}}})
				nestedWant(t, "edit "+editAs+" after an external change", r, true)
				r = c.CallTool(ctx, "write", map[string]any{"path": editAs, "content": "clobbered\n"})
				nestedWant(t, "write "+editAs+" after an external change", r, true)
				if got := nestedGet(t, abs); got != ext {
					t.Errorf("external change overwritten via %s: %q", editAs, got)
				}
			}
			// The outer folder's spelling of a file first read via the
			// inner's: an outer-only name (absolute when inner is first).
			r := c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(outer, "o.txt"), "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}})
			nestedWant(t, "edit of an unread file", r, true)
		})
	}
}

// nestedCheckOnce runs grep and find over the whole workspace and checks each
// fixture file comes out exactly once, under the name given in want, and
// reads back.
func nestedCheckOnce(t *testing.T, ctx context.Context, c *harness.Client, first string, want []string, lines map[string]string) {
	t.Helper()
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
	nestedWant(t, "grep", r, false)
	got := nestedGrepPaths(r.Text())
	nestedSame(t, "grep paths", got, want)
	nestedReadsBack(t, ctx, c, "grep", first, got, lines)
	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
	nestedWant(t, "find", r, false)
	got = nestedListed(r.Text())
	nestedSame(t, "find paths", got, want)
	nestedReadsBack(t, ctx, c, "find", first, got, lines)
}

// The same folder given twice (also once with a trailing slash) is one
// folder: nothing is listed twice, and ls does not offer it as another one.
func TestFoldersNestedSameFolderTwice(t *testing.T) {
	t.Parallel()
	ws := nestedTmp(t)
	nestedPut(t, ws, map[string]string{"a.txt": "needle a\n", "d/b.txt": "needle b\n"})
	lines := map[string]string{filepath.Join(ws, "a.txt"): "needle a", filepath.Join(ws, "d", "b.txt"): "needle b"}
	for _, tc := range []struct {
		name    string
		folders []map[string]any
	}{
		{"identical", nestedFolders(ws, ws)},
		{"trailing slash", []map[string]any{{"uri": nestedURI(ws), "name": "a"}, {"uri": nestedURI(ws) + "/", "name": "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := nestedStart(t, map[string]any{"workspaceFolders": tc.folders}, map[string]any{"mode": "acceptEdits"})
			nestedCheckOnce(t, ctx, c, ws, []string{"a.txt", "d/b.txt"}, lines)
			r := c.CallTool(ctx, "ls", map[string]any{})
			nestedWant(t, "ls", r, false, "a.txt", "d/")
			nestedLacks(t, "ls", r, "more folder")
			c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
			r = c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(ws, "a.txt"), "edits": []any{map[string]any{"oldText": "needle a", "newText": "needle A"}}})
			nestedWant(t, "edit", r, false, "Edited a.txt: 1 replacement")
			if got := nestedGet(t, filepath.Join(ws, "a.txt")); got != "needle A\n" {
				t.Errorf("a.txt = %q", got)
			}
			nestedPut(t, ws, map[string]string{"a.txt": "needle a\n"})
		})
	}
}

// A folder given through a symlink and by its real path is one folder; its
// files are reachable by either absolute spelling, and the edit guard knows
// both spellings are one file.
func TestFoldersNestedSymlinkAndRealPath(t *testing.T) {
	t.Parallel()
	base := nestedTmp(t)
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	nestedPut(t, real, map[string]string{"a.txt": "needle a\n", "d/b.txt": "needle b\n"})
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		folders []string
	}{
		{"link only", []string{link}},
		{"link then real", []string{link, real}},
		{"real then link", []string{real, link}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nestedPut(t, real, map[string]string{"a.txt": "needle a\n"})
			c, ctx := nestedStartFolders(t, tc.folders...)
			first := tc.folders[0]
			lines := map[string]string{}
			for _, d := range []string{link, real} {
				lines[filepath.Join(d, "a.txt")] = "needle a"
				lines[filepath.Join(d, "d", "b.txt")] = "needle b"
			}
			nestedCheckOnce(t, ctx, c, first, []string{"a.txt", "d/b.txt"}, lines)
			for _, p := range []string{"a.txt", filepath.Join(real, "a.txt"), filepath.Join(link, "a.txt")} {
				r := c.CallTool(ctx, "read", map[string]any{"path": p})
				nestedWant(t, "read "+p, r, false, "     1→needle a")
			}
			if len(tc.folders) > 1 {
				r := c.CallTool(ctx, "ls", map[string]any{})
				nestedLacks(t, "ls (one folder, two spellings)", r, "more folder")
			}
			// Read through the link's spelling, edit through the real one
			// and back; an external change is caught through either.
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(link, "a.txt")})
			r := c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(real, "a.txt"), "edits": []any{map[string]any{"oldText": "needle a", "newText": "needle A"}}})
			nestedWant(t, "edit via real path after read via link", r, false, "Edited a.txt: 1 replacement")
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(real, "a.txt")})
			r = c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(link, "a.txt"), "edits": []any{map[string]any{"oldText": "needle A", "newText": "needle a"}}})
			nestedWant(t, "edit via link after read via real path", r, false, "Edited a.txt: 1 replacement")
			c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(link, "a.txt")})
			nestedPut(t, real, map[string]string{"a.txt": "needle a, changed outside\n"})
			r = c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(real, "a.txt"), "edits": []any{map[string]any{"oldText": "changed", "newText": "clobbered"}}})
			nestedWant(t, "edit via real path after an external change", r, true)
			if got := nestedGet(t, filepath.Join(real, "a.txt")); got != "needle a, changed outside\n" {
				t.Errorf("external change overwritten: %q", got)
			}
		})
	}
}

// Folder URIs are percent-decoded: spaces, unicode and a literal '%'.
func TestFoldersNestedOddURIs(t *testing.T) {
	t.Parallel()
	base := nestedTmp(t)
	odd := filepath.Join(base, "a b", "ünï €", "50% off")
	other := filepath.Join(base, "second folder")
	nestedPut(t, odd, map[string]string{"x y.txt": "needle odd\n"})
	nestedPut(t, other, map[string]string{"z.txt": "needle other\n"})
	enc := nestedURI(odd) + "/"
	if !strings.Contains(enc, "a%20b") || !strings.Contains(enc, "50%25%20off") {
		t.Fatalf("fixture URI not encoded: %s", enc)
	}
	// Hand-spelled: lower-case hex, as some clients send it.
	lower := "file://" + strings.ReplaceAll(strings.ReplaceAll(url.PathEscape(filepath.ToSlash(odd)), "%2F", "/"), "%C3", "%c3")
	for _, tc := range []struct {
		name string
		uri  string
	}{{"encoded with trailing slash", enc}, {"lower-case hex", lower}} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := nestedStart(t, map[string]any{"workspaceFolders": []map[string]any{
				{"uri": tc.uri, "name": "odd"}, {"uri": nestedURI(other), "name": "second"},
			}}, map[string]any{"mode": "acceptEdits"})
			lines := map[string]string{filepath.Join(odd, "x y.txt"): "needle odd", filepath.Join(other, "z.txt"): "needle other"}
			nestedCheckOnce(t, ctx, c, odd, []string{"x y.txt", filepath.Join(other, "z.txt")}, lines)
			r := c.CallTool(ctx, "ls", map[string]any{})
			nestedWant(t, "ls", r, false, "x y.txt", "reached by absolute paths: "+other)
			for _, p := range []string{"x y.txt", filepath.Join(odd, "x y.txt")} {
				r := c.CallTool(ctx, "read", map[string]any{"path": p})
				nestedWant(t, "read "+p, r, false, "1→needle odd")
			}
			r = c.CallTool(ctx, "write", map[string]any{"path": "new file.txt", "content": "made\n"})
			nestedWant(t, "write relative", r, false)
			if got := nestedGet(t, filepath.Join(odd, "new file.txt")); got != "made\n" {
				t.Errorf("new file.txt = %q", got)
			}
			os.Remove(filepath.Join(odd, "new file.txt"))
			r = c.CallTool(ctx, "bash", map[string]any{"command": "pwd"})
			nestedWant(t, "bash cwd is the decoded first folder", r, false, odd)
		})
	}
}

// rootUri (and rootPath) name the workspace when workspaceFolders is absent;
// workspaceFolders wins over them.
func TestFoldersNestedRootURIOnly(t *testing.T) {
	t.Parallel()
	a := nestedTmp(t)
	b := nestedTmp(t)
	nestedPut(t, a, map[string]string{"which.txt": "needle A\n"})
	nestedPut(t, b, map[string]string{"which.txt": "needle B\n"})
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"rootUri", map[string]any{"rootUri": nestedURI(a)}, "needle A"},
		{"rootUri with trailing slash", map[string]any{"rootUri": nestedURI(a) + "/"}, "needle A"},
		{"rootPath", map[string]any{"rootPath": a}, "needle A"},
		{"rootUri over rootPath", map[string]any{"rootUri": nestedURI(a), "rootPath": b}, "needle A"},
		{"workspaceFolders over rootUri", map[string]any{"rootUri": nestedURI(a), "workspaceFolders": nestedFolders(b)}, "needle B"},
		{"null workspaceFolders", map[string]any{"rootUri": nestedURI(b), "workspaceFolders": nil}, "needle B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := nestedStart(t, tc.params, nil)
			r := c.CallTool(ctx, "read", map[string]any{"path": "which.txt"})
			nestedWant(t, "read which.txt", r, false, "1→"+tc.want)
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
			nestedSame(t, "grep", nestedGrepPaths(r.Text()), []string{"which.txt"})
		})
	}
}

// A folder that does not exist (or is a file) beside a good one is skipped
// and named (window/showMessage); with none usable initialize fails with
// -32602 naming it, and the client may then initialize again with good
// folders.
func TestFoldersNestedMissingAtStart(t *testing.T) {
	t.Parallel()
	ws := nestedTmp(t)
	nestedPut(t, ws, map[string]string{"a.txt": "needle a\n"})
	gone := filepath.Join(ws, "no such dir")
	for _, tc := range []struct {
		name   string
		params map[string]any
		bad    string
		why    string
	}{
		{"missing second folder", map[string]any{"workspaceFolders": nestedFolders(ws, gone)}, gone, "does not exist"},
		{"missing first folder", map[string]any{"workspaceFolders": nestedFolders(gone, ws)}, gone, "does not exist"},
		{"missing rootUri", map[string]any{"rootUri": nestedURI(gone)}, gone, "does not exist"},
		{"a file as folder", map[string]any{"workspaceFolders": nestedFolders(filepath.Join(ws, "a.txt"))}, filepath.Join(ws, "a.txt"), "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := harness.Start(t, harness.Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tc.params["capabilities"] = map[string]any{}
			var res map[string]any
			err := c.Call(ctx, "initialize", tc.params, &res)
			if strings.HasPrefix(tc.name, "missing") && strings.HasSuffix(tc.name, "folder") {
				// A good folder is left: the bad one is skipped and shown.
				if err != nil {
					t.Fatalf("initialize with %s beside a good folder: %v", tc.bad, err)
				}
				if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
					return n.Method == "window/showMessage" && strings.Contains(string(n.Params), tc.bad) && strings.Contains(string(n.Params), tc.why)
				}); !ok {
					t.Errorf("no window/showMessage names %s: %v", tc.bad, c.Notes("window/showMessage"))
				}
				c.Conn.Notify(ctx, "initialized", map[string]any{})
				r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(ws, "a.txt")})
				nestedWant(t, "read in the good folder", r, false, "1→needle a")
				return
			}
			if err == nil {
				t.Fatalf("initialize with %s succeeded", tc.bad)
			}
			if code := nestedCode(err); code != -32602 {
				t.Errorf("code %d, want -32602: %v", code, err)
			}
			if !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error does not name %q and %q: %v", tc.bad, tc.why, err)
			}
			c.Initialize(ctx, map[string]any{"workspaceFolders": nestedFolders(ws)})
			r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
			nestedWant(t, "read after a good initialize", r, false, "1→needle a")
		})
	}
}

// nestedMissingRe matches an error that says something is missing.
var nestedMissingRe = regexp.MustCompile(`not found|does not exist|no such file|no longer exists`)

// nestedCode is a JSON-RPC error's code (0 when err carries none).
func nestedCode(err error) int64 {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return int64(e.Code)
	}
	return 0
}

// A folder deleted while the session runs: calls that need it fail with a
// clear error, the other folder keeps working, the server survives.
func TestFoldersNestedDeletedDuringSession(t *testing.T) {
	t.Parallel()
	type deletedCase struct {
		name      string
		goneFirst bool
		env       string
	}
	var cases []deletedCase
	for _, be := range nestedBackends {
		cases = append(cases, deletedCase{"first folder deleted/" + be.name, true, be.env}, deletedCase{"second folder deleted/" + be.name, false, be.env})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := nestedTmp(t)
			gone := filepath.Join(base, "gone")
			kept := filepath.Join(base, "kept")
			nestedPut(t, gone, map[string]string{"g.txt": "needle gone\n"})
			nestedPut(t, kept, map[string]string{"k.txt": "needle kept\n"})
			folders := []string{kept, gone}
			if tc.goneFirst {
				folders = []string{gone, kept}
			}
			c, ctx := nestedStart(t, map[string]any{"workspaceFolders": nestedFolders(folders...)}, map[string]any{"mode": "acceptEdits"}, tc.env)
			g := filepath.Join(gone, "g.txt")
			k := filepath.Join(kept, "k.txt")
			nestedWant(t, "read before", c.CallTool(ctx, "read", map[string]any{"path": g}), false, "1→needle gone")
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"read", map[string]any{"path": g}},
				{"ls", map[string]any{"path": gone}},
				{"grep", map[string]any{"pattern": "needle", "path": gone}},
				{"find", map[string]any{"pattern": "*.txt", "path": gone}},
				{"write", map[string]any{"path": g, "content": "x\n"}},
				{"edit", map[string]any{"path": g, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}}},
			}
			for _, cl := range calls {
				r, err := c.TryCallTool(ctx, cl.tool, cl.args)
				if err != nil {
					t.Errorf("%s %v: protocol error %v", cl.tool, cl.args, err)
					continue
				}
				nestedWant(t, cl.tool+" in the deleted folder", r, true)
				if !nestedMissingRe.MatchString(r.Text()) {
					t.Errorf("%s: error does not say what is missing: %s", cl.tool, r.Text())
				}
				if cl.tool == "write" || cl.tool == "edit" {
					// The refusal names the gone folder, not a temp file.
					nestedWant(t, cl.tool+" names the gone folder", r, true, "its workspace folder "+gone+" no longer exists", "Nothing was changed.")
					nestedLacks(t, cl.tool+" names no temp file", r, ".agentls-tmp")
				}
			}
			if _, err := os.Stat(gone); err == nil {
				t.Errorf("a call re-created the deleted folder")
			}
			// The other folder keeps working, whole-workspace search too.
			nestedWant(t, "read kept", c.CallTool(ctx, "read", map[string]any{"path": k}), false, "1→needle kept")
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
			nestedWant(t, "grep everything", r, false, "needle kept")
			nestedLacks(t, "grep everything", r, "needle gone")
			r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
			nestedWant(t, "find everything", r, false, "k.txt")
			if tc.goneFirst {
				// Relative paths resolve in the deleted first folder: a clear error.
				r = c.CallTool(ctx, "read", map[string]any{"path": "k.txt"})
				nestedWant(t, "relative read with the first folder gone", r, true, "k.txt")
				r = c.CallTool(ctx, "bash", map[string]any{"command": "true"})
				nestedWant(t, "bash with the first folder gone", r, true, gone)
			} else {
				nestedWant(t, "relative read", c.CallTool(ctx, "read", map[string]any{"path": "k.txt"}), false, "1→needle kept")
				nestedWant(t, "bash", c.CallTool(ctx, "bash", map[string]any{"command": "echo ok"}), false, "ok")
			}
			var tl map[string]any
			if err := c.Call(ctx, "tools/list", map[string]any{}, &tl); err != nil {
				t.Errorf("tools/list after the deletion: %v", err)
			}
			// Created again at its path (a fresh clone, say), the folder is
			// another directory: the next call that finds something missing
			// there opens it, and the session follows it.
			nestedPut(t, gone, map[string]string{"g.txt": "needle back\n", ".gitignore": "skip.txt\n", "skip.txt": "needle skipped\n"})
			nestedWant(t, "read in the re-created folder", c.CallTool(ctx, "read", map[string]any{"path": g}), false, "1→needle back")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
			nestedWant(t, "grep in the re-created folder", r, false, "needle back", "needle kept")
			nestedLacks(t, "grep in the re-created folder", r, "not searched", "needle skipped")
			if tc.goneFirst {
				nestedWant(t, "relative read with the first folder back", c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}), false, "1→needle back")
			}
			nestedWant(t, "edit in the re-created folder", c.CallTool(ctx, "edit", map[string]any{"path": g, "edits": []any{map[string]any{"oldText": "back", "newText": "edited"}}}), false)
			if got := readFile(t, g); got != "needle edited\n" {
				t.Errorf("after the edit %s holds %q", g, got)
			}
			// The watchers follow the new directory: a change made there is
			// announced.
			if !waitUntil(5*time.Second, func() bool {
				writeFile(t, g, fmt.Sprintf("changed outside %d\n", time.Now().UnixNano()))
				_, ok := c.WaitNote(200*time.Millisecond, func(n harness.Note) bool {
					var ev struct{ URI, Kind string }
					return n.Method == "workspace/externalChange" && json.Unmarshal(n.Params, &ev) == nil && ev.URI == nestedURI(g)
				})
				return ok
			}) {
				t.Errorf("no workspace/externalChange for %s in the re-created folder; notes: %v", g, c.Notes("workspace/externalChange"))
			}
			// Deleted again, it is gone again.
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			nestedWant(t, "read in the folder deleted again", c.CallTool(ctx, "read", map[string]any{"path": g}), true,
				"its workspace folder "+gone+" no longer exists. Once a directory is there again, the next call opens it.")
			nestedWant(t, "grep names the folder deleted again", c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}), false,
				"[Workspace folder "+gone+" no longer exists; it was not searched.]")
		})
	}
}

// nestedChange sends workspace/didChangeWorkspaceFolders.
func nestedChange(t *testing.T, ctx context.Context, c *harness.Client, added, removed []string) {
	t.Helper()
	err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{
		"event": map[string]any{"added": nestedFolders(added...), "removed": nestedFolders(removed...)},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Removing the first folder makes the second the first: relative paths
// resolve there and printed paths follow; a removed folder's reads are
// forgotten when it comes back.
func TestFoldersNestedRemoveFirst(t *testing.T) {
	t.Parallel()
	base := nestedTmp(t)
	a := filepath.Join(base, "A")
	b := filepath.Join(base, "B")
	nestedPut(t, a, map[string]string{"a.txt": "needle a\n", "same.txt": "needle same A\n"})
	nestedPut(t, b, map[string]string{"b.txt": "needle b\n", "same.txt": "needle same B\n"})
	lines := map[string]string{
		filepath.Join(a, "a.txt"): "needle a", filepath.Join(a, "same.txt"): "needle same A",
		filepath.Join(b, "b.txt"): "needle b", filepath.Join(b, "same.txt"): "needle same B",
	}
	c, ctx := nestedStartFolders(t, a, b)
	nestedCheckOnce(t, ctx, c, a, []string{"a.txt", "same.txt", filepath.Join(b, "b.txt"), filepath.Join(b, "same.txt")}, lines)
	nestedWant(t, "read a.txt", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false)

	nestedChange(t, ctx, c, nil, []string{a})
	nestedWant(t, "read same.txt after removing A", c.CallTool(ctx, "read", map[string]any{"path": "same.txt"}), false, "same.txt, lines 1-1 of 1\n     1→needle same B")
	nestedCheckOnce(t, ctx, c, b, []string{"b.txt", "same.txt"}, lines)
	r := c.CallTool(ctx, "ls", map[string]any{})
	nestedWant(t, "ls", r, false, "b.txt", "same.txt")
	nestedLacks(t, "ls", r, "a.txt", "more folder")
	r = c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(a, "a.txt")})
	nestedWant(t, "read in the removed folder", r, true, "outside the workspace")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "pwd"})
	nestedWant(t, "bash runs in the new first folder", r, false, b)
	r = c.CallTool(ctx, "write", map[string]any{"path": "new.txt", "content": "needle made\n"})
	nestedWant(t, "write relative", r, false)
	if _, err := os.Stat(filepath.Join(b, "new.txt")); err != nil {
		t.Errorf("relative write did not land in B: %v", err)
	}

	// A comes back, second now: the read before the removal is forgotten
	// (checked before anything reads it again).
	nestedChange(t, ctx, c, []string{a}, nil)
	edit := map[string]any{"path": filepath.Join(a, "a.txt"), "edits": []any{map[string]any{"oldText": "needle a", "newText": "pin a"}}}
	nestedWant(t, "edit in the re-added folder without a fresh read", c.CallTool(ctx, "edit", edit), true)
	if got := nestedGet(t, filepath.Join(a, "a.txt")); got != "needle a\n" {
		t.Errorf("a.txt changed: %q", got)
		nestedPut(t, a, map[string]string{"a.txt": "needle a\n"})
	}
	nestedCheckOnce(t, ctx, c, b, []string{"b.txt", "new.txt", "same.txt", filepath.Join(a, "a.txt"), filepath.Join(a, "same.txt")},
		map[string]string{
			filepath.Join(a, "a.txt"): "needle a", filepath.Join(a, "same.txt"): "needle same A",
			filepath.Join(b, "b.txt"): "needle b", filepath.Join(b, "same.txt"): "needle same B",
			filepath.Join(b, "new.txt"): "needle made",
		})
	c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(a, "a.txt")})
	nestedWant(t, "edit after a fresh read", c.CallTool(ctx, "edit", edit), false, "Edited "+filepath.Join(a, "a.txt"))
}

// Adding a folder nested in an existing one (or one that contains it):
// nothing is listed twice, printed names follow the first folder.
func TestFoldersNestedAddNested(t *testing.T) {
	t.Parallel()
	outer, inner := nestedNested(t)
	lines := map[string]string{
		filepath.Join(outer, "o.txt"):        "needle outer",
		filepath.Join(inner, "i.txt"):        "needle inner",
		filepath.Join(inner, "sub", "d.txt"): "needle deep",
	}
	t.Run("inner added to outer", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, outer)
		nestedChange(t, ctx, c, []string{inner}, nil)
		nestedCheckOnce(t, ctx, c, outer, []string{"inner/i.txt", "inner/sub/d.txt", "o.txt"}, lines)
		r := c.CallTool(ctx, "ls", map[string]any{})
		nestedWant(t, "ls", r, false)
		wantLacks(t, "ls: a folder inside the first is not another folder", r.Text(), "more folder")
		// A read through the outer spelling before the add still counts
		// through the inner folder's absolute spelling.
		c.CallTool(ctx, "read", map[string]any{"path": "inner/i.txt"})
		r = c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(inner, "i.txt"), "edits": []any{map[string]any{"oldText": "needle inner", "newText": "needle inner"}}})
		nestedWant(t, "identical edit is 'no change'", r, true, "no change")
	})
	t.Run("outer added to inner", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, inner)
		c.CallTool(ctx, "read", map[string]any{"path": "i.txt"})
		nestedChange(t, ctx, c, []string{outer}, nil)
		// The read before the add still holds: the inner folder was not removed.
		r := c.CallTool(ctx, "edit", map[string]any{"path": filepath.Join(inner, "i.txt"), "edits": []any{map[string]any{"oldText": "needle inner", "newText": "needle Inner"}}})
		nestedWant(t, "edit after the add", r, false, "Edited ")
		nestedPut(t, inner, map[string]string{"i.txt": "needle inner\n"})
		nestedCheckOnce(t, ctx, c, inner, []string{"i.txt", "sub/d.txt", filepath.Join(outer, "o.txt")}, lines)
	})
	t.Run("outer removed, inner stays", func(t *testing.T) {
		c, ctx := nestedStartFolders(t, outer, inner)
		c.CallTool(ctx, "read", map[string]any{"path": "inner/i.txt"})
		nestedChange(t, ctx, c, nil, []string{outer})
		// i.txt stays in the workspace (in the inner folder): its read holds.
		r := c.CallTool(ctx, "edit", map[string]any{"path": "i.txt", "edits": []any{map[string]any{"oldText": "needle inner", "newText": "needle Inner"}}})
		nestedWant(t, "edit of a file still in the workspace", r, false, "Edited i.txt: 1 replacement")
		nestedPut(t, inner, map[string]string{"i.txt": "needle inner\n"})
		nestedCheckOnce(t, ctx, c, inner, []string{"i.txt", "sub/d.txt"}, lines)
		nestedWant(t, "o.txt is outside now", c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(outer, "o.txt")}), true, "outside the workspace")
	})
}

// nestedCLIFixture is two folders, the second nested roots given too, and
// what each file's first line is.
func nestedCLIFixture(t *testing.T) (a, b, inner string, lines map[string]string) {
	t.Helper()
	base := nestedTmp(t)
	a = filepath.Join(base, "A")
	b = filepath.Join(base, "B")
	inner = filepath.Join(b, "in")
	nestedPut(t, a, map[string]string{"a.txt": "needle a\n", "same.txt": "needle same A\n"})
	nestedPut(t, b, map[string]string{"b.txt": "needle b\n", "same.txt": "needle same B\n", "in/c.txt": "needle c\n"})
	lines = map[string]string{
		filepath.Join(a, "a.txt"): "needle a", filepath.Join(a, "same.txt"): "needle same A",
		filepath.Join(b, "b.txt"): "needle b", filepath.Join(b, "same.txt"): "needle same B",
		filepath.Join(inner, "c.txt"): "needle c",
	}
	return a, b, inner, lines
}

// nestedCLI runs `agentls call` with the calls and roots, and returns each
// call's section of the output.
func nestedCLI(t *testing.T, roots []string, calls ...string) []string {
	t.Helper()
	args := append([]string{"call"}, calls...)
	for _, r := range roots {
		args = append(args, "--root", r)
	}
	cmd := harness.Command(t, args)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agentls %q: %v\n%s", args, err, out)
	}
	var sections []string
	for _, s := range strings.Split(string(out), "== ")[1:] {
		_, body, _ := strings.Cut(s, "\n")
		sections = append(sections, body)
	}
	if len(sections) != len(calls)/2 {
		t.Fatalf("%d sections for %d calls:\n%s", len(sections), len(calls)/2, out)
	}
	return sections
}

func nestedJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// `agentls call --root A --root B`: grep and find cover both folders (a
// nested root once), and every printed path reads back in a new session.
func TestFoldersNestedCLITwoRoots(t *testing.T) {
	t.Parallel()
	a, b, inner, lines := nestedCLIFixture(t)
	roots := []string{a, b, inner}
	want := []string{"a.txt", "same.txt", filepath.Join(b, "b.txt"), filepath.Join(inner, "c.txt"), filepath.Join(b, "same.txt")}
	out := nestedCLI(t, roots, "grep", `{"pattern": "needle"}`, "find", `{"pattern": "*.txt"}`)
	for i, got := range [][]string{nestedGrepPaths(out[0]), nestedListed(out[1])} {
		nestedSame(t, []string{"grep", "find"}[i], got, want)
	}
	var calls []string
	for _, p := range want {
		calls = append(calls, "read", nestedJSON(map[string]any{"path": p}))
	}
	for i, sec := range nestedCLI(t, roots, calls...) {
		if !strings.Contains(sec, ", lines 1-1 of 1\n     1→"+lines[nestedAbs(a, want[i])]+"\n") {
			t.Errorf("read %s:\n%s", want[i], sec)
		}
	}
}

// nestedMCP is a minimal MCP client over newline-delimited JSON.
type nestedMCP struct {
	t      *testing.T
	enc    *json.Encoder
	lines  chan []byte
	nextID int
}

func nestedStartMCP(t *testing.T, roots ...string) *nestedMCP {
	t.Helper()
	args := []string{"mcp"}
	for _, r := range roots {
		args = append(args, "--root", r)
	}
	cmd := harness.Command(t, args)
	stdin, stdout := harness.StartPiped(t, cmd)
	m := &nestedMCP{t: t, enc: json.NewEncoder(stdin), lines: make(chan []byte, 64)}
	// The reader ends when the process's stdout closes (at cleanup).
	go func() {
		defer close(m.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			m.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	m.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "a20f", "version": "1"}})
	if err := m.enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	return m
}

// call sends a request and returns its result, skipping other messages.
func (m *nestedMCP) call(method string, params any) json.RawMessage {
	m.t.Helper()
	m.nextID++
	id := m.nextID
	if err := m.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		m.t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-m.lines:
			if !ok {
				m.t.Fatalf("%s: agentls mcp closed its output", method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id || msg.Method != "" {
				continue
			}
			if msg.Error != nil {
				m.t.Fatalf("%s: error %s", method, msg.Error)
			}
			return msg.Result
		case <-deadline:
			m.t.Fatalf("%s: no reply", method)
		}
	}
}

// tool calls a tool and returns its text.
func (m *nestedMCP) tool(name string, args map[string]any) string {
	m.t.Helper()
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal(m.call("tools/call", map[string]any{"name": name, "arguments": args}), &res); err != nil {
		m.t.Fatal(err)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	if res.IsError {
		m.t.Errorf("%s %v: isError: %s", name, args, strings.Join(parts, "\n"))
	}
	return strings.Join(parts, "\n")
}

// `agentls mcp --root A --root B`: the same coverage and round trip.
func TestFoldersNestedMCPTwoRoots(t *testing.T) {
	t.Parallel()
	a, b, inner, lines := nestedCLIFixture(t)
	m := nestedStartMCP(t, a, b, inner)
	want := []string{"a.txt", "same.txt", filepath.Join(b, "b.txt"), filepath.Join(inner, "c.txt"), filepath.Join(b, "same.txt")}
	nestedSame(t, "grep", nestedGrepPaths(m.tool("grep", map[string]any{"pattern": "needle"})), want)
	got := nestedListed(m.tool("find", map[string]any{"pattern": "*.txt"}))
	nestedSame(t, "find", got, want)
	for _, p := range got {
		text := m.tool("read", map[string]any{"path": p})
		if !strings.Contains(text, ", lines 1-1 of 1\n     1→"+lines[nestedAbs(a, p)]) {
			t.Errorf("read %s:\n%s", p, text)
		}
	}
	ls := m.tool("ls", map[string]any{})
	if !strings.Contains(ls, "[The workspace has 2 more folder(s), reached by absolute paths: "+b+", "+inner+".") {
		t.Errorf("ls:\n%s", ls)
	}
}

// A file of a nested folder is watched once: one externalChange per change,
// naming the file's URI, whichever folder comes first.
func TestFoldersNestedNestedExternalChangeOnce(t *testing.T) {
	t.Parallel()
	for _, order := range []string{"outer only", "outer first", "inner first", "outer twice"} {
		t.Run(order, func(t *testing.T) {
			outer, inner := nestedNested(t)
			folders := map[string][]string{"outer only": {outer}, "outer first": {outer, inner}, "inner first": {inner, outer}, "outer twice": {outer, outer}}[order]
			c, ctx := nestedStartFolders(t, folders...)
			x := filepath.Join(inner, "i.txt")
			y := filepath.Join(outer, "o.txt")
			for _, p := range []string{x, y} {
				nestedWant(t, "read "+p, c.CallTool(ctx, "read", map[string]any{"path": p}), false)
			}
			isFor := func(p string) func(harness.Note) bool {
				return func(n harness.Note) bool {
					var ev struct{ URI, Kind string }
					return json.Unmarshal(n.Params, &ev) == nil && n.Method == "workspace/externalChange" && ev.URI == nestedURI(p) && ev.Kind == "changed"
				}
			}
			// Replaced in one step (write aside, rename over): a truncate
			// and a write a busy machine spreads over more than the settle
			// window are two changes, each announced (TestExternalChangeBurstBounded
			// allows two per os.WriteFile); one change is the point here.
			replace := func(p string) {
				tmp := p + ".new"
				if err := os.WriteFile(tmp, []byte("changed outside\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, p); err != nil {
					t.Fatal(err)
				}
			}
			replace(x)
			if _, ok := c.WaitNote(10*time.Second, isFor(x)); !ok {
				t.Fatalf("no workspace/externalChange for %s; notes: %v", x, c.Notes("workspace/externalChange"))
			}
			// A later change to another file is the barrier: a duplicate for
			// x would have arrived before it.
			replace(y)
			if _, ok := c.WaitNote(10*time.Second, isFor(y)); !ok {
				t.Fatalf("no workspace/externalChange for %s", y)
			}
			n := 0
			for _, note := range c.Notes("workspace/externalChange") {
				if isFor(x)(note) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d externalChange notifications for one change of %s: %s", n, x, nestedNotes(c, "workspace/externalChange"))
			}
		})
	}
}

// A folder added through didChangeWorkspaceFolders that does not exist, and
// the removal of a folder that is not there: the session goes on.
func TestFoldersNestedChangeBadFolders(t *testing.T) {
	t.Parallel()
	ws := nestedTmp(t)
	nestedPut(t, ws, map[string]string{"a.txt": "needle a\n"})
	gone := filepath.Join(nestedTmp(t), "never")
	c, ctx := nestedStartFolders(t, ws)
	nestedChange(t, ctx, c, []string{gone}, []string{filepath.Join(gone, "other")})
	nestedWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false, "1→needle a")
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
	nestedWant(t, "grep", r, false, "a.txt:1: needle a")
	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
	nestedWant(t, "find", r, false, "a.txt")
	r = c.CallTool(ctx, "ls", map[string]any{})
	nestedLacks(t, "ls (a folder that does not exist is no folder)", r, "more folder")
}

// nestedNotes is the params of the notifications with method, one a line.
func nestedNotes(c *harness.Client, method string) string {
	var out []string
	for _, n := range c.Notes(method) {
		out = append(out, string(n.Params))
	}
	return strings.Join(out, "\n")
}
