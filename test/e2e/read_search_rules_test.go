package e2e

// Contract tests of the shared rules and the read, ls, grep and find tools
// against the written contract (docs/tools.md, docs/protocol.md) and the
// choices docs/tools.md documents, driven only through the protocol. The
// behaviour one `agentls call` shows is in the scripts under
// cmd/agentls/testdata/script; left here is the comparison with git itself.

import (
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
