package search

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
)

// line is one output line of a file: a match or a context line.
type line struct {
	n     int
	text  string // valid UTF-8, without the line terminator
	match bool
}

// fileHits is what a backend found in one file, lines in ascending order.
type fileHits struct {
	path    string // slash path relative to the root (with Engine.Prefix once collected)
	lines   []line
	matches int
	rank    int // the engine's place in a multi-folder search: files sort by rank, then path
	// unreadable is why the file could not be read; nil when it was.
	unreadable error
	// cutLine is the first line searched in part only (too long); 0 = none.
	cutLine int
}

// compareHits orders files as the output lists them.
func compareHits(a, b fileHits) int {
	if a.rank != b.rank {
		return a.rank - b.rank
	}
	return strings.Compare(a.path, b.path)
}

// collector gathers per-file results from a backend in any order and keeps
// only what can still be shown: the files holding the first limit+1
// matches in path order. The +1 tells render whether the limit was hit.
type collector struct {
	limit    int
	files    []fileHits
	kept     int  // matches in files
	seen     int  // matches added, kept or not
	limitHit bool // a file beyond the first limit+1 matches was dropped
	cutoff   string
	hasCut   bool // files sorting after cutoff cannot be shown
	// unreadable tallies the directories and files walked past unread.
	unreadable ignore.Unreadable
	// denied counts the files Engine.Visible refused, left unread.
	denied int
}

func newCollector(limit int) *collector { return &collector{limit: limit} }

// beyond reports whether a file at path p can no longer be shown.
func (c *collector) beyond(p string) bool { return c.hasCut && p > c.cutoff }

func (c *collector) add(f fileHits) {
	if f.unreadable != nil {
		c.unreadable.Add(f.path, f.unreadable)
		return
	}
	if f.cutLine > 0 {
		c.unreadable.AddReason(f.path, fmt.Sprintf("line %d is longer than %d MiB, and only its first %d MiB were searched", f.cutLine, maxLineSize>>20, maxLineSize>>20))
	}
	c.seen += f.matches
	if f.matches == 0 || c.beyond(f.path) {
		if f.matches > 0 {
			c.limitHit = true
		}
		return
	}
	c.files = append(c.files, f)
	c.kept += f.matches
	// Prune lazily so that memory stays near a few times the limit.
	if c.kept > 4*(c.limit+1) {
		c.prune()
	}
}

// merge adds what another collector of the same limit gathered (one rg
// run of a batch): its files as if added here, its matches seen but not
// kept, and what it could not read.
func (c *collector) merge(o *collector) {
	kept := 0
	for _, f := range o.files {
		kept += f.matches
		c.add(f)
	}
	c.seen += o.seen - kept
	c.limitHit = c.limitHit || o.limitHit
	c.unreadable.Merge(o.unreadable)
	c.denied += o.denied
}

// prune sorts the files and drops those after the one holding match limit+1.
func (c *collector) prune() {
	slices.SortFunc(c.files, func(a, b fileHits) int { return strings.Compare(a.path, b.path) })
	sum := 0
	for i := range c.files {
		sum += c.files[i].matches
		if sum > c.limit {
			if i+1 < len(c.files) {
				c.limitHit = true
			}
			for j := i + 1; j < len(c.files); j++ {
				c.kept -= c.files[j].matches
			}
			c.files = c.files[:i+1]
			c.cutoff, c.hasCut = c.files[i].path, true
			return
		}
	}
}

// Reserve keeps room for the closing notices inside Query.MaxBytes.
const noticeReserve = 512

// render turns collected files into the model text. limitHit is set when
// the backend dropped matches beyond the first q.Limit+1. Output that fits
// in q.MaxBytes, notice included, is shown whole; a cut one keeps
// noticeReserve bytes free for its notice.
func render(files []fileHits, q Query, shownPath string, limitHit bool) Result {
	q = q.withDefaults()
	if r := renderWithin(files, q, shownPath, limitHit, q.MaxBytes); !r.BytesCut && len(r.Text) <= q.MaxBytes {
		return r
	}
	return renderWithin(files, q, shownPath, limitHit, q.MaxBytes-noticeReserve)
}

