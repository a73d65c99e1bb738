package e2e

// Contract tests of limits: every number a tool description or schema
// states is the number the code enforces, under the default limits and
// under custom ones (initializationOptions and .agentls/settings.json).
// Sources: docs/tools.md, docs/protocol.md ("### Limits").

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// a13lStart starts agentls on ws and initializes it with the given
// initializationOptions (nil for none).
func a13lStart(t *testing.T, ws string, opts map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws})
	p := map[string]any{}
	if opts != nil {
		p["initializationOptions"] = opts
	}
	c.Initialize(ctx, p)
	return c, ctx
}

// a13lInitErr sends initialize with opts and returns the protocol error.
func a13lInitErr(t *testing.T, ws string, opts map[string]any) (*harness.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := harness.Start(t, harness.Options{Root: ws})
	var res map[string]any
	err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": opts}, &res)
	return c, err
}

// a13lTools returns name → tool (mcp format, deferred included).
func a13lTools(t *testing.T, ctx context.Context, c *harness.Client) map[string]map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": true}, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		out[fmt.Sprint(tl["name"])] = tl
	}
	return out
}

var a13lNumRe = regexp.MustCompile(`\b(\d[\d,]*\d|\d)\b`)

// a13lNumbers returns every number in the tool's description and schema
// (numeric keywords and numbers inside any string), with where it was seen.
func a13lNumbers(tool map[string]any) map[int][]string {
	out := map[int][]string{}
	addText := func(where, s string) {
		for _, m := range a13lNumRe.FindAllString(s, -1) {
			n, err := strconv.Atoi(strings.ReplaceAll(m, ",", ""))
			if err == nil {
				out[n] = append(out[n], where)
			}
		}
	}
	addText("description", fmt.Sprint(tool["description"]))
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(where+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", where, i), e)
			}
		case float64:
			out[int(x)] = append(out[int(x)], where)
		case string:
			addText(where, x)
		}
	}
	walk("inputSchema", tool["inputSchema"])
	return out
}

func a13lSchemaNum(t *testing.T, tool map[string]any, prop, key string) (int, bool) {
	t.Helper()
	props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	v, ok := p[key].(float64)
	return int(v), ok
}

func a13lPropDesc(tool map[string]any, prop string) string {
	props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	return fmt.Sprint(p["description"])
}

