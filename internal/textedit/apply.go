package textedit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/internal/mention"
)

// Edit is one replacement requested by the model.
type Edit struct {
	OldText, NewText string
	// ReplaceAll replaces every (non-overlapping) occurrence instead of
	// requiring a unique one.
	ReplaceAll bool
}

// Level names how loosely an oldText had to be compared to be found.
type Level string

// The matching ladder, strictest first.
const (
	LevelExact              Level = "exact"
	LevelLineEndings        Level = "lineEndings"
	LevelTrailingWhitespace Level = "trailingWhitespace"
	LevelUnicode            Level = "unicode"
	LevelIndentation        Level = "indentation"
)

// Ladder returns the matching levels in the order they are tried.
func Ladder() [5]Level {
	return [...]Level{LevelExact, LevelLineEndings, LevelTrailingWhitespace, LevelUnicode, LevelIndentation}
}

func levelRank(l Level) int {
	for i, x := range Ladder() {
		if x == l {
			return i
		}
	}
	return -1
}

// Replacement is one spliced region.
type Replacement struct {
	// StartLine and EndLine are 1-based lines of the OLD file covered by the
	// replaced text (an empty range reports its line as both).
	StartLine, EndLine int
	// NewStartLine and NewEndLine are the lines of the NEW file covered by
	// the text put in (a deletion reports the line it closed up at as
	// both): where the model finds the change when it reads again.
	NewStartLine, NewEndLine int
	// EditIndex is the 0-based index of the edit that produced it.
	EditIndex int
	Level     Level
}

// Result is the outcome of Apply.
type Result struct {
	New          []byte
	Replacements []Replacement // sorted by position
	Level        Level         // the loosest level any edit needed
	Count        int           // len(Replacements)
}

// MatchError kinds.
const (
	KindNotFound  = "notFound"
	KindAmbiguous = "ambiguous"
	KindOverlap   = "overlap"
	KindNoChange  = "noChange"
	KindEmpty     = "empty"
)

// MaxListedOccurrences caps the line numbers listed for an ambiguous match.
const MaxListedOccurrences = 20

// MatchError explains why a set of edits could not be applied.
type MatchError struct {
	Kind string
	// EditIndex is the 0-based index of the failing edit (-1 when no single
	// edit is at fault); messages number edits from 1.
	EditIndex int
	// Message is complete, actionable text for the model. A message that
	// sends the model to another tool marks it {{write}} (see
	// mention.Prefix) and sets marked; such a message quotes nothing from
	// the file, so rendering its marks cannot touch data.
	Message string
	marked  bool
}

func (e *MatchError) Error() string { return e.MessageIn("", "") }

// MessageIn returns Message with the file named (a notFound message reads
// "oldText of edit N not found in <path>...") and the tools it points to
// named as the model sees them.
func (e *MatchError) MessageIn(path string, names mention.Prefix) string {
	msg := e.Message
	if e.marked {
		msg = names.Render(msg)
	}
	if e.Kind != KindNotFound || path == "" {
		return msg
	}
	return strings.Replace(msg, " not found", " not found in "+path, 1)
}

const bom = "\xEF\xBB\xBF"

// span is a byte range of the body (the file without its BOM) to replace.
type span struct {
	start, end int
	newText    string
	edit       int
	level      Level
}

