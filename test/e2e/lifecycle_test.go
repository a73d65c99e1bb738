package e2e

// Tool input and the shared rules through the harness client (issue 2,
// docs/tools.md): bad input is a result naming what to send, paths cannot
// escape the roots, read pages and cuts as documented; and the lifecycle
// details a client library hides (wire order, the cancel grace, the CLI).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// lifecycleStart starts agentls on root and initializes it with params (nil: defaults).
func lifecycleStart(t *testing.T, root string, params map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: root, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	c.Initialize(ctx, params)
	return c, ctx
}

func TestLifecycleInputNormalizationAndErrors(t *testing.T) {
	t.Parallel()
	var twenty strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&twenty, "line %d\n", i)
	}
	ws := resolvedWorkspace(t, map[string]string{"a.txt": twenty.String(), "g.txt": "Hello World\n", "three.txt": "one\ntwo\nthree\n"})
	c, ctx := lifecycleStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})

	cases := []struct {
		name    string
		tool    string
		args    any
		isError bool
		wants   []string
		check   func(t *testing.T, r harness.Result)
	}{
		{name: "unknown tool lists tools and the closest name", tool: "raed", args: map[string]any{"path": "a.txt"},
			isError: true, wants: []string{`"raed"`, `"read"`, "read", "grep", "find", "ls", "bash"}},
		{name: "empty tool name is an unknown tool", tool: "", args: map[string]any{}, isError: true, wants: []string{"Available tools"}},
		{name: "panicking tool", tool: "test_panic", args: map[string]any{}, isError: true, wants: []string{"test_panic"}},
		{name: "missing file names it", tool: "read", args: map[string]any{"path": "nope.txt"}, isError: true, wants: []string{"nope.txt"}},
		{name: "arguments a number", tool: "read", args: 5, isError: true, wants: []string{"arguments"}},
		{name: "arguments a string", tool: "read", args: "a.txt", isError: true, wants: []string{"arguments"}},
		{name: "arguments a non-JSON string", tool: "read", args: "path=a.txt", isError: true, wants: []string{"arguments"}},
		{name: "arguments null", tool: "read", args: nil, isError: true, wants: []string{"path"}},
		{name: "arguments a list of values", tool: "read", args: []any{"a.txt"}, isError: true, wants: []string{"arguments"}},
		{name: "word where a number is expected", tool: "read", args: map[string]any{"path": "a.txt", "limit": "ten"},
			isError: true, wants: []string{"limit", "ten"}},
		{name: "fractional offset", tool: "read", args: map[string]any{"path": "three.txt", "offset": 2.5}, isError: true, wants: []string{"`offset`", "2.5"}},
		{name: "zero limit", tool: "read", args: map[string]any{"path": "three.txt", "limit": 0}, isError: true, wants: []string{"`limit`", "0"}},
		{name: "negative limit", tool: "read", args: map[string]any{"path": "three.txt", "limit": -1}, isError: true, wants: []string{"`limit`", "-1"}},
		// Past the end like offset 10, only larger: the same error naming the line count.
		{name: "huge offset", tool: "read", args: map[string]any{"path": "three.txt", "offset": 1e20}, isError: true, wants: []string{"offset", "3"}},
		{name: "huge limit", tool: "read", args: map[string]any{"path": "three.txt", "limit": 1e20}, wants: []string{"three.txt, lines 1-3 of 3"}},
		{name: "alias, numeric string and an extra field at once", tool: "read", args: map[string]any{"file_path": "a.txt", "limit": "10", "bogus": 1},
			// A field that may carry meaning is never dropped silently.
			wants: []string{"a.txt, lines 1-10 of 20", "offset=11", "ignored `bogus`"}, check: func(t *testing.T, r harness.Result) {
				wantContains(t, "details.normalized", compactJSON(r.Details["normalized"]), "bogus", "file_path", "limit")
			}},
		{name: "missing required field names it", tool: "read", args: map[string]any{},
			isError: true, wants: []string{"`path`", "missing"}},
		{name: "wrong type names field and what was received", tool: "read", args: map[string]any{"path": "a.txt", "offset": "abc"},
			isError: true, wants: []string{"`offset`", `"abc"`}},
		{name: "wrong type of path", tool: "read", args: map[string]any{"path": 5},
			isError: true, wants: []string{"`path`", "number"}},
		{name: "negative offset says what to send", tool: "read", args: map[string]any{"path": "a.txt", "offset": -3},
			isError: true, wants: []string{"`offset`", "≥ 1", "got -3", "line number"}},
		{name: "extra fields are dropped and reported", tool: "read", args: map[string]any{"path": "a.txt", "foo": 1, "colour": "red"},
			wants: []string{"a.txt, lines 1-20 of 20"}, check: func(t *testing.T, r harness.Result) {
				n := fmt.Sprint(r.Details["normalized"])
				if !strings.Contains(n, "foo") || !strings.Contains(n, "colour") {
					t.Errorf("details.normalized = %v, want foo and colour listed", r.Details["normalized"])
				}
			}},
		{name: "numeric string limit", tool: "read", args: map[string]any{"path": "a.txt", "limit": "10"},
			wants: []string{"a.txt, lines 1-10 of 20", "offset=11"}, check: func(t *testing.T, r harness.Result) {
				if r.Details["normalized"] == nil {
					t.Errorf("details.normalized missing for a converted limit: %v", r.Details)
				}
			}},
		{name: "numeric string offset", tool: "read", args: map[string]any{"path": "a.txt", "offset": "19"},
			wants: []string{"a.txt, lines 19-20 of 20", "    19→line 19"}},
		{name: "file_path alias", tool: "read", args: map[string]any{"file_path": "a.txt", "limit": 1},
			wants: []string{"a.txt, lines 1-1 of 20"}},
		{name: "filePath alias", tool: "read", args: map[string]any{"filePath": "a.txt", "limit": 1},
			wants: []string{"a.txt, lines 1-1 of 20"}},
		{name: "boolean string", tool: "grep", args: map[string]any{"pattern": "hello world", "ignoreCase": "true"},
			wants: []string{"g.txt:1: Hello World"}},
		{name: "boolean string false", tool: "grep", args: map[string]any{"pattern": "hello world", "ignoreCase": "false"},
			check: func(t *testing.T, r harness.Result) {
				if strings.Contains(r.Text(), "g.txt:1:") {
					t.Errorf(`ignoreCase "false" matched case-insensitively: %s`, r.Text())
				}
			}},
		{name: "JSON string where an array is expected", tool: "edit",
			args: map[string]any{"path": "a.txt", "dryRun": true, "edits": `[{"oldText":"line 7\n","newText":"LINE SEVEN\n"}]`},
			check: func(t *testing.T, r harness.Result) {
				if !strings.Contains(fmt.Sprint(r.Details["unifiedDiff"]), "+LINE SEVEN") {
					t.Errorf("edits given as a JSON string were not parsed: %s %v", r.Text(), r.Details)
				}
			}},
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}) // read stamp for the edit case
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.TryCallTool(ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("tool failure became a protocol error: %v", err)
			}
			if r.IsError != tc.isError {
				t.Errorf("isError = %v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			wantContains(t, tc.name, r.Text(), tc.wants...)
			if r.IsError {
				if strings.TrimSpace(r.Text()) == "" {
					t.Errorf("an error result without a message")
				}
				wantLacks(t, "error shows Go internals instead of what to send", r.Text(), "unmarshal", "Go struct", "readInput")
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); strings.Contains(string(b), "SEVEN") {
		t.Error("dryRun wrote the file")
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}); r.IsError {
		t.Errorf("the server did not survive the failures: %s", r.Text())
	}
}

