package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// enforced lists, per tool, the fixed constants its description may state
// besides l's numbers. A number in a description that is not one of them is
// a claim the code does not back.
func enforced(l tools.Limits) map[string][]int {
	lim := stated(l)
	return map[string][]int{
		"read":        append([]int{ReadMaxImage, maxSuggestions, 1}, lim...),
		"ls":          lim,
		"grep":        append([]int{GrepMaxContext, 2}, lim...),
		"find":        lim,
		"edit":        {textedit.MaxListedOccurrences, tools.MaxDiagnostics, MaxChangeBytes >> 20},
		"write":       {tools.MaxDiagnostics, MaxChangeBytes >> 20},
		"bash":        append([]int{BashFailureLines, BashKillGrace, BashJobEarlyWait, jobs.MaxRunning, BashJobKeptMinutes, jobs.MaxKept}, lim...),
		"bash_output": append([]int{BashOutputMaxWait}, lim...),
		"bash_kill":   {BashKillGrace, jobs.LastLines},
	}
}

// ownLimits lists the numbers of l each tool must state.
func ownLimits(l tools.Limits) map[string][]int {
	l = l.WithDefaults()
	whole := []int{resultBytes(l, tools.DefaultMaxResultBytes)}
	if l.ResultLines > 0 {
		whole = append(whole, l.ResultLines)
	}
	return map[string][]int{
		"read":        {l.ReadLines, l.ReadBytes, l.ReadLineChars},
		"ls":          append([]int{l.LsEntries, lsMax(l)}, whole...),
		"grep":        {l.GrepMatches, grepMax(l), l.GrepLineChars, resultBytes(l, l.GrepBytes)},
		"find":        append([]int{l.FindPaths, findMax(l)}, whole...),
		"bash":        {l.BashTimeout, l.BashMaxTimeout, l.BashLines, l.BashBytes, BashJobEarlyWait, jobs.MaxRunning, BashJobKeptMinutes, jobs.MaxKept},
		"bash_output": {BashOutputMaxWait, l.BashLines, l.BashBytes},
		"bash_kill":   {BashKillGrace, jobs.LastLines},
	}
}

// customLimits differ from every default and from each other, so a
// description stating a default where it should state the setting fails.
var customLimits = tools.Limits{
	ReadLines: 321, ReadBytes: 12345, ReadLineChars: 432,
	LsEntries: 77, GrepMatches: 33, GrepLineChars: 144, GrepBytes: 23456,
	FindPaths: 55, BashTimeout: 45, BashMaxTimeout: 90, BashLines: 234, BashBytes: 34567,
}

// raisedLimits set defaults above the per-call maxima, which rise with them.
var raisedLimits = tools.Limits{LsEntries: 6001, GrepMatches: 1501, FindPaths: 12001}

