package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// budgets are the limits a result must fit: the defaults, and the
// defaults lowered to each MCP host's cap (internal/mcp's table).
func budgets() []struct {
	name string
	l    tools.Limits
} {
	return []struct {
		name string
		l    tools.Limits
	}{
		{"defaults", tools.DefaultLimits()},
		{"codex", tools.DefaultLimits().Within(tools.HostCap{Bytes: 10_000})},
		{"claude code", tools.DefaultLimits().Within(tools.HostCap{Bytes: 25_000})},
		{"gemini cli", tools.DefaultLimits().Within(tools.HostCap{Bytes: 39_000})},
		{"opencode", tools.DefaultLimits().Within(tools.HostCap{Bytes: 50 * 1024, Lines: 2000})},
		{"a host with few lines", tools.DefaultLimits().Within(tools.HostCap{Bytes: 8192, Lines: 40})},
	}
}

// withinBudget fails when text is over bytes or lines.
func withinBudget(t *testing.T, what, text string, bytes, lines int) {
	t.Helper()
	if len(text) > bytes {
		t.Errorf("%s: %d bytes, over the %d-byte budget", what, len(text), bytes)
	}
	if lines > 0 && tools.LineCount(text) > lines {
		t.Errorf("%s: %d lines, over the %d-line budget", what, tools.LineCount(text), lines)
	}
}

var (
	readHeader = regexp.MustCompile(`^(\S+), lines (\d+)-(\d+) of (\d+)`)
	readNumber = regexp.MustCompile(`(?m)^ *(\d+)→(.*)$`)
	readNotice = regexp.MustCompile(`\[Showing lines (\d+)-(\d+) of (\d+)[^\]]*Use offset=(\d+) to continue\.\]`)
)

// A 3,000-line file read page by page: every page, header and notices
// included, is within the budget the description states; the header and
// the notice name exactly the lines shown; the offset the notice gives
// continues with the next line, and the pages hold every line once.
func TestReadPagesFitTheBudgetAndContinueExactly(t *testing.T) {
	const total = 3000
	files := map[string][]byte{}
	var short, wide, cut strings.Builder
	for i := 1; i <= total; i++ {
		fmt.Fprintf(&short, "s%d\n", i)
		fmt.Fprintf(&wide, "w%d %s\n", i, strings.Repeat("abcdefgh", 8))
		if i%500 == 0 {
			fmt.Fprintf(&cut, "c%d %s\n", i, strings.Repeat("y", tools.ReadMaxLineChars+10))
		} else {
			fmt.Fprintf(&cut, "c%d\n", i)
		}
	}
	files["short.txt"] = []byte(short.String()) // the line limit decides
	files["wide.txt"] = []byte(wide.String())   // the byte limit decides
	files["cut.txt"] = []byte(cut.String())     // lines cut at ReadLineChars, a second notice
	for _, b := range budgets() {
		t.Run(b.name, func(t *testing.T) {
			x, _ := newLimitedExecutor(t, files, b.l)
			for _, name := range []string{"short.txt", "wide.txt", "cut.txt"} {
				want := strings.Split(strings.TrimSuffix(string(files[name]), "\n"), "\n")
				next, pages := 1, 0
				for next <= total {
					if pages++; pages > total {
						t.Fatalf("%s: no end after %d pages", name, pages)
					}
					r := call(t, x, "read", fmt.Sprintf(`{"path":%q,"offset":%d}`, name, next))
					text := r.TextOf()
					what := fmt.Sprintf("%s offset %d", name, next)
					if r.IsError {
						t.Fatalf("%s: %s", what, text)
					}
					withinBudget(t, what, text, b.l.ReadBytes, b.l.ReadLines)
					h := readHeader.FindStringSubmatch(text)
					if h == nil || h[1] != name || h[2] != strconv.Itoa(next) || h[4] != strconv.Itoa(total) {
						t.Fatalf("%s: header %q", what, strings.SplitN(text, "\n", 2)[0])
					}
					lines := readNumber.FindAllStringSubmatch(text, -1)
					first, _ := strconv.Atoi(lines[0][1])
					last, _ := strconv.Atoi(lines[len(lines)-1][1])
					if first != next || last != first+len(lines)-1 || h[3] != strconv.Itoa(last) {
						t.Fatalf("%s: header says %s-%s, shown %d-%d (%d lines)", what, h[2], h[3], first, last, len(lines))
					}
					for i, ln := range lines {
						if w := want[first-1+i]; ln[2] != w && !strings.HasPrefix(w, strings.TrimSuffix(strings.SplitN(ln[2], "…", 2)[0], "…")) {
							t.Fatalf("%s: line %s is %.40q, want %.40q", what, ln[1], ln[2], w)
						}
					}
					n := readNotice.FindStringSubmatch(text)
					if last == total {
						if n != nil {
							t.Fatalf("%s: the last page has a continuation notice: %s", what, n[0])
						}
						break
					}
					if n == nil || n[1] != strconv.Itoa(next) || n[2] != strconv.Itoa(last) || n[4] != strconv.Itoa(last+1) {
						t.Fatalf("%s: shown %d-%d, notice %q", what, next, last, n)
					}
					next = last + 1
				}
				if pages < 2 {
					t.Errorf("%s: read in %d page; the test needs a cut", name, pages)
				}
			}
		})
	}
}

