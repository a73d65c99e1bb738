package e2e

// Contract tests of the shared rules and the read, ls, grep and find tools
// against the written contract (design/TOOLS.md, design/PROTOCOL.md) and the
// choices docs/tools.md documents, driven only through the protocol.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

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

func rsWant(t *testing.T, what string, r harness.Result, isError bool, wants ...string) {
	t.Helper()
	if r.IsError != isError {
		t.Errorf("%s: isError = %v, want %v; text:\n%.2000s", what, r.IsError, isError, r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("%s: text lacks %q:\n%.2000s", what, w, r.Text())
		}
	}
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

// rsCheckGrepOrder asserts the deterministic order: by path (byte order),
// then line, each path in one run.
func rsCheckGrepOrder(t *testing.T, text string) {
	t.Helper()
	prevPath, prevLine := "", 0
	for _, l := range rsBodyLines(text) {
		if l == "--" {
			continue
		}
		m := rsGrepLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		if m[2] != m[4] {
			t.Errorf("separators differ in %q", l)
		}
		if m[1] < prevPath || (m[1] == prevPath && n <= prevLine) {
			t.Errorf("out of order: %s:%d after %s:%d", m[1], n, prevPath, prevLine)
		}
		prevPath, prevLine = m[1], n
	}
}

// ---------------------------------------------------------------- shared rules

func TestNormalizationAcrossTools(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{
		"a.txt": "Hello there\n", "b.txt": "other\n", "src/x.go": "package x\n", "src/y.go": "package y\n",
	})
	cases := []struct {
		name     string
		tool     string
		args     any
		isError  bool
		want     []string
		notWant  []string
		wantNorm []string
	}{
		{"filePath alias", "read", map[string]any{"filePath": "a.txt"}, false, []string{"1→Hello there"}, nil, []string{"filePath → path"}},
		{"file_path alias on ls", "ls", map[string]any{"file_path": "src"}, false, []string{"x.go", "y.go"}, nil, []string{"file_path → path"}},
		{"canonical field wins over alias", "read", map[string]any{"path": "a.txt", "file_path": "b.txt"}, false, []string{"1→Hello there"}, []string{"other"}, []string{"file_path"}},
		{"grep numeric strings and true", "grep", map[string]any{"pattern": "hello", "ignoreCase": "true", "context": "1", "limit": "2", "path": "a.txt"}, false,
			[]string{"a.txt:1: Hello there"}, nil, []string{`ignoreCase: string "true"`, `context: string "1" → number`, `limit: string "2" → number`}},
		{"grep false stays false", "grep", map[string]any{"pattern": "hello", "ignoreCase": "false", "path": "a.txt"}, false,
			[]string{`No matches for "hello"`}, []string{"a.txt:1:"}, []string{`ignoreCase: string "false"`}},
		{"unknown field dropped on grep", "grep", map[string]any{"pattern": "Hello", "output_mode": "content"}, false, []string{"a.txt:1: Hello there"}, nil, []string{`dropped unknown field "output_mode"`}},
		{"unknown field dropped on find", "find", map[string]any{"pattern": "*.go", "type": "f"}, false, []string{"src/x.go", "src/y.go"}, nil, []string{`dropped unknown field "type"`}},
		{"unknown field dropped on ls", "ls", map[string]any{"all": true}, false, []string{"a.txt"}, nil, []string{`dropped unknown field "all"`}},
		{"arguments that are not JSON are an error result saying what to send", "read", "{bad json", true, []string{"arguments must be a JSON object", `{"path":`}, nil, nil},
		{"arguments that are a number are an error result", "grep", 42, true, []string{"arguments must be a JSON object"}, nil, nil},
		{"missing grep pattern names the field", "grep", map[string]any{}, true, []string{"`pattern`", "Usage: grep {pattern: string"}, nil, nil},
		{"missing find pattern names the field", "find", map[string]any{}, true, []string{"`pattern`", "Usage: find {pattern: string"}, nil, nil},
		{"wrong type on ls names what was received", "ls", map[string]any{"limit": []any{1}}, true, []string{"`limit`", "Usage: ls"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			rsWant(t, tc.tool, r, tc.isError)
			checkText(t, r, tc.want, tc.notWant, tc.wantNorm)
		})
	}

	// A JSON string where an array is expected, and a legacy single edit.
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": `[{"oldText": "there", "newText": "you"}]`})
	rsWant(t, "edit with edits as a JSON string", r, false, "Edited a.txt")
	if norm := fmt.Sprint(r.Details["normalized"]); !strings.Contains(norm, "edits") {
		t.Errorf("details.normalized lacks the parsed edits: %s", norm)
	}
	r = c.CallTool(ctx, "edit", map[string]any{"file_path": "a.txt", "old_string": "you", "new_string": "all"})
	rsWant(t, "legacy single edit with aliases", r, false, "Edited a.txt")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "Hello all\n" {
		t.Errorf("a.txt = %q, want %q", got, "Hello all\n")
	}
	// Bad input never cost the connection.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "b.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
}

