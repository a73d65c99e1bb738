//go:build linux

package e2e

// Audit 24: what a tool says about a path it cannot use. Black-box tests of
// two promises of docs/tools.md:
//
//  1. "A missing path names what is near it": read, edit, ls, find, grep's
//     path and bash's cwd answer a missing path with "Did you mean: …?" and
//     up to 3 existing paths within a few edits (files for read and edit,
//     directories for ls, find and cwd, either for grep), written as they are
//     to be sent back, before the tool's own hint; edit still says write
//     creates a new file.
//  2. "What a search over a tree walks past because it cannot be read is
//     counted in a closing note": `[Not searched: N path(s) could not be read
//     (permission denied): a, b.]`, at most 3 named (and only those the
//     permission rules let the model list), the same from both grep
//     backends; a path naming an unreadable dir or file is an error.
//
// Part 2 needs an unprivileged agentls (root reads everything): it reuses
// filesystem_failures_test.go's setpriv wrapper (a22fNobody, a22fWrapper, a22fShareDir) and skips
// when not root.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// ------------------------------------------------------------ helpers

// a24pCall runs a tool and logs what came back, so the report can quote it.
func a24pCall(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any) harness.Result {
	t.Helper()
	r := c.CallTool(ctx, tool, args)
	t.Logf("%s %s → isError=%v\n%s", tool, compactJSON(args), r.IsError, r.Text())
	return r
}

// a24pSuggestions returns the paths of "Did you mean: a, b?" in text and
// whether there was such a clause. The list ends at the first "?" followed by
// a space or the end (the test names hold no "?").
func a24pSuggestions(text string) ([]string, bool) {
	const key = "Did you mean: "
	i := strings.Index(text, key)
	if i < 0 {
		return nil, false
	}
	rest := text[i+len(key):]
	end := -1
	for j := 0; j < len(rest); j++ {
		if rest[j] == '?' && (j+1 == len(rest) || rest[j+1] == ' ' || rest[j+1] == '\n') {
			end = j
			break
		}
	}
	if end < 0 {
		return nil, true
	}
	return strings.Split(rest[:end], ", "), true
}

// a24pWantSuggest asserts an isError result suggesting want among at most 3
// paths, none of which is in nots, and returns the suggestions.
func a24pWantSuggest(t *testing.T, what string, r harness.Result, want string, nots ...string) []string {
	t.Helper()
	if !r.IsError {
		t.Errorf("%s: want isError for a missing path, got %q", what, r.Text())
		return nil
	}
	s, ok := a24pSuggestions(r.Text())
	if !ok {
		t.Errorf("%s: no \"Did you mean\" (want %q): %q", what, want, r.Text())
		return nil
	}
	if len(s) > 3 {
		t.Errorf("%s: %d suggestions, at most 3 promised: %q", what, len(s), s)
	}
	found := false
	for _, p := range s {
		if p == want {
			found = true
		}
		for _, n := range nots {
			if p == n {
				t.Errorf("%s: suggests %q, which it must not: %q", what, n, r.Text())
			}
		}
	}
	if !found {
		t.Errorf("%s: suggestions %q lack %q", what, s, want)
	}
	return s
}

// a24pNoSuggest asserts an isError result without a "Did you mean".
func a24pNoSuggest(t *testing.T, what string, r harness.Result) {
	t.Helper()
	if !r.IsError {
		t.Errorf("%s: want isError for a missing path, got %q", what, r.Text())
	}
	if strings.Contains(r.Text(), "Did you mean") {
		t.Errorf("%s: suggests something: %q", what, r.Text())
	}
}

// a24pHintAfter asserts that hint follows the "Did you mean" clause.
func a24pHintAfter(t *testing.T, what string, r harness.Result, hint string) {
	t.Helper()
	i := strings.Index(r.Text(), "Did you mean")
	j := strings.LastIndex(strings.ToLower(r.Text()), strings.ToLower(hint))
	if i < 0 || j < 0 || j < i {
		t.Errorf("%s: want the tool's hint (%q) after \"Did you mean\": %q", what, hint, r.Text())
	}
}

