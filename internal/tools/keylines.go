package tools

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/secrets"
)

// Tools that show files line by line split a PEM private key across
// numbered lines, so the masker in governance never sees the block whole.
// These helpers mask the body lines themselves, keeping line numbers stable.

const keyLineMask = "[REDACTED:" + secrets.KindPrivateKey + "]"

// maskKeyLines replaces the body lines of private key blocks in text.
func maskKeyLines(text string) (string, int) {
	ranges := secrets.PrivateKeyLines([]byte(text))
	if len(ranges) == 0 {
		return text, 0
	}
	lines := strings.Split(text, "\n")
	n := 0
	for _, r := range ranges {
		for i := r[0]; i <= r[1] && i <= len(lines); i++ {
			cr := strings.HasSuffix(lines[i-1], "\r")
			lines[i-1] = keyLineMask
			if cr {
				lines[i-1] += "\r"
			}
			n++
		}
	}
	return strings.Join(lines, "\n"), n
}

// grepLine matches a grep output line: path:line: text or path-line- text.
// Compiled on first use, not at init: package init is paid by every process
// start, --version included.
var grepLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+?)([:-])(\d+)([:-]) (.*)$`)
})

// minKeyishLen is the shortest line keyish accepts.
const minKeyishLen = 32

// keyish reports whether a line could be part of a key body: at least
// minKeyishLen base64 characters and nothing else but an optional final
// "\r" (the pattern ^[A-Za-z0-9+/=]{32,}\r?$, without a regexp whose bounded
// repeat cost init time).
func keyish(s string) bool {
	s = strings.TrimSuffix(s, "\r")
	if len(s) < minKeyishLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}

// maskGrepKeyLines masks grep output lines that fall inside a private key
// block of their file. Only files with base64-looking output lines are read.
func maskGrepKeyLines(fsys ops.FS, text string) (string, int) {
	lines := strings.Split(text, "\n")
	ranges := map[string][][2]int{}
	n := 0
	for i, l := range lines {
		m := grepLine().FindStringSubmatch(l)
		if m == nil || m[2] != m[4] || !keyish(m[5]) {
			continue
		}
		file := m[1]
		rs, ok := ranges[file]
		if !ok {
			if p, err := fsys.Resolve(file); err == nil {
				if data, err := fsys.ReadFile(p); err == nil {
					rs = secrets.PrivateKeyLines(data)
				}
			}
			ranges[file] = rs
		}
		ln, _ := strconv.Atoi(m[3])
		for _, r := range rs {
			if ln >= r[0] && ln <= r[1] {
				lines[i] = m[1] + m[2] + m[3] + m[4] + " " + keyLineMask
				n++
				break
			}
		}
	}
	if n == 0 {
		return text, 0
	}
	return strings.Join(lines, "\n"), n
}