var (
	number = regexp.MustCompile(`\b\d[\d,]*\b`)
	// names are words with digits that are not quantities.
	names = regexp.MustCompile(`UTF-\d+|RE2|U\+FFFD|SIGTERM|SIGKILL|/dev/null|[A-Z_]+=\d|job-\d+|exited \d+`)
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

// Every number a description states is a number the code enforces, and
// every limit appears in its description: for the defaults and for limits
// a client set.
func TestDescriptionNumbersAreEnforcedConstants(t *testing.T) {
	for _, lc := range []struct {
		name string
		l    tools.Limits
	}{{"defaults", tools.DefaultLimits()}, {"custom limits", customLimits}, {"defaults above the maxima", raisedLimits},
		{"within a host's byte cap", tools.DefaultLimits().Within(tools.HostCap{Bytes: 10_000})},
		{"within a host's byte and line caps", customLimits.Within(tools.HostCap{Bytes: 20_000, Lines: 150})}} {
		t.Run(lc.name, func(t *testing.T) {
			allowedBy, own := enforced(lc.l), ownLimits(lc.l)
			for _, tool := range append(Builtins(lc.l), JobTools(lc.l)...) {
				allowed, ok := allowedBy[tool.Name]
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
						t.Errorf("%s: description states %d, which is not an enforced number %v", tool.Name, n, allowed)
					}
				}
				for _, n := range own[tool.Name] {
					if !strings.Contains(tool.Description, strconv.Itoa(n)) {
						t.Errorf("%s: limit %d is not stated in the description", tool.Name, n)
					}
				}
				for _, key := range []string{"limit", "timeout"} {
					if p, ok := tool.Schema["properties"].(map[string]any)[key].(map[string]any); ok {
						if max, ok := p["maximum"].(float64); ok && !strings.Contains(p["description"].(string), strconv.Itoa(int(max))) {
							t.Errorf("%s: %s's description %q does not state its maximum %v", tool.Name, key, p["description"], max)
						}
					}
				}
			}
		})
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
	for i := range tools.LsDefaultLimit + 20 {
		files[fmt.Sprintf("wide/f%04d.txt", i)] = []byte("x\n")
	}
	for i := range tools.FindDefaultLimit + 5 {
		files[fmt.Sprintf("deep/d%d/f%04d.go", i%7, i)] = []byte("package x\n")
	}
	files["long.txt"] = []byte("needle " + strings.Repeat("y", 2000) + "\n")
	x, _ := newTestExecutor(t, files)

	for _, backend := range []string{"rg", "go"} {
		t.Run("grep default limit "+backend, func(t *testing.T) {
			if backend == "go" {
				t.Setenv("AGENTLS_GREP_BACKEND", "go")
			}
			r := call(t, x, "grep", `{"pattern":"needle \\d+","path":"many.txt"}`)
			got := strings.Count(r.TextOf(), "many.txt:")
			if got != tools.GrepDefaultLimit || !strings.Contains(r.TextOf(), fmt.Sprintf("limit %d", tools.GrepDefaultLimit)) {
				t.Fatalf("%d matches shown, want %d with a notice:\n%s", got, tools.GrepDefaultLimit, tail(r.TextOf()))
			}
		})
	}
	t.Run("grep line cut", func(t *testing.T) {
		r := call(t, x, "grep", `{"pattern":"needle y","path":"long.txt"}`)
		line := strings.SplitN(r.TextOf(), "\n", 2)[0]
		if n := len([]rune(strings.TrimPrefix(line, "long.txt:1: "))); n > tools.GrepLineChars+60 || !strings.Contains(line, "500") {
			t.Fatalf("line not cut at %d chars (%d): %.80s…", tools.GrepLineChars, n, line)
		}
	})
	t.Run("ls default limit", func(t *testing.T) {
		r := call(t, x, "ls", `{"path":"wide"}`)
		if got := strings.Count(r.TextOf(), ".txt\n"); got != tools.LsDefaultLimit-1 && got != tools.LsDefaultLimit {
			t.Fatalf("%d entries", got)
		}
		if !strings.Contains(r.TextOf(), fmt.Sprintf("Showing %d of %d entries", tools.LsDefaultLimit, tools.LsDefaultLimit+20)) {
			t.Fatalf("no notice: %s", tail(r.TextOf()))
		}
	})
	t.Run("find default limit", func(t *testing.T) {
		r := call(t, x, "find", `{"pattern":"*.go"}`)
		if got := strings.Count(r.TextOf(), ".go\n") + 1; got < tools.FindDefaultLimit || !strings.Contains(r.TextOf(), fmt.Sprintf("first %d matching paths (limit %d)", tools.FindDefaultLimit, tools.FindDefaultLimit)) {
			t.Fatalf("%d paths: %s", got, tail(r.TextOf()))
		}
	})
	t.Run("limits above the maximum are refused", func(t *testing.T) {
		for _, c := range []struct{ tool, args string }{
			{"ls", fmt.Sprintf(`{"limit":%d}`, LsMaxLimit+1)},
			{"find", fmt.Sprintf(`{"pattern":"*","limit":%d}`, FindMaxLimit+1)},
			{"grep", fmt.Sprintf(`{"pattern":"x","limit":%d}`, GrepMaxLimit+1)},
			{"grep", fmt.Sprintf(`{"pattern":"x","context":%d}`, GrepMaxContext+1)},
			{"bash", fmt.Sprintf(`{"command":"true","timeout":%d}`, tools.BashMaxTimeout+1)},
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

// stated returns the numbers l lets descriptions state, for the test that
// checks descriptions against the code.
func stated(l tools.Limits) []int {
	l = l.WithDefaults()
	var out []int
	settings := l.Settings()
	for _, name := range tools.LimitNames() {
		out = append(out, settings[name])
	}
	out = append(out, lsMax(l), grepMax(l), findMax(l), resultBytes(l, tools.DefaultMaxResultBytes))
	if l.ResultLines > 0 {
		out = append(out, l.ResultLines)
	}
	return out
}

// resultBytes is the budget of a whole result of a tool whose own budget
// is own bytes under l (the framework's Limits.resultBytes).
func resultBytes(l tools.Limits, own int) int {
	if l.ResultBytes > 0 {
		return min(own, l.ResultBytes)
	}
	return own
}
