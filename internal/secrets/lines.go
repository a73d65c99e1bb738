package secrets

import (
	"bytes"
	"regexp"
	"sync"
)

// pemLines are the BEGIN and END line patterns of a private key block,
// compiled on first use: most processes never see "PRIVATE KEY".
var pemLines = sync.OnceValue(func() [2]*regexp.Regexp {
	return [2]*regexp.Regexp{
		regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`),
		regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`),
	}
})

// PrivateKeyLines returns the 1-based line ranges [first, last] of the
// bodies of PEM private key blocks in content (the BEGIN and END lines are
// not included). Tools that show files line by line (read's numbered lines,
// grep's match lines) mask these lines one by one, since the block as a
// whole never reaches the masker in one piece. An unterminated block runs to
// the end of the content.
func PrivateKeyLines(content []byte) [][2]int {
	if !bytes.Contains(content, privateKey) {
		return nil
	}
	var r KeyLineRanges
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			r.Add(content)
			break
		}
		r.Add(content[:i])
		content = content[i+1:]
	}
	return r.Ranges()
}

// KeyLineRanges is PrivateKeyLines for a text fed line by line, for a
// reader that cannot hold it whole. Its zero value is ready.
type KeyLineRanges struct {
	t           KeyBlockTracker
	line, start int // the last line fed (1-based); the current body's first
	out         [][2]int
}

// Add takes the next line (without its newline).
func (r *KeyLineRanges) Add(line []byte) {
	r.line++
	switch body := r.t.Next(line); {
	case body && r.start == 0:
		r.start = r.line
	case !body && r.start != 0:
		r.out = append(r.out, [2]int{r.start, r.line - 1})
		r.start = 0
	}
}

// Ranges returns the body ranges of the lines fed so far; an unterminated
// block runs to the last line.
func (r *KeyLineRanges) Ranges() [][2]int {
	if r.start != 0 {
		return append(r.out, [2]int{r.start, r.line})
	}
	return r.out
}

var privateKey = []byte("PRIVATE KEY")

// KeyBlockTracker follows a text line by line, for a reader that cannot
// hold it whole (PrivateKeyLines is the same over a buffer). Its zero value
// is ready.
type KeyBlockTracker struct{ inside bool }

// Next takes the next line (without its newline) and reports whether it is
// a body line of a private key block.
func (t *KeyBlockTracker) Next(line []byte) bool {
	if !bytes.Contains(line, privateKey) {
		return t.inside // neither a BEGIN nor an END line
	}
	re := pemLines()
	switch {
	case !t.inside && re[0].Match(line):
		t.inside = true
		return false
	case t.inside && re[1].Match(line):
		t.inside = false
		return false
	}
	return t.inside
}
