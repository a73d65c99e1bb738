package proc

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// cleanAll feeds raw to a cleaner in chunks of size n (0 = all at once) and returns the
// lines, the unterminated last line marked with a trailing "<no eol>".
func cleanAll(raw string, n int) []string {
	var lines []string
	c := cleaner{onLine: func(s string, _ bool) { lines = append(lines, s) }}
	if n == 0 {
		c.write([]byte(raw))
	} else {
		for i := 0; i < len(raw); i += n {
			c.write([]byte(raw[i:min(i+n, len(raw))]))
		}
	}
	if last, _, ok := c.finish(); ok {
		lines = append(lines, last+"<no eol>")
	}
	return lines
}

func TestCleaner(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b<no eol>"}},
		{"empty", "", nil},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"progress bar keeps final state", "10%\r20%\r100%\n", []string{"100%"}},
		{"shorter overwrite keeps the rest like a terminal", "abcdef\rXY\n", []string{"XYcdef"}},
		{"cr then erase line", "downloading 10%\r\x1b[Kdone\n", []string{"done"}},
		{"erase whole line", "abc\x1b[2K\rxy\n", []string{"xy"}},
		{"erase to start", "abcd\x1b[1K\n", []string{"    "}},
		{"colours stripped", "\x1b[1;31mred\x1b[0m plain\n", []string{"red plain"}},
		{"csi with private marker", "\x1b[?25lhidden cursor\x1b[?25h\n", []string{"hidden cursor"}},
		{"osc title with bel", "\x1b]0;title\x07text\n", []string{"text"}},
		{"osc 8 hyperlink with st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", []string{"link"}},
		{"charset selection", "\x1b(Bok\n", []string{"ok"}},
		{"two-byte escape", "\x1b7a\x1b8\n", []string{"a"}},
		{"cursor column", "abcdef\x1b[3GX\n", []string{"abXdef"}},
		{"cursor back and forward", "abcd\x1b[2DX\x1b[CY\n", []string{"abXdY"}},
		{"backspace", "ab\bc\n", []string{"ac"}},
		{"tab kept", "a\tb\n", []string{"a\tb"}},
		{"bell and nul dropped", "a\x07\x00b\n", []string{"ab"}},
		{"utf8 overwrite", "héllo\rH\n", []string{"Héllo"}},
		{"utf8 multibyte kept", "日本語 ✓\n", []string{"日本語 ✓"}},
		{"invalid utf8 replaced", "a\xffb\xc3\n", []string{"a\uFFFDb\uFFFD"}},
		{"truncated utf8 at end", "ab\xe6\x97", []string{"ab\uFFFD<no eol>"}},
		{"newline inside csi is executed", "a\x1b[1\nb\n", []string{"a", "b"}},
		{"unterminated osc does not eat everything", "\x1b]" + strings.Repeat("x", maxStrBytes+10) + "\nafter\n",
			[]string{strings.Repeat("x", 10), "after"}},
		{"a stray osc in binary output ends with its line", "bin\x1b]junk\nnext line\n", []string{"bin", "next line"}},
		{"erased final line is no line", "abc\r\x1b[K", nil},
		{"long line cut: head and tail", strings.Repeat("a", MaxLineChars) + strings.Repeat("b", 5) + "END\n",
			[]string{strings.Repeat("a", MaxLineChars-TailChars) + lineCut(8) + strings.Repeat("a", TailChars-8) + "bbbbbEND"}},
		{"long non-ASCII line cut", strings.Repeat("é", MaxLineChars+1) + "Z\n",
			[]string{strings.Repeat("é", MaxLineChars-TailChars) + lineCut(2) + strings.Repeat("é", TailChars-1) + "Z"}},
		{"cursor column clamped", "\x1b[99999999Gx\n", []string{"x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range []int{0, 1, 3} {
				got := cleanAll(c.raw, n)
				if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
					t.Errorf("chunk %d: got %q, want %q", n, got, c.want)
				}
			}
		})
	}
}

func TestMessagesMatchConstants(t *testing.T) {
	if !strings.Contains(lineCut(7), "[7 characters cut]") {
		t.Errorf("lineCut(7) = %q does not give the count", lineCut(7))
	}
	if !strings.Contains(KilledSIGKILL, "after "+KillGrace.String()+" grace") {
		t.Errorf("KilledSIGKILL %q does not name KillGrace %s", KilledSIGKILL, KillGrace)
	}
}