// a24pNote is the "[Not searched: …]" note of a result ("" when none).
func a24pNote(text string) string {
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

var a24pNoteRE = regexp.MustCompile(`^\[Not searched: (\d+) paths? could not be read \(permission denied\): (.+?)(?: and (\d+) more)?\.\]$`)

// a24pParseNote splits a note into its count, the named paths and the
// "and N more" number; it fails the test when the note has another shape.
func a24pParseNote(t *testing.T, what, note string) (int, []string, int) {
	t.Helper()
	m := a24pNoteRE.FindStringSubmatch(note)
	if m == nil {
		t.Errorf("%s: note %q is not `[Not searched: N path(s) could not be read (permission denied): a, b[ and N more].]`", what, note)
		return 0, nil, 0
	}
	n, more := 0, 0
	for _, ch := range m[1] {
		n = n*10 + int(ch-'0')
	}
	for _, ch := range m[3] {
		more = more*10 + int(ch-'0')
	}
	return n, strings.Split(m[2], ", "), more
}

// a24pNobodyEnv is the environment a nobody agentls needs (state dirs it
// may write).
func a24pNobodyEnv(t *testing.T) []string {
	home := a22fShareDir(t, "a24p-home-")
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config", "XDG_CACHE_HOME=" + home + "/cache",
		"XDG_STATE_HOME=" + home + "/state", "AGENTLS_AUDIT_DIR=" + home + "/audit"}
}

// a24pNobodyPair starts two nobody agentls over params' workspace, one per
// grep backend (rg, go). a22fNobody installs the setpriv wrapper.
func a24pNobodyPair(t *testing.T, ws string, params map[string]any) (rg, gob *harness.Client, ctx context.Context) {
	t.Helper()
	rg, ctx = a22fNobody(t, ws) // skips unless root; sets AGENTLS_BIN to the wrapper
	if params != nil {
		// a second rg session with the wanted initialize params
		rg = harness.Start(t, harness.Options{Root: ws, Env: append(a24pNobodyEnv(t), "AGENTLS_GREP_BACKEND=rg")})
		rg.Initialize(ctx, params)
	}
	gob = harness.Start(t, harness.Options{Root: ws, Env: append(a24pNobodyEnv(t), "AGENTLS_GREP_BACKEND=go")})
	if params == nil {
		params = map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}}
	}
	gob.Initialize(ctx, params)
	return rg, gob, ctx
}