func a13lWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func a13lLines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func a13lTouch(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// a13lBody returns the lines of a read result that are numbered file lines.
var a13lNumbered = regexp.MustCompile(`^ *\d+→`)

func a13lBody(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if a13lNumbered.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func a13lMust(t *testing.T, r harness.Result, wantErr bool, subs ...string) {
	t.Helper()
	if r.IsError != wantErr {
		t.Errorf("isError = %v, want %v; text:\n%s", r.IsError, wantErr, a13lHead(r.Text()))
	}
	for _, s := range subs {
		if !strings.Contains(r.Text(), s) {
			t.Errorf("text lacks %q; text:\n%s", s, a13lHead(r.Text()))
		}
	}
}

func a13lMustNot(t *testing.T, r harness.Result, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(r.Text(), s) {
			t.Errorf("text has %q; text:\n%s", s, a13lHead(r.Text()))
		}
	}
}

func a13lHead(s string) string {
	if len(s) > 1500 {
		return s[:700] + "\n…\n" + s[len(s)-700:]
	}
	return s
}

// a13lDefaultAllowed maps each tool to the numbers its description may
// state under the default limits, with what each one means.
var a13lDefaultAllowed = map[string]map[int]string{
	"read": {1: "1-based offset / minimum", 2000: "readLines, readLineChars", 51200: "readBytes",
		5242880: "image cap", 3: "similar-name suggestions", 8: "UTF-8", 16: "UTF-16"},
	"ls":          {1: "minimum", 500: "lsEntries", 5000: "ls maximum", 65536: "the whole result"},
	"grep":        {0: "context minimum", 1: "minimum", 20: "context maximum", 100: "grepMatches", 1000: "grep maximum", 500: "grepLineChars", 51200: "grepBytes"},
	"find":        {1: "minimum", 1000: "findPaths", 10000: "find maximum", 65536: "the whole result"},
	"edit":        {1: "minItems", 10: "diagnostics shown", 20: "occurrence line numbers", 64: "MiB, the biggest file changed"},
	"write":       {10: "diagnostics shown", 64: "MiB, the biggest file or content written"},
	"bash":        {0: "GIT_TERMINAL_PROMPT=0", 1: "minimum, job-1, a job's early-failure wait", 2: "SIGKILL grace, job-2", 8: "running jobs", 20: "failure lines", 30: "minutes a finished job is kept", 32: "jobs kept", 120: "bashTimeout", 600: "bashMaxTimeout", 2000: "bashLines", 51200: "bashBytes"},
	"tool_search": {1: "minimum", 5: "default", 20: "maximum", 50: "deferred names listed"},
}

// TestLimitsDescriptionNumbers: every number in every description and
// schema of tools/list is one this audit maps to a limit (and checks below),
// and the schema bounds state the enforced numbers.
func TestLimitsDescriptionNumbers(t *testing.T) {
	t.Parallel()
	c, ctx := a13lStart(t, t.TempDir(), nil)
	tools := a13lTools(t, ctx, c)
	for name, allowed := range a13lDefaultAllowed {
		tl, ok := tools[name]
		if !ok {
			t.Errorf("tools/list lacks %s", name)
			continue
		}
		nums := a13lNumbers(tl)
		var keys []int
		for n := range nums {
			keys = append(keys, n)
		}
		sort.Ints(keys)
		for _, n := range keys {
			if _, ok := allowed[n]; !ok {
				t.Errorf("%s states %d (at %v), which no limit accounts for", name, n, nums[n])
			}
		}
	}
	for _, tc := range []struct {
		tool, prop, key string
		want            int
	}{
		{"ls", "limit", "maximum", 5000},
		{"grep", "limit", "maximum", 1000},
		{"grep", "context", "maximum", 20},
		{"find", "limit", "maximum", 10000},
		{"bash", "timeout", "maximum", 600},
		{"tool_search", "limit", "maximum", 20},
	} {
		if got, ok := a13lSchemaNum(t, tools[tc.tool], tc.prop, tc.key); !ok || got != tc.want {
			t.Errorf("%s.%s %s = %d (present %v), want %d", tc.tool, tc.prop, tc.key, got, ok, tc.want)
		}
	}
	for _, tc := range []struct{ tool, sub string }{
		{"read", "2000 lines and 51200 bytes"}, {"read", "longer than 2000 characters"},
		{"ls", "500"}, {"grep", "100 matching lines"}, {"grep", "500 characters"}, {"grep", "51200 bytes"},
		{"find", "1000 paths"}, {"bash", "default 120, maximum 600"}, {"bash", "2000 lines and 51200 bytes"},
		{"tool_search", "default 5, maximum 20"},
	} {
		if d := fmt.Sprint(tools[tc.tool]["description"]); !strings.Contains(d, tc.sub) {
			t.Errorf("%s description lacks %q", tc.tool, tc.sub)
		}
	}
	// The read schema's limit has no maximum keyword, but its description says 2000.
	if !strings.Contains(a13lPropDesc(tools["read"], "limit"), "2000") {
		t.Errorf("read.limit description does not state 2000: %q", a13lPropDesc(tools["read"], "limit"))
	}
}

// TestLimitsCLIDefaults: `agentls tools --limits` prints the defaults
// docs/protocol.md's table gives.
func TestLimitsCLIDefaults(t *testing.T) {
	t.Parallel()
	out, err := harness.Command(t, []string{"tools", "--limits"}).Output()
	if err != nil {
		t.Fatalf("agentls tools --limits: %v", err)
	}
	var got map[string]int
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]int{"readLines": 2000, "readBytes": 51200, "readLineChars": 2000, "lsEntries": 500,
		"grepMatches": 100, "grepLineChars": 500, "grepBytes": 51200, "findPaths": 1000,
		"bashTimeout": 120, "bashMaxTimeout": 600, "bashLines": 2000, "bashBytes": 51200}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d limits, want %d: %v", len(got), len(want), got)
	}
}

// TestLimitsReadDefaults: 2000 lines, 51200 bytes, 2000 characters,
// limit ≤ 2000, 3 suggestions, 5 MiB images — at and one past each.
func TestLimitsReadDefaults(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lWrite(t, filepath.Join(ws, "l2000"), a13lLines(2000, strconv.Itoa))
	a13lWrite(t, filepath.Join(ws, "l2001"), a13lLines(2001, strconv.Itoa))
	// 400 lines numbered as "%6d→" + 118 chars + "\n" = 128 bytes: exactly 51200.
	row := strings.Repeat("r", 118)
	a13lWrite(t, filepath.Join(ws, "b400"), a13lLines(400, func(int) string { return row }))
	a13lWrite(t, filepath.Join(ws, "b401"), a13lLines(401, func(int) string { return row }))
	a13lWrite(t, filepath.Join(ws, "c2000"), strings.Repeat("a", 1999)+"Q\n")
	a13lWrite(t, filepath.Join(ws, "c2001"), strings.Repeat("a", 2000)+"Q\n")
	for _, n := range []string{"alpha1.txt", "alpha2.txt", "alpha3.txt", "alpha4.txt", "alpha5.txt"} {
		a13lWrite(t, filepath.Join(ws, n), "x\n")
	}
	c, ctx := a13lStart(t, ws, nil)

	// 2000 lines in all, the header and the notice among them.
	t.Run("lines at 2000", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "l2000"})
		a13lMust(t, r, false, "l2000, lines 1-1998 of 2000", "offset=1999")
		if n := strings.Count(r.Text(), "\n") + 1; n != 2000 {
			t.Errorf("%d lines in all, want 2000", n)
		}
	})
	t.Run("lines past 2000", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "l2001"})
		a13lMust(t, r, false, "lines 1-1998 of 2001", "offset=1999", "2000 lines")
		if b := a13lBody(r.Text()); len(b) != 1998 {
			t.Errorf("%d numbered lines, want 1998", len(b))
		}
	})
	// 51200 bytes in all: 400 numbered lines of 128 bytes fill it alone,
	// so the header and notice leave room for 399.
	t.Run("bytes at 51200", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "b400"})
		a13lMust(t, r, false, "lines 1-399 of 400", "offset=400", "51200")
		if len(r.Text()) > 51200 {
			t.Errorf("result is %d bytes, over 51200", len(r.Text()))
		}
	})
	t.Run("bytes past 51200", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "b401"})
		a13lMust(t, r, false, "lines 1-399 of 401", "offset=400", "51200")
		if len(r.Text()) > 51200 {
			t.Errorf("result is %d bytes, over 51200", len(r.Text()))
		}
	})
	t.Run("line chars at 2000", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "c2000"})
		a13lMust(t, r, false, strings.Repeat("a", 1999)+"Q")
		a13lMustNot(t, r, "line cut")
	})
	t.Run("line chars past 2000", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "c2001"})
		a13lMust(t, r, false, strings.Repeat("a", 2000)+"… [line cut: 2000 of 2001 characters shown]")
		a13lMustNot(t, r, "aQ")
	})
	t.Run("limit 2000 accepted, 2001 lowered", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "l2001", "limit": 2000})
		a13lMust(t, r, false, "lines 1-1998 of 2001")
		if r.Details["normalized"] != nil {
			t.Errorf("limit 2000 reported as normalized: %v", r.Details["normalized"])
		}
		r = c.CallTool(ctx, "read", map[string]any{"path": "l2001", "limit": 2001})
		a13lMust(t, r, false, "lines 1-1998 of 2001", "offset=1999")
		if n := fmt.Sprint(r.Details["normalized"]); !strings.Contains(n, "limit") {
			t.Errorf("limit 2001 lowered without details.normalized naming it: %s", n)
		}
	})
	t.Run("at most 3 suggestions", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "alpha.txt"})
		a13lMust(t, r, true)
		if n := strings.Count(r.Text(), "alpha"); n < 3+1 || n > 3+1 {
			// the asked name once plus exactly 3 suggestions
			t.Errorf("mentions of alpha: %d, want 1 + 3 suggestions:\n%s", n, r.Text())
		}
	})
}

