package proc

import (
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// Escape-sequence parser states.
const (
	stNormal   = iota
	stEsc      // after ESC
	stEscInter // ESC followed by intermediate bytes (charset selection etc.)
	stCSI      // ESC [
	stStr      // OSC, DCS, SOS, PM, APC: until BEL or ESC \
	stStrEsc   // ESC inside a string
)

// Parser limits: a sequence longer than this is dropped and parsing resumes as text, so a
// stray ESC cannot swallow the rest of the output (a string sequence also ends at a
// line break).
const (
	maxCSIBytes = 64
	maxStrBytes = 4096
)

// TailChars is how many of the last characters of a line cut at MaxLineChars are
// kept after the cut: the end of a long line (the result of a one-line JSON dump, a
// minified file's last statement) is often what matters.
const TailChars = 500

// lineCut is the marker between the head and the kept tail of a cut line.
func lineCut(n int) string {
	return fmt.Sprintf(" … [%d characters cut] … ", n)
}

// cleaner turns a raw terminal byte stream into plain text lines: escape sequences
// removed, \r, \b and erase-in-line applied to the current line the way a terminal shows
// it, other control bytes dropped, invalid UTF-8 replaced by U+FFFD. It works byte by
// byte, so how the stream is chunked never changes the result.
type cleaner struct {
	onLine func(text string, cut bool)

	state   int
	seqLen  int  // bytes of the current escape sequence
	param   int  // first CSI parameter
	private bool // CSI with a private marker or more than one parameter: ignored

	utf  [utf8.UTFMax]byte
	utfN int

	// The line is UTF-8; while it is all ASCII a column is a byte offset, which keeps the
	// common case (appending, or \r redraws of ASCII progress bars) cheap.
	line   []byte
	cols   int  // characters in line
	ascii  bool // line holds only ASCII
	cursor int  // column
	cut    bool // characters past MaxLineChars were dropped
	// over holds the UTF-8 of the last characters dropped past MaxLineChars (at
	// least TailChars of them, bounded in bytes); dropped counts them all.
	over    []byte
	dropped int

	arena []byte // see intern
}

func (c *cleaner) write(p []byte) {
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch c.state {
		case stNormal:
			if b >= 0x20 && b < 0x7f && c.utfN == 0 && c.cursor == c.cols {
				// Fast path: append the run of printable ASCII at once.
				j := i + 1
				for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
					j++
				}
				n := min(j-i, MaxLineChars-c.cols)
				if n < j-i {
					c.cut = true
					c.drop(p[i+n : j])
				}
				if c.cols == 0 {
					c.ascii = true
				}
				c.line = append(c.line, p[i:i+n]...)
				c.cols += n
				c.cursor += n
				i = j - 1
				continue
			}
			c.text(b)
		case stEsc:
			c.seqLen++
			switch {
			case b == '[':
				c.state, c.param, c.private = stCSI, 0, false
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.state = stStr
			case b >= 0x20 && b <= 0x2f:
				c.state = stEscInter
			case b == 0x1b:
				c.seqLen = 0
			case b < 0x20:
				c.state = stNormal
				c.text(b) // controls are executed even inside a sequence
			default:
				c.state = stNormal // two-byte sequence such as ESC 7, ESC =
			}
		case stEscInter:
			switch {
			case b >= 0x20 && b <= 0x2f:
			case b < 0x20:
				c.state = stNormal
				c.text(b)
			default:
				c.state = stNormal
			}
		case stCSI:
			c.seqLen++
			switch {
			case b >= '0' && b <= '9':
				if c.param < 1<<20 {
					c.param = c.param*10 + int(b-'0')
				}
			case b >= 0x3a && b <= 0x3f: // ; : < = > ?
				c.private = true
			case b >= 0x20 && b <= 0x2f: // intermediates
			case b >= 0x40 && b <= 0x7e:
				c.state = stNormal
				if !c.private {
					c.csi(b)
				}
			case b == 0x1b:
				c.state, c.seqLen = stEsc, 0
			default:
				c.state = stNormal
				c.text(b)
			}
			if c.state == stCSI && c.seqLen > maxCSIBytes {
				c.state = stNormal
			}
		case stStr:
			c.seqLen++
			switch b {
			case 0x07:
				c.state = stNormal
			case 0x1b:
				c.state = stStrEsc
			case '\n':
				// No title or hyperlink holds a line break, and a stray
				// ESC ] in binary output must not take the lines after it
				// (a terminal would swallow them up to a BEL).
				c.state = stNormal
				c.text(b)
			}
			if c.state == stStr && c.seqLen > maxStrBytes {
				c.state = stNormal
			}
		case stStrEsc:
			if b == '\\' {
				c.state = stNormal
				continue
			}
			// An ESC that does not terminate the string starts a new sequence.
			c.state, c.seqLen = stEsc, 0
			i--
		}
	}
}

// text handles one byte outside escape sequences.
func (c *cleaner) text(b byte) {
	if c.utfN > 0 {
		if b&0xc0 == 0x80 {
			c.utf[c.utfN] = b
			c.utfN++
			if utf8.FullRune(c.utf[:c.utfN]) {
				r, _ := utf8.DecodeRune(c.utf[:c.utfN])
				c.utfN = 0
				c.put(r)
			}
			return
		}
		c.utfN = 0
		c.put(utf8.RuneError)
	}
	switch {
	case b >= 0x20 && b < 0x7f:
		c.put(rune(b))
	case b == '\n':
		c.endLine()
	case b == '\r':
		c.cursor = 0
	case b == '\t':
		c.put('\t')
	case b == '\b':
		if c.cursor > 0 {
			c.cursor--
		}
	case b == 0x1b:
		c.state, c.seqLen = stEsc, 0
	case b < 0x80:
		// other C0 controls and DEL: not shown by a terminal either
	case b >= 0xc2 && b <= 0xf4:
		c.utf[0] = b
		c.utfN = 1
	default:
		c.put(utf8.RuneError)
	}
}

