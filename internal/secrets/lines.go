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
	if !bytes.Contains(content, []byte("PRIVATE KEY")) {
		return nil
	}
	re := pemLines()
	pemBegin, pemEnd := re[0], re[1]
	var out [][2]int
	line, start := 1, 0
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		var l []byte
		if i < 0 {
			l, content = content, nil
		} else {
			l, content = content[:i], content[i+1:]
		}
		switch {
		case start == 0 && pemBegin.Match(l):
			start = line + 1
		case start != 0 && pemEnd.Match(l):
			if line > start {
				out = append(out, [2]int{start, line - 1})
			}
			start = 0
		}
		line++
	}
	if start != 0 && line-1 >= start {
		out = append(out, [2]int{start, line - 1})
	}
	return out
}