// a24pLock makes the paths (relative to ws) unreadable: mode 000.
func a24pLock(t *testing.T, ws string, rels ...string) {
	t.Helper()
	for _, r := range rels {
		if err := os.Chmod(filepath.Join(ws, r), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// ------------------------------------------------ part 1: Did you mean

// a24pFiles is the workspace of the suggestion tests.
var a24pFiles = map[string]string{
	"src/config.go":    "package src // config\n",
	"src/conf/a.txt":   "conf a\n",
	"srcs/x.txt":       "x\n",
	"lib/config.go":    "package lib\n",
	"my file.txt":      "with spaces\n",
	"café/naïve.txt":   "unicode name\n",
	".gitignore":       "build/\n",
	"build/output.txt": "ignored output\n",
	"a1.txt":           "one\n", "a2.txt": "two\n", "a3.txt": "three\n", "a4.txt": "four\n", "a5.txt": "five\n",
}

func TestPathsReadSuggestsFiles(t *testing.T) {
	c, _, ctx := start(t, a24pFiles)

	t.Run("typo in the name", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "src/confg.go"})
		s := a24pWantSuggest(t, "read src/confg.go", r, "src/config.go", "src/conf")
		if len(s) > 0 && s[0] != "src/config.go" {
			t.Errorf("same directory first: got %q", s)
		}
		if back := a24pCall(t, ctx, c, "read", map[string]any{"path": "src/config.go"}); back.IsError || !strings.Contains(back.Text(), "package src") {
			t.Errorf("the suggestion sent back does not read: %q", back.Text())
		}
	})
	t.Run("typo in a directory", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "srcc/config.go"})
		a24pWantSuggest(t, "read srcc/config.go", r, "src/config.go")
	})
	t.Run("a directory's name is not suggested", func(t *testing.T) {
		// src and srcs are directories one edit away: read wants files.
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "srcc"})
		if s, ok := a24pSuggestions(r.Text()); ok {
			for _, p := range s {
				if p == "src" || p == "srcs" {
					t.Errorf("read suggests the directory %q: %q", p, r.Text())
				}
			}
		}
		if !r.IsError {
			t.Errorf("read of a missing path succeeded: %q", r.Text())
		}
	})
	t.Run("at most 3", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "a6.txt"})
		s := a24pWantSuggest(t, "read a6.txt", r, "a1.txt")
		if len(s) != 3 {
			t.Errorf("five files are one edit away: want exactly 3 named, got %q", s)
		}
		for _, p := range s {
			if back := c.CallTool(ctx, "read", map[string]any{"path": p}); back.IsError {
				t.Errorf("suggestion %q sent back: %q", p, back.Text())
			}
		}
	})
	t.Run("far off gets none", func(t *testing.T) {
		a24pNoSuggest(t, "read zzqqxxw.txt", a24pCall(t, ctx, c, "read", map[string]any{"path": "zzqqxxw.txt"}))
		a24pNoSuggest(t, "read qqqq/zzzz.go", a24pCall(t, ctx, c, "read", map[string]any{"path": "qqqq/zzzz.go"}))
	})
	t.Run("spaces and unicode", func(t *testing.T) {
		for _, tc := range []struct{ typo, want, body string }{
			{"my fille.txt", "my file.txt", "with spaces"},
			{"cafe/naïve.txt", "café/naïve.txt", "unicode name"},
			{"café/naive.txt", "café/naïve.txt", "unicode name"},
		} {
			r := a24pCall(t, ctx, c, "read", map[string]any{"path": tc.typo})
			a24pWantSuggest(t, "read "+tc.typo, r, tc.want)
			if back := c.CallTool(ctx, "read", map[string]any{"path": tc.want}); back.IsError || !strings.Contains(back.Text(), tc.body) {
				t.Errorf("%q sent back: %q", tc.want, back.Text())
			}
		}
	})
	t.Run("ignored file", func(t *testing.T) {
		// read is not ignore-aware (ignore rules are for ls, find, grep), so
		// suggesting an ignored file is fine as long as it reads.
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "buld/output.txt"})
		if s, ok := a24pSuggestions(r.Text()); ok {
			for _, p := range s {
				if back := c.CallTool(ctx, "read", map[string]any{"path": p}); back.IsError {
					t.Errorf("suggestion %q sent back: %q", p, back.Text())
				}
			}
		}
	})
	t.Run("hint after the suggestion", func(t *testing.T) {
		// "… before the tool's own hint": read's hint is "Use find … or ls".
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "src/confg.go"})
		a24pHintAfter(t, "read src/confg.go", r, "find")
	})
}