// Invalid UTF-8 in a file is shown with U+FFFD and a note (docs/tools.md);
// a non-UTF-8 file name does not break a listing.
func TestLifecycleInvalidUTF8(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"ok.txt": "fine\n", "bad.txt": "caf\xe9 au lait\n\xff\xfe\xfd end\n"})
	writeFile(t, filepath.Join(ws, "name\xff.txt"), "odd name\n")
	c, ctx := lifecycleStart(t, ws, nil)
	r := c.CallTool(ctx, "read", map[string]any{"path": "bad.txt"})
	if r.IsError {
		t.Errorf("read of an invalid UTF-8 file failed: %s", r.Text())
	}
	wantContains(t, "read bad.txt", r.Text(), "caf\uFFFD au lait", "\uFFFD end")
	if !regexp.MustCompile(`(?i)utf-?8`).MatchString(r.Text()) {
		t.Errorf("read of invalid UTF-8: no note about it (docs/tools.md: shown with U+FFFD and a note):\n%s", r.Text())
	}
	// A request's invalid UTF-8 arrives as U+FFFD (encoding/json): a path
	// spelled so is answered, a result or an error, and the session goes on.
	if _, err := c.TryCallTool(ctx, "read", map[string]any{"path": "name\uFFFD.txt"}); err != nil && rpcCode(err) == 0 {
		t.Errorf("read of a U+FFFD path: %v", err)
	}
	if r := c.CallTool(ctx, "ls", map[string]any{}); !strings.Contains(r.Text(), "ok.txt") {
		t.Errorf("ls with a non-UTF-8 name: %s", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "ok.txt"}); !strings.Contains(r.Text(), "1→fine") {
		t.Errorf("read after: %s", r.Text())
	}
}

