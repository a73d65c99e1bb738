package e2e

// Contract tests of the shared rules and the read, ls, grep and find tools
// against the written contract (docs/tools.md, docs/protocol.md) and the
// choices docs/tools.md documents, driven only through the protocol. The
// behaviour one `agentls call` shows is in the scripts under
// cmd/agentls/testdata/script; left here is the comparison with git itself.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// rsWorkspace writes files (and runs setup, for symlinks, git and
// binaries) before the server starts, so no test races the watcher.
func rsWorkspace(t *testing.T, files map[string]string, setup func(ws string)) string {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, files)
	if setup != nil {
		setup(ws)
	}
	return ws
}

// rsBackends starts one server per grep backend on ws: ripgrep (when
// installed), the Go fallback forced by AGENTLS_GREP_BACKEND=go, and the Go
// fallback reached because rg is not on PATH.
func rsBackends(t *testing.T, ws string) map[string]*harness.Client {
	t.Helper()
	out := map[string]*harness.Client{}
	if _, err := exec.LookPath("rg"); err == nil {
		out["rg"], _ = startIn(t, ws, bypass())
	}
	out["go-env"], _ = startIn(t, ws, bypass(), "AGENTLS_GREP_BACKEND=go")
	out["go-no-rg-on-path"], _ = startIn(t, ws, bypass(), "PATH="+t.TempDir())
	return out
}

func rsGitInit(t *testing.T, ws string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// rsBodyLines splits tool text into non-empty lines, notices ("[...]") dropped.
func rsBodyLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		out = append(out, l)
	}
	return out
}

var rsGrepLineRE = regexp.MustCompile(`^(.+?)([:-])(\d+)([:-]) (.*)$`)

// rsGrepFiles returns the distinct paths of a grep output, in order.
func rsGrepFiles(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range rsBodyLines(text) {
		if l == "--" || strings.HasPrefix(l, "No matches") {
			continue
		}
		m := rsGrepLineRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("grep line %q is not path:line: text / path-line- text", l)
			continue
		}
		if len(out) == 0 || out[len(out)-1] != m[1] {
			out = append(out, m[1])
		}
	}
	return out
}

// ---------------------------------------------------------------- shared rules

// The ignore rules agree with git on a fixture (nested .gitignore with
// negation, anchoring, directory patterns, **, ?, .git/info/exclude), for
// find and for both grep backends.
func TestIgnoreRulesAgreeWithGit(t *testing.T) {
	files := map[string]string{
		".gitignore":           "*.log\n!keep.log\n/rootonly.txt\nbuild/\ndocs/**/*.tmp\na?c.txt\nout/\n!out/keep.txt\n",
		"sub/.gitignore":       "local.txt\n!important.log\n/anch.txt\n",
		"keep.log":             "content\n",
		"x.log":                "content\n",
		"rootonly.txt":         "content\n",
		"sub/rootonly.txt":     "content\n",
		"build/b.txt":          "content\n",
		"sub/build/b2.txt":     "content\n",
		"docs/x/y/z.tmp":       "content\n",
		"docs/z.tmp":           "content\n",
		"docs/keep.md":         "content\n",
		"abc.txt":              "content\n",
		"abbc.txt":             "content\n",
		"out/keep.txt":         "content\n",
		"out/o.txt":            "content\n",
		"sub/local.txt":        "content\n",
		"sub/deeper/local.txt": "content\n",
		"sub/important.log":    "content\n",
		"sub/anch.txt":         "content\n",
		"sub/deeper/anch.txt":  "content\n",
		"anch.txt":             "content\n",
		"excluded.txt":         "content\n",
		"sub/excluded.txt":     "content\n",
		"plain.txt":            "content\n",
		".hidden/h.txt":        "content\n",
	}
	ws := rsWorkspace(t, files, func(ws string) {
		rsGitInit(t, ws)
		writeBytes(t, filepath.Join(ws, ".git", "info", "exclude"), []byte("excluded.txt\n"))
		writeBytes(t, filepath.Join(ws, ".git", "content-in-git.txt"), []byte("content\n"))
	})
	out, err := exec.Command("git", "-C", ws, "ls-files", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		want = append(want, l)
	}
	sort.Strings(want)

	for name, c := range rsBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			// find: every file git does not ignore, nothing else (.git excluded).
			r := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
			if got := rsBodyLines(r.Text()); !slices.Equal(got, want) {
				t.Errorf("find * = %q\ngit ls-files --others --exclude-standard = %q", got, want)
			}
			// grep: every non-empty file git does not ignore (the .gitignore
			// files hold no "content").
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^content$", "limit": 1000})
			var wantGrep []string
			for _, f := range want {
				if !strings.HasSuffix(f, ".gitignore") {
					wantGrep = append(wantGrep, f)
				}
			}
			if got := rsGrepFiles(t, r.Text()); !slices.Equal(got, wantGrep) {
				t.Errorf("grep files = %q\nwant %q", got, wantGrep)
			}
			if strings.Contains(r.Text(), ".git/") {
				t.Errorf("grep searched .git:\n%s", r.Text())
			}
		})
	}
}

