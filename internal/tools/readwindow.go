package tools

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// readWindow builds what read shows: numbered lines from offset on, within
// the line count, byte and line-length limits. Lines are fed one at a time
// (add), so a file too large to hold (readLarge) is shown exactly as one
// read whole (formatLines).
type readWindow struct {
	display       string
	offset, limit int
	maxLines      int
	l             Limits

	b           strings.Builder
	used, end   int
	cutLines    int
	firstCut    int
	byteLimited bool
	tooLong     *Result // the first line alone is over the byte limit
	num         [24]byte

	// mask masks each line before it is cut and numbered: a "KEY: value"
	// line is a secret at the start of a line, not after "N→", and a key
	// cut at ReadLineChars is no longer recognisable. nil: no masking.
	mask   Masker
	counts map[string]int
}

func newReadWindow(display string, offset, limit int, l Limits) *readWindow {
	w := &readWindow{display: display, offset: max(offset, 1), limit: limit, maxLines: l.ReadLines, l: l}
	if limit > 0 && limit < w.maxLines {
		w.maxLines = limit
	}
	w.end = w.offset - 1
	return w
}

// add takes line n (the next one; without its line ending). size is the
// whole line's length in bytes and chars its length in characters (0:
// count them in text), for a text that is only the line's start. It
// reports whether the window takes more lines.
func (w *readWindow) add(n int, text string, size, chars int) bool {
	l := w.l
	if n == w.offset && size > l.ReadBytes {
		r := Text(fmt.Sprintf("Line %d of %s is %s (%d bytes), over the %d-byte read limit, so nothing is shown. Read a window of it with bash, e.g. sed -n '%dp' %s | cut -b 1-%d (then -b %d-%d, …).",
			n, w.display, humanBytes(int64(size)), size, l.ReadBytes, n, shellQuote(w.display), l.ReadBytes/4, l.ReadBytes/4+1, l.ReadBytes/2))
		r.setDetail("fromLine", n)
		r.setDetail("toLine", n)
		w.tooLong = &r
		return false
	}
	line := text
	if w.mask != nil {
		if m, c := w.mask.Mask(text); len(c) > 0 {
			w.counts = addCountsTo(w.counts, c)
			if chars == 0 || size == len(text) {
				chars = 0 // text is the whole line: count the masked one
			} else {
				chars -= utf8.RuneCountInString(text) - utf8.RuneCountInString(m)
			}
			size += len(m) - len(text)
			line, text = m, m
		}
	}
	if size > l.ReadLineChars {
		if chars == 0 {
			chars = utf8.RuneCountInString(text)
		}
		if chars > l.ReadLineChars {
			line = string([]rune(text)[:l.ReadLineChars]) + fmt.Sprintf("… [line cut: %d of %d characters shown]", l.ReadLineChars, chars)
			if w.cutLines++; w.cutLines == 1 {
				w.firstCut = n
			}
		}
	}
	prefix := lineNumber(w.num[:0], n)
	if w.used+len(prefix)+len(line)+1 > l.ReadBytes {
		w.byteLimited = true
		return false
	}
	w.b.Write(prefix)
	w.b.WriteString(line)
	w.b.WriteByte('\n')
	w.used += len(prefix) + len(line) + 1
	w.end = n
	return w.end-w.offset+1 < w.maxLines
}

// result is the window as read's result; total is the file's line count.
func (w *readWindow) result(total int, crlf bool, notes []string) Result {
	if r := emptyOrBeyond(w.display, total, w.offset); r != nil {
		return *r
	}
	if w.tooLong != nil {
		return *w.tooLong
	}
	l, offset, end := w.l, w.offset, w.end
	header := w.display + ", lines " + strconv.Itoa(offset) + "-" + strconv.Itoa(end) + " of " + strconv.Itoa(total)
	if crlf {
		notes = append(notes, "CRLF line endings (shown without \\r)")
	}
	if len(notes) > 0 {
		header += " (" + strings.Join(notes, "; ") + ")"
	}
	out := header + "\n" + w.b.String()
	switch {
	case w.byteLimited:
		out += fmt.Sprintf("[Showing lines %d-%d of %d: the %d-byte limit was reached. Use offset=%d to continue.]", offset, end, total, l.ReadBytes, end+1)
	case end < total && w.limit > 0 && end-offset+1 >= w.limit:
		out += fmt.Sprintf("[Showing lines %d-%d of %d. Use offset=%d to continue.]", offset, end, total, end+1)
	case end < total:
		out += fmt.Sprintf("[Showing lines %d-%d of %d (at most %s per call). Use offset=%d to continue.]", offset, end, total, plural(l.ReadLines, "line"), end+1)
	}
	if w.cutLines > 0 {
		out = strings.TrimRight(out, "\n") + fmt.Sprintf("\n[%d line(s) longer than %d characters were cut (the first: line %d). See the rest of a line with bash, e.g. sed -n '%dp' %s | cut -c %d-%d (then %d-%d, …).]",
			w.cutLines, l.ReadLineChars, w.firstCut, w.firstCut, shellQuote(w.display), l.ReadLineChars+1, 2*l.ReadLineChars, 2*l.ReadLineChars+1, 3*l.ReadLineChars)
	}
	r := Text(strings.TrimRight(out, "\n"))
	if len(w.counts) > 0 {
		r.setDetail("redactions", w.counts)
	}
	r.setDetail("fromLine", offset)
	r.setDetail("toLine", end)
	r.setDetail("totalLines", total)
	return r
}

// emptyOrBeyond is read's answer for an empty file, or an offset past its
// last line; nil otherwise.
func emptyOrBeyond(display string, total, offset int) *Result {
	switch {
	case total == 0:
		r := Text(fmt.Sprintf("%s is empty (0 lines).", display))
		r.setDetail("fromLine", 0)
		r.setDetail("toLine", 0)
		return &r
	case offset > total:
		r := Errorf("offset %d is beyond the end of %s, which has %d lines; use an offset between 1 and %d.", offset, display, total, total)
		return &r
	}
	return nil
}

// formatLines renders the numbered window of text that the limits allow.
// Each line is masked by m (nil: none) before it is cut and numbered.
func formatLines(display, text string, offset, limit int, notes []string, l Limits, m Masker) Result {
	total := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		total++ // a final newline ends the last line; its absence does not
	}
	w := newReadWindow(display, offset, limit, l)
	w.mask = m
	if emptyOrBeyond(display, total, w.offset) == nil {
		// What the window will hold, at most: the text and the numbers.
		w.b.Grow(min(len(text), l.ReadBytes) + min(total-w.offset+1, w.maxLines)*10)
		rest := text
		for range w.offset - 1 {
			rest = rest[strings.IndexByte(rest, '\n')+1:]
		}
		for n := w.offset; n <= total; n++ {
			line := rest
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			}
			line = strings.TrimSuffix(line, "\r")
			if !w.add(n, line, len(line), 0) {
				break
			}
		}
	}
	return w.result(total, strings.Contains(text, "\r\n"), notes)
}