func TestPathsDirToolsSuggestDirs(t *testing.T) {
	c, ws, ctx := start(t, a24pFiles)

	type tc struct {
		tool string
		args map[string]any
		hint string
	}
	dirCalls := func(p string) []tc {
		return []tc{
			{"ls", map[string]any{"path": p}, "find"},
			{"find", map[string]any{"pattern": "*", "path": p}, "ls"},
			{"grep", map[string]any{"pattern": "x", "path": p}, "omit path"},
			{"bash", map[string]any{"command": "pwd", "cwd": p}, "omit cwd"},
		}
	}
	t.Run("typo of a directory", func(t *testing.T) {
		for _, k := range dirCalls("srcc") {
			r := a24pCall(t, ctx, c, k.tool, k.args)
			a24pWantSuggest(t, k.tool+" srcc", r, "src")
			a24pHintAfter(t, k.tool+" srcc", r, k.hint)
		}
	})
	t.Run("nested typo", func(t *testing.T) {
		for _, k := range dirCalls("src/cnf") {
			a24pWantSuggest(t, k.tool+" src/cnf", a24pCall(t, ctx, c, k.tool, k.args), "src/conf")
		}
	})
	t.Run("a file's name is not suggested", func(t *testing.T) {
		// a1.txt … a5.txt are one edit from a6.txt, but are files.
		for _, k := range dirCalls("a6.txt") {
			if k.tool == "grep" {
				continue // grep takes either
			}
			r := a24pCall(t, ctx, c, k.tool, k.args)
			if !r.IsError {
				t.Errorf("%s of a missing path succeeded: %q", k.tool, r.Text())
			}
			if s, ok := a24pSuggestions(r.Text()); ok {
				t.Errorf("%s a6.txt suggests %q, files, for a directory argument", k.tool, s)
			}
		}
		r := a24pCall(t, ctx, c, "grep", map[string]any{"pattern": "x", "path": "a6.txt"})
		a24pWantSuggest(t, "grep a6.txt (either kind)", r, "a1.txt")
	})
	t.Run("sent back works", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "ls", map[string]any{"path": "src/cnf"})
		s, _ := a24pSuggestions(r.Text())
		for _, p := range s {
			if back := a24pCall(t, ctx, c, "ls", map[string]any{"path": p}); back.IsError {
				t.Errorf("ls %q (suggested): %q", p, back.Text())
			}
			if back := a24pCall(t, ctx, c, "bash", map[string]any{"command": "pwd", "cwd": p}); back.IsError ||
				!strings.Contains(back.Text(), filepath.Join(ws, filepath.FromSlash(p))) {
				t.Errorf("bash cwd %q (suggested): %q", p, back.Text())
			}
		}
	})
	t.Run("unicode and spaces", func(t *testing.T) {
		writeFile(t, filepath.Join(ws, "my dir", "k.txt"), "k\n")
		for _, k := range dirCalls("my dri") {
			a24pWantSuggest(t, k.tool+" 'my dri'", a24pCall(t, ctx, c, k.tool, k.args), "my dir")
		}
		for _, k := range dirCalls("cafe") {
			a24pWantSuggest(t, k.tool+" cafe", a24pCall(t, ctx, c, k.tool, k.args), "café")
		}
		if back := a24pCall(t, ctx, c, "ls", map[string]any{"path": "café"}); back.IsError || !strings.Contains(back.Text(), "naïve.txt") {
			t.Errorf("ls café: %q", back.Text())
		}
	})
	t.Run("far off gets none", func(t *testing.T) {
		for _, k := range dirCalls("qqzzxxw") {
			a24pNoSuggest(t, k.tool+" qqzzxxw", a24pCall(t, ctx, c, k.tool, k.args))
		}
	})
	t.Run("ignored directory", func(t *testing.T) {
		// ls of an ignored directory answers (it says it is ignored), so
		// naming it is usable; whatever is named must answer when sent back.
		for _, k := range dirCalls("buld") {
			r := a24pCall(t, ctx, c, k.tool, k.args)
			s, _ := a24pSuggestions(r.Text())
			for _, p := range s {
				if back := c.CallTool(ctx, "ls", map[string]any{"path": p}); back.IsError {
					t.Errorf("%s buld suggests %q, which ls refuses: %q", k.tool, p, back.Text())
				}
			}
		}
	})
}