// Apply matches every edit against the ORIGINAL content (not the result of
// earlier edits), requires each match to be unique unless ReplaceAll, rejects
// overlapping edits, and applies all of them or none. Errors are *MatchError.
func Apply(old []byte, edits []Edit) (Result, error) {
	if len(edits) == 0 {
		return Result{}, &MatchError{Kind: KindEmpty, EditIndex: -1, Message: "no edits given: pass at least one {oldText, newText}"}
	}
	body, hasBOM := bytes.CutPrefix(old, []byte(bom))
	eol := detectEOL(body)
	var spans []span
	for i, e := range edits {
		// A BOM alone is empty too: the BOM is not part of the text matched.
		if strings.TrimPrefix(e.OldText, bom) == "" {
			return Result{}, &MatchError{Kind: KindEmpty, EditIndex: i, marked: true, Message: fmt.Sprintf(
				"oldText of edit %d is empty; oldText must be text copied from the file (use {{write}} to create or replace a whole file)", i+1)}
		}
		ss, err := match(body, e, i, eol)
		if err != nil {
			return Result{}, err
		}
		spans = append(spans, ss...)
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	for k := 1; k < len(spans); k++ {
		a, b := spans[k-1], spans[k]
		if b.start < a.end {
			x, y := min(a.edit, b.edit), max(a.edit, b.edit)
			what := fmt.Sprintf("edits %d and %d overlap", x+1, y+1)
			if x == y {
				what = fmt.Sprintf("edit %d overlaps itself", x+1)
			}
			ra, rb := lineRange(body, a.start, a.end), lineRange(body, b.start, b.end)
			where := "lines " + ra + " and " + rb
			switch {
			case ra == rb && strings.Contains(ra, "-"):
				where = "both on lines " + ra
			case ra == rb:
				where = "both on line " + ra
			}
			return Result{}, &MatchError{Kind: KindOverlap, EditIndex: y, Message: fmt.Sprintf(
				"%s (%s of the original file); every edit is matched against the original file, so each must change a separate region: merge them into one edit",
				what, where)}
		}
	}

	out := make([]byte, 0, len(old)+64)
	if hasBOM {
		out = append(out, bom...)
	}
	last := 0
	newAt := make([][2]int, len(spans)) // where each span's new text sits in out
	for i, s := range spans {
		out = append(out, body[last:s.start]...)
		newAt[i][0] = len(out)
		out = append(out, s.newText...)
		newAt[i][1] = len(out)
		last = s.end
	}
	out = append(out, body[last:]...)
	out = keepFinalNewline(out, len(old)-len(body), body, eol)
	if bytes.Equal(out, old) {
		return Result{}, &MatchError{Kind: KindNoChange, EditIndex: -1, Message: "no change: the edits leave the file identical"}
	}

	res := Result{New: out, Level: LevelExact, Count: len(spans)}
	lc := lineCounter{text: body}
	nc := lineCounter{text: out}
	for i, s := range spans {
		r := Replacement{StartLine: lc.line(s.start), EditIndex: s.edit, Level: s.level}
		r.EndLine = r.StartLine
		if s.end > s.start {
			r.EndLine = lc.line(s.end - 1)
		}
		// out starts with the BOM when there is one; it holds no newline.
		r.NewStartLine = nc.line(min(newAt[i][0], len(out)))
		r.NewEndLine = r.NewStartLine
		if end := min(newAt[i][1], len(out)); end > newAt[i][0] {
			r.NewEndLine = nc.line(end - 1)
		}
		res.Replacements = append(res.Replacements, r)
		if levelRank(s.level) > levelRank(res.Level) {
			res.Level = s.level
		}
	}
	return res, nil
}

// keepFinalNewline restores the old body's final-newline state on the new
// content (which starts with bomLen bytes of BOM).
func keepFinalNewline(out []byte, bomLen int, oldBody []byte, eol string) []byte {
	newBody := out[bomLen:]
	oldNL := bytes.HasSuffix(oldBody, []byte("\n"))
	newNL := bytes.HasSuffix(newBody, []byte("\n"))
	switch {
	case oldNL && !newNL && len(newBody) > 0:
		return append(out, eol...)
	case !oldNL && newNL && len(oldBody) > 0:
		out = out[:len(out)-1]
		if bytes.HasSuffix(out[bomLen:], []byte("\r")) {
			out = out[:len(out)-1]
		}
	}
	return out
}

// detectEOL returns the file's dominant line ending.
func detectEOL(b []byte) string {
	crlf := bytes.Count(b, []byte("\r\n"))
	if crlf > 0 && crlf >= bytes.Count(b, []byte("\n"))-crlf {
		return "\r\n"
	}
	return "\n"
}

// toEOL rewrites the line endings of s to eol.
func toEOL(s, eol string) string {
	if eol == "\r\n" {
		if !strings.Contains(s, "\n") {
			return s
		}
		return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// match runs the ladder for one edit and returns its spans.
func match(body []byte, e Edit, idx int, eol string) ([]span, error) {
	pat := strings.TrimPrefix(e.OldText, bom)
	newText := toEOL(strings.TrimPrefix(e.NewText, bom), eol)
	hasCR := strings.Contains(pat, "\r") || bytes.IndexByte(body, '\r') >= 0
	for _, lvl := range Ladder() {
		var occ [][2]int
		switch {
		case lvl == LevelIndentation:
			occ = findLines(body, pat)
		case lvl == LevelLineEndings && !hasCR:
			continue // nothing to normalize: exact already decided
		default:
			occ = findAt(body, pat, lvl)
		}
		if len(occ) == 0 {
			continue
		}
		if len(occ) > 1 && !e.ReplaceAll {
			return nil, ambiguous(body, occ, idx, lvl)
		}
		if e.ReplaceAll {
			occ = nonOverlapping(occ)
		}
		spans := make([]span, len(occ))
		for k, o := range occ {
			nt := newText
			if lvl == LevelIndentation {
				nt = reindent(body, o[0], pat, newText)
			}
			spans[k] = span{start: o[0], end: o[1], newText: nt, edit: idx, level: lvl}
		}
		return spans, nil
	}
	return nil, notFound(body, pat, idx)
}

// findAt returns every (possibly overlapping) occurrence of pat in body at a
// non-indentation level, as original byte ranges.
func findAt(body []byte, pat string, lvl Level) [][2]int {
	if lvl == LevelExact {
		var occ [][2]int
		p := []byte(pat)
		for i := 0; ; {
			j := bytes.Index(body[i:], p)
			if j < 0 {
				return occ
			}
			occ = append(occ, [2]int{i + j, i + j + len(p)})
			i += j + 1
		}
	}
	np := normalize([]byte(pat), lvl)
	if len(np.b) == 0 {
		return nil // whitespace only: it would match everywhere
	}
	nb := normalize(body, lvl)
	var occ [][2]int
	for i := 0; ; {
		j := bytes.Index(nb.b[i:], np.b)
		if j < 0 {
			return occ
		}
		s, e := i+j, i+j+len(np.b)
		i = s + 1
		if np.tailStripped && e < len(nb.b) && nb.b[e] != '\n' {
			continue // the pattern ended in whitespace: it must end a line
		}
		os, oe := nb.origRange(s, e)
		if np.tailStripped {
			// Take the line's trailing whitespace too, as the pattern did.
			oe += trailingSpaceLen(body[oe:], levelRank(lvl) >= levelRank(LevelUnicode))
		}
		occ = append(occ, [2]int{os, oe})
	}
}

// trailingSpaceLen returns the length of the horizontal whitespace at the
// start of b if it runs to a line end (or the end of b), else 0.
func trailingSpaceLen(b []byte, uni bool) int {
	nl := bytes.IndexByte(b, '\n')
	line := b
	if nl >= 0 {
		line = b[:nl]
	}
	if trailingSpaceStart(line, uni) == 0 {
		if nl >= 0 && len(line) > 0 && line[len(line)-1] == '\r' {
			return len(line) - 1
		}
		return len(line)
	}
	return 0
}

func nonOverlapping(occ [][2]int) [][2]int {
	out := occ[:0:0]
	end := -1
	for _, o := range occ {
		if o[0] >= end {
			out = append(out, o)
			end = o[1]
		}
	}
	return out
}

func levelPhrase(l Level) string {
	switch l {
	case LevelLineEndings:
		return " when line endings are ignored"
	case LevelTrailingWhitespace:
		return " when trailing whitespace is ignored"
	case LevelUnicode:
		return " when Unicode quotes, dashes and spaces are folded"
	case LevelIndentation:
		return " when indentation is ignored"
	}
	return ""
}

func ambiguous(body []byte, occ [][2]int, idx int, lvl Level) error {
	// One entry per line, with a count where a line holds several.
	lc := lineCounter{text: body}
	var lines []string
	last, n := 0, 0
	flush := func() {
		if n > 1 {
			lines = append(lines, fmt.Sprintf("%d (%d times)", last, n))
		} else if n == 1 {
			lines = append(lines, fmt.Sprint(last))
		}
	}
	for _, o := range occ {
		l := lc.line(o[0])
		if l == last {
			n++
			continue
		}
		flush()
		if len(lines) == MaxListedOccurrences {
			n = 0
			lines = append(lines, "…")
			break
		}
		last, n = l, 1
	}
	flush()
	where := "lines " + strings.Join(lines, ", ")
	if len(lines) == 1 {
		where = fmt.Sprintf("all on line %d", last)
	}
	return &MatchError{Kind: KindAmbiguous, EditIndex: idx, Message: fmt.Sprintf(
		"oldText of edit %d matches %d times%s (%s); add context or set replaceAll: true (surrounding lines in oldText make it unique)",
		idx+1, len(occ), levelPhrase(lvl), where)}
}

// lineRange renders the 1-based lines covered by body[s:e].
func lineRange(body []byte, s, e int) string {
	a := bytes.Count(body[:s], []byte("\n")) + 1
	b := a
	if e > s {
		b = a + bytes.Count(body[s:e-1], []byte("\n"))
	}
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// lineCounter turns increasing byte offsets into 1-based line numbers in
// one pass over the text.
type lineCounter struct {
	text    []byte
	off, nl int
}

func (c *lineCounter) line(off int) int {
	if off < c.off {
		c.off, c.nl = 0, 0
	}
	c.nl += bytes.Count(c.text[c.off:off], []byte("\n"))
	c.off = off
	return c.nl + 1
}