func TestPathRules(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "outside\n"})
	ws := rsWorkspace(t, map[string]string{"src/a.txt": "alpha\n", "my file.txt": "spaced\n"}, func(ws string) {
		symlink(t, "src/a.txt", filepath.Join(ws, "inlink"))
		symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "outlink"))
		symlink(t, outside, filepath.Join(ws, "outdir"))
	})
	c, ctx := startIn(t, ws, bypass())
	abs := filepath.Join(ws, "src", "a.txt")
	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    []string
	}{
		{"relative", "read", map[string]any{"path": "src/a.txt"}, false, []string{"src/a.txt, lines 1-1 of 1", "1→alpha"}},
		{"absolute inside", "read", map[string]any{"path": abs}, false, []string{"1→alpha"}},
		{"absolute inside, grep shows workspace-relative paths", "grep", map[string]any{"pattern": "alpha", "path": filepath.Join(ws, "src")}, false, []string{"src/a.txt:1: alpha"}},
		{"absolute inside, find", "find", map[string]any{"pattern": "*.txt", "path": filepath.Join(ws, "src")}, false, []string{"src/a.txt"}},
		{"absolute inside, ls", "ls", map[string]any{"path": filepath.Join(ws, "src")}, false, []string{"a.txt"}},
		{"dotdot that stays inside", "read", map[string]any{"path": "src/../src/a.txt"}, false, []string{"1→alpha"}},
		{"dotdot escape, read", "read", map[string]any{"path": "../x"}, true, []string{`".."`}},
		{"dotdot escape, ls", "ls", map[string]any{"path": "src/../.."}, true, []string{`".."`}},
		{"dotdot escape, grep", "grep", map[string]any{"pattern": "x", "path": "../"}, true, []string{`".."`}},
		{"dotdot escape, find", "find", map[string]any{"pattern": "*", "path": ".."}, true, []string{`".."`}},
		{"absolute outside", "read", map[string]any{"path": filepath.Join(outside, "secret.txt")}, true, []string{"outside the workspace"}},
		{"symlink inside is followed", "read", map[string]any{"path": "inlink"}, false, []string{"1→alpha"}},
		{"symlink to a file outside", "read", map[string]any{"path": "outlink"}, true, []string{"symlink", "outside the workspace"}},
		{"symlink to a dir outside, ls", "ls", map[string]any{"path": "outdir"}, true, []string{"outside the workspace"}},
		{"symlink to a dir outside, grep", "grep", map[string]any{"pattern": "outside", "path": "outdir"}, true, []string{"outside the workspace"}},
		{"path through a symlinked dir outside", "read", map[string]any{"path": "outdir/secret.txt"}, true, []string{"outside the workspace"}},
		{"NUL byte", "read", map[string]any{"path": "src/a.txt\x00.png"}, true, []string{"NUL"}},
		{"NUL byte, grep", "grep", map[string]any{"pattern": "a", "path": "src\x00"}, true, []string{"NUL"}},
		{"device path", "read", map[string]any{"path": "/dev/zero"}, true, []string{"refused"}},
		{"leading @", "read", map[string]any{"path": "@src/a.txt"}, false, []string{"1→alpha"}},
		{"leading @, ls", "ls", map[string]any{"path": "@src"}, false, []string{"a.txt"}},
		{"U+00A0 for a space", "read", map[string]any{"path": "my\u00a0file.txt"}, false, []string{"1→spaced"}},
		{"U+202F for a space", "read", map[string]any{"path": "my\u202ffile.txt"}, false, []string{"1→spaced"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			rsWant(t, tc.tool, r, tc.isError, tc.want...)
			if strings.Contains(r.Text(), "outside\n") || strings.Contains(r.Text(), "1→outside") {
				t.Errorf("content from outside the workspace leaked:\n%s", r.Text())
			}
		})
	}
}

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

// .ignore and .agentlsignore hide files from ls, find and grep; nested
// .gitignore files work outside a git repository too.
func TestIgnoreFilesOutsideGit(t *testing.T) {
	ws := rsWorkspace(t, map[string]string{
		".ignore":        "ign.txt\n",
		".agentlsignore": "agi.txt\n",
		"pkg/.gitignore": "gen/\n*.out\n",
		"ign.txt":        "needle\n",
		"agi.txt":        "needle\n",
		"pkg/gen/g.go":   "needle\n",
		"pkg/x.out":      "needle\n",
		"pkg/keep.go":    "needle\n",
		"top.out":        "needle\n", // pkg's rule does not reach up
		"visible.txt":    "needle\n",
	}, nil)
	want := []string{"pkg/keep.go", "top.out", "visible.txt"}
	for name, c := range rsBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			if got := rsGrepFiles(t, c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"}).Text()); !slices.Equal(got, want) {
				t.Errorf("grep files = %q, want %q", got, want)
			}
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "includeIgnored": true})
			if got := rsGrepFiles(t, r.Text()); len(got) != 7 {
				t.Errorf("grep includeIgnored files = %q, want all 7", got)
			}
		})
	}
	c, ctx := startIn(t, ws, bypass())
	var found []string
	for _, l := range rsBodyLines(c.CallTool(ctx, "find", map[string]any{"pattern": "*"}).Text()) {
		if !strings.Contains(l, "ignore") {
			found = append(found, l)
		}
	}
	if !slices.Equal(found, want) {
		t.Errorf("find = %q, want %q", found, want)
	}
	r := c.CallTool(ctx, "ls", map[string]any{})
	for _, hidden := range []string{"ign.txt", "agi.txt"} {
		if strings.Contains(r.Text(), "\n"+hidden) {
			t.Errorf("ls shows ignored %s:\n%s", hidden, r.Text())
		}
	}
	rsWant(t, "ls root", r, false, "2 ignored entries hidden")
	rsWant(t, "ls pkg", c.CallTool(ctx, "ls", map[string]any{"path": "pkg"}), false, "keep.go", "2 ignored entries hidden")
}