func TestPathsEditCreatesNothing(t *testing.T) {
	c, ws, ctx := start(t, a24pFiles)
	for _, p := range []string{"src/confg.go", "a6.txt", "my fille.txt"} {
		r := a24pCall(t, ctx, c, "edit", editCall(p, "package", "PACKAGE"))
		if !r.IsError {
			t.Errorf("edit %s succeeded on a missing file: %q", p, r.Text())
		}
		if _, ok := a24pSuggestions(r.Text()); !ok {
			t.Errorf("edit %s: no suggestion: %q", p, r.Text())
		}
		a24pHintAfter(t, "edit "+p, r, "write")
		if _, err := os.Lstat(filepath.Join(ws, filepath.FromSlash(p))); err == nil {
			t.Errorf("edit %s created the file", p)
		}
	}
	// nothing near: still the write hint, still nothing created
	r := a24pCall(t, ctx, c, "edit", editCall("qqzzxxw.go", "a", "b"))
	a24pNoSuggest(t, "edit qqzzxxw.go", r)
	wantResult(t, "edit qqzzxxw.go", r, true, "write")
	if _, err := os.Lstat(filepath.Join(ws, "qqzzxxw.go")); err == nil {
		t.Errorf("edit created qqzzxxw.go")
	}
	// The originals are unchanged.
	if got := readFile(t, filepath.Join(ws, "src/config.go")); got != a24pFiles["src/config.go"] {
		t.Errorf("src/config.go changed: %q", got)
	}
}

// A leading "@" is normalized away (docs: Paths), so a directory whose name
// starts with "@" (npm scopes: @types, @org/pkg) is named in a suggestion
// that, sent back, is normalized again and fails: the model loops.
func TestPathsAtSignSuggestionLoops(t *testing.T) {
	c, _, ctx := start(t, map[string]string{
		"@scope/pkg.json":     "{\"name\": \"scoped\"}\n",
		"@types/node/index.d": "declare\n",
	})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "@scope/pkk.json"}},
		{"ls", map[string]any{"path": "@types/nod"}},
	} {
		r := a24pCall(t, ctx, c, tc.tool, tc.args)
		s, _ := a24pSuggestions(r.Text())
		if len(s) == 0 {
			t.Errorf("%s %v: no suggestion: %q", tc.tool, tc.args, r.Text())
			continue
		}
		back := a24pCall(t, ctx, c, tc.tool, map[string]any{"path": s[0]})
		if back.IsError {
			t.Errorf("%s: suggestion %q sent back as is fails: %q", tc.tool, s[0], back.Text())
		}
	}
}

// A Read deny rule hides a path from ls/find/grep listings (Permissions); a
// "Did you mean" must not name it either, or the model learns it exists.
func TestPathsSuggestionHonoursDeny(t *testing.T) {
	files := map[string]string{"ok.txt": "ok\n", "private.txt": "hidden\n", "private/k.txt": "hidden\n"}
	opts := map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"Read(./private.txt)", "Read(./private)"}}}
	c, _, ctx := startWith(t, files, map[string]any{"initializationOptions": opts})
	ls := a24pCall(t, ctx, c, "ls", map[string]any{})
	if strings.Contains(ls.Text(), "private") {
		t.Skipf("the deny rules do not hide the names from ls; precondition failed: %q", ls.Text())
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "privat.txt"}},
		{"edit", editCall("privat.txt", "a", "b")},
		{"ls", map[string]any{"path": "privat"}},
		{"find", map[string]any{"pattern": "*", "path": "privat"}},
		{"grep", map[string]any{"pattern": "x", "path": "privat"}},
		{"bash", map[string]any{"command": "pwd", "cwd": "privat"}},
	} {
		r := a24pCall(t, ctx, c, tc.tool, tc.args)
		if !r.IsError {
			t.Errorf("%s: missing path succeeded: %q", tc.tool, r.Text())
		}
		if strings.Contains(r.Text(), "private") {
			t.Errorf("%s %s names a path a deny rule hides from listings: %q", tc.tool, compactJSON(tc.args), r.Text())
		}
	}
}

