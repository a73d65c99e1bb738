package textedit

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// TabWidth is the column width of a tab when indentation must be converted
// between tabs and spaces.
const TabWidth = 4

// fileLine is one line of a body: [start, end) is its content without the
// terminator, next is where the following line starts.
type fileLine struct{ start, end, next int }

// splitFileLines splits b at '\n'; a final line without terminator counts,
// the empty piece after a final '\n' does not.
func splitFileLines(b []byte) []fileLine {
	lines := make([]fileLine, 0, bytes.Count(b, []byte("\n"))+1)
	for off := 0; off < len(b); {
		nl := bytes.IndexByte(b[off:], '\n')
		if nl < 0 {
			lines = append(lines, fileLine{off, len(b), len(b)})
			break
		}
		end := off + nl
		if end > off && b[end-1] == '\r' {
			end--
		}
		lines = append(lines, fileLine{off, end, off + nl + 1})
		off += nl + 1
	}
	return lines
}

// patternLines splits an oldText into lines (without terminators) and says
// whether it ended with a newline.
func patternLines(pat string) ([]string, bool) {
	endsNL := strings.HasSuffix(pat, "\n")
	pat = strings.TrimSuffix(pat, "\n")
	lines := strings.Split(pat, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, endsNL
}

// lineKey is the comparison form of a line at the indentation level:
// Unicode-folded, leading and trailing whitespace removed.
func lineKey(line []byte) string {
	ascii := true
	for _, c := range line {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		line = normalize(line, LevelUnicode).b
	}
	return string(bytes.Trim(line, " \t\r\v\f"))
}

func fileKeys(body []byte, lines []fileLine) []string {
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = lineKey(body[l.start:l.end])
	}
	return keys
}