func TestLifecycleCLI(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "hello\n"})
	out, err := harness.Command(t, []string{"--version"}).Output()
	if err != nil || !strings.Contains(string(out), "agentls") {
		t.Errorf("--version: %q %v", out, err)
	}
	cmd := harness.Command(t, []string{"call", "read", `{"path":"a.txt"}`, "--root", ws})
	out, err = cmd.Output()
	if err != nil || string(out) != "a.txt, lines 1-1 of 1\n     1→hello\n" && !strings.HasPrefix(string(out), "a.txt, lines 1-1 of 1\n     1→hello") {
		t.Errorf("call read: %q %v", out, err)
	}
	cmd = harness.Command(t, []string{"call", "read", `{"path":"missing.txt"}`, "--root", ws})
	out, err = cmd.Output()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "missing.txt") {
		t.Errorf("call read of a missing file: exit %d, %q", cmd.ProcessState.ExitCode(), out)
	}
}

// lifecyclePathFixture builds <dir>/ws (the workspace) next to <dir>/ws2, a sibling
// whose name has the workspace's name as a prefix, holding a secret.
func lifecyclePathFixture(t *testing.T) (ws, sibling string) {
	t.Helper()
	dir := resolvedWorkspace(t, map[string]string{
		"ws/in.txt":      "inside\n",
		"ws/my file.txt": "spaced\n",
		"ws/sub/x.txt":   "x\n",
		"ws2/s.txt":      "SECRET-SIBLING\n",
	})
	ws, sibling = filepath.Join(dir, "ws"), filepath.Join(dir, "ws2")
	links := map[string]string{
		"pl":       "/etc/passwd",
		"sib":      "../ws2",
		"sibabs":   sibling,
		"chain1":   "/etc",
		"sub/deep": "../chain1",
		"dang":     "/nonexistent-agentls/x",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"selfloop": "selfloop",
		"rootlink": "/",
		"inabs":    filepath.Join(ws, "in.txt"),
		"indir":    "sub",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, sibling
}

func TestLifecyclePathResolverRefusesHostileInputs(t *testing.T) {
	t.Parallel()
	ws, sibling := lifecyclePathFixture(t)
	c, ctx := lifecycleStart(t, ws, nil)
	const (
		climb   = `(?i)\.\.|outside`
		outside = `(?i)outside`
		link    = `(?i)symlink|outside`
		loop    = `(?i)loop`
		home    = `~|(?i)home`
		nul     = `(?i)NUL`
		device  = `(?i)device|kernel|not a regular|outside`
	)
	cases := []struct{ path, why string }{
		{"../ws2/s.txt", climb},
		{"../../../../../../../etc/passwd", climb},
		{"sub/../../ws2/s.txt", climb},
		{"./../ws2/s.txt", climb},
		{"sub/../../../../etc/passwd", climb},
		{"in.txt/../../ws2/s.txt", climb},
		{"indir/../../ws2/s.txt", climb},
		{"/etc/passwd", outside},
		{"//etc/passwd", outside},
		{"/tmp/../etc/passwd", outside},
		{sibling + "/s.txt", outside},             // the sibling-prefix trap
		{ws + "2/s.txt", outside},                 // spelled as the root plus "2"
		{ws + "/../ws2/s.txt", climb},             // absolute with a climb
		{"file://" + sibling + "/s.txt", outside}, // URI form
		{"pl", link},                              // symlink to /etc/passwd
		{"sib/s.txt", link},                       // relative symlink to a sibling dir
		{"sibabs/s.txt", link},                    // absolute symlink to a sibling dir
		{"sub/deep/passwd", link},                 // symlink chain ending outside
		{"rootlink/etc/passwd", link},             // symlink to /
		{"dang", link},                            // dangling symlink pointing outside
		{"loop1", loop},                           // symlink loop
		{"selfloop", loop},                        // self loop
		{"~", home},                               // home
		{"~/.bashrc", home},                       // home-relative
		{"~root/.bashrc", home},                   // another user's home
		{"in.txt\x00.png", nul},                   // NUL byte
		{"\x00", nul},                             // only a NUL byte
		{"/dev/zero", device},                     // device
		{"/proc/self/environ", device},            // kernel file
		{"/sys/kernel/mm/transparent_hugepage/enabled", device},
		{"@../ws2/s.txt", climb}, // leading @ does not help
	}
	if len(cases) < 25 {
		t.Fatalf("only %d hostile inputs", len(cases))
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.path, "\x00", "NUL"), func(t *testing.T) {
			r, err := c.TryCallTool(ctx, "read", map[string]any{"path": tc.path})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			text := r.Text()
			if !r.IsError {
				t.Fatalf("read %q was not refused:\n%s", tc.path, text)
			}
			if strings.Contains(text, "SECRET-SIBLING") || strings.Contains(text, "root:") {
				t.Fatalf("read %q escaped:\n%s", tc.path, text)
			}
			if !regexp.MustCompile(tc.why).MatchString(text) {
				t.Errorf("read %q: the message does not say why (want /%s/): %s", tc.path, tc.why, text)
			}
		})
	}

	t.Run("other tools do not escape either", func(t *testing.T) {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"ls", map[string]any{"path": "../ws2"}},
			{"ls", map[string]any{"path": "sib"}},
			{"ls", map[string]any{"path": sibling}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "sib"}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "../ws2"}},
			{"grep", map[string]any{"pattern": "root", "path": "/etc/passwd"}},
			{"find", map[string]any{"pattern": "*", "path": "sibabs"}},
			{"find", map[string]any{"pattern": "*", "path": ".."}},
		} {
			r := c.CallTool(ctx, tc.tool, tc.args)
			if !r.IsError || strings.Contains(r.Text(), "s.txt") && !strings.Contains(r.Text(), "refused") || strings.Contains(r.Text(), "root:") {
				t.Errorf("%s %v: not refused: %s", tc.tool, tc.args, r.Text())
			}
		}
		// Walking the whole workspace must not follow the outward links.
		g := c.CallTool(ctx, "grep", map[string]any{"pattern": "SECRET-SIBLIN[G]|root:[x]:"})
		if strings.Contains(g.Text(), "SECRET-SIBLING") || strings.Contains(g.Text(), "root:x:") {
			t.Errorf("grep over the workspace followed an outward symlink:\n%s", g.Text())
		}
		f := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
		if strings.Contains(f.Text(), "s.txt") || strings.Contains(f.Text(), "passwd") {
			t.Errorf("find over the workspace followed an outward symlink:\n%s", f.Text())
		}
	})

	t.Run("inside paths still work", func(t *testing.T) {
		for _, tc := range []struct{ path, want string }{
			{filepath.Join(ws, "in.txt"), "1→inside"},
			{"inabs", "1→inside"}, // absolute symlink pointing inside
			{"@in.txt", "1→inside"},
			{"sub/../in.txt", "1→inside"},
			{"indir/x.txt", "1→x"},
			{"my\u00a0file.txt", "1→spaced"},
			{"my\u202ffile.txt", "1→spaced"},
			{"file://" + ws + "/in.txt", "1→inside"},
		} {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Errorf("read %q: %s", tc.path, r.Text())
			}
		}
	})
}

