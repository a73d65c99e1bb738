package e2e

// Contract tests of issue 3 (ls, grep, find, ignore rules, read
// completion), written from shared/design/TOOLS.md and the issue's
// acceptance list.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// a2sBackends starts one server per grep backend on the same workspace.
func a2sBackends(t *testing.T, ws string) map[string]*harness.Client {
	t.Helper()
	out := map[string]*harness.Client{}
	if _, err := exec.LookPath("rg"); err == nil {
		out["rg"], _ = a2cStart(t, ws, nil)
	} else {
		t.Log("rg not on PATH: only the Go fallback is tested")
	}
	out["go"], _ = a2cStart(t, ws, nil, "AGENTLS_GREP_BACKEND=go")
	return out
}

func a2sGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return string(out) // check-ignore: nothing ignored
		}
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// a2sBody returns the result lines that are entries, not headers or notices.
func a2sBody(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasSuffix(l, " entries") || strings.Contains(l, ": ") && strings.HasSuffix(l, "entries") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func TestSearchLs(t *testing.T) {
	ws := resolvedWorkspace(t, map[string]string{
		".gitignore": "*.log\nbuild/\n",
		".env":       "X=1\n",
		"b.txt":      "b\n",
		"A.txt":      "A\n",
		"a.txt":      "a\n",
		"dir/x.go":   "package x\n",
		"_u.txt":     "u\n",
		"z.log":      "ignored\n",
		"y.log":      "ignored\n",
		"build/o.js": "ignored\n",
		"many/.keep": "",
	})
	a2sGit(t, ws, "init", "-q")
	if err := os.Symlink("dir/x.go", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	for i := range 510 {
		os.WriteFile(filepath.Join(ws, "many", fmt.Sprintf("f%03d", i)), nil, 0o644)
	}
	c, ctx := a2cStart(t, ws, nil)

	r := c.CallTool(ctx, "ls", map[string]any{})
	text := r.Text()
	want := []string{".env", ".gitignore", "A.txt", "_u.txt", "a.txt", "b.txt", "dir/", "link@ -> dir/x.go", "many/"}
	var got []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range want {
			if l == w {
				got = append(got, l)
			}
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ls entries (sorted, / for dirs, @ -> for links, dotfiles): got %q, want %q in:\n%s", got, want, text)
	}
	if regexp.MustCompile(`(?m)^\.git/?$`).MatchString(text) {
		t.Errorf(".git listed:\n%s", text)
	}
	for _, hidden := range []string{"z.log", "y.log", "build"} {
		if strings.Contains(text, hidden) {
			t.Errorf("ignored %s listed:\n%s", hidden, text)
		}
	}
	wantContains(t, "ls ignored count", text, "3 ignored entries hidden")

	r = c.CallTool(ctx, "ls", map[string]any{"path": "many"})
	files := regexp.MustCompile(`(?m)^(f\d{3}|\.keep)$`).FindAllString(r.Text(), -1)
	if len(files) != 500 {
		t.Errorf("ls of 511 entries showed %d, want the default limit 500", len(files))
	}
	wantContains(t, "ls limit notice", r.Text(), "500", "limit=")
	if m := regexp.MustCompile(`limit=(\d+)`).FindStringSubmatch(r.Text()); m != nil {
		r2 := c.CallTool(ctx, "ls", map[string]any{"path": "many", "limit": m[1]})
		if n := len(regexp.MustCompile(`(?m)^(f\d{3}|\.keep)$`).FindAllString(r2.Text(), -1)); n != 511 {
			t.Errorf("the call the notice gives (limit=%s) showed %d of 511 entries", m[1], n)
		}
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": "many", "limit": 3})
	if got := regexp.MustCompile(`(?m)^(\S+)$`).FindAllString(r.Text(), -1); !strings.Contains(strings.Join(got, " "), ".keep f000 f001") {
		t.Errorf("ls limit 3: %q", r.Text())
	}
	if r := c.CallTool(ctx, "ls", map[string]any{"path": "nope"}); !r.IsError {
		t.Errorf("ls of a missing dir: %s", r.Text())
	}
}

// a2sGrepFixture is a workspace covering the grep acceptance cases.
func a2sGrepFixture(t *testing.T) string {
	t.Helper()
	var many, wide, overlong strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&wide, "wide %03d %s\n", i, strings.Repeat("w", 400))
	}
	overlong.WriteString("needle " + strings.Repeat("x", 900) + "\n")
	ws := resolvedWorkspace(t, map[string]string{
		".gitignore":        "ignored/\n*.gen\n",
		"a.txt":             "alpha\nfoo one\nbeta\n",
		"a/z.txt":           "foo in a/z\n",
		"b.go":              "package b\n\nfunc Foo() {}\n// foo lower\n",
		"ctx.txt":           "l1\nl2 target\nl3\nl4 target\nl5\nl6\nl7\nl8\nl9 target\nl10\n",
		"crlf.txt":          "first\r\ncarriage foo\r\nlast\r\n",
		"latin1.txt":        "caf\xe9 foo\n",
		"bin.dat":           "foo\x00binary\n",
		"dash.txt":          "x -v flag\n--help here\n",
		"lit.txt":           "a.b\naxb\n(paren\n",
		"case.txt":          "FOO upper\n",
		"many.txt":          many.String(),
		"wide/w.txt":        wide.String(),
		"long.txt":          overlong.String(),
		"ignored/found.txt": "foo hidden by ignore\n",
		"x.gen":             "foo generated\n",
		".hidden/h.txt":     "foo in hidden dir\n",
	})
	a2sGit(t, ws, "init", "-q")
	return ws
}

func TestSearchGrep(t *testing.T) {
	ws := a2sGrepFixture(t)
	ctx := testCtx(t, 45*time.Second)
	for name, c := range a2sBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			grep := func(args map[string]any) harness.Result {
				t.Helper()
				r, err := c.TryCallTool(ctx, "grep", args)
				if err != nil {
					t.Fatalf("grep %v: %v", args, err)
				}
				return r
			}
			t.Run("format and order", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "foo"})
				var lines []string
				for _, l := range strings.Split(r.Text(), "\n") {
					if regexp.MustCompile(`^\S.*:\d+: `).MatchString(l) {
						lines = append(lines, l)
					}
				}
				want := []string{".hidden/h.txt:1: foo in hidden dir", "a.txt:2: foo one", "a/z.txt:1: foo in a/z", "b.go:4: // foo lower", "crlf.txt:2: carriage foo", "latin1.txt:1: caf\uFFFD foo"}
				if strings.Join(lines, "\n") != strings.Join(want, "\n") {
					t.Errorf("grep foo:\ngot  %q\nwant %q\nfull:\n%s", lines, want, r.Text())
				}
				for _, bad := range []string{"bin.dat", "ignored/", "x.gen", "\r"} {
					if strings.Contains(r.Text(), bad) {
						t.Errorf("grep foo shows %q:\n%s", bad, r.Text())
					}
				}
			})
			t.Run("context windows merge", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "target", "path": "ctx.txt", "context": 1})
				want := "ctx.txt-1- l1\nctx.txt:2: l2 target\nctx.txt-3- l3\nctx.txt:4: l4 target\nctx.txt-5- l5\n--\nctx.txt-8- l8\nctx.txt:9: l9 target\nctx.txt-10- l10"
				if !strings.Contains(r.Text(), want) {
					t.Errorf("context 1:\n%s\nwant:\n%s", r.Text(), want)
				}
			})
			t.Run("ignoreCase, literal, glob, dash pattern", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "foo", "ignoreCase": true, "glob": "*.txt"})
				wantContains(t, "ignoreCase", r.Text(), "case.txt:1: FOO upper")
				if strings.Contains(r.Text(), "b.go") {
					t.Errorf("glob *.txt matched b.go:\n%s", r.Text())
				}
				r = grep(map[string]any{"pattern": "Foo", "glob": "*.go"})
				wantContains(t, "glob", r.Text(), "b.go:3: func Foo() {}")
				r = grep(map[string]any{"pattern": "a.b", "literal": true})
				wantContains(t, "literal", r.Text(), "lit.txt:1: a.b")
				if strings.Contains(r.Text(), "axb") {
					t.Errorf("literal a.b matched axb")
				}
				r = grep(map[string]any{"pattern": "(paren", "literal": true})
				wantContains(t, "literal paren", r.Text(), "lit.txt:3: (paren")
				r = grep(map[string]any{"pattern": "-v"})
				wantContains(t, "dash", r.Text(), "dash.txt:1: x -v flag")
				r = grep(map[string]any{"pattern": "--help"})
				wantContains(t, "double dash", r.Text(), "dash.txt:2: --help here")
			})
			t.Run("default limit 100 announced with the call", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "^hit ", "path": "many.txt"})
				n := len(regexp.MustCompile(`(?m)^many\.txt:\d+: hit`).FindAllString(r.Text(), -1))
				if n != 100 {
					t.Errorf("150 matches gave %d lines, want 100", n)
				}
				wantContains(t, "limit notice", r.Text(), "100", "limit=")
				m := regexp.MustCompile(`limit=(\d+)`).FindStringSubmatch(r.Text())
				if m == nil {
					return
				}
				r = grep(map[string]any{"pattern": "^hit ", "path": "many.txt", "limit": m[1]})
				if n := len(regexp.MustCompile(`(?m)^many\.txt:\d+: hit`).FindAllString(r.Text(), -1)); n != 150 {
					t.Errorf("the notice's call limit=%s gave %d of 150", m[1], n)
				}
			})
			t.Run("long lines cut at 500 characters", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "needle", "path": "long.txt"})
				line := strings.SplitN(r.Text(), "\n", 2)[0]
				text := strings.TrimPrefix(line, "long.txt:1: ")
				if !strings.HasPrefix(text, "needle "+strings.Repeat("x", 493)) || strings.Contains(text, strings.Repeat("x", 494)) {
					t.Errorf("long line not cut at 500 characters: %d chars: %.60s…", len([]rune(text)), text)
				}
			})
			t.Run("output at most 50 KB, announced", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "wide", "path": "wide", "limit": 1000})
				if len(r.Text()) > 51200+1024 {
					t.Errorf("grep output is %d bytes, want at most 51,200 plus a notice", len(r.Text()))
				}
				if !regexp.MustCompile(`(?i)bytes|KB|51,?200`).MatchString(r.Text()) {
					t.Errorf("byte cut not announced:\n%s", r.Text()[max(0, len(r.Text())-400):])
				}
			})
			t.Run("invalid regex", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "(a"})
				if !r.IsError || !strings.Contains(r.Text(), "(a") {
					t.Errorf("invalid regex: %+v", r)
				}
			})
			t.Run("ignored path named explicitly", func(t *testing.T) {
				r := grep(map[string]any{"pattern": "foo", "path": "ignored"})
				wantContains(t, "ignored path", r.Text(), "includeIgnored: true")
				r = grep(map[string]any{"pattern": "foo", "path": "ignored", "includeIgnored": true})
				wantContains(t, "includeIgnored", r.Text(), "ignored/found.txt:1: foo hidden by ignore")
			})
		})
	}
}