// findLines matches pat as whole lines ignoring indentation (and everything
// the stricter levels ignore).
func findLines(body []byte, pat string) [][2]int {
	pl, endsNL := patternLines(pat)
	pk := make([]string, len(pl))
	blank := true
	for i, l := range pl {
		pk[i] = lineKey([]byte(l))
		blank = blank && pk[i] == ""
	}
	if blank {
		return nil
	}
	lines := splitFileLines(body)
	keys := fileKeys(body, lines)
	var occ [][2]int
	for i := 0; i+len(pk) <= len(keys); i++ {
		ok := true
		for j := range pk {
			if keys[i+j] != pk[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		last := lines[i+len(pk)-1]
		end := last.end
		if endsNL {
			end = last.next
		}
		occ = append(occ, [2]int{lines[i].start, end})
	}
	return occ
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

func indentWidth(s string) int {
	w := 0
	for _, c := range s {
		if c == '\t' {
			w += TabWidth - w%TabWidth
		} else {
			w++
		}
	}
	return w
}

// reindent moves newText from the oldText's indentation to the indentation
// of the file lines it matched (starting at body offset start). An indent
// that appears in oldText maps to the file's indent on the same line; other
// indents keep their offset from the first line's indent.
func reindent(body []byte, start int, pat, newText string) string {
	pl, _ := patternLines(pat)
	fl := splitFileLines(body[start:])
	indents := map[string]string{}
	var pairs [][2]string // indents in oldText order
	var p0, f0 string
	first := true
	useTabs := false
	for j, l := range pl {
		if j >= len(fl) || strings.TrimSpace(l) == "" {
			continue
		}
		fi := leadingSpace(string(body[start+fl[j].start : start+fl[j].end]))
		pi := leadingSpace(l)
		useTabs = useTabs || strings.Contains(fi, "\t")
		if _, ok := indents[pi]; !ok {
			indents[pi] = fi
			pairs = append(pairs, [2]string{pi, fi})
		}
		if first {
			p0, f0, first = pi, fi, false
		}
	}
	// The file may use another indent unit than the model (tabs for two
	// spaces): take the ratio from the first oldText line indented
	// differently from the first one.
	num, den := 1, 1
	for _, pf := range pairs {
		dp, df := indentWidth(pf[0])-indentWidth(p0), indentWidth(pf[1])-indentWidth(f0)
		if dp != 0 && df != 0 && (dp > 0) == (df > 0) {
			num, den = df, dp
			break
		}
	}
	unit := " "
	if useTabs {
		unit = "\t"
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(newText, "\n") {
		if strings.TrimSpace(line) == "" {
			b.WriteString(line)
			continue
		}
		ind := leadingSpace(line)
		rest := line[len(ind):]
		switch m, ok := indents[ind]; {
		case ok:
			b.WriteString(m)
		case strings.HasPrefix(ind, p0) && strings.Trim(ind[len(p0):], unit) == "":
			b.WriteString(f0 + ind[len(p0):])
		default:
			w := max(indentWidth(f0)+(indentWidth(ind)-indentWidth(p0))*num/den, 0)
			if useTabs {
				b.WriteString(strings.Repeat("\t", w/TabWidth) + strings.Repeat(" ", w%TabWidth))
			} else {
				b.WriteString(strings.Repeat(" ", w))
			}
		}
		b.WriteString(rest)
	}
	return b.String()
}

// Limits of the closest-region excerpt in a notFound message.
const (
	MaxClosestLines   = 12  // lines of the file shown
	MaxShownLineRunes = 160 // characters shown per line before "…"
	// MinSimilarity is the bigram similarity (percent) a single line needs
	// to be offered as the closest region when no line matches outright.
	MinSimilarity = 50
)

func notFound(body []byte, pat string, idx int) error {
	head := fmt.Sprintf("oldText of edit %d not found", idx+1)
	if len(body) == 0 {
		return &MatchError{Kind: KindNotFound, EditIndex: idx, marked: true, Message: head + ": the file is empty (use {{write}} to give it content)."}
	}
	pl, _ := patternLines(pat)
	lines := splitFileLines(body)
	c, ok := closest(body, lines, pl)
	if !ok {
		return &MatchError{Kind: KindNotFound, EditIndex: idx, Message: head +
			"; no similar region either. Read the file again and copy oldText exactly from it (whitespace and line endings count)."}
	}
	n := min(len(pl), len(lines)-c, MaxClosestLines)
	var b strings.Builder
	fmt.Fprintf(&b, "%s. The closest region is line", head)
	if n == 1 {
		fmt.Fprintf(&b, " %d", c+1)
	} else {
		fmt.Fprintf(&b, "s %d-%d", c+1, c+n)
	}
	b.WriteString(" (· space, → tab, ␍ carriage return, ⍽ other invisible space):\n")
	width := len(fmt.Sprint(c + n))
	for i := c; i < c+n; i++ {
		l := lines[i]
		end := l.next
		if end > l.end && body[end-1] == '\n' {
			end-- // show the CR, not the LF
		}
		fmt.Fprintf(&b, "%*d│%s\n", width, i+1, visible(body[l.start:end]))
	}
	b.WriteString("Read the file again and copy oldText exactly from it (whitespace and line endings count).")
	return &MatchError{Kind: KindNotFound, EditIndex: idx, Message: b.String()}
}

// visible renders a line with its whitespace made visible.
func visible(p []byte) string {
	var b strings.Builder
	n := 0
	for len(p) > 0 {
		if n == MaxShownLineRunes {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRune(p)
		switch {
		case r == ' ':
			b.WriteString("·")
		case r == '\t':
			b.WriteString("→")
		case r == '\r':
			b.WriteString("␍")
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, p[0])
		case isHSpace(r, true):
			b.WriteString("⍽")
		default:
			b.Write(p[:size])
		}
		p = p[size:]
		n++
	}
	return b.String()
}

// closest finds the 0-based first line of the file region most like the
// pattern lines: the window sharing the most (length-weighted) identical
// lines, else the line most similar to the pattern's first non-blank line.
func closest(body []byte, lines []fileLine, pl []string) (int, bool) {
	if len(lines) == 0 {
		return 0, false
	}
	keys := fileKeys(body, lines)
	at := map[string][]int{}
	first, firstKey := -1, ""
	for j, l := range pl {
		k := lineKey([]byte(l))
		if k == "" {
			continue
		}
		if first < 0 {
			first, firstKey = j, k
		}
		at[k] = append(at[k], j)
	}
	if first < 0 {
		return 0, false
	}
	score := map[int]int{}
	best, bestScore := 0, 0
	for i, k := range keys {
		for _, j := range at[k] {
			c := max(i-j, 0)
			score[c] += len(k)
			if s := score[c]; s > bestScore || s == bestScore && c < best {
				best, bestScore = c, s
			}
		}
	}
	if bestScore > 0 {
		return best, true
	}
	want := bigrams(firstKey)
	bestSim := 0
	for i, k := range keys {
		if s := dice(want, k); s > bestSim {
			best, bestSim = i, s
		}
	}
	return max(best-first, 0), bestSim >= MinSimilarity
}

func bigrams(s string) map[string]int {
	m := map[string]int{}
	for i := 0; i+2 <= len(s); i++ {
		m[s[i:i+2]]++
	}
	return m
}

// dice is the Sørensen–Dice bigram similarity of s to want, in percent.
func dice(want map[string]int, s string) int {
	total := 0
	for _, n := range want {
		total += n
	}
	if total == 0 || len(s) < 2 {
		return 0
	}
	used := map[string]int{}
	common := 0
	for i := 0; i+2 <= len(s); i++ {
		g := s[i : i+2]
		if used[g] < want[g] {
			used[g]++
			common++
		}
	}
	return 200 * common / (total + len(s) - 1)
}
