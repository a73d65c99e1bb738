package tools

import (
	"regexp"
	"strconv"
	"strings"

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
var grepLine = regexp.MustCompile(`^(.+?)([:-])(\d+)([:-]) (.*)$`)

// keyish is a line that could be part of a key body: long base64.
var keyish = regexp.MustCompile(`^[A-Za-z0-9+/=]{32,}\r?$`)

// maskGrepKeyLines masks grep output lines that fall inside a private key
// block of their file. Only files with base64-looking output lines are read.
func maskGrepKeyLines(fsys ops.FS, text string) (string, int) {
	lines := strings.Split(text, "\n")
	ranges := map[string][][2]int{}
	n := 0
	for i, l := range lines {
		m := grepLine.FindStringSubmatch(l)
		if m == nil || m[2] != m[4] || !keyish.MatchString(m[5]) {
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