func TestPathsTwoFolders(t *testing.T) {
	a := a20fTmp(t)
	b := a20fTmp(t)
	a20fPut(t, a, map[string]string{"alpha.txt": "alpha\n"})
	a20fPut(t, b, map[string]string{"pkg/server.go": "package pkg // beta\n", "pkg/util/u.go": "package util\n"})
	c, ctx := a20fStartFolders(t, a, b)
	abs := func(rel string) string { return filepath.Join(b, filepath.FromSlash(rel)) }

	t.Run("read typo in the second folder", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": abs("pkg/sever.go")})
		a24pWantSuggest(t, "read abs typo", r, abs("pkg/server.go"))
		if back := a24pCall(t, ctx, c, "read", map[string]any{"path": abs("pkg/server.go")}); back.IsError || !strings.Contains(back.Text(), "beta") {
			t.Errorf("suggestion sent back: %q", back.Text())
		}
	})
	t.Run("edit typo in the second folder", func(t *testing.T) {
		r := a24pCall(t, ctx, c, "edit", editCall(abs("pkg/sever.go"), "beta", "BETA"))
		a24pWantSuggest(t, "edit abs typo", r, abs("pkg/server.go"))
		a24pHintAfter(t, "edit abs typo", r, "write")
		if _, err := os.Lstat(abs("pkg/sever.go")); err == nil {
			t.Errorf("edit created %s", abs("pkg/sever.go"))
		}
	})
	t.Run("dir tools in the second folder", func(t *testing.T) {
		for _, k := range []struct {
			tool string
			args map[string]any
		}{
			{"ls", map[string]any{"path": abs("pgk")}},
			{"find", map[string]any{"pattern": "*.go", "path": abs("pgk")}},
			{"grep", map[string]any{"pattern": "package", "path": abs("pgk")}},
			{"bash", map[string]any{"command": "pwd", "cwd": abs("pgk")}},
		} {
			r := a24pCall(t, ctx, c, k.tool, k.args)
			a24pWantSuggest(t, k.tool+" abs typo", r, abs("pkg"))
		}
		for tool, args := range map[string]map[string]any{
			"ls":   {"path": abs("pkg")},
			"find": {"pattern": "*.go", "path": abs("pkg")},
			"grep": {"pattern": "package", "path": abs("pkg")},
			"bash": {"command": "pwd", "cwd": abs("pkg")},
		} {
			if back := a24pCall(t, ctx, c, tool, args); back.IsError || !strings.Contains(back.Text(), "server.go") && tool != "bash" {
				t.Errorf("%s of the suggestion: %q", tool, back.Text())
			}
		}
	})
	t.Run("relative name that lives in the second folder", func(t *testing.T) {
		// "then the same name elsewhere" (read): pkg/server.go exists only
		// in the second folder, where the model reaches it by absolute path.
		r := a24pCall(t, ctx, c, "read", map[string]any{"path": "pkg/server.go"})
		a24pWantSuggest(t, "read pkg/server.go (only in folder 2)", r, abs("pkg/server.go"))
	})
}

// ------------------------------------------- part 2: [Not searched: …]

// a24pTree is a shared workspace with five unreadable top-level dirs, an
// unreadable hidden dir, an unreadable dir and file nested in a readable dir,
// an unreadable dir inside an ignored dir, and readable matches around them.
func a24pTree(t *testing.T) string {
	ws := a22fShareDir(t, "a24p-ws-")
	a22fPut(t, ws, map[string]string{
		"ok.txt":   "needle ok\n",
		"d1/f.txt": "needle\n", "d2/f.txt": "needle\n", "d3/f.txt": "needle\n", "d4/f.txt": "needle\n", "d5/f.txt": "needle\n",
		".hid/f.txt":      "needle\n",
		".gitignore":      "ign/\n",
		"ign/inner/f.txt": "needle\n",
		"sub/deep/f.txt":  "needle\n",
		"sub/locked.txt":  "needle\n",
		"zz/last.txt":     "needle last\n",
	}, 0o666)
	a24pLock(t, ws, "d1", "d2", "d3", "d4", "d5", ".hid", "ign/inner", "sub/deep", "sub/locked.txt")
	return ws
}

