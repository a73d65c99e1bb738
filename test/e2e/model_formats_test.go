package e2e

// Black-box audit: tool calls as other agents' models emit them (Claude Code,
// Gemini CLI, Codex, pi, crush, opencode) and common model slips. TOOLS.md
// "Input is untrusted": each call must either work with its intended meaning
// (checked on the effect: lines shown, bytes on disk, working directory) or
// fail with a message naming what to send instead, and sending that must
// work. A dropped field that silently changes the effect is a finding.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// a6mCase is one realistic call. If the call succeeds, its text must hold
// want and lack lacks (the intended meaning). If it fails, errWant must be
// set (nil: an error is not acceptable), the message must hold every
// errWant and none of errLacks, and retry (on retryTool, default tool)
// must then succeed with retryWant.
type a6mCase struct {
	name      string
	tool      string
	args      any
	want      []string
	lacks     []string
	norm      []string // substrings of details.normalized when the call works
	errWant   []string
	errLacks  []string
	retryTool string
	retry     any
	retryWant []string
}

// a6mNormalized is details.normalized joined with newlines.
func a6mNormalized(r harness.Result) string {
	var parts []string
	switch v := r.Details["normalized"].(type) {
	case []any:
		for _, x := range v {
			parts = append(parts, fmt.Sprint(x))
		}
	case nil:
	default:
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, "\n")
}

// a6mRun runs cs on c and checks the outcome; it returns the first result.
func a6mRun(t *testing.T, ctx context.Context, c *harness.Client, cs a6mCase) harness.Result {
	t.Helper()
	r, err := c.TryCallTool(ctx, cs.tool, cs.args)
	if err != nil {
		t.Fatalf("%s %s: protocol error (tool failures must be results): %v", cs.tool, compactJSON(cs.args), err)
	}
	first, _, _ := strings.Cut(r.Text(), "\n")
	t.Logf("outcome isError=%v: %s | normalized: %s", r.IsError, first, strings.ReplaceAll(a6mNormalized(r), "\n", "; "))
	if !r.IsError {
		what := fmt.Sprintf("%s %s (worked)", cs.tool, compactJSON(cs.args))
		a6mContains(t, what, r.Text(), cs.want...)
		a6mLacks(t, what, r.Text(), cs.lacks...)
		a6mContains(t, what+" details.normalized", a6mNormalized(r), cs.norm...)
		return r
	}
	what := fmt.Sprintf("%s %s (isError)", cs.tool, compactJSON(cs.args))
	if cs.errWant == nil {
		t.Errorf("%s: must work with the intended meaning, got an error:\n%s", what, r.Text())
		return r
	}
	a6mContains(t, what, r.Text(), cs.errWant...)
	a6mLacks(t, what, r.Text(), cs.errLacks...)
	if cs.retry != nil {
		tool := cs.retryTool
		if tool == "" {
			tool = cs.tool
		}
		rr := c.CallTool(ctx, tool, cs.retry)
		rwhat := fmt.Sprintf("retry %s %s as the error says", tool, compactJSON(cs.retry))
		if rr.IsError {
			t.Errorf("%s: still an error:\n%s", rwhat, rr.Text())
		}
		a6mContains(t, rwhat, rr.Text(), cs.retryWant...)
	}
	return r
}

// a6mShort is s cut to its first 300 bytes, for failure messages.
func a6mShort(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:300] + fmt.Sprintf("… [%d more bytes]", len(s)-300)
}

// a6mContains fails when text lacks any of wants; it quotes text shortened.
func a6mContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, a6mShort(text))
		}
	}
}

// a6mLacks fails when text holds any of nots; it quotes text shortened.
func a6mLacks(t *testing.T, what, text string, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if strings.Contains(text, n) {
			t.Errorf("%s: unexpected %q in:\n%s", what, n, a6mShort(text))
		}
	}
}

// a6mStart starts a bypass-mode session on a fresh resolved workspace.
func a6mStart(t *testing.T, files map[string]string) (*harness.Client, string, context.Context) {
	t.Helper()
	ws := resolvedWorkspace(t, files)
	c, ctx := startIn(t, ws, bypass())
	return c, ws, ctx
}

// a6mLong is 2500 lines "line N".
func a6mLong() string {
	return numberedLines(2500, func(i int) string { return fmt.Sprintf("line %d", i) })
}