// When ignore rules hide what the caller named, the result says so and how
// to include it.
func TestIgnoredExplicitPathIsAnnounced(t *testing.T) {
	ws := rsWorkspace(t, map[string]string{".gitignore": "build/\n*.log\n", "build/out.txt": "in build\n", "x.log": "in log\n"}, nil)
	for name, c := range rsBackends(t, ws) {
		t.Run("grep/"+name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			rsWant(t, "grep ignored dir", c.CallTool(ctx, "grep", map[string]any{"pattern": "in", "path": "build"}), false, "ignored", "includeIgnored: true")
			rsWant(t, "grep ignored file", c.CallTool(ctx, "grep", map[string]any{"pattern": "in", "path": "x.log"}), false, "ignored", "includeIgnored: true")
			rsWant(t, "grep includeIgnored", c.CallTool(ctx, "grep", map[string]any{"pattern": "in", "path": "build", "includeIgnored": true}), false, "build/out.txt:1: in build")
		})
	}
	c, ctx := startIn(t, ws, bypass())
	rsWant(t, "ls ignored dir", c.CallTool(ctx, "ls", map[string]any{"path": "build"}), false, "ignored")
}

func TestFindIgnoredExplicitPathIsAnnounced(t *testing.T) {
	ws := rsWorkspace(t, map[string]string{".gitignore": "build/\n", "build/out.txt": "in build\n"}, nil)
	c, ctx := startIn(t, ws, bypass())
	rsWant(t, "find in ignored dir", c.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": "build"}), false, "ignored", "includeIgnored")
	// ls's own hint for this directory says find takes includeIgnored.
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": "build", "includeIgnored": true})
	rsWant(t, "find includeIgnored", r, false, "build/out.txt")
}

func TestGrepDotGitHintDoesNotLoop(t *testing.T) {
	ws := rsWorkspace(t, map[string]string{"a.txt": "a\n"}, func(ws string) { rsGitInit(t, ws) })
	for name, c := range rsBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "ref", "path": ".git", "includeIgnored": true})
			if strings.Contains(r.Text(), "includeIgnored: true") {
				t.Errorf("the hint asks for the flag that was already given:\n%s", r.Text())
			}
		})
	}
}

// Secrets are masked in every content string: file names in listings and
// grep context lines (not only matches), with both grep backends.
func TestSecretsMaskedInListingsAndContext(t *testing.T) {
	ws := rsWorkspace(t, map[string]string{
		".env":               "DEBUG=true\nOPENAI_API_KEY=" + openAIKey + "\nPORT=1\n",
		githubToken + ".txt": "named after a token\n",
	}, nil)
	for name, c := range rsBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "PORT", "context": 1})
			rsWant(t, "grep context", r, false, ".env-2- OPENAI_API_KEY=[REDACTED:", ".env:3: PORT=1")
			if strings.Contains(r.Text(), openAIKey) {
				t.Errorf("grep context line leaked the key:\n%s", r.Text())
			}
		})
	}
	c, ctx := startIn(t, ws, bypass())
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"ls", map[string]any{}}, {"find", map[string]any{"pattern": "*.txt"}}, {"grep", map[string]any{"pattern": "named"}}} {
		r := c.CallTool(ctx, call.tool, call.args)
		if strings.Contains(r.Text(), githubToken) || !strings.Contains(r.Text(), "[REDACTED:") {
			t.Errorf("%s: file name not masked:\n%s", call.tool, r.Text())
		}
	}
}

// ------------------------------------------------------------------------ read