// csi applies the few CSI sequences that change the current line; all others (colours,
// cursor up/down, screen modes) are dropped.
func (c *cleaner) csi(final byte) {
	n := c.param
	switch final {
	case 'K': // erase in line
		switch n {
		case 0:
			if c.cursor < c.cols {
				c.edit(func(rs []rune) []rune { return rs[:c.cursor] })
			}
		case 1:
			c.edit(func(rs []rune) []rune {
				for i := 0; i < c.cursor && i < len(rs); i++ {
					rs[i] = ' '
				}
				return rs
			})
		case 2:
			c.line, c.cols = c.line[:0], 0
		}
	case 'G': // cursor to column n (1-based)
		c.cursor = min(max(n, 1)-1, MaxLineChars)
	case 'C': // cursor forward
		c.cursor = min(c.cursor+max(n, 1), MaxLineChars)
	case 'D': // cursor back
		c.cursor = max(c.cursor-max(n, 1), 0)
	}
}

func (c *cleaner) put(r rune) {
	if c.cursor >= MaxLineChars {
		c.cut = true
		var b [utf8.UTFMax]byte
		c.drop(utf8.AppendRune(b[:0], r))
		return
	}
	if c.cols == 0 {
		c.ascii = true
	}
	switch {
	case c.cursor >= c.cols:
		for c.cols < c.cursor {
			c.line = append(c.line, ' ')
			c.cols++
		}
		c.line = utf8.AppendRune(c.line, r)
		c.cols++
		c.ascii = c.ascii && r < utf8.RuneSelf
	case c.ascii && r < utf8.RuneSelf:
		c.line[c.cursor] = byte(r)
	default:
		c.edit(func(rs []rune) []rune { rs[c.cursor] = r; return rs })
	}
	c.cursor++
}

// edit applies f to the line as characters: the slow path for non-ASCII overwrites.
func (c *cleaner) edit(f func([]rune) []rune) {
	rs := f([]rune(string(c.line)))
	c.line = c.line[:0]
	c.ascii = true
	for _, r := range rs {
		c.line = utf8.AppendRune(c.line, r)
		c.ascii = c.ascii && r < utf8.RuneSelf
	}
	c.cols = len(rs)
}

// drop records characters (whole UTF-8 sequences, ASCII in the fast path) written
// past MaxLineChars: counted, and the last ones kept for the tail.
func (c *cleaner) drop(b []byte) {
	c.dropped += utf8.RuneCount(b)
	const keep = TailChars * utf8.UTFMax
	if len(b) > keep {
		b = b[len(b)-keep:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	c.over = append(c.over, b...)
	if len(c.over) > 4*keep { // amortised: trim once in a while
		tail := c.over[len(c.over)-keep:]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		c.over = append(c.over[:0], tail...)
	}
}

// current returns the line being written, as shown so far. A line longer than
// MaxLineChars shows MaxLineChars characters: its first MaxLineChars-TailChars, a
// marker with the count cut, and its last TailChars.
func (c *cleaner) current() string {
	if !c.cut {
		return c.intern(c.line, "")
	}
	total := c.cols + c.dropped
	if total <= MaxLineChars { // a cursor jump past the end: nothing is lost
		return c.intern(c.line, string(c.over))
	}
	headEnd := charOffset(c.line, MaxLineChars-TailChars)
	rest := append(append([]byte(nil), c.line[headEnd:]...), c.over...)
	tail := rest[charOffsetFromEnd(rest, TailChars):]
	cut := total - utf8.RuneCount(c.line[:headEnd]) - utf8.RuneCount(tail)
	return c.intern(c.line[:headEnd], lineCut(cut)+string(tail))
}

// charOffset is the byte offset of the n-th character of b (len(b) when shorter).
func charOffset(b []byte, n int) int {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

// charOffsetFromEnd is the byte offset where the last n characters of b start.
func charOffsetFromEnd(b []byte, n int) int {
	i := len(b)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	return i
}

// arenaBytes is the size of the blocks line strings are carved from: one allocation per
// block instead of one per line, which matters for commands printing millions of lines.
const arenaBytes = 64 << 10

// intern returns b+suffix as a string stored in the arena. Arena bytes are never written
// again once a string points at them, so the strings are immutable as Go requires; a
// block is freed when no line in it is referenced any more.
func (c *cleaner) intern(b []byte, suffix string) string {
	n := len(b) + len(suffix)
	if n == 0 {
		return ""
	}
	if n > cap(c.arena)-len(c.arena) {
		c.arena = make([]byte, 0, max(arenaBytes, n))
	}
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	c.arena = append(c.arena, suffix...)
	return unsafe.String(&c.arena[start], n)
}

func (c *cleaner) endLine() {
	c.onLine(c.current(), c.cut)
	c.line, c.cols, c.cursor, c.cut = c.line[:0], 0, 0, false
	c.over, c.dropped = c.over[:0], 0
}

// finish flushes a pending partial character and returns the unterminated last line, if
// any (it is returned, not emitted), and whether it was cut.
func (c *cleaner) finish() (last string, cut, ok bool) {
	if c.utfN > 0 {
		c.utfN = 0
		c.put(utf8.RuneError)
	}
	if c.cols == 0 && !c.cut {
		return "", false, false
	}
	return c.current(), c.cut, true
}