// TestLimitsReadImageCap: a PNG of exactly 5242880 bytes is an image,
// one byte more is not returned as an image.
func TestLimitsReadImageCap(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	mk := func(name string, size int) {
		b := make([]byte, size)
		copy(b, png)
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("at.png", 5242880)
	mk("past.png", 5242881)
	c, ctx := a13lStart(t, ws, nil)
	isImage := func(r harness.Result) bool {
		for _, p := range r.Content {
			if p["type"] == "image" {
				return true
			}
		}
		return false
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "at.png"}); !isImage(r) {
		t.Errorf("5242880-byte PNG not an image part: isError=%v %s", r.IsError, a13lHead(r.Text()))
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "past.png"})
	if isImage(r) {
		t.Errorf("5242881-byte PNG returned as an image")
	}
	t.Logf("past cap: isError=%v %s", r.IsError, a13lHead(r.Text()))
}

// TestLimitsSearchDefaults: ls 500/5000, find 1000/10000, grep
// 100/1000/20/500/51200 — at and one past each.
func TestLimitsSearchDefaults(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lTouch(t, filepath.Join(ws, "ls500"), 500)
	a13lTouch(t, filepath.Join(ws, "ls501"), 501)
	a13lTouch(t, filepath.Join(ws, "f1000"), 1000)
	a13lTouch(t, filepath.Join(ws, "f1001"), 1001)
	a13lWrite(t, filepath.Join(ws, "g/m100.txt"), a13lLines(100, func(i int) string { return fmt.Sprintf("hit %d", i) }))
	a13lWrite(t, filepath.Join(ws, "g/m101.txt"), a13lLines(101, func(i int) string { return fmt.Sprintf("hit %d", i) }))
	a13lWrite(t, filepath.Join(ws, "g/c500.txt"), "LONG"+strings.Repeat("x", 495)+"Y\n")
	a13lWrite(t, filepath.Join(ws, "g/c501.txt"), "LONG"+strings.Repeat("x", 496)+"Z\n")
	a13lWrite(t, filepath.Join(ws, "g/ctx.txt"), a13lLines(50, func(i int) string {
		if i == 25 {
			return "CENTER"
		}
		return fmt.Sprintf("line %d", i)
	}))
	big := strings.Repeat("b", 190)
	a13lWrite(t, filepath.Join(ws, "g/bytes.txt"), a13lLines(900, func(i int) string { return "BIG " + big }))
	c, ctx := a13lStart(t, ws, nil)

	t.Run("ls 500", func(t *testing.T) {
		r := c.CallTool(ctx, "ls", map[string]any{"path": "ls500"})
		a13lMust(t, r, false, "f00500.txt")
		a13lMustNot(t, r, "limit=")
		r = c.CallTool(ctx, "ls", map[string]any{"path": "ls501"})
		a13lMust(t, r, false, "500 of 501", "limit=")
		a13lMustNot(t, r, "f00501.txt")
	})
	t.Run("ls limit 5000 and 5001", func(t *testing.T) {
		r := c.CallTool(ctx, "ls", map[string]any{"path": "ls501", "limit": 5000})
		a13lMust(t, r, false, "f00501.txt")
		r = c.CallTool(ctx, "ls", map[string]any{"path": "ls501", "limit": 5001})
		a13lMust(t, r, true, "`limit` must be ≤ 5000, got 5001")
	})
	t.Run("find 1000", func(t *testing.T) {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": "f1000"})
		a13lMust(t, r, false, "f1000/f01000.txt")
		a13lMustNot(t, r, "limit=")
		r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": "f1001"})
		a13lMust(t, r, false, "1000", "limit=2000")
		a13lMustNot(t, r, "f01001.txt")
	})
	t.Run("find limit 10000 and 10001", func(t *testing.T) {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": "f1001", "limit": 10000})
		a13lMust(t, r, false, "f1001/f01001.txt")
		r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "limit": 10001})
		a13lMust(t, r, true, "`limit` must be ≤ 10000, got 10001")
	})
	t.Run("grep 100 matches", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "path": "g/m100.txt"})
		a13lMust(t, r, false, "g/m100.txt:100: hit 100")
		a13lMustNot(t, r, "limit=")
		r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "path": "g/m101.txt"})
		a13lMust(t, r, false, "g/m101.txt:100: hit 100", "limit 100", "limit=200")
		a13lMustNot(t, r, "g/m101.txt:101:")
	})
	t.Run("grep limit 1000 and 1001", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "path": "g/m101.txt", "limit": 1000})
		a13lMust(t, r, false, "g/m101.txt:101: hit 101")
		r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "limit": 1001})
		a13lMust(t, r, true, "`limit` must be ≤ 1000, got 1001")
	})
	t.Run("grep context 20 and 21", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "CENTER", "path": "g/ctx.txt", "context": 20})
		a13lMust(t, r, false, "g/ctx.txt-5- line 5", "g/ctx.txt-45- line 45")
		a13lMustNot(t, r, "line 4\n", "line 46")
		r = c.CallTool(ctx, "grep", map[string]any{"pattern": "CENTER", "path": "g/ctx.txt", "context": 21})
		a13lMust(t, r, true, "`context` must be ≤ 20, got 21")
	})
	t.Run("grep line chars 500", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^LONG", "path": "g/c500.txt"})
		a13lMust(t, r, false, "xY")
		a13lMustNot(t, r, "cut")
		r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^LONG", "path": "g/c501.txt"})
		a13lMust(t, r, false, "LONG"+strings.Repeat("x", 496), "500")
		a13lMustNot(t, r, "xZ")
	})
	t.Run("grep bytes 51200", func(t *testing.T) {
		a13lGrepBytes(t, ctx, c, ws, 51200, 200)
	})
}