func TestReadFormatAndLimits(t *testing.T) {
	var big, wide strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&wide, "%05d%s\n", i, strings.Repeat("x", 95))
	}
	c, _, ctx := start(t, map[string]string{
		"src/config.ts": "a\n\tb  \nc",
		"big.txt":       big.String(),
		"wide.txt":      wide.String(),
		"long.txt":      "short\n" + strings.Repeat("é", 2500) + "\nend\n",
		"huge1.txt":     strings.Repeat("z", 60000) + "\nsecond\n",
		"huge2.txt":     "first\n" + strings.Repeat("z", 60000) + "\n",
		"empty.txt":     "",
	})

	t.Run("header and numbering, line kept exactly", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "src/config.ts"})
		want := "src/config.ts, lines 1-3 of 3\n     1→a\n     2→\tb  \n     3→c"
		if r.IsError || r.Text() != want {
			t.Errorf("read = %q, want %q", r.Text(), want)
		}
	})
	t.Run("2000 lines at most, header and notice included, with the continuation call", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt"})
		rsWant(t, "big", r, false, "big.txt, lines 1-1998 of 2500", "  1998→line 1998", "lines 1-1998 of 2500", "offset=1999")
		if strings.Contains(r.Text(), "1999→") || strings.Count(r.Text(), "\n")+1 > 2000 {
			t.Error("more than 2000 lines")
		}
		r = c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 1999})
		rsWant(t, "continued", r, false, "big.txt, lines 1999-2500 of 2500", "  1999→line 1999", "  2500→line 2500")
		if strings.Contains(r.Text(), "offset=") {
			t.Errorf("notice at the end of the file:\n%s", r.Text()[len(r.Text())-200:])
		}
	})
	t.Run("51,200 bytes at most, header and notice included, announced with the continuation call", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "wide.txt"})
		text := r.Text()
		header, rest, _ := strings.Cut(text, "\n")
		body, notice, _ := strings.Cut(rest, "\n[")
		shown := strings.Count(body, "\n") + 1
		if len(text) > 51200 {
			t.Errorf("the result is %d bytes, over 51,200", len(text))
		}
		if len(text)+len(strings.SplitN(body, "\n", 2)[0])+1 <= 51200 {
			t.Errorf("stopped at %d lines although another line fits in 51,200 bytes", shown)
		}
		if want := fmt.Sprintf("wide.txt, lines 1-%d of 1000", shown); header != want {
			t.Errorf("header = %q, want %q", header, want)
		}
		for _, w := range []string{"51200", fmt.Sprintf("lines 1-%d of 1000", shown), fmt.Sprintf("offset=%d", shown+1)} {
			if !strings.Contains(notice, w) {
				t.Errorf("notice %q lacks %q", notice, w)
			}
		}
		r = c.CallTool(ctx, "read", map[string]any{"path": "wide.txt", "offset": shown + 1, "limit": 1})
		rsWant(t, "continued", r, false, fmt.Sprintf("%6d→%05d", shown+1, shown+1))
	})
	t.Run("line over 2000 characters cut with a marker", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "long.txt"})
		want := "     2→" + strings.Repeat("é", 2000) + "… [line cut: 2000 of 2500 characters shown]\n     3→end"
		rsWant(t, "long", r, false, "long.txt, lines 1-3 of 3", want, "1 line(s) longer than 2000 characters were cut")
	})
	t.Run("first line over the byte limit explains itself", func(t *testing.T) {
		for _, tc := range []struct {
			path   string
			offset int
			line   string
		}{{"huge1.txt", 1, "Line 1 of huge1.txt"}, {"huge2.txt", 2, "Line 2 of huge2.txt"}} {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path, "offset": tc.offset})
			rsWant(t, tc.path, r, false, tc.line, "60000 bytes", "51200", "sed -n", "cut -b")
		}
	})
	t.Run("empty file", func(t *testing.T) {
		rsWant(t, "empty", c.CallTool(ctx, "read", map[string]any{"path": "empty.txt"}), false, "empty.txt", "0 lines")
	})
	t.Run("offset and limit", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 0, "limit": 2})
		want := "big.txt, lines 1-2 of 2500\n     1→line 1\n     2→line 2\n[Showing lines 1-2 of 2500. Use offset=3 to continue.]"
		if r.Text() != want {
			t.Errorf("offset 0 limit 2 = %q, want %q", r.Text(), want)
		}
		r = c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 10, "limit": 3})
		rsWant(t, "window", r, false, "big.txt, lines 10-12 of 2500", "    10→line 10", "    12→line 12", "offset=13")
		r = c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 2499, "limit": 5000})
		rsWant(t, "limit lowered", r, false, "lines 2499-2500 of 2500")
		if !strings.Contains(fmt.Sprint(r.Details["normalized"]), "limit") {
			t.Errorf("lowered limit not reported: %v", r.Details["normalized"])
		}
		rsWant(t, "past the end", c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 2501}), true, "2500 lines")
	})
}