func TestSearchGrepBackendsAreByteIdentical(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg not on PATH")
	}
	ws := a2sGrepFixture(t)
	ctx := testCtx(t, 45*time.Second)
	b := a2sBackends(t, ws)
	queries := []map[string]any{
		{"pattern": "foo"},
		{"pattern": "f.o"},
		{"pattern": "FOO", "ignoreCase": true},
		{"pattern": "a.b", "literal": true},
		{"pattern": "(paren", "literal": true},
		{"pattern": "foo", "glob": "*.go"},
		{"pattern": "foo", "glob": "**/*.txt"},
		{"pattern": "target", "context": 1},
		{"pattern": "target", "context": 3},
		{"pattern": "^hit "},
		{"pattern": "^hit ", "limit": 7},
		{"pattern": "needle"},
		{"pattern": "carriage"},
		{"pattern": "caf"},
		{"pattern": "binary"},
		{"pattern": "-v"},
		{"pattern": "foo", "path": "ignored"},
		{"pattern": "foo", "path": "ignored", "includeIgnored": true},
		{"pattern": "wide", "limit": 1000},
		{"pattern": "last$"},
		{"pattern": "nothing-matches-this"},
		{"pattern": "foo", "path": "a"},
	}
	for _, q := range queries {
		rg := b["rg"].CallTool(ctx, "grep", q)
		gof := b["go"].CallTool(ctx, "grep", q)
		if rg.Text() != gof.Text() || rg.IsError != gof.IsError {
			t.Errorf("grep %v differs:\n--- rg (isError %v)\n%s\n--- go (isError %v)\n%s", q, rg.IsError, rg.Text(), gof.IsError, gof.Text())
		}
	}
}