func TestModelsRead(t *testing.T) {
	c, ws, ctx := a6mStart(t, map[string]string{
		"notes.txt": "one\ntwo\nthree\nfour\nfive\n",
		"long.txt":  a6mLong(),
		"src/a.go":  "package main\n\nfunc main() {}\n",
	})
	abs := filepath.Join(ws, "notes.txt")
	pathErr := []string{"`path`", "Usage: read {path"}
	cases := []a6mCase{
		{name: "claude Read file_path offset limit", args: map[string]any{"file_path": "notes.txt", "offset": 2, "limit": 2},
			want: []string{"lines 2-3 of 5", "     2→two", "     3→three"}, lacks: []string{"→one", "→four"}, norm: []string{"file_path"}},
		{name: "gemini read_file absolute_path", args: map[string]any{"absolute_path": abs, "limit": 1},
			want: []string{"lines 1-1 of 5", "     1→one"}, lacks: []string{"→two"},
			errWant: pathErr, retry: map[string]any{"path": abs, "limit": 1}, retryWant: []string{"     1→one"}},
		{name: "pi read path offset limit", args: map[string]any{"path": "notes.txt", "offset": 4, "limit": 1},
			want: []string{"lines 4-4 of 5", "     4→four", "offset=5"}, lacks: []string{"→three", "→five"}},
		{name: "crush view file_path limit", args: map[string]any{"file_path": "notes.txt", "limit": 2},
			want: []string{"lines 1-2 of 5", "     2→two"}, lacks: []string{"→three"}},
		{name: "opencode filePath", args: map[string]any{"filePath": "notes.txt", "limit": 1},
			want: []string{"     1→one"}, lacks: []string{"→two"}, norm: []string{"filePath"}},
		{name: "codex line_offset line_limit", args: map[string]any{"path": "long.txt", "line_offset": 2400, "line_limit": 2},
			want: []string{"  2400→line 2400", "  2401→line 2401"}, lacks: []string{"     1→line 1\n"},
			errWant: []string{"offset"}, retry: map[string]any{"path": "long.txt", "offset": 2400, "limit": 2}, retryWant: []string{"  2400→line 2400"}},
		{name: "codex start_line", args: map[string]any{"path": "long.txt", "start_line": 2400, "limit": 1},
			want: []string{"  2400→line 2400"}, lacks: []string{"→line 1\n"}},
		{name: "numbers as strings", args: map[string]any{"path": "notes.txt", "offset": "2", "limit": "1"},
			want: []string{"lines 2-2 of 5", "     2→two"}, lacks: []string{"→three"}},
		{name: "offset 0 means 1", args: map[string]any{"path": "notes.txt", "offset": 0, "limit": 1},
			want: []string{"lines 1-1 of 5", "     1→one"}},
		{name: "negative limit", args: map[string]any{"path": "notes.txt", "limit": -1},
			errWant: []string{"`limit`", "≥ 1", "got -1"}, retry: map[string]any{"path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}},
		{name: "negative offset", args: map[string]any{"path": "notes.txt", "offset": -3},
			errWant: []string{"`offset`", "≥ 1", "got -3"}, retry: map[string]any{"path": "notes.txt", "offset": 1}, retryWant: []string{"     1→one"}},
		{name: "limit not a number", args: map[string]any{"path": "notes.txt", "limit": "ten"},
			errWant: []string{"`limit`", "number", `"ten"`}, retry: map[string]any{"path": "notes.txt", "limit": 10}, retryWant: []string{"     5→five"}},
		{name: "leading ./", args: map[string]any{"path": "./notes.txt", "limit": 1}, want: []string{"     1→one"}},
		{name: "leading @", args: map[string]any{"path": "@notes.txt", "limit": 1}, want: []string{"     1→one"}},
		{name: "trailing spaces", args: map[string]any{"path": "notes.txt  ", "limit": 1}, want: []string{"     1→one"},
			errWant: pathErr, retry: map[string]any{"path": "notes.txt"}, retryWant: []string{"     1→one"}},
		{name: "file URI", args: map[string]any{"path": fileURI(abs), "limit": 1}, want: []string{"     1→one"}},
		{name: "absolute inside workspace", args: map[string]any{"path": abs, "limit": 1}, want: []string{"     1→one"}},
		{name: "windows backslashes", args: map[string]any{"path": `src\a.go`},
			want:    []string{"     1→package main"},
			errWant: []string{"find"}, retryTool: "find", retry: map[string]any{"pattern": "a.go"}, retryWant: []string{"src/a.go"}},
		{name: "whole args as a JSON string", args: `{"path":"notes.txt","limit":1}`,
			want: []string{"     1→one"}, lacks: []string{"→two"},
			errWant: pathErr, retry: map[string]any{"path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}},
		{name: "nested under input", args: map[string]any{"input": map[string]any{"path": "notes.txt", "limit": 1}},
			want: []string{"     1→one"}, lacks: []string{"→two"},
			errWant: pathErr, retry: map[string]any{"path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}},
		{name: "nested under arguments", args: map[string]any{"arguments": map[string]any{"file_path": "notes.txt", "limit": 1}},
			want: []string{"     1→one"}, lacks: []string{"→two"},
			errWant: pathErr, retry: map[string]any{"file_path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}},
		{name: "nested under parameters", args: map[string]any{"parameters": map[string]any{"path": "notes.txt", "limit": 1}},
			want: []string{"     1→one"}, lacks: []string{"→two"},
			errWant: pathErr, retry: map[string]any{"path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			cs.tool = "read"
			a6mRun(t, ctx, c, cs)
		})
	}
}

// bash arguments sent as one JSON string run the command or name the field
// to send. (The other spellings of other agents are pinned by the
// arguments/model_* scripts.)
func TestModelsBashArgumentsAsJSONString(t *testing.T) {
	c, _, ctx := a6mStart(t, nil)
	a6mRun(t, ctx, c, a6mCase{name: "whole args as a JSON string", tool: "bash", args: `{"command":"echo hi"}`, want: []string{"hi"},
		errWant: []string{"`command`"}, retry: map[string]any{"command": "echo hi"}, retryWant: []string{"hi"}})
}

// TestModelsGrep runs each call on both search backends (ripgrep when
// on PATH, and the in-process Go searcher), which must agree.
func TestModelsGrep(t *testing.T) {
	files := map[string]string{
		"src/b.go": "Hello World\nhello again\nfmt.Println(x)\n",
		"src/c.js": "hello js\n",
	}
	cases := []a6mCase{
		{name: "claude -i", args: map[string]any{"pattern": "HELLO", "path": "src", "-i": true, "-n": true},
			want: []string{"src/b.go:1: Hello World", "src/c.js:1: hello js"}},
		{name: "claude -i \"True\"", args: map[string]any{"pattern": "HELLO", "-i": "True"},
			want: []string{"src/b.go:1: Hello World"}},
		{name: "claude -C", args: map[string]any{"pattern": "again", "path": "src/b.go", "-C": 1},
			want: []string{"src/b.go-1- Hello World", "src/b.go:2: hello again", "src/b.go-3- fmt.Println(x)"}},
		{name: "claude -A", args: map[string]any{"pattern": "again", "path": "src/b.go", "-A": 1},
			want:    []string{"src/b.go:2: hello again", "src/b.go-3- fmt.Println(x)"},
			errWant: []string{"context"}, retry: map[string]any{"pattern": "again", "path": "src/b.go", "context": 1}, retryWant: []string{"src/b.go-3- fmt.Println(x)"}},
		{name: "claude -B", args: map[string]any{"pattern": "again", "path": "src/b.go", "-B": 1},
			want:    []string{"src/b.go-1- Hello World", "src/b.go:2: hello again"},
			errWant: []string{"context"}, retry: map[string]any{"pattern": "again", "path": "src/b.go", "context": 1}, retryWant: []string{"src/b.go-1- Hello World"}},
		{name: "claude type output_mode head_limit", args: map[string]any{"pattern": "hello", "type": "go", "output_mode": "files_with_matches", "head_limit": 5},
			want: []string{"src/b.go"}},
		{name: "gemini search_file_content include", args: map[string]any{"pattern": "hello", "include": "*.js", "path": "src"},
			want: []string{"src/c.js:1: hello js"}, lacks: []string{"b.go"}},
		{name: "crush grep literal_text", args: map[string]any{"pattern": "fmt.Println(", "literal_text": true},
			want:    []string{"src/b.go:3: fmt.Println(x)"},
			errWant: []string{"literal"}, retry: map[string]any{"pattern": "fmt.Println(", "literal": true}, retryWant: []string{"src/b.go:3: fmt.Println(x)"}},
		{name: "literal \"true\"", args: map[string]any{"pattern": "fmt.Println(", "literal": "true"},
			want: []string{"src/b.go:3: fmt.Println(x)"}},
		{name: "limit as string", args: map[string]any{"pattern": "hello", "limit": "1"},
			want: []string{"limit=2"}},
		{name: "ignoreCase \"yes\"", args: map[string]any{"pattern": "HELLO", "ignoreCase": "yes"},
			want:    []string{"src/b.go:1: Hello World"},
			errWant: []string{"`ignoreCase`", "true or false"}, retry: map[string]any{"pattern": "HELLO", "ignoreCase": true}, retryWant: []string{"src/b.go:1: Hello World"}},
		{name: "path with @ and ./", args: map[string]any{"pattern": "hello", "path": "@./src/c.js"}, want: []string{"src/c.js:1: hello js"}},
		// Claude's multiline: the error must not ask for an option this tool lacks.
		{name: "claude multiline", args: map[string]any{"pattern": `Hello.*\n.*again`, "multiline": true},
			want:    []string{"src/b.go:1"},
			errWant: []string{"pattern"}, errLacks: []string{"--multiline", "-U for short"}},
	}
	for _, backend := range []struct{ name, env string }{{"default", ""}, {"go", "AGENTLS_GREP_BACKEND=go"}} {
		t.Run(backend.name, func(t *testing.T) {
			var env []string
			if backend.env != "" {
				env = append(env, backend.env)
			}
			ws := resolvedWorkspace(t, files)
			c, ctx := startIn(t, ws, bypass(), env...)
			for _, cs := range cases {
				t.Run(cs.name, func(t *testing.T) {
					cs.tool = "grep"
					a6mRun(t, ctx, c, cs)
				})
			}
		})
	}
}

func TestModelsFind(t *testing.T) {
	c, ws, ctx := a6mStart(t, map[string]string{
		"src/a.go":     "package a\n",
		"src/sub/d.GO": "package d\n",
		"web/c.js":     "x\n",
	})
	cases := []a6mCase{
		{name: "claude Glob **", args: map[string]any{"pattern": "**/*.go", "path": "src"},
			want: []string{"src/a.go"}, lacks: []string{"c.js"}},
		{name: "gemini glob case_sensitive false", args: map[string]any{"pattern": "*.go", "path": "src", "case_sensitive": false},
			want:    []string{"src/a.go", "src/sub/d.GO"},
			errWant: []string{"case"}},
		{name: "crush glob path ./ trailing /", args: map[string]any{"pattern": "*.js", "path": "./web/"}, want: []string{"web/c.js"}},
		{name: "absolute path", args: map[string]any{"pattern": "*.js", "path": filepath.Join(ws, "web")}, want: []string{"web/c.js"}},
		{name: "@ path", args: map[string]any{"pattern": "*.js", "path": "@web"}, want: []string{"web/c.js"}},
		{name: "limit as string", args: map[string]any{"pattern": "*", "limit": "1"}, want: []string{"limit=2"}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			cs.tool = "find"
			a6mRun(t, ctx, c, cs)
		})
	}
}

func TestModelsLs(t *testing.T) {
	c, ws, ctx := a6mStart(t, map[string]string{
		"top.txt":          "t\n",
		"src/a.go":         "package a\n",
		"src/build.log":    "log\n",
		"src/sub/deep.txt": "d\n",
	})
	cases := []a6mCase{
		{name: "claude LS ignore", args: map[string]any{"path": "src", "ignore": []any{"*.log"}},
			want: []string{"a.go", "sub/"}, lacks: []string{"top.txt"}, norm: []string{"ignore"}},
		{name: "gemini list_directory path", args: map[string]any{"path": filepath.Join(ws, "src")},
			want: []string{"a.go", "sub/"}, lacks: []string{"top.txt"}},
		{name: "gemini list_directory dir_path", args: map[string]any{"dir_path": "src"},
			want: []string{"a.go", "sub/"}, lacks: []string{"top.txt"},
			errWant: []string{"path"}, retry: map[string]any{"path": "src"}, retryWant: []string{"a.go"}},
		{name: "crush ls depth", args: map[string]any{"path": "./src/", "depth": 2},
			want: []string{"a.go", "sub/"}, lacks: []string{"top.txt"}},
		{name: "directory alias", args: map[string]any{"directory": "src"}, want: []string{"a.go"}, lacks: []string{"top.txt"}},
		{name: "file URI", args: map[string]any{"path": fileURI(filepath.Join(ws, "src"))}, want: []string{"a.go"}, lacks: []string{"top.txt"}},
		{name: "a file named", args: map[string]any{"path": "src/a.go"},
			errWant: []string{"read"}, retryTool: "read", retry: map[string]any{"path": "src/a.go"}, retryWant: []string{"     1→package a"}},
		{name: "no arguments as []", args: []any{}, want: []string{"top.txt", "src/"}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			cs.tool = "ls"
			a6mRun(t, ctx, c, cs)
		})
	}
}