func TestReadEncodingsAndBinaries(t *testing.T) {
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	u16 := func(bigEndian bool, s string) []byte {
		var b bytes.Buffer
		if bigEndian {
			b.Write([]byte{0xFE, 0xFF})
		} else {
			b.Write([]byte{0xFF, 0xFE})
		}
		for _, u := range utf16.Encode([]rune(s)) {
			if bigEndian {
				b.Write([]byte{byte(u >> 8), byte(u)})
			} else {
				b.Write([]byte{byte(u), byte(u >> 8)})
			}
		}
		return b.Bytes()
	}
	ws := rsWorkspace(t, nil, func(ws string) {
		for name, b := range map[string][]byte{
			"bom.txt":     append([]byte{0xEF, 0xBB, 0xBF}, "héllo\nworld\n"...),
			"u16le.txt":   u16(false, "grüße\nzwei\n"),
			"u16be.txt":   u16(true, "big ✓\n"),
			"latin1.txt":  []byte("caf\xe9\n"),
			"prog.elf":    append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 2000)...),
			"arch.zip":    append([]byte("PK\x03\x04\x14\x00"), make([]byte, 100)...),
			"doc.pdf":     []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"),
			"nul.txt":     []byte("text\x00more\n"),
			"pic.png":     png,
			"named.txt":   png, // content, not the name, decides
			"anim.gif":    append([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00"), make([]byte, 30)...),
			"photo.jpg":   append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, 30)...),
			"img.webp":    append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 30)...),
			"huge.png":    append(append([]byte{}, png...), make([]byte, 6<<20)...),
			"textual.png": []byte("not an image\n"),
		} {
			writeBytes(t, filepath.Join(ws, name), b)
		}
	})
	c, ctx := startIn(t, ws, bypass())
	text := []struct {
		path string
		want []string
	}{
		{"bom.txt", []string{"bom.txt, lines 1-2 of 2", "BOM", "     1→héllo\n"}},
		{"u16le.txt", []string{"u16le.txt, lines 1-2 of 2", "UTF-16", "     1→grüße\n     2→zwei"}},
		{"u16be.txt", []string{"UTF-16", "     1→big ✓"}},
		{"latin1.txt", []string{"     1→caf\uFFFD", "UTF-8"}},
		{"textual.png", []string{"     1→not an image"}},
	}
	for _, tc := range text {
		t.Run(tc.path, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			rsWant(t, tc.path, r, false, tc.want...)
			if strings.Contains(r.Text(), "\uFEFF") {
				t.Errorf("BOM shown: %q", r.Text())
			}
		})
	}
	binaries := []struct{ path, kind string }{
		{"prog.elf", "ELF executable"}, {"arch.zip", "zip archive"}, {"doc.pdf", "pdf"}, {"nul.txt", "binary file ("},
	}
	for _, tc := range binaries {
		t.Run(tc.path, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			rsWant(t, tc.path, r, true, "binary file (", tc.kind, "not read")
		})
	}
	images := []struct{ path, mime string }{
		{"pic.png", "image/png"}, {"named.txt", "image/png"}, {"anim.gif", "image/gif"}, {"photo.jpg", "image/jpeg"}, {"img.webp", "image/webp"},
	}
	for _, tc := range images {
		t.Run(tc.path, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			raw, _ := os.ReadFile(filepath.Join(ws, tc.path))
			var img map[string]any
			for _, p := range r.Content {
				if p["type"] == "image" {
					img = p
				}
			}
			if r.IsError || img == nil || img["mimeType"] != tc.mime || img["data"] != base64.StdEncoding.EncodeToString(raw) {
				t.Errorf("read %s: isError=%v content=%.300v", tc.path, r.IsError, r.Content)
			}
		})
	}
	t.Run("image over the size cap", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "huge.png"})
		rsWant(t, "huge.png", r, true, "image limit")
		for _, p := range r.Content {
			if p["type"] == "image" {
				t.Error("an image part was sent over the cap")
			}
		}
	})
}

func TestReadMissingAndDirectory(t *testing.T) {
	c, _, ctx := start(t, map[string]string{
		"cfg/config.ts": "a\n", "cfg/config.js": "a\n", "cfg/configs.ts": "a\n", "cfg/conf.ts": "a\n", "other/config.ts": "a\n",
		"lib/unique_name.go": "a\n",
	})
	r := c.CallTool(ctx, "read", map[string]any{"path": "cfg/confg.ts"})
	rsWant(t, "missing", r, true, "cfg/confg.ts not found", "Did you mean")
	_, list, _ := strings.Cut(r.Text(), "Did you mean")
	if n := strings.Count(list, ","); n > 2 {
		t.Errorf("more than 3 suggestions: %s", list)
	}
	if !strings.Contains(list, "cfg/config.ts") {
		t.Errorf("closest name cfg/config.ts not suggested: %s", list)
	}
	// The same name elsewhere is found.
	rsWant(t, "moved", c.CallTool(ctx, "read", map[string]any{"path": "unique_name.go"}), true, "lib/unique_name.go")
	rsWant(t, "directory", c.CallTool(ctx, "read", map[string]any{"path": "cfg"}), true, "directory", "ls")
	rsWant(t, "root", c.CallTool(ctx, "read", map[string]any{"path": "."}), true, "directory", "ls")
}

// -------------------------------------------------------------------------- ls

func TestLs(t *testing.T) {
	files := map[string]string{
		"b.txt": "b\n", "A.txt": "a\n", "_x": "x\n", ".dot": "d\n", "dir/in.txt": "i\n", ".gitignore": "*.log\n",
		"ign.log": "l\n", "other.log": "l\n",
	}
	for i := range 620 {
		files[fmt.Sprintf("many/f%04d.txt", i)] = "m\n"
	}
	ws := rsWorkspace(t, files, func(ws string) {
		rsGitInit(t, ws)
		symlink(t, "b.txt", filepath.Join(ws, "link"))
		symlink(t, "dir", filepath.Join(ws, "dirlink"))
	})
	c, ctx := startIn(t, ws, bypass())

	r := c.CallTool(ctx, "ls", map[string]any{})
	if header := strings.SplitN(r.Text(), "\n", 2)[0]; header != "workspace root: 9 entries" {
		t.Errorf("header = %q: .git and ignored entries must not be counted", header)
	}
	wantEntries := []string{".dot", ".gitignore", "A.txt", "_x", "b.txt", "dir/", "dirlink@ -> dir", "link@ -> b.txt", "many/"}
	var entries []string
	for _, l := range rsBodyLines(r.Text())[1:] {
		entries = append(entries, l)
	}
	if r.IsError || !slices.Equal(entries, wantEntries) {
		t.Errorf("ls entries = %q\nwant %q\nfull text:\n%s", entries, wantEntries, r.Text())
	}
	rsWant(t, "ls", r, false, "2 ignored entries hidden")
	if strings.Contains(r.Text(), ".git/") || strings.Contains(r.Text(), "\n.git\n") {
		t.Errorf(".git listed:\n%s", r.Text())
	}

	r = c.CallTool(ctx, "ls", map[string]any{"path": "many"})
	shown := rsBodyLines(r.Text())[1:]
	if len(shown) != 500 || shown[0] != "f0000.txt" || shown[499] != "f0499.txt" {
		t.Errorf("default limit: %d entries shown, first %q", len(shown), shown[:1])
	}
	rsWant(t, "ls many", r, false, "500", "620", "limit=")
	m := regexp.MustCompile(`limit=(\d+)`).FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatal("no limit= in the notice")
	}
	n, _ := strconv.Atoi(m[1])
	r = c.CallTool(ctx, "ls", map[string]any{"path": "many", "limit": n})
	if got := len(rsBodyLines(r.Text())) - 1; r.IsError || got != 620 || strings.Contains(r.Text(), "[Showing") {
		t.Errorf("the notice's call (limit=%d) showed %d entries:\n%.300s", n, got, r.Text())
	}
	rsWant(t, "ls a file", c.CallTool(ctx, "ls", map[string]any{"path": "b.txt"}), true, "read")
	rsWant(t, "ls missing", c.CallTool(ctx, "ls", map[string]any{"path": "nope"}), true, "nope")
}