var lifecycleHeader = regexp.MustCompile(`(?m)^(\S+), lines (\d+)-(\d+) of (\d+)`)

func TestLifecycleRead(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{
		"src/config.ts": numberedLines(42, func(i int) string { return fmt.Sprintf("const v%d = %d;", i, i) }),
		"big.txt":       numberedLines(2500, func(i int) string { return fmt.Sprintf("row %d", i) }),
		"wide.txt":      numberedLines(500, func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("w", 205) }),
		"three.txt":     "one\ntwo\nthree\n",
		"long.txt":      "short\n" + strings.Repeat("L", 3000) + "\nafter\n",
		"bom.txt":       "\xef\xbb\xbfhello bom\nsecond\n",
		"tabs.txt":      "\tindented  \nx\n",
	})
	c, ctx := lifecycleStart(t, ws, nil)
	read := func(args map[string]any) harness.Result {
		t.Helper()
		return c.CallTool(ctx, "read", args)
	}

	t.Run("header and numbered lines", func(t *testing.T) {
		r := read(map[string]any{"path": "src/config.ts"})
		lines := strings.Split(r.Text(), "\n")
		if lines[0] != "src/config.ts, lines 1-42 of 42" {
			t.Errorf("header = %q", lines[0])
		}
		wantContains(t, "config", r.Text(), "     1→const v1 = 1;", "    42→const v42 = 42;")
		if strings.Contains(r.Text(), "offset=") {
			t.Errorf("a whole file announces a continuation:\n%s", r.Text())
		}
		r = read(map[string]any{"path": "tabs.txt"})
		wantContains(t, "tabs", r.Text(), "     1→\tindented  \n")
	})
	t.Run("2500 lines: 2000 in all with header and notice, and offset=1999", func(t *testing.T) {
		r := read(map[string]any{"path": "big.txt"})
		wantContains(t, "big", r.Text(), "big.txt, lines 1-1998 of 2500", "  1998→row 1998", "offset=1999")
		if strings.Contains(r.Text(), "→row 1999") {
			t.Error("line 1999 shown")
		}
		r = read(map[string]any{"path": "big.txt", "offset": 1999})
		wantContains(t, "big 1999", r.Text(), "big.txt, lines 1999-2500 of 2500", "  1999→row 1999", "  2500→row 2500")
		if strings.Contains(r.Text(), "offset=") {
			t.Errorf("last page announces more:\n%s", r.Text())
		}
	})
	t.Run("500 lines of 210 bytes cut by bytes", func(t *testing.T) {
		r := read(map[string]any{"path": "wide.txt"})
		m := lifecycleHeader.FindStringSubmatch(r.Text())
		if m == nil {
			t.Fatalf("no header:\n%.300s", r.Text())
		}
		last, _ := strconv.Atoi(m[3])
		if m[2] != "1" || m[4] != "500" || last >= 500 || last < 200 {
			t.Fatalf("header %q: want lines 1-N of 500 with N cut by the 51,200-byte limit", m[0])
		}
		wantContains(t, "wide", r.Text(), fmt.Sprintf("offset=%d", last+1))
		if !regexp.MustCompile(`(?i)bytes|KB|51,?200`).MatchString(r.Text()) {
			t.Errorf("notice does not say the byte limit was hit:\n%s", r.Text()[strings.LastIndex(r.Text(), "\n")-300:])
		}
		body := r.Text()[strings.Index(r.Text(), "\n")+1:]
		numbered := regexp.MustCompile(`(?m)^ *\d+→.*\n?`).FindAllString(body, -1)
		size := 0
		for _, l := range numbered {
			size += len(l)
		}
		if len(numbered) != last || size > 51200 {
			t.Errorf("%d numbered lines of %d bytes for header %q", len(numbered), size, m[0])
		}
		if !strings.Contains(r.Text(), fmt.Sprintf("%6d→%04d", last, last)) {
			t.Errorf("line %d not shown whole", last)
		}
	})
	t.Run("offset and limit", func(t *testing.T) {
		r := read(map[string]any{"path": "three.txt", "offset": 0})
		wantContains(t, "offset 0", r.Text(), "three.txt, lines 1-3 of 3", "     1→one")
		r = read(map[string]any{"path": "three.txt", "limit": 2})
		wantContains(t, "limit 2", r.Text(), "three.txt, lines 1-2 of 3", "offset=3")
		r = read(map[string]any{"path": "three.txt", "offset": 2, "limit": 1})
		wantContains(t, "offset 2 limit 1", r.Text(), "three.txt, lines 2-2 of 3", "     2→two", "offset=3")
		r = read(map[string]any{"path": "three.txt", "offset": 10})
		if !r.IsError || !strings.Contains(r.Text(), "3") || !strings.Contains(r.Text(), "line") {
			t.Errorf("offset beyond EOF: want isError naming the 3 lines: %+v", r)
		}
	})
	t.Run("a line over 2000 characters is cut with a marker", func(t *testing.T) {
		r := read(map[string]any{"path": "long.txt"})
		line := ""
		for _, l := range strings.Split(r.Text(), "\n") {
			if strings.HasPrefix(l, "     2→") {
				line = l
			}
		}
		if !strings.HasPrefix(line, "     2→"+strings.Repeat("L", 2000)) || strings.Contains(line, strings.Repeat("L", 2001)) {
			t.Errorf("line 2 not cut at 2000 characters: %.80s…(%d bytes)", line, len(line))
		}
		if len(line) == len("     2→")+2000 {
			t.Error("cut line has no marker")
		}
		wantContains(t, "long", r.Text(), "     3→after")
	})
	t.Run("BOM stripped", func(t *testing.T) {
		r := read(map[string]any{"path": "bom.txt"})
		wantContains(t, "bom", r.Text(), "     1→hello bom\n")
		if strings.Contains(r.Text(), "\ufeff") {
			t.Error("BOM shown")
		}
	})
}