func TestSearchFind(t *testing.T) {
	ws := resolvedWorkspace(t, map[string]string{
		"some/parent/child/file.ext":     "",
		"some/parent/child/test.spec.ts": "",
		"src/foo/bar/example.spec.ts":    "",
		"src/main.ts":                    "",
		"a/.gitignore":                   "ignored.txt\n",
		"a/ignored.txt":                  "",
		"b/ignored.txt":                  "",
		".hidden/h.ts":                   "",
		".top.ts":                        "",
		"real/r.ts":                      "",
	})
	a2sGit(t, ws, "init", "-q")
	os.WriteFile(filepath.Join(ws, ".git", "x.ts"), nil, 0o644)
	if err := os.Symlink("real", filepath.Join(ws, "lnk")); err != nil {
		t.Fatal(err)
	}
	c, ctx := a2cStart(t, ws, nil)
	find := func(args map[string]any) []string {
		t.Helper()
		r := c.CallTool(ctx, "find", args)
		if r.IsError {
			t.Errorf("find %v: %s", args, r.Text())
		}
		return a2sBody(r.Text())
	}
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"*.spec.ts", []string{"some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}},
		{"some/parent/child/**", []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"**/parent/child/*", []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"src/**/*.spec.ts", []string{"src/foo/bar/example.spec.ts"}},
		{"ignored.txt", []string{"b/ignored.txt"}},
		{"*.ts", []string{".hidden/h.ts", ".top.ts", "real/r.ts", "some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts", "src/main.ts"}},
	} {
		if got := find(map[string]any{"pattern": tc.pattern}); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("find %q:\ngot  %q\nwant %q", tc.pattern, got, tc.want)
		}
	}
	if got := find(map[string]any{"pattern": "*.ts", "path": "src"}); !strings.Contains(strings.Join(got, " "), "main.ts") || len(got) != 2 {
		t.Errorf("find *.ts in src: %q", got)
	}

	t.Run("limit 1000 announced", func(t *testing.T) {
		dir := filepath.Join(ws, "bulk")
		os.MkdirAll(dir, 0o755)
		for i := range 1001 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.dat", i)), nil, 0o644)
		}
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.dat"})
		n := len(regexp.MustCompile(`(?m)^bulk/f\d{4}\.dat$`).FindAllString(r.Text(), -1))
		if n != 1000 {
			t.Errorf("1001 matches gave %d, want 1000", n)
		}
		wantContains(t, "find limit notice", r.Text(), "1000", "limit=")
		got := regexp.MustCompile(`(?m)^bulk/f\d{4}\.dat$`).FindAllString(r.Text(), -1)
		if !sort.StringsAreSorted(got) || len(got) > 0 && got[0] != "bulk/f0000.dat" {
			t.Errorf("find output not sorted by path")
		}
	})
	t.Run("invalid glob", func(t *testing.T) {
		for _, p := range []string{"[a", "src/{a,b"} {
			r := c.CallTool(ctx, "find", map[string]any{"pattern": p})
			if !r.IsError || !regexp.MustCompile(`(?i)unclosed|invalid|missing`).MatchString(r.Text()) {
				t.Errorf("find %q: want isError with the reason: %+v", p, r)
			}
		}
	})
}