// A first line that fits the byte limit alone but not beside its header
// and notice is refused with the bash command that shows it, not cut
// silently nor shown over the budget.
func TestReadLineThatFillsTheBudgetAlone(t *testing.T) {
	l := tools.DefaultLimits().Within(tools.HostCap{Bytes: 10_000})
	l.ReadLineChars = 20_000                    // shown whole, not cut
	line := strings.Repeat("z", l.ReadBytes-10) // with "     1→" and a newline: just within ReadBytes
	x, _ := newLimitedExecutor(t, map[string][]byte{"one.txt": []byte(line + "\nnext\n")}, l)
	r := call(t, x, "read", `{"path":"one.txt"}`)
	withinBudget(t, "read", r.TextOf(), l.ReadBytes, l.ReadLines)
	if !strings.Contains(r.TextOf(), "Line 1 of one.txt is") || !strings.Contains(r.TextOf(), "sed -n '1p' one.txt") {
		t.Fatalf("got:\n%.300s", r.TextOf())
	}
}

// bash keeps the end of the output and its notices within BashLines and
// BashBytes; the notice's line range is the lines shown (seq prints its
// line numbers), failure lines from the cut part included.
func TestBashResultFitsTheBudget(t *testing.T) {
	notice := regexp.MustCompile(`showing lines (\d+)-(\d+) of (\d+)`)
	for _, b := range budgets() {
		t.Run(b.name, func(t *testing.T) {
			x, _ := newLimitedExecutor(t, nil, b.l)
			for _, cmd := range []string{
				"seq 100000",
				// 20 failure lines of 500 bytes rescued from the cut part.
				`for i in $(seq 40); do printf 'error %s %0500d\n' $i 0; done; seq 41 30000`,
			} {
				r := call(t, x, "bash", fmt.Sprintf(`{"command":%q}`, cmd))
				text := r.TextOf()
				withinBudget(t, cmd, text, b.l.BashBytes, b.l.BashLines)
				m := notice.FindStringSubmatch(text)
				if m == nil {
					t.Fatalf("%s: no notice in %.300s", cmd, text)
				}
				out := text[strings.Index(text, "]\n")+2:]
				shown := strings.Split(out, "\n")
				if shown[0] != m[1] || shown[len(shown)-1] != m[2] || m[2] != m[3] {
					t.Fatalf("%s: notice says %s-%s of %s, shown %s…%s", cmd, m[1], m[2], m[3], shown[0], shown[len(shown)-1])
				}
			}
		})
	}
}

// grep's whole output, notices included, is within what its description
// states, for every host.
func TestGrepResultFitsTheBudget(t *testing.T) {
	var many strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&many, "needle %d %s\n", i, strings.Repeat("q", 60))
	}
	for _, b := range budgets() {
		t.Run(b.name, func(t *testing.T) {
			x, _ := newLimitedExecutor(t, map[string][]byte{"many.txt": []byte(many.String())}, b.l)
			r := call(t, x, "grep", fmt.Sprintf(`{"pattern":"needle","limit":%d,"context":3}`, GrepMaxLimit))
			withinBudget(t, "grep", r.TextOf(), resultBytes(b.l, b.l.GrepBytes), b.l.ResultLines)
			if !strings.Contains(r.TextOf(), "[Output cut") && !strings.Contains(r.TextOf(), "[output cut") {
				t.Fatalf("no cut notice: %s", tail(r.TextOf()))
			}
		})
	}
}

// A host's byte and line caps hold for a tool whose own budget is larger
// (ls), with a notice inside them that names the lines shown.
func TestHostCapCutsEveryTool(t *testing.T) {
	files := map[string][]byte{}
	for i := range 300 {
		files[fmt.Sprintf("d/entry-%04d.txt", i)] = []byte("x\n")
	}
	for _, c := range []tools.HostCap{{Bytes: 4096}, {Bytes: 40_000, Lines: 50}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			l := tools.DefaultLimits().Within(c)
			x, _ := newLimitedExecutor(t, files, l)
			r := call(t, x, "ls", `{"path":"d","limit":300}`)
			text := r.TextOf()
			withinBudget(t, "ls", text, c.Bytes, c.Lines)
			m := regexp.MustCompile(`showing lines 1-(\d+) of (\d+)`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no cut notice: %s", tail(text))
			}
			if n, _ := strconv.Atoi(m[1]); n != tools.LineCount(text)-1 {
				t.Fatalf("notice says 1-%d, %d lines shown before it", n, tools.LineCount(text)-1)
			}
			if ls, _ := x.Registry.Lookup("ls"); !strings.Contains(ls.Description, strconv.Itoa(c.Bytes)+" bytes") {
				t.Errorf("ls description does not state %d bytes", c.Bytes)
			}
		})
	}
}