func TestLifecycleLogFlags(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, nil)
	c.CallTool(ctx, "test_panic", map[string]any{})
	c.Shutdown(ctx)
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "panic") {
		t.Errorf("--log-file %s: %v, %d bytes; want the panic logged:\n%.500s", logFile, err, len(b), b)
	}
}

func TestLifecycleReadCutsCharactersNotBytes(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"multi.txt": strings.Repeat("é", 2500) + "\n"})
	c, ctx := lifecycleStart(t, ws, nil)
	r := c.CallTool(ctx, "read", map[string]any{"path": "multi.txt"})
	line := strings.Split(r.Text(), "\n")[1]
	if !strings.HasPrefix(line, "     1→"+strings.Repeat("é", 2000)) || strings.Contains(line, strings.Repeat("é", 2001)) {
		t.Errorf("line of 2500 'é' not cut at 2000 characters: %d runes", len([]rune(line)))
	}
	if strings.ContainsRune(line, '\uFFFD') {
		t.Error("cut split a character")
	}
}

// A client that writes requests without waiting for the initialize reply
// (or right behind shutdown) gets them judged in the state the earlier
// request left: initialize and shutdown take effect in wire order. A second
// initialize in the same write is refused, never run twice.
func TestLifecycleRequestsTakeEffectInWireOrder(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := range 5 {
		cmd := harness.Command(t, []string{"--root", ws})
		stdin, stdout := harness.StartPiped(t, cmd)
		stopOnCleanup(t, cmd, stdin)
		var batch strings.Builder
		for id, m := range []string{"initialize", "tools/list", "initialize", "shutdown", "tools/list"} {
			params := "{}"
			if m == "initialize" {
				params = `{"processId":null,"rootUri":null,"capabilities":{}}`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id+1, m, params)
			fmt.Fprintf(&batch, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		if _, err := io.WriteString(stdin, batch.String()); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		got := map[float64]map[string]any{}
		for len(got) < 5 {
			body, err := readFrame(br)
			if err != nil {
				t.Fatalf("round %d: %v (replies so far %v)", i, err, got)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if id, ok := m["id"].(float64); ok && m["method"] == nil {
				got[id] = m
			}
		}
		for id, want := range map[float64]int{1: 0, 2: 0, 3: -32600, 4: 0, 5: -32600} {
			if code := replyCode(got[id]); code != want {
				t.Errorf("round %d: reply %v = %v, want code %d (0: a result)", i, id, got[id], want)
			}
		}
	}
}

// A cancelled call gets rpc.CancelGrace to wind down before the -32800
// goes out: one that cleans up within it has done so when the client sees
// the reply; one that takes longer does not hold the reply past the grace.
func TestCancelReplyWaitsForWindDownWithinGrace(t *testing.T) {
	slow(t)
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	for _, tc := range []struct {
		name      string
		windDown  time.Duration
		markerNow bool // the marker exists the moment the reply arrives
	}{
		{"quick clean-up is done before the reply", 50 * time.Millisecond, true},
		{"slow clean-up does not hold the reply", 3 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ws, ctx := start(t, nil)
			elapsed := cancelBlockingCall(t, ctx, c, map[string]any{"seconds": 10, "marker": "wound-down.txt", "windDown": tc.windDown.Seconds()})
			_, statErr := os.Stat(filepath.Join(ws, "wound-down.txt"))
			if got := statErr == nil; got != tc.markerNow {
				t.Errorf("marker present at the reply = %v, want %v (reply after %v)", got, tc.markerNow, elapsed)
			}
			if !tc.markerNow && elapsed > rpc.CancelGrace+time.Second {
				t.Errorf("reply took %v, want about rpc.CancelGrace (%v)", elapsed, rpc.CancelGrace)
			}
			if !tc.markerNow && elapsed < rpc.CancelGrace {
				t.Errorf("reply after %v, before rpc.CancelGrace (%v) ran out", elapsed, rpc.CancelGrace)
			}
		})
	}
}

// cancelBlockingCall starts test_block with args as request 2 of a fresh
// client (initialize is 1), sends $/cancelRequest for it by hand once it
// runs, checks the reply is -32800 and returns how long the reply took.
func cancelBlockingCall(t *testing.T, ctx context.Context, c *harness.Client, args map[string]any) time.Duration {
	t.Helper()
	errCh := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "test_block", "arguments": args}, &r)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	t0 := time.Now()
	if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2}); err != nil {
		t.Fatal(err)
	}
	err := <-errCh
	elapsed := time.Since(t0)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32800 {
		t.Fatalf("err = %v, want RequestCancelled -32800", err)
	}
	return elapsed
}

func waitFile(t *testing.T, p string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %v", p, d)
}