func TestPathsNotSearchedCounts(t *testing.T) {
	ws := a24pTree(t)
	rg, gob, ctx := a24pNobodyPair(t, ws, nil)
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
				r := a24pCall(t, ctx, be.c, q.tool, q.args)
				if r.IsError {
					t.Errorf("%s (%s) failed the whole search: %q", q.tool, be.name, r.Text())
					continue
				}
				if q.tool == "grep" && !strings.Contains(q.args["pattern"].(string), "nothing") && q.args["path"] == nil {
					wantContains(t, be.name, r.Text(), "ok.txt:1:", "zz/last.txt:1:")
				}
				note := a24pNote(r.Text())
				notes[be.name] = note
				n, named, more := a24pParseNote(t, q.name+"/"+be.name, note)
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
		_, named, _ := a24pParseNote(t, "grep", a24pNote(r.Text()))
		for _, p := range named {
			back := a24pCall(t, ctx, rg, "grep", map[string]any{"pattern": "needle", "path": p})
			wantResult(t, "grep path "+p, back, true, "permission denied", p)
		}
	})
	t.Run("the same note every time", func(t *testing.T) {
		// rg searches in parallel; the note must not depend on who came first.
		first := a24pNote(rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text())
		for i := 0; i < 8; i++ {
			if n := a24pNote(rg.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text()); n != first {
				t.Fatalf("grep (rg) note changed between identical calls:\n %s\n %s", first, n)
			}
		}
	})
}

func TestPathsUnreadablePathIsError(t *testing.T) {
	ws := a24pTree(t)
	rg, gob, ctx := a24pNobodyPair(t, ws, nil)
	for _, p := range []string{"sub/deep", "sub/locked.txt", "d1", ".hid"} {
		for _, be := range []struct {
			name string
			c    *harness.Client
		}{{"rg", rg}, {"go", gob}} {
			r := a24pCall(t, ctx, be.c, "grep", map[string]any{"pattern": "needle", "path": p})
			wantResult(t, "grep ("+be.name+") path "+p, r, true, "permission denied", p)
			if strings.Contains(r.Text(), "No matches") {
				t.Errorf("grep (%s) of unreadable %s says No matches: %q", be.name, p, r.Text())
			}
		}
	}
	for _, p := range []string{"sub/deep", "d1"} {
		r := a24pCall(t, ctx, rg, "find", map[string]any{"pattern": "*", "path": p})
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
	ws := a22fShareDir(t, "a24p-ws-")
	ws2 := a22fShareDir(t, "a24p-ws2-")
	a22fPut(t, ws, map[string]string{
		"ok.txt": "needle ok\n", "locked/f.txt": "needle\n", "private/f.txt": "needle\n", "private.txt": "needle\n",
	}, 0o666)
	a22fPut(t, ws2, map[string]string{"ok2.txt": "needle two\n", "locked2/f.txt": "needle\n"}, 0o666)
	a24pLock(t, ws, "locked", "private", "private.txt")
	a24pLock(t, ws2, "locked2")
	params := map[string]any{
		"workspaceFolders": a20fFolders(ws, ws2),
		"initializationOptions": map[string]any{"mode": "acceptEdits",
			"permissions": map[string]any{"deny": []any{"Read(./private)", "Read(./private.txt)"}}},
	}
	rg, gob, ctx := a24pNobodyPair(t, ws, params)
	locked2 := filepath.Join(ws2, "locked2")
	if ls := a24pCall(t, ctx, rg, "ls", map[string]any{}); strings.Contains(ls.Text(), "private") {
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
			r := a24pCall(t, ctx, be.c, tool, args)
			note := a24pNote(r.Text())
			what := tool + " (" + be.name + ")"
			if note == "" {
				t.Errorf("%s: no note: %q", what, r.Text())
				continue
			}
			if strings.Contains(note, "private") {
				t.Errorf("%s names a denied path: %q", what, note)
			}
			_, named, _ := a24pParseNote(t, what, note)
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
	back := a24pCall(t, ctx, gob, "grep", map[string]any{"pattern": "needle", "path": locked2})
	wantResult(t, "grep the named second-folder path", back, true, "permission denied")
}
