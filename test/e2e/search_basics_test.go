package e2e

// Contract tests of issue 3 (ls, grep, find, ignore rules, read
// completion), written from shared/docs/tools.md and the issue's
// acceptance list.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// searchBasicsBackends starts one server per grep backend on the same workspace.
func searchBasicsBackends(t *testing.T, ws string) map[string]*harness.Client {
	t.Helper()
	out := map[string]*harness.Client{}
	if _, err := exec.LookPath("rg"); err == nil {
		out["rg"], _ = lifecycleStart(t, ws, nil)
	} else {
		t.Log("rg not on PATH: only the Go fallback is tested")
	}
	out["go"], _ = lifecycleStart(t, ws, nil, "AGENTLS_GREP_BACKEND=go")
	return out
}

func searchBasicsGit(t *testing.T, dir string, args ...string) string {
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

// searchBasicsBody returns the result lines that are entries, not headers or notices.
func searchBasicsBody(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasSuffix(l, " entries") || strings.Contains(l, ": ") && strings.HasSuffix(l, "entries") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// searchBasicsIgnoreFixture builds a git repository with ≥ 33 tricky ignore cases.
func searchBasicsIgnoreFixture(t *testing.T) (ws string, files []string) {
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
	searchBasicsGit(t, ws, "init", "-q")
	searchBasicsGit(t, filepath.Join(ws, "repo2"), "init", "-q")
	if err := os.WriteFile(filepath.Join(ws, ".git", "info", "exclude"), []byte("/excluded.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, files
}

func TestSearchIgnoreRulesAgreeWithGit(t *testing.T) {
	ws, files := searchBasicsIgnoreFixture(t)
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

	c, ctx := lifecycleStart(t, ws, nil)
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "**", "limit": 5000})
	listed := map[string]bool{}
	for _, l := range searchBasicsBody(r.Text()) {
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
	for name, gc := range searchBasicsBackends(t, ws) {
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

// ls of .git says what it is and where its contents are reached (git
// through bash), not that ignore rules hide it; includeIgnored lists it.
func TestLsOfGitDirectory(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "a.txt": "a\n"})
	r := c.CallTool(ctx, "ls", map[string]any{"path": ".git"})
	if r.IsError || !strings.Contains(r.Text(), "[.git is git's database, not project files") || strings.Contains(r.Text(), "ignored by ignore rules") || strings.Contains(r.Text(), "ignored entries hidden") {
		t.Errorf("ls .git = %q", r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": ".git", "includeIgnored": true})
	if r.IsError || !strings.Contains(r.Text(), "HEAD") || strings.Contains(r.Text(), "git's database") {
		t.Errorf("ls .git with includeIgnored = %q", r.Text())
	}
}