// TestLimitsBashDefaults: timeout ≤ 600, 2000 lines, 51200 bytes, at
// most 20 failure lines from the cut part.
func TestLimitsBashDefaults(t *testing.T) {
	t.Parallel()
	c, ctx := a13lStart(t, t.TempDir(), map[string]any{"mode": "bypass"})
	t.Run("timeout 600 and 601", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "echo ok", "timeout": 600})
		a13lMust(t, r, false, "ok")
		r = c.CallTool(ctx, "bash", map[string]any{"command": "echo ok", "timeout": 601})
		a13lMust(t, r, true, "`timeout` must be ≤ 600, got 601")
	})
	t.Run("2000 lines", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 2000"})
		a13lMust(t, r, false, "\n2000")
		a13lMustNot(t, r, "Output cut")
		r = c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 2001"})
		a13lMust(t, r, false, "showing lines 3-2001 of 2001", "2000 lines") // the notice is one of the 2000
	})
	t.Run("51200 bytes", func(t *testing.T) {
		// 512 lines of 99 chars + "\n" = 51200 bytes exactly.
		r := c.CallTool(ctx, "bash", map[string]any{"command": "for i in $(seq 1 512); do printf '%099d\\n' $i; done"})
		a13lMust(t, r, false, fmt.Sprintf("%099d", 512), fmt.Sprintf("%099d", 1))
		a13lMustNot(t, r, "Output cut")
		r = c.CallTool(ctx, "bash", map[string]any{"command": "for i in $(seq 1 513); do printf '%099d\\n' $i; done"})
		a13lMust(t, r, false, "Output cut", "51200", fmt.Sprintf("%099d", 513))
		a13lMustNot(t, r, fmt.Sprintf("%099d", 1)+"\n")
	})
	t.Run("20 failure lines", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "for i in $(seq 1 30); do echo \"error number $i\"; done; seq 1 2100"})
		a13lMust(t, r, false, "error number 20")
		if n := strings.Count(r.Text(), "error number "); n != 20 {
			t.Errorf("%d failure lines listed, want 20:\n%s", n, a13lHead(r.Text()))
		}
	})
}

