package builtin

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// Tools that show files line by line split a PEM private key across
// numbered lines, so the masker in governance never sees the block whole.
// These helpers mask the body lines themselves, keeping line numbers stable.

const keyLineMask = "[REDACTED:" + secrets.KindPrivateKey + "]"

// addKeyRedactions adds n masked key lines to r's redactions.
func addKeyRedactions(r *tools.Result, n int) {
	if n == 0 {
		return
	}
	c, _ := r.Details["redactions"].(map[string]int)
	c = tools.AddCountsTo(c, map[string]int{secrets.KindPrivateKey: n})
	r.SetDetail("redactions", c)
}

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

// keyTail reports whether a line shorter than minKeyishLen could be the
// last line of a key body: base64 only, with padding, a digit, + or /
// (which a word alone on a line rarely has). It only decides whether the
// file is read; the file's key blocks decide what is masked.
func keyTail(s string) bool {
	s = strings.TrimSuffix(s, "\r")
	if len(s) < 4 || len(s) >= minKeyishLen {
		return false
	}
	marked := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9', c == '+', c == '/', c == '=':
			marked = true
		default:
			return false
		}
	}
	return marked
}

// keyLike reports whether a grep line's text could be a key body line,
// alone or after a log prefix ("web-1  | MIIE…").
func keyLike(text string) bool {
	if keyish(text) || keyTail(text) {
		return true
	}
	last := text[strings.LastIndexAny(text, " \t")+1:]
	return len(last) < len(text) && (keyish(last) || keyTail(last))
}

// maskGrepKeyLines masks grep output lines that fall inside a private key
// block of their file. Only files with base64-looking output lines are read.
func maskGrepKeyLines(fsys ops.FS, text string) (string, int) {
	lines := strings.Split(text, "\n")
	ranges := map[string][][2]int{}
	n := 0
	for i, l := range lines {
		m := grepLine().FindStringSubmatch(l)
		if m == nil || m[2] != m[4] || !keyLike(m[5]) {
			continue
		}
		file := m[1]
		rs, ok := ranges[file]
		if !ok {
			if p, err := fsys.Resolve(file); err == nil {
				rs = fileKeyLines(fsys, p)
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

// fileKeyLines is secrets.PrivateKeyLines of the file p, read in one pass
// without holding it: grep may name a file of gigabytes.
func fileKeyLines(fsys ops.Files, p ops.Path) [][2]int {
	f, _, err := fsys.OpenRead(p)
	if f == nil || err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		r    secrets.KeyLineRanges
		head []byte // the line's start: BEGIN and END lines are short
		more bool   // head is not the whole line
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if !more {
			head = append(head[:0], chunk...)
		}
		if more = err == bufio.ErrBufferFull; more {
			continue
		}
		if len(head) > 0 {
			r.Add(bytes.TrimSuffix(head, []byte("\n")))
		}
		if err != nil {
			break
		}
	}
	return r.Ranges()
}

// keyRanges holds the private key body lines of a change's old and new
// text (1-based, inclusive), for masking its diff and TextEdits: a hunk
// that starts inside a key has no BEGIN line for the masker to see.
type keyRanges struct{ old, new [][2]int }

func changeKeyRanges(old, new []byte) (keyRanges, bool) {
	k := keyRanges{secrets.PrivateKeyLines(old), secrets.PrivateKeyLines(new)}
	return k, len(k.old)+len(k.new) > 0
}

func inRanges(rs [][2]int, line int) bool {
	for _, r := range rs {
		if r[0] <= line && line <= r[1] {
			return true
		}
	}
	return false
}

// maskLine replaces a line's text with the key mask, keeping its prefix
// (a diff's " ", "-", "+") and a final "\r".
func maskLine(prefix, line string) string {
	if strings.HasSuffix(line, "\r") {
		return prefix + keyLineMask + "\r"
	}
	return prefix + keyLineMask
}

// diff masks the lines of a unified diff that lie in a key body: context
// and removed lines by their old line numbers, added lines by their new.
func (k keyRanges) diff(diff string) string {
	lines := strings.Split(diff, "\n")
	oldLine, newLine, inHunk := 0, 0, false
	for i, l := range lines {
		if strings.HasPrefix(l, "@@ ") {
			var o, n int
			if _, err := fmt.Sscanf(hunkStarts(l), "-%d +%d", &o, &n); err == nil {
				oldLine, newLine, inHunk = o, n, true
			}
			continue
		}
		if !inHunk || l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			if inRanges(k.old, oldLine) {
				lines[i] = maskLine(" ", l[1:])
			}
			oldLine++
			newLine++
		case '-':
			if inRanges(k.old, oldLine) {
				lines[i] = maskLine("-", l[1:])
			}
			oldLine++
		case '+':
			if inRanges(k.new, newLine) {
				lines[i] = maskLine("+", l[1:])
			}
			newLine++
		}
	}
	return strings.Join(lines, "\n")
}

// hunkStarts turns "@@ -3,4 +3,5 @@ ..." into "-3 +3".
func hunkStarts(header string) string {
	f := strings.Fields(header)
	if len(f) < 3 {
		return ""
	}
	o, _, _ := strings.Cut(f[1], ",")
	n, _, _ := strings.Cut(f[2], ",")
	return o + " " + n
}

// edits masks the lines of each TextEdit's newText that land in a key body
// of the new text (edits are in order; each shifts the lines after it).
func (k keyRanges) edits(edits []textedit.TextEdit) []textedit.TextEdit {
	shift := 0
	out := make([]textedit.TextEdit, len(edits))
	for i, e := range edits {
		out[i] = e
		first := e.Range.Start.Line + shift + 1 // 1-based line of the new text where NewText starts
		parts := strings.Split(e.NewText, "\n")
		for j := range parts {
			if inRanges(k.new, first+j) && parts[j] != "" {
				parts[j] = maskLine("", parts[j])
			}
		}
		out[i].NewText = strings.Join(parts, "\n")
		shift += strings.Count(e.NewText, "\n") - (e.Range.End.Line - e.Range.Start.Line)
	}
	return out
}
