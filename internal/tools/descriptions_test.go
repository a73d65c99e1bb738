package tools

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/textedit"
)

// enforced lists, per tool, the constants its description may state. A
// number in a description that is not one of them is a claim the code does
// not back.
var enforced = map[string][]int{
	"read":  {ReadMaxLines, ReadMaxBytes, ReadMaxLineChars, ReadMaxImage, maxSuggestions, 1},
	"ls":    {LsDefaultLimit, LsMaxLimit},
	"grep":  {GrepDefaultLimit, GrepMaxLimit, GrepMaxContext, GrepLineChars, GrepMaxBytes, 2},
	"find":  {FindDefaultLimit, FindMaxLimit},
	"edit":  {textedit.MaxListedOccurrences, MaxDiagnostics},
	"write": {MaxDiagnostics},
	"bash":  {BashDefaultTimeout, BashMaxTimeout, BashTailLines, BashTailBytes, BashFailureLines, BashKillGrace},
}

var (
	number = regexp.MustCompile(`\b\d[\d,]*\b`)
	// names are words with digits that are not quantities.
	names = regexp.MustCompile(`UTF-\d+|RE2|U\+FFFD|SIGTERM|SIGKILL|/dev/null|[A-Z_]+=\d`)
)

func propertyDescriptions(schema map[string]any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if d, ok := x["description"].(string); ok {
				out = append(out, d)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(schema)
	return out
}

// Every number a description states is a constant the code enforces, and
// every limit constant appears in its description.
func TestDescriptionNumbersAreEnforcedConstants(t *testing.T) {
	for _, tool := range Builtins() {
		allowed, ok := enforced[tool.Name]
		if !ok {
			t.Errorf("%s: no enforced-constant list; add one", tool.Name)
			continue
		}
		set := map[int]bool{}
		for _, n := range allowed {
			set[n] = true
		}
		text := tool.Description
		// Property descriptions state numbers too (the schema's own
		// minimum/maximum are the enforcement, not claims).
		for _, d := range propertyDescriptions(tool.Schema) {
			text += "\n" + d
		}
		text = names.ReplaceAllString(text, "")
		for _, m := range number.FindAllString(text, -1) {
			n, err := strconv.Atoi(strings.ReplaceAll(m, ",", ""))
			if err != nil {
				continue
			}
			if !set[n] {
				t.Errorf("%s: description states %d, which is not an enforced constant %v", tool.Name, n, allowed)
			}
		}
		for _, n := range allowed {
			if n > 8 && !strings.Contains(tool.Description, strconv.Itoa(n)) {
				t.Errorf("%s: limit %d is not stated in the description", tool.Name, n)
			}
		}
	}
}

// The limits hold in behaviour, not only in text.
func TestLimitsHoldInBehaviour(t *testing.T) {
	files := map[string][]byte{}
	var many strings.Builder
	for i := range 150 {
		fmt.Fprintf(&many, "needle %d\n", i)
	}
	files["many.txt"] = []byte(many.String())
	for i := range LsDefaultLimit + 20 {
		files[fmt.Sprintf("wide/f%04d.txt", i)] = []byte("x\n")
	}
	for i := range FindDefaultLimit + 5 {
		files[fmt.Sprintf("deep/d%d/f%04d.go", i%7, i)] = []byte("package x\n")
	}
	files["long.txt"] = []byte("needle " + strings.Repeat("y", 2000) + "\n")
	x, _, _ := newTestExecutor(t, files)

	for _, backend := range []string{"rg", "go"} {
		t.Run("grep default limit "+backend, func(t *testing.T) {
			if backend == "go" {
				t.Setenv("AGENTLS_GREP_BACKEND", "go")
			}
			r := call(t, x, "grep", `{"pattern":"needle \\d+","path":"many.txt"}`)
			got := strings.Count(r.TextOf(), "many.txt:")
			if got != GrepDefaultLimit || !strings.Contains(r.TextOf(), fmt.Sprintf("limit %d", GrepDefaultLimit)) {
				t.Fatalf("%d matches shown, want %d with a notice:\n%s", got, GrepDefaultLimit, tail(r.TextOf()))
			}
		})
	}
	t.Run("grep line cut", func(t *testing.T) {
		r := call(t, x, "grep", `{"pattern":"needle y","path":"long.txt"}`)
		line := strings.SplitN(r.TextOf(), "\n", 2)[0]
		if n := len([]rune(strings.TrimPrefix(line, "long.txt:1: "))); n > GrepLineChars+60 || !strings.Contains(line, "500") {
			t.Fatalf("line not cut at %d chars (%d): %.80s…", GrepLineChars, n, line)
		}
	})
	t.Run("ls default limit", func(t *testing.T) {
		r := call(t, x, "ls", `{"path":"wide"}`)
		if got := strings.Count(r.TextOf(), ".txt\n"); got != LsDefaultLimit-1 && got != LsDefaultLimit {
			t.Fatalf("%d entries", got)
		}
		if !strings.Contains(r.TextOf(), fmt.Sprintf("Showing %d of %d entries", LsDefaultLimit, LsDefaultLimit+20)) {
			t.Fatalf("no notice: %s", tail(r.TextOf()))
		}
	})
	t.Run("find default limit", func(t *testing.T) {
		r := call(t, x, "find", `{"pattern":"*.go"}`)
		if got := strings.Count(r.TextOf(), ".go\n") + 1; got < FindDefaultLimit || !strings.Contains(r.TextOf(), fmt.Sprintf("first %d matching paths (limit %d)", FindDefaultLimit, FindDefaultLimit)) {
			t.Fatalf("%d paths: %s", got, tail(r.TextOf()))
		}
	})
	t.Run("limits above the maximum are refused", func(t *testing.T) {
		for _, c := range []struct{ tool, args string }{
			{"ls", fmt.Sprintf(`{"limit":%d}`, LsMaxLimit+1)},
			{"find", fmt.Sprintf(`{"pattern":"*","limit":%d}`, FindMaxLimit+1)},
			{"grep", fmt.Sprintf(`{"pattern":"x","limit":%d}`, GrepMaxLimit+1)},
			{"grep", fmt.Sprintf(`{"pattern":"x","context":%d}`, GrepMaxContext+1)},
			{"bash", fmt.Sprintf(`{"command":"true","timeout":%d}`, BashMaxTimeout+1)},
		} {
			r := call(t, x, c.tool, c.args)
			if !r.IsError || !strings.Contains(r.TextOf(), "must be ≤") {
				t.Errorf("%s %s: %s", c.tool, c.args, r.TextOf())
			}
		}
	})
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}
