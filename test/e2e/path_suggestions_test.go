//go:build linux

package e2e

// What a search over a tree walks past because it cannot be read is
// counted in a closing note (docs/tools.md): `[Not searched: N path(s) could
// not be read (permission denied): a, b.]`, at most 3 named (and only those
// the permission rules let the model list), the same from both grep
// backends; a path naming an unreadable dir or file is an error.
//
// File modes must bind agentls (root reads everything): as root they run it
// through filesystem_failures_test.go's setpriv wrapper (fsFailModesBind).
// The "Did you mean" suggestions are scripts:
// cmd/agentls/testdata/script/read/suggest_* and ls/suggest_*.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// ------------------------------------------------------------ helpers

// suggestNote is the "[Not searched: …]" note of a result ("" when none).
func suggestNote(text string) string {
	i := strings.Index(text, "[Not searched:")
	if i < 0 {
		return ""
	}
	j := strings.Index(text[i:], "]")
	if j < 0 {
		return text[i:]
	}
	return text[i : i+j+1]
}

var suggestNoteRE = regexp.MustCompile(`^\[Not searched: (\d+) paths? could not be read \(permission denied\): (.+?)(?: and (\d+) more)?\.\]$`)

// suggestParseNote splits a note into its count, the named paths and the
// "and N more" number; it fails the test when the note has another shape.
func suggestParseNote(t *testing.T, what, note string) (int, []string, int) {
	t.Helper()
	m := suggestNoteRE.FindStringSubmatch(note)
	if m == nil {
		t.Errorf("%s: note %q is not `[Not searched: N path(s) could not be read (permission denied): a, b[ and N more].]`", what, note)
		return 0, nil, 0
	}
	n, _ := strconv.Atoi(m[1])
	more, _ := strconv.Atoi(m[3])
	return n, strings.Split(m[2], ", "), more
}

// suggestNobodyEnv points the state directories somewhere shared.
func suggestNobodyEnv(t *testing.T) []string {
	home := fsFailShareDir(t, "paths-home-")
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config", "XDG_CACHE_HOME=" + home + "/cache",
		"XDG_STATE_HOME=" + home + "/state", "AGENTLS_AUDIT_DIR=" + home + "/audit"}
}

// suggestNobodyPair starts two agentls that file modes bind over params'
// workspace, one per grep backend (rg, go).
func suggestNobodyPair(t *testing.T, ws string, params map[string]any) (rg, gob *harness.Client, ctx context.Context) {
	t.Helper()
	rg, ctx = fsFailModesBind(t, ws, suggestNobodyEnv(t)...) // as root: AGENTLS_BIN is the setpriv wrapper
	if params != nil {
		// a second rg session with the wanted initialize params
		rg = harness.Start(t, harness.Options{Root: ws, Env: append(suggestNobodyEnv(t), "AGENTLS_GREP_BACKEND=rg")})
		rg.Initialize(ctx, params)
	}
	gob = harness.Start(t, harness.Options{Root: ws, Env: append(suggestNobodyEnv(t), "AGENTLS_GREP_BACKEND=go")})
	if params == nil {
		params = map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}}
	}
	gob.Initialize(ctx, params)
	return rg, gob, ctx
}