// TestLimitsToolSearchDefaults: default 5, maximum 20, up to 50 names.
func TestLimitsToolSearchDefaults(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := 1; i <= 55; i++ {
		a13lWrite(t, filepath.Join(ws, ".agentls/tools", fmt.Sprintf("t%02d.json", i)),
			fmt.Sprintf(`{"name":"widget_tool_%02d","description":"frobnicate widgets variant %d","inputSchema":{"type":"object"},"command":"true","readOnly":true}`, i, i))
	}
	c, ctx := a13lStart(t, ws, nil)
	count := func(r harness.Result) int {
		return len(regexp.MustCompile(`widget_tool_\d\d`).FindAllString(r.Text(), -1))
	}
	distinct := func(r harness.Result) int {
		m := map[string]bool{}
		for _, s := range regexp.MustCompile(`widget_tool_\d\d`).FindAllString(r.Text(), -1) {
			m[s] = true
		}
		return len(m)
	}
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "frobnicate widgets"})
	a13lMust(t, r, false)
	if n := distinct(r); n != 5 {
		t.Errorf("default search returned %d tools, want 5 (%d mentions)", n, count(r))
	}
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": "frobnicate widgets", "limit": 20})
	if n := distinct(r); n != 20 {
		t.Errorf("limit 20 returned %d tools, want 20", n)
	}
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": "frobnicate widgets", "limit": 21})
	a13lMust(t, r, true, "`limit` must be ≤ 20, got 21")
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": "zzqqxx nothingmatches"})
	// The 20 activated by the earlier search are no longer deferred; 35 remain.
	t.Logf("no-match answer: %s", a13lHead(r.Text()))
	if n := distinct(r); n > 50 {
		t.Errorf("no-match answer lists %d names, want at most 50", n)
	}
}

// a13lCustom is a small value for every key docs/protocol.md lists.
var a13lCustom = map[string]any{
	"readLines": 37, "readBytes": 4321, "readLineChars": 43, "lsEntries": 7,
	"grepMatches": 9, "grepLineChars": 47, "grepBytes": 4444, "findPaths": 11,
	"bashTimeout": 3, "bashMaxTimeout": 17, "bashLines": 23, "bashBytes": 4567,
}

// a13lCheckCustomDescriptions: the custom numbers are stated, and no
// default number of a changed limit appears in any description or schema.
func a13lCheckCustomDescriptions(t *testing.T, tools map[string]map[string]any, lim map[string]int) {
	t.Helper()
	type want struct {
		tool  string
		key   string
		stale []int
	}
	for _, w := range []want{
		{"read", "readLines", []int{2000}}, {"read", "readBytes", []int{51200}}, {"read", "readLineChars", []int{2000}},
		{"ls", "lsEntries", []int{500}},
		{"grep", "grepMatches", []int{100}}, {"grep", "grepLineChars", []int{500}}, {"grep", "grepBytes", []int{51200}},
		{"find", "findPaths", []int{1000}},
		{"bash", "bashTimeout", []int{120}}, {"bash", "bashMaxTimeout", []int{600}}, {"bash", "bashLines", []int{2000}}, {"bash", "bashBytes", []int{51200}},
	} {
		nums := a13lNumbers(tools[w.tool])
		if _, ok := nums[lim[w.key]]; !ok {
			t.Errorf("%s: custom %s=%d not stated anywhere", w.tool, w.key, lim[w.key])
		}
		for _, s := range w.stale {
			if where, ok := nums[s]; ok {
				t.Errorf("%s: stale default %d of %s still stated at %v", w.tool, s, w.key, where)
			}
		}
	}
	if got, ok := a13lSchemaNum(t, tools["bash"], "timeout", "maximum"); !ok || got != lim["bashMaxTimeout"] {
		t.Errorf("bash timeout schema maximum = %d (%v), want %d", got, ok, lim["bashMaxTimeout"])
	}
	if d := a13lPropDesc(tools["read"], "limit"); !strings.Contains(d, strconv.Itoa(lim["readLines"])) {
		t.Errorf("read.limit description %q lacks %d", d, lim["readLines"])
	}
	// Per-call maxima stay where they are when the defaults are lowered.
	for _, tc := range []struct {
		tool string
		max  int
	}{{"ls", 5000}, {"grep", 1000}, {"find", 10000}} {
		if got, _ := a13lSchemaNum(t, tools[tc.tool], "limit", "maximum"); got != tc.max {
			t.Errorf("%s limit maximum = %d, want %d", tc.tool, got, tc.max)
		}
	}
}

func a13lInts(m map[string]any) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = v.(int)
	}
	return out
}

// a13lCustomWorkspace holds the fixtures the custom-limit checks use.
func a13lCustomWorkspace(t *testing.T, ws string) {
	t.Helper()
	a13lWrite(t, filepath.Join(ws, "l37"), a13lLines(37, strconv.Itoa))
	a13lWrite(t, filepath.Join(ws, "l38"), a13lLines(38, strconv.Itoa))
	a13lWrite(t, filepath.Join(ws, "c43"), strings.Repeat("a", 42)+"Q\n")
	a13lWrite(t, filepath.Join(ws, "c44"), strings.Repeat("a", 43)+"Q\n")
	a13lWrite(t, filepath.Join(ws, "bytes"), a13lLines(37, func(int) string { return strings.Repeat("r", 140) }))
	a13lTouch(t, filepath.Join(ws, "ls7"), 7)
	a13lTouch(t, filepath.Join(ws, "ls8"), 8)
	a13lTouch(t, filepath.Join(ws, "f11"), 11)
	a13lTouch(t, filepath.Join(ws, "f12"), 12)
	a13lWrite(t, filepath.Join(ws, "g/m9.txt"), a13lLines(9, func(i int) string { return fmt.Sprintf("hit %d", i) }))
	a13lWrite(t, filepath.Join(ws, "g/m10.txt"), a13lLines(10, func(i int) string { return fmt.Sprintf("hit %d", i) }))
	a13lWrite(t, filepath.Join(ws, "g/c47.txt"), "LONG"+strings.Repeat("x", 42)+"Y\n")
	a13lWrite(t, filepath.Join(ws, "g/c48.txt"), "LONG"+strings.Repeat("x", 43)+"Z\n")
	a13lWrite(t, filepath.Join(ws, "g/bytes.txt"), a13lLines(200, func(i int) string { return "BIG " + strings.Repeat("b", 40) }))
}