// a2sIgnoreFixture builds a git repository with ≥ 33 tricky ignore cases.
func a2sIgnoreFixture(t *testing.T) (ws string, files []string) {
	t.Helper()
	root := strings.Join([]string{
		"*.log", "!keep.log", "build/", "/anchored.txt", "doc/*.pdf", "**/deep/*.tmp",
		"a/**/z.txt", "?.q", "[!x]y.r", `name\ with\ space.txt`, `\#hash.txt`, `\!bang.txt`,
		"dironly/", "foo/**", "*.bak", "!important.bak", "logs/", "!logs/keep.txt",
		"abc[0-9].c", "**/secret", "trailing.txt   ", "# comment.txt", "mid/dle/x.md",
		"*.o", "!special.o", "sp*ce?.cfg",
	}, "\n") + "\n"
	files = []string{
		"a.log", "keep.log", "sub/b.log", "sub/keep.log", "build/out.js", "x/build/out.js", "anchored.txt",
		"x/anchored.txt", "doc/a.pdf", "x/doc/a.pdf", "doc/sub/b.pdf", "p/deep/a.tmp", "deep/b.tmp",
		"a/z.txt", "a/b/c/z.txt", "k.q", "kk.q", "ay.r", "xy.r", "name with space.txt", "#hash.txt",
		"!bang.txt", "dironly/f.txt", "x/dironly", "foo/bar/baz.txt", "x.bak", "important.bak",
		"logs/keep.txt", "logs/other.txt", "abc5.c", "abcx.c", "x/y/secret", "secret/inner.txt",
		"trailing.txt", "comment.txt", "# comment.txt", "mid/dle/x.md", "q/mid/dle/x.md",
		"CASE.LOG", "m.o", "special.o", "dir/special.o", "space1.cfg", "plain.txt",
		"nested/x.log", "nested/local.txt", "local.txt", "nested/rooted.txt", "nested/deeper/rooted.txt",
		"nested/sub/.hidden.bak", "other/ignored.txt", "b/ignored.txt", "excluded.txt", "x/excluded.txt",
		"repo2/x.log", "repo2/anchored.txt", "repo2/own.txt", "repo2/keep.txt",
	}
	body := map[string]string{
		".gitignore":        root,
		"nested/.gitignore": "!*.log\nlocal.txt\n/rooted.txt\n!*.bak\n",
		"other/.gitignore":  "ignored.txt\n",
		"repo2/.gitignore":  "own.txt\n",
	}
	for _, f := range files {
		body[f] = "x\n"
	}
	ws = resolvedWorkspace(t, body)
	a2sGit(t, ws, "init", "-q")
	a2sGit(t, filepath.Join(ws, "repo2"), "init", "-q")
	if err := os.WriteFile(filepath.Join(ws, ".git", "info", "exclude"), []byte("/excluded.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, files
}

func TestSearchIgnoreRulesAgreeWithGit(t *testing.T) {
	ws, files := a2sIgnoreFixture(t)
	var outer, inner []string
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f, "repo2/"); ok {
			inner = append(inner, rest)
		} else {
			outer = append(outer, f)
		}
	}
	ignored := map[string]bool{}
	check := func(dir, prefix string, paths []string) {
		cmd := exec.Command("git", "-C", dir, "check-ignore", "--stdin")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
		out, _ := cmd.Output()
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				ignored[prefix+strings.Trim(l, `"`)] = true
			}
		}
	}
	check(ws, "", outer)
	check(filepath.Join(ws, "repo2"), "repo2/", inner)
	nIgn := 0
	defer func() { t.Logf("%d files, %d ignored by git: %v", len(files), nIgn, ignored) }()
	for _, f := range files {
		if ignored[f] {
			nIgn++
		}
	}
	if nIgn < 20 || len(files)-nIgn < 15 {
		t.Fatalf("fixture is not tricky enough: git ignores %d of %d", nIgn, len(files))
	}

	c, ctx := a2cStart(t, ws, nil)
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "**", "limit": 5000})
	listed := map[string]bool{}
	for _, l := range a2sBody(r.Text()) {
		listed[l] = true
	}
	var disagree []string
	for _, f := range files {
		if listed[f] == ignored[f] {
			disagree = append(disagree, fmt.Sprintf("%s (git ignored=%v, find listed=%v)", f, ignored[f], listed[f]))
		}
	}
	if len(disagree) > 0 {
		t.Errorf("find disagrees with git check-ignore on %d of %d files:\n%s\nfind output:\n%s", len(disagree), len(files), strings.Join(disagree, "\n"), r.Text())
	}

	// grep walks with the same rules.
	for name, gc := range a2sBackends(t, ws) {
		g := gc.CallTool(ctx, "grep", map[string]any{"pattern": "^x$", "limit": 1000})
		seen := map[string]bool{}
		for _, l := range strings.Split(g.Text(), "\n") {
			if i := strings.Index(l, ":1: x"); i > 0 {
				seen[l[:i]] = true
			}
		}
		for _, f := range files {
			if seen[f] == ignored[f] {
				t.Errorf("grep (%s) disagrees with git on %s (git ignored=%v, grep searched=%v)", name, f, ignored[f], seen[f])
			}
		}
	}

	// ls hides what git ignores, one directory at a time.
	for _, dir := range []string{".", "x", "nested", "logs", "repo2"} {
		l := c.CallTool(ctx, "ls", map[string]any{"path": dir})
		for _, f := range files {
			rel := f
			if dir != "." {
				var ok bool
				if rel, ok = strings.CutPrefix(f, dir+"/"); !ok {
					continue
				}
			}
			if strings.Contains(rel, "/") {
				continue
			}
			shown := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(rel) + `$`).MatchString(l.Text())
			if shown == ignored[f] {
				t.Errorf("ls %s: %s shown=%v, git ignored=%v", dir, rel, shown, ignored[f])
			}
		}
	}
}