// ------------------------------------------------------------------------ grep

func rsGrepFixture(t *testing.T) string {
	var ctx strings.Builder
	for i := 1; i <= 30; i++ {
		if i == 5 || i == 7 || i == 20 {
			ctx.WriteString("HIT\n")
		} else {
			fmt.Fprintf(&ctx, "l%d\n", i)
		}
	}
	var wide strings.Builder
	for i := range 200 {
		fmt.Fprintf(&wide, "wide %04d %s\n", i, strings.Repeat("w", 600))
	}
	files := map[string]string{
		"ctx.txt":        ctx.String(),
		"src/main.go":    "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
		"src/util/u.go":  "package util\n// hello again\nfunc U() {}\n",
		"docs/readme.md": "Hello world\nhello.world\nhelloXworld\n",
		".hidden/h.txt":  "hello hidden\n",
		".gitignore":     "ignored/\n",
		"ignored/i.txt":  "hello ignored\n",
		"crlf.txt":       "hello\r\ncrlf\r\n",
		"wide.txt":       wide.String(),
		"longline.txt":   "start " + strings.Repeat("é", 700) + "\n",
		"dash.txt":       "-foo --bar\n",
	}
	for i := 1; i <= 1010; i++ {
		files[fmt.Sprintf("many/f%04d.txt", i)] = fmt.Sprintf("match %04d\n", i)
	}
	for i := range 1100 {
		files["lots.txt"] += fmt.Sprintf("zz %d\n", i)
	}
	return rsWorkspace(t, files, func(ws string) {
		writeBytes(t, filepath.Join(ws, "bom.txt"), append([]byte{0xEF, 0xBB, 0xBF}, "hello bom\n"...))
		writeBytes(t, filepath.Join(ws, "latin.txt"), []byte("hello caf\xe9\n"))
		u16 := []byte{0xFF, 0xFE}
		for _, r := range "hello utf16\n" {
			u16 = append(u16, byte(r), 0)
		}
		writeBytes(t, filepath.Join(ws, "u16.txt"), u16)
		writeBytes(t, filepath.Join(ws, "bin.dat"), []byte("hello\x00binary\n"))
		writeBytes(t, filepath.Join(ws, "latenul.dat"), append(append([]byte("hello early\n"), bytes.Repeat([]byte("x"), 100000)...), "\n\x00hello late\n"...))
		rsGitInit(t, ws)
		writeBytes(t, filepath.Join(ws, ".git", "hello.txt"), []byte("hello from git\n"))
	})
}

