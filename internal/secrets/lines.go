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
	var out [][2]int
	var t KeyBlockTracker
	line, start := 1, 0
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		var l []byte
		if i < 0 {
			l, content = content, nil
		} else {
			l, content = content[:i], content[i+1:]
		}
		switch body := t.Next(l); {
		case body && start == 0:
			start = line
		case !body && start != 0:
			out = append(out, [2]int{start, line - 1})
			start = 0
		}
		line++
	}
	if start != 0 {
		out = append(out, [2]int{start, line - 1})
	}
	return out
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
