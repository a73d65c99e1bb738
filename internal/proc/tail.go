package proc

import (
	"strings"
	"unicode/utf8"
)

// failureWords mark lines worth rescuing from the cut part of a long log (compared
// case-sensitively; the capitalised forms cover "TypeError:", "Fatal error" and the like).
var failureWords = [...]string{
	"error", "Error", "ERROR", "FAIL", "panic:", "Traceback", "exit status",
	"fatal", "Fatal", "FATAL", "Exception",
}

// isFailure reports whether line contains one of failureWords. It looks only at positions
// holding a possible first byte, so ordinary lines cost one pass.
func isFailure(line string) bool {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case 'e', 'E', 'F', 'p', 'T', 'f':
			rest := line[i:]
			for _, w := range failureWords {
				if rest[0] == w[0] && strings.HasPrefix(rest, w) {
					return true
				}
			}
		}
	}
	return false
}

// tail keeps the last lines of the cleaned output within maxLines and maxBytes (TailLines
// and TailBytes when zero), and the failure lines among those it lets go. Memory: at most
// maxLines strings of at most MaxLineChars characters, and in practice maxBytes plus one
// line.
type tail struct {
	maxLines int
	maxBytes int
	ring     []string // grows to maxLines entries, then wraps
	start    int      // index of the oldest line in ring
	n        int      // lines in ring
	bytes    int      // bytes in ring, one newline per line included
	total    int      // lines seen
	cut      int      // lines that were cut at MaxLineChars
	fail     []Line
	nFail    int // failure lines seen in the cut part, including those not kept
}

// limits returns the line and byte bounds, defaults filled in.
func (t *tail) limits() (lines, bytes int) {
	lines, bytes = t.maxLines, t.maxBytes
	if lines <= 0 {
		lines = TailLines
	}
	if bytes <= 0 {
		bytes = TailBytes
	}
	return lines, bytes
}

// add appends a complete line and drops the oldest lines beyond the limits. One byte of
// slack is kept: at the end the last line may lack its newline and so fit one more line.
func (t *tail) add(text string, cut bool) {
	if cut {
		t.cut++
	}
	lines, bytes := t.limits()
	if t.n == lines {
		t.pop()
	}
	// Until the ring is full, start+n is its length: the new line is appended.
	if i := (t.start + t.n) % lines; i == len(t.ring) {
		t.ring = append(t.ring, text)
	} else {
		t.ring[i] = text
	}
	t.n++
	t.total++
	t.bytes += len(text) + 1
	for t.n > 1 && t.bytes > bytes+1 {
		t.pop()
	}
}

// pop drops the oldest line. Kept failure lines are cloned so they do not pin the
// cleaner's arena blocks.
func (t *tail) pop() {
	num := t.total - t.n + 1
	text := t.ring[t.start]
	t.ring[t.start] = ""
	lines, _ := t.limits()
	t.start = (t.start + 1) % lines
	t.n--
	t.bytes -= len(text) + 1
	if isFailure(text) {
		t.nFail++
		if len(t.fail) < MaxFailureLines {
			t.fail = append(t.fail, Line{N: num, Text: strings.Clone(cutBytes(text, MaxFailureLineBytes))})
		}
	}
}

// line returns the i-th line of the ring, oldest first.
func (t *tail) line(i int) string {
	lines, _ := t.limits()
	return t.ring[(t.start+i)%lines]
}

// finish adds the unterminated last line, if any, applies the exact limits, and returns
// the shown text with the 1-based range of the lines shown.
func (t *tail) finish(last string, lastCut, open bool) (out string, from, to int) {
	if open {
		t.add(last, lastCut)
	}
	size := func() int {
		if open {
			return t.bytes - 1
		}
		return t.bytes
	}
	_, bytes := t.limits()
	for t.n > 1 && size() > bytes {
		t.pop()
	}
	if t.n == 0 {
		return "", 0, 0
	}
	var b strings.Builder
	b.Grow(t.bytes)
	for i := range t.n {
		b.WriteString(t.line(i))
		if i < t.n-1 || !open {
			b.WriteByte('\n')
		}
	}
	return b.String(), t.total - t.n + 1, t.total
}

// snapshot returns the last n lines plus the partial line being written, for progress.
func (t *tail) snapshot(n int, partial string) string {
	k := min(n, t.n)
	if partial != "" && k == n {
		k--
	}
	var b strings.Builder
	for i := t.n - k; i < t.n; i++ {
		b.WriteString(t.line(i))
		b.WriteByte('\n')
	}
	b.WriteString(partial)
	return b.String()
}

// cutBytes shortens s to at most n bytes at a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