func TestGrepBothBackends(t *testing.T) {
	ws := rsGrepFixture(t)
	backends := rsBackends(t, ws)
	for name, c := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			t.Run("backend is the one asked for", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "HIT", "path": "ctx.txt"})
				want := "go"
				if name == "rg" {
					want = "rg"
				}
				if r.Details["backend"] != want {
					t.Errorf("details.backend = %v, want %s", r.Details["backend"], want)
				}
			})
			t.Run("context windows merged", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "HIT", "context": 2})
				want := "ctx.txt-3- l3\nctx.txt-4- l4\nctx.txt:5: HIT\nctx.txt-6- l6\nctx.txt:7: HIT\nctx.txt-8- l8\nctx.txt-9- l9\n--\n" +
					"ctx.txt-18- l18\nctx.txt-19- l19\nctx.txt:20: HIT\nctx.txt-21- l21\nctx.txt-22- l22"
				if strings.TrimRight(r.Text(), "\n") != want {
					t.Errorf("grep -C2 = %q\nwant %q", r.Text(), want)
				}
			})
			t.Run("format, order, hidden, binary, ignored, .git, decoding", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "hello", "ignoreCase": true})
				rsCheckGrepOrder(t, r.Text())
				want := []string{".hidden/h.txt", "bom.txt", "crlf.txt", "docs/readme.md", "latin.txt", "src/main.go", "src/util/u.go", "u16.txt"}
				if got := rsGrepFiles(t, r.Text()); !slices.Equal(got, want) {
					t.Errorf("files = %q, want %q", got, want)
				}
				rsWant(t, "grep hello", r, false, ".hidden/h.txt:1: hello hidden\n", "bom.txt:1: hello bom\n", "crlf.txt:1: hello\n",
					"docs/readme.md:1: Hello world\n", "latin.txt:1: hello caf\uFFFD\n", "src/main.go:4: \tprintln(\"Hello\")\n", "u16.txt:1: hello utf16\n")
			})
			t.Run("a pattern starting with - is a pattern, not a flag", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "-foo"})
				if got := strings.TrimRight(r.Text(), "\n"); got != "dash.txt:1: -foo --bar" {
					t.Errorf("grep -foo = %q", got)
				}
				r = c.CallTool(ctx, "grep", map[string]any{"pattern": "--bar", "literal": true})
				if got := strings.TrimRight(r.Text(), "\n"); got != "dash.txt:1: -foo --bar" {
					t.Errorf("grep --bar = %q", got)
				}
			})
			t.Run("explicitly named binary file is not searched", func(t *testing.T) {
				for _, p := range []string{"bin.dat", "latenul.dat"} {
					r := c.CallTool(ctx, "grep", map[string]any{"pattern": "hello", "path": p})
					if strings.Contains(r.Text(), p+":") {
						t.Errorf("binary %s searched:\n%s", p, r.Text())
					}
				}
			})
			t.Run("literal, glob, path, hidden false", func(t *testing.T) {
				wantGrep := func(args map[string]any, want string) {
					t.Helper()
					r := c.CallTool(ctx, "grep", args)
					if got := strings.TrimRight(r.Text(), "\n"); got != want {
						t.Errorf("grep %v = %q, want %q", args, got, want)
					}
				}
				wantGrep(map[string]any{"pattern": "hello.world", "literal": true}, "docs/readme.md:2: hello.world")
				wantGrep(map[string]any{"pattern": "hello", "glob": "*.go", "ignoreCase": true}, "src/main.go:4: \tprintln(\"Hello\")\nsrc/util/u.go:2: // hello again")
				wantGrep(map[string]any{"pattern": "hello", "glob": "src/**/*.go"}, "src/util/u.go:2: // hello again")
				wantGrep(map[string]any{"pattern": "package", "path": "src/util"}, "src/util/u.go:1: package util")
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "hello hidden", "hidden": false})
				if strings.Contains(r.Text(), ".hidden/") {
					t.Errorf("hidden: false searched .hidden:\n%s", r.Text())
				}
			})
			t.Run("default limit 100, deterministic, notice with the call", func(t *testing.T) {
				var want strings.Builder
				for i := 1; i <= 100; i++ {
					fmt.Fprintf(&want, "many/f%04d.txt:1: match %04d\n", i, i)
				}
				for range 3 {
					r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^match"})
					body, notice, _ := strings.Cut(r.Text(), "[")
					if body != want.String() {
						t.Fatalf("first 100 matches are not the first 100 in path order:\n%.500s", r.Text())
					}
					for _, w := range []string{"100", "limit", "limit=200"} {
						if !strings.Contains(notice, w) {
							t.Errorf("notice %q lacks %q", notice, w)
						}
					}
				}
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^match", "limit": 200})
				if n := len(rsBodyLines(r.Text())); n != 200 {
					t.Errorf("the notice's call limit=200 gave %d lines", n)
				}
			})
			t.Run("line cut at 500 characters", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^start", "path": "longline.txt"})
				line := rsBodyLines(r.Text())[0]
				text := strings.TrimPrefix(line, "longline.txt:1: ")
				kept, marker, ok := strings.Cut(text, "…")
				if !ok || len([]rune(kept)) != 500 || !strings.Contains(marker, "500") {
					t.Errorf("line cut: %d characters kept, marker %q", len([]rune(kept)), marker)
				}
			})
			t.Run("whole output at most 51,200 bytes", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^wide", "limit": 1000})
				if n := len(r.Text()); n > 51200 {
					t.Errorf("output is %d bytes", n)
				}
				rsCheckGrepOrder(t, r.Text())
				rsWant(t, "byte cut", r, false, "51200 bytes", "wide.txt:")
			})
			t.Run("invalid regex is an error with the parser's message", func(t *testing.T) {
				r := c.CallTool(ctx, "grep", map[string]any{"pattern": "(("})
				want := "missing closing )"
				if name == "rg" {
					want = "unclosed group"
				}
				rsWant(t, "((", r, true, want)
				rsWant(t, "[z-a]", c.CallTool(ctx, "grep", map[string]any{"pattern": "[z-a]"}), true, "range")
			})
		})
	}
	// Both backends produce byte-identical text.
	queries := []map[string]any{
		{"pattern": "hello", "ignoreCase": true},
		{"pattern": "HIT", "context": 3},
		{"pattern": "hello", "includeIgnored": true},
		{"pattern": "^match", "limit": 7},
		{"pattern": "hello", "hidden": false},
		{"pattern": "^wide", "limit": 1000},
		{"pattern": "^start"},
		{"pattern": "nothing-matches-this"},
		{"pattern": "-foo"},
		{"pattern": "zz 1\\d", "glob": "*.txt"},
	}
	if backends["rg"] == nil {
		return
	}
	ctx := testCtx(t, 30*time.Second)
	for _, q := range queries {
		ref := backends["rg"].CallTool(ctx, "grep", q).Text()
		for name, c := range backends {
			if got := c.CallTool(ctx, "grep", q).Text(); got != ref {
				t.Errorf("grep %v: %s differs from rg:\n%.600s\n--- rg:\n%.600s", q, name, got, ref)
			}
		}
	}
}