// a13lCheckCustomCalls: the calls enforce the custom numbers, with notices
// naming them.
func a13lCheckCustomCalls(t *testing.T, ctx context.Context, c *harness.Client) {
	t.Helper()
	// 37 lines in all: the header and the notice take two of them.
	r := c.CallTool(ctx, "read", map[string]any{"path": "l37"})
	a13lMust(t, r, false, "lines 1-35 of 37", "offset=36")
	r = c.CallTool(ctx, "read", map[string]any{"path": "l38"})
	a13lMust(t, r, false, "lines 1-35 of 38", "offset=36", "37 lines")
	r = c.CallTool(ctx, "read", map[string]any{"path": "l38", "limit": 38})
	a13lMust(t, r, false, "lines 1-35 of 38")
	r = c.CallTool(ctx, "read", map[string]any{"path": "c43"})
	a13lMust(t, r, false, strings.Repeat("a", 42)+"Q")
	a13lMustNot(t, r, "line cut")
	r = c.CallTool(ctx, "read", map[string]any{"path": "c44"})
	a13lMust(t, r, false, "[line cut: 43 of 44 characters shown]")
	r = c.CallTool(ctx, "ls", map[string]any{"path": "ls7"})
	a13lMust(t, r, false, "f00007.txt")
	a13lMustNot(t, r, "limit=")
	r = c.CallTool(ctx, "ls", map[string]any{"path": "ls8"})
	a13lMust(t, r, false, "7 of 8", "limit 7", "limit=")
	a13lMustNot(t, r, "f00008.txt")

	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": "f11"})
	a13lMust(t, r, false, "f00011.txt")
	a13lMustNot(t, r, "limit=")
	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": "f12"})
	a13lMust(t, r, false, "11", "limit=22")
	a13lMustNot(t, r, "f00012.txt")

	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "path": "g/m9.txt"})
	a13lMust(t, r, false, "g/m9.txt:9: hit 9")
	a13lMustNot(t, r, "limit=")
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^hit", "path": "g/m10.txt"})
	a13lMust(t, r, false, "limit 9", "limit=18")
	a13lMustNot(t, r, "g/m10.txt:10:")
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^LONG", "path": "g/c47.txt"})
	a13lMust(t, r, false, "xY")
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^LONG", "path": "g/c48.txt"})
	a13lMust(t, r, false, "LONG"+strings.Repeat("x", 43), "47")
	a13lMustNot(t, r, "xZ")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo ok", "timeout": 17})
	a13lMust(t, r, false, "ok")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo ok", "timeout": 18})
	a13lMust(t, r, true, "`timeout` must be ≤ 17, got 18")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 23"})
	a13lMustNot(t, r, "Output cut")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 24"})
	a13lMust(t, r, false, "showing lines 3-24 of 24", "23 lines")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "for i in $(seq 1 20); do printf '%0299d\\n' $i; done"})
	a13lMust(t, r, false, "Output cut", "4567")
	start := time.Now()
	r = c.CallTool(ctx, "bash", map[string]any{"command": "sleep 30"})
	if el := time.Since(start); el < 2500*time.Millisecond || el > 15*time.Second {
		t.Errorf("bash default timeout 3 s: call took %v", el)
	}
	a13lMust(t, r, true, "3")
}

// TestLimitsCustomInitOptions: limits in initializationOptions change
// every description and every enforced number.
func TestLimitsCustomInitOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lCustomWorkspace(t, ws)
	c, ctx := a13lStart(t, ws, map[string]any{"mode": "bypass", "limits": a13lCustom})
	a13lCheckCustomDescriptions(t, a13lTools(t, ctx, c), a13lInts(a13lCustom))
	a13lCheckCustomCalls(t, ctx, c)
}

// TestLimitsCustomGrouped: {"read": {"lines": 37}} is {"readLines": 37}.
func TestLimitsCustomGrouped(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lCustomWorkspace(t, ws)
	grouped := map[string]any{
		"read": map[string]any{"lines": 37, "bytes": 4321, "lineChars": 43},
		"ls":   map[string]any{"entries": 7},
		"grep": map[string]any{"matches": 9, "lineChars": 47, "bytes": 4444},
		"find": map[string]any{"paths": 11},
		"bash": map[string]any{"timeout": 3, "maxTimeout": 17, "lines": 23, "bytes": 4567},
	}
	c, ctx := a13lStart(t, ws, map[string]any{"mode": "bypass", "limits": grouped})
	a13lCheckCustomDescriptions(t, a13lTools(t, ctx, c), a13lInts(a13lCustom))
	a13lCheckCustomCalls(t, ctx, c)
}

