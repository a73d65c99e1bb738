package textedit

import (
	"bytes"
	"sort"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// seg maps a run of normalized bytes [n, next seg's n) back to the original
// bytes [o, o+on). An identity segment is a verbatim copy (byte i of the
// run is original byte o+i); any other segment is one unit (a folded rune)
// whose normalized bytes all map to its whole original span.
type seg struct {
	n, o, on int
	ident    bool
}

// normText is a normalized view of an original text plus the map back to it.
// Bytes dropped by normalization (a CR before LF, trailing whitespace) have
// no segment, so a match never starts or ends inside them.
type normText struct {
	b    []byte
	segs []seg
	// tailStripped: trailing whitespace was removed from the final line
	// (only meaningful for patterns).
	tailStripped bool
}

func (t *normText) ident(off int, p []byte) {
	if len(p) == 0 {
		return
	}
	if k := len(t.segs) - 1; k >= 0 {
		s := &t.segs[k]
		if s.ident && s.o+s.on == off && s.n+s.on == len(t.b) {
			s.on += len(p)
			t.b = append(t.b, p...)
			return
		}
	}
	t.segs = append(t.segs, seg{n: len(t.b), o: off, on: len(p), ident: true})
	t.b = append(t.b, p...)
}

func (t *normText) unit(off, n int, out []byte) {
	if len(out) == 0 {
		return
	}
	t.segs = append(t.segs, seg{n: len(t.b), o: off, on: n})
	t.b = append(t.b, out...)
}

// find returns the segment holding normalized byte p.
func (t *normText) find(p int) seg {
	i := sort.Search(len(t.segs), func(i int) bool { return t.segs[i].n > p }) - 1
	return t.segs[i]
}

// origRange maps the normalized match [s, e) (e > s) to original offsets.
func (t *normText) origRange(s, e int) (int, int) {
	a := t.find(s)
	start := a.o
	if a.ident {
		start = a.o + s - a.n
	}
	z := t.find(e - 1)
	end := z.o + z.on
	if z.ident {
		end = z.o + e - 1 - z.n + 1
	}
	return start, end
}

// normalize builds the view of text used at a fuzzy level; each level
// includes the folding of the levels before it. Patterns (oldText) also lose
// trailing whitespace on their final line, which the caller compensates for
// by requiring such a match to end at a line end.
func normalize(text []byte, lvl Level) *normText {
	t := &normText{b: make([]byte, 0, len(text))}
	rank := levelRank(lvl)
	trailing, uni := rank >= levelRank(LevelTrailingWhitespace), rank >= levelRank(LevelUnicode)
	for off := 0; off < len(text); {
		nl := bytes.IndexByte(text[off:], '\n')
		end, next := len(text), len(text)
		if nl >= 0 {
			end, next = off+nl, off+nl+1
		}
		line := text[off:end]
		cut := len(line)
		switch {
		case trailing:
			cut = trailingSpaceStart(line, uni)
			if cut < len(line) && nl < 0 {
				t.tailStripped = true
			}
		case nl >= 0 && cut > 0 && line[cut-1] == '\r':
			cut--
		}
		if uni {
			foldInto(t, off, line[:cut])
		} else {
			t.ident(off, line[:cut])
		}
		if nl >= 0 {
			t.ident(end, text[end:next])
		}
		off = next
	}
	return t
}

// trailingSpaceStart returns where the trailing whitespace of line starts.
func trailingSpaceStart(line []byte, uni bool) int {
	i := len(line)
	for i > 0 {
		r, n := utf8.DecodeLastRune(line[:i])
		if !isHSpace(r, uni) {
			break
		}
		i -= n
	}
	return i
}

func isHSpace(r rune, uni bool) bool {
	switch r {
	case ' ', '\t', '\r', '\v', '\f':
		return true
	}
	return uni && r != utf8.RuneError && (unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) || isZeroWidth(r))
}

func isZeroWidth(r rune) bool {
	return r == '\u200B' || r == '\u200C' || r == '\u200D' || r == '\uFEFF'
}

// foldInto appends the Unicode-folded form of p (original offset off).
func foldInto(t *normText, off int, p []byte) {
	start := 0 // start of the pending identity run
	var buf [64]byte
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		out := foldRune(buf[:0], r, p[i:i+n])
		if bytes.Equal(out, p[i:i+n]) {
			i += n
			continue
		}
		t.ident(off+start, p[start:i])
		t.unit(off+i, n, out)
		i += n
		start = i
	}
	t.ident(off+start, p[start:])
}

// foldRune returns the comparison form of r: typographic punctuation and
// spaces become ASCII, zero-width characters vanish, everything else is
// NFKD-decomposed (full-width forms, ligatures, precomposed accents).
func foldRune(dst []byte, r rune, raw []byte) []byte {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u2035', '\uFF07':
		return append(dst, '\'')
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u2036', '\u00AB', '\u00BB', '\uFF02':
		return append(dst, '"')
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58', '\uFE63', '\uFF0D':
		return append(dst, '-')
	case '\u2026':
		return append(dst, "..."...)
	case utf8.RuneError:
		return append(dst, raw...)
	}
	if isZeroWidth(r) {
		return dst
	}
	if unicode.Is(unicode.Zs, r) {
		return append(dst, ' ')
	}
	return norm.NFKD.Append(dst, raw...)
}