func TestGrepLimitNoticeCallWorksAtTheMaximum(t *testing.T) {
	ws := rsGrepFixture(t)
	for name, c := range rsBackends(t, ws) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^zz", "limit": 1000})
			if m := regexp.MustCompile(`limit=(\d+)`).FindStringSubmatch(r.Text()); m != nil {
				n, _ := strconv.Atoi(m[1])
				if next := c.CallTool(ctx, "grep", map[string]any{"pattern": "^zz", "limit": n}); next.IsError {
					t.Errorf("the notice's call limit=%d fails: %s", n, next.Text())
				}
			}
		})
	}
}

// The byte-cut notice gives an exact call, and that call works: it reads on
// from the last match shown.
func TestGrepByteCutNoticeGivesTheCall(t *testing.T) {
	ws := rsGrepFixture(t)
	c, ctx := startIn(t, ws, bypass())
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^wide", "limit": 1000})
	notice := r.Text()[strings.LastIndex(r.Text(), "["):]
	m := regexp.MustCompile(`read (\{[^}]*\})`).FindStringSubmatch(notice)
	if m == nil {
		t.Fatalf("byte-cut notice names no call: %s", notice)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
		t.Fatalf("the notice's call is not JSON: %s", m[1])
	}
	next := c.CallTool(ctx, "read", args)
	if next.IsError || !strings.Contains(next.Text(), fmt.Sprintf("lines %v-", args["offset"])) {
		t.Fatalf("the notice's call %s gave: %.200s", m[1], next.Text())
	}
}

// ------------------------------------------------------------------------ find

func TestFind(t *testing.T) {
	files := map[string]string{
		"src/x.spec.ts": "", "src/a/b/y.spec.ts": "", "src/a/z.ts": "", "a/parent/child/c.txt": "", "x/a/parent/child/d.txt": "",
		".hid/h.ts": "", "real/r.ts": "", "B.ts": "", "a.ts": "", "_u.ts": "", ".gitignore": "gen/\n", "gen/g.ts": "",
	}
	for i := 1; i <= 1010; i++ {
		files[fmt.Sprintf("many/f%04d.md", i)] = ""
	}
	ws := rsWorkspace(t, files, func(ws string) {
		rsGitInit(t, ws)
		writeBytes(t, filepath.Join(ws, ".git", "inside.ts"), nil)
		symlink(t, "real", filepath.Join(ws, "linkdir"))
	})
	c, ctx := startIn(t, ws, bypass())
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"name-only pattern at any depth, hidden in, .git/ignored/symlinked dirs out", map[string]any{"pattern": "*.ts"},
			[]string{".hid/h.ts", "B.ts", "_u.ts", "a.ts", "real/r.ts", "src/a/b/y.spec.ts", "src/a/z.ts", "src/x.spec.ts"}},
		{"** with a directory prefix", map[string]any{"pattern": "src/**/*.spec.ts"}, []string{"src/a/b/y.spec.ts", "src/x.spec.ts"}},
		{"leading **", map[string]any{"pattern": "**/parent/child/*"}, []string{"a/parent/child/c.txt", "x/a/parent/child/d.txt"}},
		{"name-only multi-dot", map[string]any{"pattern": "*.spec.ts"}, []string{"src/a/b/y.spec.ts", "src/x.spec.ts"}},
		{"path narrows, output relative to the workspace", map[string]any{"pattern": "*.ts", "path": "src/a"}, []string{"src/a/b/y.spec.ts", "src/a/z.ts"}},
		{"braces", map[string]any{"pattern": "{B,_u}.ts"}, []string{"B.ts", "_u.ts"}},
		{"symlinked dir not followed", map[string]any{"pattern": "linkdir/**"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "find", tc.args)
			got := rsBodyLines(r.Text())
			if tc.want == nil {
				if r.IsError || strings.Contains(r.Text(), "r.ts") {
					t.Errorf("find %v = %q", tc.args, r.Text())
				}
				return
			}
			if r.IsError || !slices.Equal(got, tc.want) {
				t.Errorf("find %v = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
	t.Run("default limit 1000 announced, sorted", func(t *testing.T) {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.md"})
		got := rsBodyLines(r.Text())
		if len(got) != 1000 || !slices.IsSorted(got) || got[0] != "many/f0001.md" || got[999] != "many/f1000.md" {
			t.Errorf("%d paths, sorted=%v, first %q", len(got), slices.IsSorted(got), got[:1])
		}
		rsWant(t, "find limit", r, false, "1000", "limit")
		r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.md", "limit": 2000})
		if n := len(rsBodyLines(r.Text())); n != 1010 || strings.Contains(r.Text(), "[") {
			t.Errorf("limit 2000: %d paths", n)
		}
	})
	t.Run("invalid glob is an error with the reason", func(t *testing.T) {
		rsWant(t, "[a-", c.CallTool(ctx, "find", map[string]any{"pattern": "[a-"}), true, "unclosed", "[")
		rsWant(t, "{a,b", c.CallTool(ctx, "find", map[string]any{"pattern": "src/{a,b"}), true, "unclosed", "{")
	})
}

func TestFindLimitNoticeGivesTheCall(t *testing.T) {
	files := map[string]string{}
	for i := 1; i <= 1010; i++ {
		files[fmt.Sprintf("f%04d.md", i)] = ""
	}
	c, _, ctx := start(t, files)
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.md"})
	rsWant(t, "find limit notice", r, false, "limit=")
}