// TestLimitsCustomSettingsFile: the same limits from
// .agentls/settings.json.
func TestLimitsCustomSettingsFile(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lCustomWorkspace(t, ws)
	b, _ := json.Marshal(map[string]any{"limits": a13lCustom})
	a13lWrite(t, filepath.Join(ws, ".agentls/settings.json"), string(b))
	c, ctx := a13lStart(t, ws, map[string]any{"mode": "bypass"})
	a13lCheckCustomDescriptions(t, a13lTools(t, ctx, c), a13lInts(a13lCustom))
	a13lCheckCustomCalls(t, ctx, c)
}

// TestLimitsSettingsMergeAndLive: per name the editor wins over
// settings.local.json over settings.json; a file change rebuilds the tools
// and sends tools/listChanged.
func TestLimitsSettingsMergeAndLive(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lWrite(t, filepath.Join(ws, ".agentls/settings.json"), `{"limits": {"readLines": 31, "lsEntries": 32, "findPaths": 33}}`)
	a13lWrite(t, filepath.Join(ws, ".agentls/settings.local.json"), `{"limits": {"lsEntries": 42, "findPaths": 43}}`)
	c, ctx := a13lStart(t, ws, map[string]any{"limits": map[string]any{"findPaths": 53}})
	tools := a13lTools(t, ctx, c)
	for _, tc := range []struct {
		tool  string
		want  int
		stale []int
	}{{"read", 31, []int{}}, {"ls", 42, []int{32, 500}}, {"find", 53, []int{33, 43, 1000}}} {
		nums := a13lNumbers(tools[tc.tool])
		if _, ok := nums[tc.want]; !ok {
			t.Errorf("%s does not state %d", tc.tool, tc.want)
		}
		for _, s := range tc.stale {
			if _, ok := nums[s]; ok {
				t.Errorf("%s states %d, which the merge should have overridden", tc.tool, s)
			}
		}
	}
	// Live change of the shared file.
	since := time.Now()
	a13lWrite(t, filepath.Join(ws, ".agentls/settings.json"), `{"limits": {"readLines": 61, "lsEntries": 32, "findPaths": 33}}`)
	// WaitNote holds the client's lock while calling the predicate: no c.Notes inside.
	if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
		return n.Method == "tools/listChanged" && !n.At.Before(since)
	}); !ok {
		t.Errorf("no tools/listChanged after the settings file's limits changed")
	}
	tools = a13lTools(t, ctx, c)
	if nums := a13lNumbers(tools["read"]); nums[61] == nil || nums[31] != nil {
		t.Errorf("read description after live change: %s", tools["read"]["description"])
	}
	a13lWrite(t, filepath.Join(ws, "l62"), a13lLines(62, strconv.Itoa))
	r := c.CallTool(ctx, "read", map[string]any{"path": "l62"})
	a13lMust(t, r, false, "lines 1-59 of 62", "offset=60") // 61 lines with the header and notice
}

// TestLimitsBadInitOptions: a limit out of its range or of the wrong
// type fails initialize with -32602 naming the field; an unknown key is a
// window/logMessage warning.
func TestLimitsBadInitOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, tc := range []struct {
		name   string
		limits any
		field  string
	}{
		{"negative", map[string]any{"readLines": -1}, "readLines"},
		{"zero", map[string]any{"lsEntries": 0}, "lsEntries"},
		{"string", map[string]any{"grepMatches": "many"}, "grepMatches"},
		{"above max", map[string]any{"readLines": 100001}, "readLines"},
		{"bytes below min", map[string]any{"readBytes": 4095}, "readBytes"},
		{"bytes above max", map[string]any{"bashBytes": 16777217}, "bashBytes"},
		{"timeout above max", map[string]any{"bashTimeout": 86401}, "bashTimeout"},
		{"fraction", map[string]any{"findPaths": 1.5}, "findPaths"},
		{"grouped out of range", map[string]any{"read": map[string]any{"lines": 0}}, "readLines"},
		{"not an object", "lots", "limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a13lInitErr(t, ws, map[string]any{"limits": tc.limits})
			if err == nil {
				t.Fatalf("initialize accepted limits %v", tc.limits)
			}
			var je *jsonrpc2.Error
			if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams {
				t.Errorf("error is not -32602: %#v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
		})
	}
	t.Run("range ends accepted", func(t *testing.T) {
		// readLines 4 and bashLines 3 are the least that hold a header,
		// a line and the notices.
		lim := map[string]any{"readLines": 100000, "readBytes": 4096, "readLineChars": 1, "lsEntries": 100000,
			"grepMatches": 1, "grepLineChars": 100000, "grepBytes": 16777216, "findPaths": 1,
			"bashTimeout": 86400, "bashMaxTimeout": 86400, "bashLines": 3, "bashBytes": 4096}
		c, ctx := a13lStart(t, ws, map[string]any{"limits": lim})
		tools := a13lTools(t, ctx, c)
		if got, _ := a13lSchemaNum(t, tools["bash"], "timeout", "maximum"); got != 86400 {
			t.Errorf("bash timeout maximum = %d, want 86400", got)
		}
		// lsEntries 100000 is above ls's per-call maximum 5000, which rises to it.
		if got, _ := a13lSchemaNum(t, tools["ls"], "limit", "maximum"); got != 100000 {
			t.Errorf("ls limit maximum = %d, want 100000 (raised to the default)", got)
		}
	})
	t.Run("unknown key warned", func(t *testing.T) {
		c, ctx := a13lStart(t, ws, map[string]any{"limits": map[string]any{"readLinez": 10}})
		if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "readLinez")
		}); !ok {
			t.Errorf("no window/logMessage naming the unknown limit readLinez")
		}
		tools := a13lTools(t, ctx, c)
		if !strings.Contains(fmt.Sprint(tools["read"]["description"]), "2000 lines") {
			t.Errorf("unknown key changed read's description")
		}
	})
	t.Run("max timeout below default lowers it", func(t *testing.T) {
		c, ctx := a13lStart(t, ws, map[string]any{"limits": map[string]any{"bashMaxTimeout": 9}})
		tools := a13lTools(t, ctx, c)
		nums := a13lNumbers(tools["bash"])
		if nums[120] != nil || nums[600] != nil || nums[9] == nil {
			t.Errorf("bash description with bashMaxTimeout 9: %s / %s", tools["bash"]["description"], a13lPropDesc(tools["bash"], "timeout"))
		}
		if !strings.Contains(a13lPropDesc(tools["bash"], "timeout"), "default 9, maximum 9") {
			t.Errorf("timeout description %q, want default 9, maximum 9", a13lPropDesc(tools["bash"], "timeout"))
		}
	})
}