// renderWithin renders lines while they fit in budget bytes.
func renderWithin(files []fileHits, q Query, shownPath string, limitHit bool, budget int) Result {
	slices.SortFunc(files, compareHits)
	total := 0
	for _, f := range files {
		total += f.matches
	}
	var (
		b         strings.Builder
		s         strings.Builder
		res       Result
		prevFile  = -1
		prevLine  int
		lastPath  string
		lastLine  int
		lastMatch = -1 // file index of the last match shown
	)
	res.LimitHit = limitHit || total > q.Limit
files:
	for fi := range files {
		f := &files[fi]
		for _, ln := range f.lines {
			if res.Matches == q.Limit {
				// At the limit: only the trailing context of the last match remains.
				if ln.match || fi != lastMatch || ln.n > lastLine+q.Context {
					break files
				}
			}
			s.Reset()
			if q.Context > 0 && prevFile >= 0 && (prevFile != fi || ln.n != prevLine+1) {
				s.WriteString("--\n")
			}
			sep := "-"
			if ln.match {
				sep = ":"
			}
			s.WriteString(ops.ShowName(f.path))
			s.WriteString(sep)
			s.WriteString(strconv.Itoa(ln.n))
			s.WriteString(sep)
			s.WriteString(" ")
			text, masked := ln.text, map[string]int(nil)
			if q.Mask != nil {
				text, masked = q.Mask(text)
			}
			s.WriteString(cutLine(text, q.LineChars))
			s.WriteString("\n")
			if b.Len()+s.Len() > budget {
				res.BytesCut = true
				break files
			}
			for k, n := range masked {
				if res.Redactions == nil {
					res.Redactions = map[string]int{}
				}
				res.Redactions[k] += n
			}
			b.WriteString(s.String())
			if prevFile != fi {
				res.Files++
			}
			prevFile, prevLine = fi, ln.n
			if ln.match {
				res.Matches++
				lastMatch, lastPath, lastLine = fi, f.path, ln.n
			}
		}
	}
	switch {
	case res.BytesCut:
		fmt.Fprintf(&b, "[Output cut to fit the limit of %d bytes after %s (last shown %s:%d). Narrow the pattern, add path/glob", q.MaxBytes, plural(res.Matches, "match", "matches"), ops.ShowName(lastPath), lastLine)
		if q.Context > 0 {
			b.WriteString(", lower context")
		}
		fmt.Fprintf(&b, " to see the rest; to read on in %s from there: %s {\"path\": %s, \"offset\": %d}.]\n", ops.ShowName(lastPath), q.names.Of("read"), strconv.Quote(lastPath), lastLine+1)
	case res.LimitHit && q.Limit >= q.MaxLimit:
		fmt.Fprintf(&b, "[%s shown (limit %d, the maximum). Narrow the pattern or add path/glob to see others.]\n", plural(res.Matches, "match", "matches"), q.Limit)
	case res.LimitHit:
		fmt.Fprintf(&b, "[%s shown (limit %d). Narrow the pattern, add path/glob, or call again with limit=%d.]\n", plural(res.Matches, "match", "matches"), q.Limit, min(2*q.Limit, q.MaxLimit))
	case res.Matches == 0:
		fmt.Fprintf(&b, "No matches for %s in %s", strconv.Quote(q.Pattern), shownPath)
		if q.Glob != "" {
			fmt.Fprintf(&b, " (glob %s)", q.Glob)
		}
		b.WriteString(".\n")
	}
	res.Text = b.String()
	return res
}

// cutLine shortens s to chars characters plus a marker.
func cutLine(s string, chars int) string {
	if len(s) <= chars {
		return s
	}
	n := 0
	for i := range s {
		if n == chars {
			return s[:i] + fmt.Sprintf("… [line cut at %d chars]", chars)
		}
		n++
	}
	return s
}

// decodeLine strips the line terminator (\n, then one \r) and turns each
// invalid UTF-8 byte into U+FFFD.
func decodeLine(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	s.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		s.WriteRune(r) // RuneError for each invalid byte (size 1)
		b = b[size:]
	}
	return s.String()
}

// plural is n with the word's singular or plural form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