// ------------------------------------------------------------------------ read

// -------------------------------------------------------------------------- ls

// ------------------------------------------------------------------------ grep

// ------------------------------------------------------------------------ find

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(strings.Join(args, " "), "check-ignore") {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestWorkspaceInsideARepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := testCtx(t, 30*time.Second)
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	writeFiles(t, repo, map[string]string{
		".gitignore":              "*.log\n/top-only.txt\n",
		"pkg/.gitignore":          "gen/\n!keep.log\n",
		"pkg/sub/app.go":          "needle\n",
		"pkg/sub/debug.log":       "needle\n",
		"pkg/sub/keep.log":        "needle\n",
		"pkg/sub/gen/x.go":        "needle\n",
		"pkg/sub/excluded.tmp":    "needle\n",
		"pkg/sub/top-only.txt":    "needle\n",
		"pkg/sub/deep/notes.txt":  "needle\n",
		"pkg/sub/deep/trace.log":  "needle\n",
		"pkg/sub/.agentlsignore":  "",
		"pkg/sub/deep/.gitignore": "notes.txt\n",
	})
	writeFiles(t, repo, map[string]string{".git/info/exclude": "*.tmp\n"})
	ws := filepath.Join(repo, "pkg", "sub")
	all := []string{"app.go", "debug.log", "keep.log", "gen/x.go", "excluded.tmp", "top-only.txt", "deep/notes.txt", "deep/trace.log"}
	var want []string
	for _, f := range all {
		cmd := exec.Command("git", "check-ignore", "-q", f)
		cmd.Dir = ws
		if cmd.Run() != nil { // exit 1: not ignored
			want = append(want, f)
		}
	}
	// "/top-only.txt" anchors at the repository root, so pkg/sub/top-only.txt stays.
	if strings.Join(want, ",") != "app.go,keep.log,top-only.txt" {
		t.Fatalf("fixture: git keeps %v", want)
	}

	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, nil)
	res := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
	got := strings.Fields(res.Text())
	var files []string
	for _, g := range got {
		for _, f := range all {
			if g == f {
				files = append(files, g)
			}
		}
	}
	if strings.Join(files, ",") != strings.Join(want, ",") {
		t.Errorf("find * listed %v, want what git keeps: %v\n%s", files, want, res.Text())
	}
	res = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
	for _, f := range all {
		in := strings.Contains(res.Text(), f+":")
		if in != strings.Contains(","+strings.Join(want, ",")+",", ","+f+",") {
			t.Errorf("grep: %s present=%v\n%s", f, in, res.Text())
		}
	}
	res = c.CallTool(ctx, "ls", map[string]any{})
	wantLacks(t, "ls", res.Text(), "debug.log", "excluded.tmp", "gen/")

	// An edit of the repository root's rule file is seen by the next session.
	writeFiles(t, repo, map[string]string{".gitignore": "*.log\n/top-only.txt\napp.go\n"})
	c2 := harness.Start(t, harness.Options{Root: ws})
	c2.Initialize(ctx, nil)
	res = c2.CallTool(ctx, "find", map[string]any{"pattern": "*.go"})
	wantLacks(t, "find after the root .gitignore changed", res.Text(), "app.go\n")
	if strings.Contains(res.Text(), "app.go") && !strings.Contains(res.Text(), "ignore") {
		t.Errorf("find still lists app.go: %s", res.Text())
	}
}

func TestFindNamesIgnoredMatches(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".gitignore":       "build/\n",
		"src/main.go":      "x\n",
		"build/a.gen.go":   "x\n",
		"build/b.gen.go":   "x\n",
		"build/c.gen.go":   "x\n",
		"build/d.gen.go":   "x\n",
		"build/e/f.gen.go": "x\n",
	})
	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, nil)

	res := c.CallTool(ctx, "find", map[string]any{"pattern": "*.gen.go"})
	text := res.Text()
	wantContains(t, "find *.gen.go", text, "includeIgnored")
	named := 0
	for _, f := range []string{"build/a.gen.go", "build/b.gen.go", "build/c.gen.go", "build/d.gen.go", "build/e/f.gen.go"} {
		if strings.Contains(text, f) {
			named++
		}
	}
	if named != 3 {
		t.Errorf("find named %d ignored matches, want up to 3 (5 exist):\n%s", named, text)
	}
	// The call it names works.
	res = c.CallTool(ctx, "find", map[string]any{"pattern": "*.gen.go", "includeIgnored": true})
	if strings.Count(res.Text(), ".gen.go") != 5 {
		t.Errorf("includeIgnored: true found:\n%s", res.Text())
	}

	res = c.CallTool(ctx, "find", map[string]any{"pattern": "*.go", "path": "build"})
	wantContains(t, "find in an ignored path", res.Text(), "ignored", "includeIgnored")

	// A match outside the ignored files is not accompanied by the notice.
	res = c.CallTool(ctx, "find", map[string]any{"pattern": "main.go"})
	wantContains(t, "find main.go", res.Text(), "src/main.go")
}