func TestSearchIgnoreFilesOutsideGit(t *testing.T) {
	ws := resolvedWorkspace(t, map[string]string{
		".gitignore":      "g.txt\n",
		".ignore":         "i.txt\n",
		".agentlsignore":  "al.txt\n",
		"g.txt":           "x\n",
		"i.txt":           "x\n",
		"al.txt":          "x\n",
		"keep.txt":        "x\n",
		"sub/.gitignore":  "!g.txt\n",
		"sub/g.txt":       "x\n",
		"sub/deep/i.txt":  "x\n",
		".git/config.txt": "x\n", // a bare .git dir is never searched
	})
	c, ctx := a2cStart(t, ws, nil)
	want := []string{".agentlsignore", ".gitignore", ".ignore", "keep.txt", "sub/.gitignore", "sub/g.txt"}
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "**"})
	if got := a2sBody(r.Text()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("find outside git:\ngot  %q\nwant %q", got, want)
	}
	for name, gc := range a2sBackends(t, ws) {
		g := gc.CallTool(ctx, "grep", map[string]any{"pattern": "^x$"})
		var got []string
		for _, l := range strings.Split(g.Text(), "\n") {
			if i := strings.Index(l, ":1: x"); i > 0 {
				got = append(got, l[:i])
			}
		}
		if strings.Join(got, " ") != "keep.txt sub/g.txt" {
			t.Errorf("grep (%s) outside git searched %q, want keep.txt sub/g.txt", name, got)
		}
	}
}