// TestLimitsBadSettingsFile: a wrong value in a file is reported and
// that file's limits are ignored (its other, valid names too); an unknown
// name is a warning.
func TestLimitsBadSettingsFile(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lWrite(t, filepath.Join(ws, ".agentls/settings.json"), `{"limits": {"readLines": 0, "lsEntries": 7, "lsEntriez": 3}}`)
	c, ctx := a13lStart(t, ws, nil)
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "readLines")
	}); !ok {
		t.Errorf("no window/logMessage naming the bad readLines")
	}
	tools := a13lTools(t, ctx, c)
	if d := fmt.Sprint(tools["ls"]["description"]); strings.Contains(d, "At most 7 ") || !strings.Contains(d, "500") {
		t.Errorf("the bad file's valid lsEntries was applied: %s", d)
	}
	if d := fmt.Sprint(tools["read"]["description"]); !strings.Contains(d, "2000 lines") {
		t.Errorf("read description: %s", d)
	}
	for _, n := range c.Notes("window/logMessage") {
		t.Logf("logMessage: %s", n.Params)
	}
}

// TestLimitsCustomBytes: readBytes and grepBytes alone (the other
// custom limits would cut first).
func TestLimitsCustomBytes(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a13lWrite(t, filepath.Join(ws, "bytes"), a13lLines(200, func(int) string { return strings.Repeat("r", 140) }))
	a13lWrite(t, filepath.Join(ws, "g/bytes.txt"), a13lLines(200, func(i int) string { return "BIG " + strings.Repeat("b", 40) }))
	c, ctx := a13lStart(t, ws, map[string]any{"limits": map[string]any{"readBytes": 4321, "grepBytes": 4444}})
	tools := a13lTools(t, ctx, c)
	for tool, n := range map[string]int{"read": 4321, "grep": 4444} {
		nums := a13lNumbers(tools[tool])
		if nums[n] == nil || nums[51200] != nil {
			t.Errorf("%s description does not state %d only: %s", tool, n, tools[tool]["description"])
		}
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "bytes"})
	a13lMust(t, r, false, "4321", "offset=")
	size := 0
	for _, l := range a13lBody(r.Text()) {
		size += len(l) + 1
	}
	if size > 4321 || size < 4321-150 {
		t.Errorf("read: numbered text %d bytes, want ≤ 4321 and within a line of it", size)
	}

	a13lGrepBytes(t, ctx, c, ws, 4444, 101)
}

// a13lGrepBytes: grep output of exactly limit bytes (limit/width lines of
// width bytes each, newline included) is shown whole; one more match line
// is cut with a notice naming the limit and the read call that goes on.
func a13lGrepBytes(t *testing.T, ctx context.Context, c *harness.Client, ws string, limit, width int) {
	t.Helper()
	n := limit / width
	mk := func(name string, lines int) {
		a13lWrite(t, filepath.Join(ws, "gb", name), a13lLines(lines, func(i int) string {
			prefix := fmt.Sprintf("gb/%s:%d: ", name, i)
			return "E" + strings.Repeat("e", width-1-len(prefix)-1)
		}))
	}
	mk("at.txt", n)
	mk("past.txt", n+1)
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^E", "path": "gb/at.txt", "limit": 1000})
	a13lMust(t, r, false, fmt.Sprintf("gb/at.txt:%d: E", n))
	a13lMustNot(t, r, "Output cut")
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^E", "path": "gb/past.txt", "limit": 1000})
	a13lMust(t, r, false, strconv.Itoa(limit), `"offset"`)
	size := 0
	for _, l := range strings.Split(r.Text(), "\n") {
		if strings.HasPrefix(l, "gb/past.txt:") {
			size += len(l) + 1
		}
	}
	if size > limit {
		t.Errorf("match text %d bytes, over %d", size, limit)
	}
}