func TestIsFailure(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"--- FAIL: TestX (0.00s)", true},
		{"panic: runtime error", true},
		{"Traceback (most recent call last):", true},
		{"exit status 1", true},
		{"TypeError: x is undefined", true},
		{"fatal: not a git repository", true},
		{"java.lang.NullPointerException", true},
		{"src/a.c:3: error: expected ';'", true},
		{"ERROR in ./src", true},
		{"ok  \tpkg\t0.1s", false},
		{"aaaaaaaaaa", false},
		{"panic without colon", false},
		{"", false},
		{"e", false},
	}
	for _, c := range cases {
		if got := isFailure(c.line); got != c.want {
			t.Errorf("isFailure(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

func TestTail(t *testing.T) {
	numbered := func(n int) []string {
		var s []string
		for i := 1; i <= n; i++ {
			s = append(s, strconv.Itoa(i))
		}
		return s
	}
	cases := []struct {
		name     string
		lines    []string
		open     string // unterminated last line
		from, to int
		wantFail []Line
	}{
		{"empty", nil, "", 0, 0, nil},
		{"fits", numbered(3), "", 1, 3, nil},
		{"open last line", numbered(3), "x", 1, 4, nil},
		{"line limit", numbered(TailLines + 500), "", 501, TailLines + 500, nil},
		{"byte limit", slices(300, strings.Repeat("b", 999)), "", 300 - TailBytes/1000 + 1, 300, nil},
		{"failure in cut part", append(append(numbered(10), "FAIL: TestX"), numbered(TailLines)...), "",
			12, TailLines + 11, []Line{{11, "FAIL: TestX"}}},
		{"failure in shown part is not repeated", append(numbered(TailLines), "FAIL: TestX"), "",
			2, TailLines + 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tl tail
			for _, l := range c.lines {
				tl.add(l, false)
			}
			out, from, to := tl.finish(c.open, false, c.open != "")
			if from != c.from || to != c.to {
				t.Errorf("shown %d-%d, want %d-%d", from, to, c.from, c.to)
			}
			if len(out) > TailBytes {
				t.Errorf("output %d bytes > TailBytes", len(out))
			}
			if n := strings.Count(out, "\n"); n > TailLines {
				t.Errorf("output %d lines > TailLines", n)
			}
			if c.from > 0 {
				want := strings.Join(append(c.lines, c.open)[c.from-1:], "\n")
				if c.open == "" {
					want = strings.Join(c.lines[c.from-1:], "\n") + "\n"
				}
				if out != want {
					t.Errorf("output %.60q..., want %.60q...", out, want)
				}
			}
			if len(tl.fail) != len(c.wantFail) || (len(c.wantFail) > 0 && tl.fail[0] != c.wantFail[0]) {
				t.Errorf("failures %v, want %v", tl.fail, c.wantFail)
			}
		})
	}
}

func slices(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTailKeepsFirstFailures(t *testing.T) {
	var tl tail
	for i := range 100 {
		tl.add("error "+strconv.Itoa(i), false)
	}
	for range TailLines {
		tl.add("ok", false)
	}
	tl.finish("", false, false)
	if len(tl.fail) != MaxFailureLines || tl.nFail != 100 {
		t.Fatalf("kept %d of %d failures, want %d of 100", len(tl.fail), tl.nFail, MaxFailureLines)
	}
	if tl.fail[0] != (Line{1, "error 0"}) || tl.fail[MaxFailureLines-1].N != MaxFailureLines {
		t.Errorf("failures %v", tl.fail)
	}
}

func TestSnapshot(t *testing.T) {
	var tl tail
	for i := 1; i <= 30; i++ {
		tl.add(strconv.Itoa(i), false)
	}
	got := tl.snapshot(ProgressLines, "partial")
	lines := strings.Split(got, "\n")
	if len(lines) != ProgressLines || lines[0] != "12" || lines[len(lines)-1] != "partial" {
		t.Errorf("snapshot %q", got)
	}
}

func TestBaseEnv(t *testing.T) {
	parent := []string{"PATH=/bin", "PAGER=less", "TERM=xterm-256color", "HOME=/h"}
	got := BaseEnv(parent)
	m := map[string][]string{}
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = append(m[k], v)
	}
	want := map[string]string{"PATH": "/bin", "HOME": "/h", "PAGER": "cat", "GIT_PAGER": "cat",
		"GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "EDITOR": "true", "VISUAL": "true",
		"AGENTLS": "1", "TERM": "dumb", "NO_COLOR": "1"}
	for k, v := range want {
		if len(m[k]) != 1 || m[k][0] != v {
			t.Errorf("%s = %v, want exactly [%s]", k, m[k], v)
		}
	}
	if parent[1] != "PAGER=less" {
		t.Error("BaseEnv changed its input")
	}
}

// Whatever bytes come before it, a line that starts after a newline is
// shown whole: no escape sequence, broken UTF-8 or control byte of the
// line before takes it (5000 random prefixes, fixed seed).
func TestCleanerKeepsTheLineAfterAnyBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 5000 {
		prefix := make([]byte, rng.IntN(300))
		for j := range prefix {
			prefix[j] = byte(rng.IntN(256))
			if rng.IntN(8) == 0 {
				const turns = "\x1b[]P\x07\\\r\n" // the bytes sequences turn on
				prefix[j] = turns[rng.IntN(len(turns))]
			}
		}
		lines := cleanAll(string(prefix)+"\nafter-line\n", 1+i%7)
		if len(lines) == 0 || lines[len(lines)-1] != "after-line" {
			t.Fatalf("prefix %q: lines end %q, want \"after-line\"", prefix, lines[max(0, len(lines)-2):])
		}
	}
}