func TestSearchReadCompletion(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	gif := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
	jpeg := append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"), bytes.Repeat([]byte{0}, 40)...)
	jpeg = append(jpeg, 0xff, 0xd9)
	webp := append([]byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"), 0)
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{0}, 4096)...)
	utf16le := []byte{0xff, 0xfe}
	utf16be := []byte{0xfe, 0xff}
	for _, r := range "héllo\nwörld\n" {
		utf16le = append(utf16le, byte(r), byte(r>>8))
		utf16be = append(utf16be, byte(r>>8), byte(r))
	}
	huge := strings.Repeat("y", 60000) + "\nsecond\n"
	ws := resolvedWorkspace(t, map[string]string{
		"pic.txt":          string(png),
		"anim.gif":         string(gif),
		"photo.jpg":        string(jpeg),
		"img.webp":         string(webp),
		"fake.png":         "just text in a png\n",
		"prog":             string(elf),
		"u16le.txt":        string(utf16le),
		"u16be.txt":        string(utf16be),
		"min.js":           huge,
		"lib/config.ts":    "x\n",
		"lib/config.js":    "x\n",
		"lib/confg.ts":     "x\n",
		"lib/config.json":  "x\n",
		"lib/conflict.txt": "x\n",
		"zip.bin":          "PK\x03\x04\x14\x00\x00\x00\x08\x00" + strings.Repeat("\x00", 100),
	})
	c, ctx := a2cStart(t, ws, nil)
	read := func(p string) harness.Result {
		t.Helper()
		r, err := c.TryCallTool(ctx, "read", map[string]any{"path": p})
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		return r
	}
	for _, tc := range []struct {
		path, mime string
		data       []byte
	}{
		{"pic.txt", "image/png", png},
		{"anim.gif", "image/gif", gif},
		{"photo.jpg", "image/jpeg", jpeg},
		{"img.webp", "image/webp", webp},
	} {
		r := read(tc.path)
		var img map[string]any
		for _, p := range r.Content {
			if p["type"] == "image" {
				img = p
			}
		}
		if r.IsError || img == nil {
			t.Errorf("%s: want an image part, got %+v", tc.path, r)
			continue
		}
		if img["mimeType"] != tc.mime {
			t.Errorf("%s: mimeType %v, want %s", tc.path, img["mimeType"], tc.mime)
		}
		if d, err := base64.StdEncoding.DecodeString(fmt.Sprint(img["data"])); err != nil || !bytes.Equal(d, tc.data) {
			t.Errorf("%s: image data is not the file (%v)", tc.path, err)
		}
	}
	if r := read("fake.png"); r.IsError || !strings.Contains(r.Text(), "1→just text in a png") {
		t.Errorf("a .png holding text: %+v", r)
	}
	r := read("prog")
	if !r.IsError || !strings.Contains(r.Text(), "ELF") || !regexp.MustCompile(`\d+(\.\d+)? ?(B|KB|kB|KiB|bytes)`).MatchString(r.Text()) {
		t.Errorf("ELF file: want a refusal naming the type and size: %+v", r)
	}
	if r := read("zip.bin"); !r.IsError || !regexp.MustCompile(`(?i)zip`).MatchString(r.Text()) {
		t.Errorf("zip file: want a refusal naming the type: %+v", r)
	}
	for _, p := range []string{"u16le.txt", "u16be.txt"} {
		r := read(p)
		if r.IsError || !strings.Contains(r.Text(), "     1→héllo\n") || !strings.Contains(r.Text(), "     2→wörld") {
			t.Errorf("%s not decoded: %+v", p, r)
		}
	}
	r = read("min.js")
	if strings.TrimSpace(r.Text()) == "" || !strings.Contains(r.Text(), "60") {
		t.Errorf("first line over the byte limit: want its size and how to read it: %+v", r)
	}
	if strings.Contains(r.Text(), strings.Repeat("y", 51201)) {
		t.Error("first line over the limit returned whole")
	}
	r = read("lib/config.tx")
	sugg := regexp.MustCompile(`lib/con\w*\.\w+`).FindAllString(strings.ReplaceAll(r.Text(), "lib/config.tx ", ""), -1)
	if !r.IsError || len(sugg) == 0 || len(sugg) > 3 {
		t.Errorf("missing file: want isError with 1-3 suggestions, got %d: %s", len(sugg), r.Text())
	}
	for _, s := range sugg {
		if s == "lib/conflict.txt" {
			t.Errorf("suggested the dissimilar %s over closer names: %s", s, r.Text())
		}
	}
	r = read("lib")
	if !r.IsError || !strings.Contains(r.Text(), "ls") {
		t.Errorf("directory: want isError suggesting ls: %+v", r)
	}
}