// suggestLock makes the paths (relative to ws) unreadable: mode 000.
func suggestLock(t *testing.T, ws string, rels ...string) {
	t.Helper()
	for _, r := range rels {
		if err := os.Chmod(filepath.Join(ws, r), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// ------------------------------------------- part 2: [Not searched: …]

// suggestTree is a shared workspace with five unreadable top-level dirs, an
// unreadable hidden dir, an unreadable dir and file nested in a readable dir,
// an unreadable dir inside an ignored dir, and readable matches around them.
func suggestTree(t *testing.T) string {
	ws := fsFailShareDir(t, "paths-ws-")
	fsFailPut(t, ws, map[string]string{
		"ok.txt":   "needle ok\n",
		"d1/f.txt": "needle\n", "d2/f.txt": "needle\n", "d3/f.txt": "needle\n", "d4/f.txt": "needle\n", "d5/f.txt": "needle\n",
		".hid/f.txt":      "needle\n",
		".gitignore":      "ign/\n",
		"ign/inner/f.txt": "needle\n",
		"sub/deep/f.txt":  "needle\n",
		"sub/locked.txt":  "needle\n",
		"zz/last.txt":     "needle last\n",
	}, 0o666)
	suggestLock(t, ws, "d1", "d2", "d3", "d4", "d5", ".hid", "ign/inner", "sub/deep", "sub/locked.txt")
	return ws
}

func TestPathsNotSearchedCounts(t *testing.T) {
	ws := suggestTree(t)
	rg, gob, ctx := suggestNobodyPair(t, ws, nil)
	backends := []struct {
		name string
		c    *harness.Client
	}{{"rg", rg}, {"go", gob}}

	type want struct {
		count int
		not   []string // never named
	}
	for _, q := range []struct {
		name string
		tool string
		args map[string]any
		w    want
	}{
		// d1..d5, .hid, sub/deep, sub/locked.txt; ign/inner is not walked.
		{"grep all", "grep", map[string]any{"pattern": "needle"}, want{8, []string{"ign/inner", "ign"}}},
		{"grep no match", "grep", map[string]any{"pattern": "nothing-here"}, want{8, []string{"ign/inner"}}},
		{"grep hidden:false", "grep", map[string]any{"pattern": "needle", "hidden": false}, want{7, []string{".hid", "ign/inner"}}},
		{"grep includeIgnored", "grep", map[string]any{"pattern": "needle", "includeIgnored": true}, want{9, nil}},
		{"grep sub", "grep", map[string]any{"pattern": "needle", "path": "sub"}, want{2, []string{"d1"}}},
		// find reads directories, not files: the unreadable file is listed.
		{"find all", "find", map[string]any{"pattern": "*.txt"}, want{7, []string{"ign/inner", "sub/locked.txt"}}},
		{"find includeIgnored", "find", map[string]any{"pattern": "*.txt", "includeIgnored": true}, want{8, nil}},
		{"find sub", "find", map[string]any{"pattern": "*", "path": "sub"}, want{1, nil}},
	} {
		t.Run(q.name, func(t *testing.T) {
			notes := map[string]string{}
			for _, be := range backends {
				if q.tool == "find" && be.name == "go" {
					continue // find has one walker
				}
				r := be.c.CallTool(ctx, q.tool, q.args)
				if r.IsError {
					t.Errorf("%s (%s) failed the whole search: %q", q.tool, be.name, r.Text())
					continue
				}
				if q.tool == "grep" && !strings.Contains(q.args["pattern"].(string), "nothing") && q.args["path"] == nil {
					wantContains(t, be.name, r.Text(), "ok.txt:1:", "zz/last.txt:1:")
				}
				note := suggestNote(r.Text())
				notes[be.name] = note
				n, named, more := suggestParseNote(t, q.name+"/"+be.name, note)
				if n != q.w.count {
					t.Errorf("%s (%s): count %d, want %d: %q", q.name, be.name, n, q.w.count, note)
				}
				wantNamed := min(3, q.w.count)
				if len(named) != wantNamed || more != q.w.count-wantNamed {
					t.Errorf("%s (%s): want %d named and \"and %d more\": %q", q.name, be.name, wantNamed, q.w.count-wantNamed, note)
				}
				for _, p := range named {
					for _, bad := range q.w.not {
						if p == bad {
							t.Errorf("%s (%s) names %q: %q", q.name, be.name, p, note)
						}
					}
				}
			}
			if q.tool == "grep" && notes["rg"] != notes["go"] {
				t.Errorf("%s: the note differs between the backends (docs: \"the same from both backends\"):\n rg: %s\n go: %s", q.name, notes["rg"], notes["go"])
			}
		})
	}
	t.Run("named paths work as paths", func(t *testing.T) {
		// A named path, sent back, is the permission error it stands for.
		r := rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
		_, named, _ := suggestParseNote(t, "grep", suggestNote(r.Text()))
		for _, p := range named {
			back := rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": p})
			wantResult(t, "grep path "+p, back, true, "permission denied", p)
		}
	})
	t.Run("the same note every time", func(t *testing.T) {
		// rg searches in parallel; the note must not depend on who came first.
		first := suggestNote(rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text())
		for i := 0; i < 8; i++ {
			if n := suggestNote(rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text()); n != first {
				t.Fatalf("grep (rg) note changed between identical calls:\n %s\n %s", first, n)
			}
		}
	})
}

func TestPathsUnreadablePathIsError(t *testing.T) {
	ws := suggestTree(t)
	rg, gob, ctx := suggestNobodyPair(t, ws, nil)
	for _, p := range []string{"sub/deep", "sub/locked.txt", "d1", ".hid"} {
		for _, be := range []struct {
			name string
			c    *harness.Client
		}{{"rg", rg}, {"go", gob}} {
			r := be.c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": p})
			wantResult(t, "grep ("+be.name+") path "+p, r, true, "permission denied", p)
			if strings.Contains(r.Text(), "No matches") {
				t.Errorf("grep (%s) of unreadable %s says No matches: %q", be.name, p, r.Text())
			}
		}
	}
	wantResult(t, "ls of the root", rg.CallTool(ctx, "ls", map[string]any{}), false, "d1/", "ok.txt")
	wantResult(t, "ls of an unreadable dir", rg.CallTool(ctx, "ls", map[string]any{"path": "d1"}), true, "permission denied", "d1")
	wantResult(t, "read inside an unreadable dir", rg.CallTool(ctx, "read", map[string]any{"path": "sub/deep/f.txt"}), true, "permission denied", "sub/deep/f.txt")
	for _, p := range []string{"sub/deep", "d1"} {
		r := rg.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": p})
		wantResult(t, "find path "+p, r, true, "permission denied", p)
		if strings.Contains(r.Text(), "No files match") {
			t.Errorf("find of unreadable %s says nothing matched: %q", p, r.Text())
		}
	}
}

// A Read deny rule: the denied, unreadable paths are not named in the note
// ("only those the permission rules let the model list"), but the paths the
// model may list still are, up to 3; a second folder's path is named so it
// can be sent back (absolute).
func TestPathsNotSearchedDenyAndFolders(t *testing.T) {
	ws := fsFailShareDir(t, "paths-ws-")
	ws2 := fsFailShareDir(t, "paths-ws2-")
	fsFailPut(t, ws, map[string]string{
		"ok.txt": "needle ok\n", "locked/f.txt": "needle\n", "private/f.txt": "needle\n", "private.txt": "needle\n",
	}, 0o666)
	fsFailPut(t, ws2, map[string]string{"ok2.txt": "needle two\n", "locked2/f.txt": "needle\n"}, 0o666)
	suggestLock(t, ws, "locked", "private", "private.txt")
	suggestLock(t, ws2, "locked2")
	params := map[string]any{
		"workspaceFolders": nestedFolders(ws, ws2),
		"initializationOptions": map[string]any{"mode": "acceptEdits",
			"permissions": map[string]any{"deny": []any{"Read(./private)", "Read(./private.txt)"}}},
	}
	rg, gob, ctx := suggestNobodyPair(t, ws, params)
	locked2 := filepath.Join(ws2, "locked2")
	if ls := rg.CallTool(ctx, "ls", map[string]any{}); strings.Contains(ls.Text(), "private") {
		t.Fatalf("precondition: ls shows a denied name: %q", ls.Text())
	}
	for _, be := range []struct {
		name string
		c    *harness.Client
	}{{"rg", rg}, {"go", gob}} {
		for _, tool := range []string{"grep", "find"} {
			args := map[string]any{"pattern": "needle"}
			if tool == "find" {
				args = map[string]any{"pattern": "*.txt"}
			}
			r := be.c.CallTool(ctx, tool, args)
			note := suggestNote(r.Text())
			what := tool + " (" + be.name + ")"
			if note == "" {
				t.Errorf("%s: no note: %q", what, r.Text())
				continue
			}
			if strings.Contains(note, "private") {
				t.Errorf("%s names a denied path: %q", what, note)
			}
			_, named, _ := suggestParseNote(t, what, note)
			has := map[string]bool{}
			for _, p := range named {
				has[p] = true
			}
			// Only two paths may be listed (locked, locked2): both fit in 3.
			if !has["locked"] || !has[locked2] {
				t.Errorf("%s: want both listable paths named (locked, %s): %q", what, locked2, note)
			}
		}
	}
	back := gob.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": locked2})
	wantResult(t, "grep the named second-folder path", back, true, "permission denied")
}
