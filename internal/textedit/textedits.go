package textedit

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Position is an LSP position: 0-based line, UTF-16 code units. Lines end
// at "\r\n", "\n" or a lone "\r", as LSP defines.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range, End exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextEdit is an LSP TextEdit.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// lineDiff returns line-aligned byte edits turning old into new. Common
// leading and trailing lines are cut before diffing, so a small change in a
// large file costs two scans, not a diff of the whole file.
func lineDiff(old, new []byte) []udiff.Edit {
	return lineDiffFrom(old, new, commonPrefix(old, new))
}

// lineDiffFrom is lineDiff given the length p of the common prefix.
func lineDiffFrom(old, new []byte, p int) []udiff.Edit {
	if p == len(old) && p == len(new) {
		return nil // equal
	}
	p = bytes.LastIndexByte(old[:p], '\n') + 1
	s := commonSuffix(old[p:], new[p:])
	// Start the common suffix at a line start of both texts.
	if q, r := len(old)-s, len(new)-s; s > 0 && !((q == 0 || old[q-1] == '\n') && (r == 0 || new[r-1] == '\n')) {
		tail := old[q:]
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			s = len(tail) - i - 1
		} else {
			s = 0
		}
	}
	mo, mn := old[p:len(old)-s], new[p:len(new)-s]
	if len(mo) == 0 || len(mn) == 0 {
		// Whole lines only added or only removed: one edit, without a line
		// diff of what is there (a new file of megabytes costs nothing).
		return []udiff.Edit{{Start: p, End: len(old) - s, New: string(mn)}}
	}
	edits := udiff.Lines(string(mo), string(mn))
	for i := range edits {
		edits[i].Start += p
		edits[i].End += p
	}
	return edits
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	// Compare in blocks: bytes.Equal is vectorized.
	const block = 4096
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const block = 4096
	for i+block <= n && bytes.Equal(a[len(a)-i-block:len(a)-i], b[len(b)-i-block:len(b)-i]) {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// TextEdits returns edits, with ranges in OLD text, that turn old into new:
// line-level hunks narrowed to the changed characters. Applying them (see
// ApplyTextEdits) to old reproduces new exactly when both have a UTF-8 BOM
// or neither has. A BOM is not text: editors keep it out of the document
// (VS Code, Neovim's 'bomb'), so positions are counted without it.
func TextEdits(old, new []byte) []TextEdit {
	old, new = bytes.TrimPrefix(old, []byte(bom)), bytes.TrimPrefix(new, []byte(bom))
	return textEdits(old, lineDiff(old, new))
}

// TextEdits is the package function of the two texts.
func (d Diff) TextEdits() []TextEdit {
	if bytes.HasPrefix(d.old, []byte(bom)) || bytes.HasPrefix(d.new, []byte(bom)) {
		// Positions are counted without the BOM: diff the texts after it.
		return TextEdits(d.old, d.new)
	}
	return textEdits(d.old, d.lines)
}

// textEdits narrows old's line edits to TextEdits.
func textEdits(old []byte, edits []udiff.Edit) []TextEdit {
	out := make([]TextEdit, 0, len(edits))
	pc := posCounter{text: old}
	for _, e := range edits {
		s, end, nt := narrow(old, e)
		out = append(out, TextEdit{Range: Range{Start: pc.pos(s), End: pc.pos(end)}, NewText: nt})
	}
	return out
}

// narrow trims the common prefix and suffix of a line edit, keeping its
// ends on rune boundaries and never between "\r" and "\n".
func narrow(old []byte, e udiff.Edit) (int, int, string) {
	o, n := old[e.Start:e.End], []byte(e.New)
	p := commonPrefix(o, n)
	for p > 0 && (p < len(o) && !utf8.RuneStart(o[p]) || p < len(n) && !utf8.RuneStart(n[p]) || o[p-1] == '\r' && p < len(o) && o[p] == '\n') {
		p--
	}
	o, n = o[p:], n[p:]
	s := commonSuffix(o, n)
	for s > 0 && (!utf8.RuneStart(o[len(o)-s]) || !utf8.RuneStart(n[len(n)-s]) || o[len(o)-s] == '\n' && len(o) > s && o[len(o)-s-1] == '\r') {
		s--
	}
	return e.Start + p, e.End - s, string(n[:len(n)-s])
}

// posCounter converts increasing byte offsets of text into LSP positions.
type posCounter struct {
	text      []byte
	off, line int
	lineStart int
}

func (c *posCounter) pos(off int) Position {
	if off < c.off {
		*c = posCounter{text: c.text}
	}
	seg := c.text[c.off:off]
	if nl := bytes.Count(seg, []byte("\n")); nl > 0 || bytes.IndexByte(seg, '\r') >= 0 {
		cr := bytes.Count(seg, []byte("\r"))
		crlf := bytes.Count(seg, []byte("\r\n"))
		// A "\r" ending the previous segment pairs with a leading "\n".
		if c.off > 0 && c.text[c.off-1] == '\r' && len(seg) > 0 && seg[0] == '\n' {
			crlf++
		}
		c.line += nl + cr - crlf
		if i := bytes.LastIndexAny(seg, "\r\n"); i >= 0 {
			c.lineStart = c.off + i + 1
		}
	}
	c.off = off
	return Position{Line: c.line, Character: utf16Len(c.text[c.lineStart:off])}
}

// utf16Len counts UTF-16 code units; an invalid byte counts as one (it
// decodes to U+FFFD).
func utf16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// lineStarts returns the byte offset of each LSP line of text.
func lineStarts(text []byte) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// ApplyTextEdits applies LSP edits (ranges in old, any order,
// non-overlapping) to old. A character past the end of its line means the
// line end, as LSP specifies. A UTF-8 BOM of old is kept and not counted,
// as in TextEdits.
func ApplyTextEdits(old []byte, edits []TextEdit) ([]byte, error) {
	if body, ok := bytes.CutPrefix(old, []byte(bom)); ok {
		out, err := applyTextEdits(body, edits)
		if err != nil {
			return nil, err
		}
		return append([]byte(bom), out...), nil
	}
	return applyTextEdits(old, edits)
}

func applyTextEdits(old []byte, edits []TextEdit) ([]byte, error) {
	starts := lineStarts(old)
	offset := func(p Position) (int, error) {
		if p.Line < 0 || p.Character < 0 || p.Line >= len(starts) {
			return 0, fmt.Errorf("position %d:%d outside the text (%d lines)", p.Line, p.Character, len(starts))
		}
		i, end := starts[p.Line], len(old)
		if p.Line+1 < len(starts) {
			end = starts[p.Line+1]
		}
		for end > i && (old[end-1] == '\n' || old[end-1] == '\r') {
			end--
		}
		for u := 0; i < end; {
			if u >= p.Character {
				break
			}
			r, size := utf8.DecodeRune(old[i:end])
			u++
			if r >= 0x10000 {
				u++
			}
			i += size
		}
		return i, nil
	}
	type bedit struct {
		start, end int
		text       string
	}
	bs := make([]bedit, 0, len(edits))
	for k, e := range edits {
		s, err := offset(e.Range.Start)
		if err != nil {
			return nil, fmt.Errorf("edit %d start: %w", k, err)
		}
		t, err := offset(e.Range.End)
		if err != nil {
			return nil, fmt.Errorf("edit %d end: %w", k, err)
		}
		if t < s {
			return nil, fmt.Errorf("edit %d: range end before start", k)
		}
		bs = append(bs, bedit{s, t, e.NewText})
	}
	slices.SortStableFunc(bs, func(a, b bedit) int { return a.start - b.start })
	out := make([]byte, 0, len(old))
	last := 0
	for k, e := range bs {
		if e.start < last {
			return nil, fmt.Errorf("edits overlap at byte %d (edit %d after sorting)", e.start, k)
		}
		out = append(out, old[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, old[last:]...), nil
}