func TestSearchDescriptionsStateTheLimits(t *testing.T) {
	ws := resolvedWorkspace(t, nil)
	c, ctx := a2cStart(t, ws, nil)
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"read": {"2000", "51,200|50 KB|51200"},
		"ls":   {"500"},
		"grep": {"100", "500", "51,200|50 KB|51200"},
		"find": {"1000|1,000"},
	}
	for _, tool := range res.Tools {
		for _, alts := range want[tool.Name] {
			ok := false
			for _, a := range strings.Split(alts, "|") {
				ok = ok || regexp.MustCompile(`\b`+regexp.QuoteMeta(a)+`\b`).MatchString(tool.Description)
			}
			if !ok {
				t.Errorf("%s description does not state %s:\n%s", tool.Name, alts, tool.Description)
			}
		}
	}
}

func TestSearchGrepBackendsAgreeOnOddNames(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg not on PATH")
	}
	ws := resolvedWorkspace(t, map[string]string{
		"ok.txt":          "foo plain\n",
		"with space.txt":  "foo spaced\n",
		"col:on.txt":      "foo colon\n",
		"-dash.txt":       "foo dash\n",
		"ünï.txt":         "foo unicode\n",
		"sub/.hidden.txt": "foo hidden\n",
	})
	if err := os.WriteFile(filepath.Join(ws, "caf\xe9.txt"), []byte("foo latin1 name\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("mkfifo", filepath.Join(ws, "pipe")).Run(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 45*time.Second)
	b := a2sBackends(t, ws)
	rg := b["rg"].CallTool(ctx, "grep", map[string]any{"pattern": "foo"})
	gof := b["go"].CallTool(ctx, "grep", map[string]any{"pattern": "foo"})
	if rg.Text() != gof.Text() {
		t.Errorf("grep foo differs between backends:\n--- rg\n%s\n--- go\n%s", rg.Text(), gof.Text())
	}
	for _, want := range []string{"foo plain", "foo spaced", "foo colon", "foo dash", "foo unicode", "foo hidden", "foo latin1 name"} {
		for name, r := range map[string]harness.Result{"rg": rg, "go": gof} {
			if !strings.Contains(r.Text(), want) {
				t.Errorf("%s: %q missing:\n%s", name, want, r.Text())
			}
		}
	}
}

func TestSearchWorkspaceInsideARepository(t *testing.T) {
	// The editor opens a subfolder of a repository: git still applies the
	// repository's .gitignore and .git/info/exclude to it.
	repo := resolvedWorkspace(t, map[string]string{
		".gitignore":     "*.log\n",
		"sub/a.log":      "foo\n",
		"sub/b.txt":      "foo\n",
		"sub/c.excluded": "foo\n",
	})
	a2sGit(t, repo, "init", "-q")
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte("*.excluded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(repo, "sub")
	if got := strings.Fields(a2sGit(t, ws, "check-ignore", "a.log", "b.txt", "c.excluded")); strings.Join(got, " ") != "a.log c.excluded" {
		t.Fatalf("git check-ignore: %q", got)
	}
	ctx := testCtx(t, 45*time.Second)
	for name, c := range a2sBackends(t, ws) {
		g := c.CallTool(ctx, "grep", map[string]any{"pattern": "foo"})
		if strings.TrimSpace(g.Text()) != "b.txt:1: foo" {
			t.Errorf("grep (%s) in a subfolder of a repository, want only b.txt:\n%s", name, g.Text())
		}
	}
	c := a2sBackends(t, ws)["go"]
	f := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
	if got := a2sBody(f.Text()); strings.Join(got, " ") != "b.txt" {
		t.Errorf("find in a subfolder of a repository: got %q, want [b.txt]", got)
	}
	l := c.CallTool(ctx, "ls", map[string]any{})
	if strings.Contains(l.Text(), "a.log") || strings.Contains(l.Text(), "c.excluded") {
		t.Errorf("ls in a subfolder of a repository shows ignored files:\n%s", l.Text())
	}
}

func TestSearchFindExactIgnoredNameIsAnnounced(t *testing.T) {
	// TOOLS.md: "When ignore rules hid something the caller named explicitly,
	// say so and say how to include it (includeIgnored: true)."
	ws := resolvedWorkspace(t, map[string]string{".gitignore": "*.log\nign/\n", "a.log": "x\n", "ign/f.txt": "x\n", "b.txt": "x\n"})
	a2sGit(t, ws, "init", "-q")
	c, ctx := a2cStart(t, ws, nil)
	for _, p := range []string{"a.log", "ign/f.txt"} {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": p})
		wantContains(t, "find "+p, r.Text(), "includeIgnored: true")
	}
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "ign/f.txt", "includeIgnored": true})
	wantContains(t, "find includeIgnored", r.Text(), "ign/f.txt")
}
