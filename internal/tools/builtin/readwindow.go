package builtin

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/tools"
)

// readWindow builds what read shows: numbered lines from offset on, within
// the line count, byte and line-length limits. Lines are fed one at a time
// (add), so a file too large to hold (readLarge) is shown exactly as one
// read whole (formatLines).
type readWindow struct {
	display       string
	offset, limit int
	maxLines      int
	l             tools.Limits

	b           strings.Builder
	used, end   int
	ends        []int // w.b's length after each line taken
	cuts        []int // the lines cut at ReadLineChars, in order
	byteLimited bool
	tooLong     *tools.Result // the first line alone is over the byte limit
	firstSize   int           // the first line's size in bytes
	num         [24]byte

	// mask masks each line before it is cut and numbered: a "KEY: value"
	// line is a secret at the start of a line, not after "N→", and a key
	// cut at ReadLineChars is no longer recognisable. nil: no masking.
	mask   tools.Masker
	counts map[string]int
	// names renders the tool mentions of the notices (Env.Names).
	names mention.Prefix
}

func newReadWindow(display string, offset, limit int, l tools.Limits) *readWindow {
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
		w.tooLong = w.lineTooLong(n, size)
		return false
	}
	line := text
	if w.mask != nil {
		if m, c := w.mask.Mask(text); len(c) > 0 {
			w.counts = tools.AddCountsTo(w.counts, c)
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
			w.cuts = append(w.cuts, n)
		}
	}
	prefix := lineNumber(w.num[:0], n)
	if n == w.offset {
		w.firstSize = size
	}
	if w.used+len(prefix)+len(line)+1 > l.ReadBytes {
		if len(w.ends) == 0 { // its number alone pushes it over
			w.tooLong = w.lineTooLong(n, size)
		}
		w.byteLimited = true
		return false
	}
	w.b.Write(prefix)
	w.b.WriteString(line)
	w.b.WriteByte('\n')
	w.used += len(prefix) + len(line) + 1
	w.ends = append(w.ends, w.b.Len())
	w.end = n
	return w.end-w.offset+1 < w.maxLines
}

// lineTooLong is read's answer when line n (size bytes) cannot be shown
// within the byte limit.
func (w *readWindow) lineTooLong(n, size int) *tools.Result {
	l := w.l
	r := tools.Text(w.names.Sprintf("Line %d of %s is %s (%d bytes), too long to show within the %d-byte read limit, so nothing is shown. Read a window of it with {{bash}}, e.g. sed -n '%dp' %s | cut -b 1-%d (then -b %d-%d, …).",
		n, w.display, humanBytes(int64(size)), size, l.ReadBytes, n, shellQuote(w.display), l.ReadBytes/4, l.ReadBytes/4+1, l.ReadBytes/2))
	r.SetDetail("fromLine", n)
	r.SetDetail("toLine", n)
	return &r
}

// result is the window as read's result; total is the file's line count.
// The whole result, header and notices included, stays within ReadBytes
// and ReadLines: lines are given back from the end until it does, and the
// notice names the last line shown.
func (w *readWindow) result(total int, crlf bool, notes []string) tools.Result {
	if r := emptyOrBeyond(w.display, total, w.offset); r != nil {
		return *r
	}
	if w.tooLong != nil {
		return *w.tooLong
	}
	header := w.display + ", lines "
	if crlf {
		notes = append(notes, "CRLF line endings (shown without \\r)")
	}
	tail := ""
	if len(notes) > 0 {
		tail = " (" + strings.Join(notes, "; ") + ")"
	}
	l := w.l
	body := w.b.String()
	k, byteCut := len(w.ends), w.byteLimited
	for {
		out := w.render(header, tail, body, k, total, byteCut)
		over := len(out) - l.ReadBytes
		extra := strings.Count(out, "\n") + 1 - l.ReadLines
		if over <= 0 && extra <= 0 {
			r := tools.Text(out)
			if len(w.counts) > 0 {
				r.SetDetail("redactions", w.counts)
			}
			end := w.offset + k - 1
			r.SetDetail("fromLine", w.offset)
			r.SetDetail("toLine", end)
			r.SetDetail("totalLines", total)
			return r
		}
		// Give back enough lines for the excess (the notice it brings may
		// need one more round).
		drop := max(extra, 1)
		if over > 0 {
			byteCut = true
			for drop < k && w.ends[k-1]-w.ends[k-1-drop] < over {
				drop++
			}
		}
		if k -= drop; k <= 0 {
			// Not even the first line fits beside the header and notice.
			return *w.lineTooLong(w.offset, w.firstSize)
		}
	}
}

// render is the result showing the window's first k lines.
func (w *readWindow) render(header, tail, body string, k, total int, byteCut bool) string {
	l, offset := w.l, w.offset
	end := offset + k - 1
	var b strings.Builder
	b.Grow(w.ends[k-1] + len(header) + len(tail) + 256)
	b.WriteString(header)
	b.WriteString(strconv.Itoa(offset) + "-" + strconv.Itoa(end) + " of " + strconv.Itoa(total))
	b.WriteString(tail)
	b.WriteByte('\n')
	b.WriteString(body[:w.ends[k-1]])
	switch {
	case end < total && byteCut:
		fmt.Fprintf(&b, "[Showing lines %d-%d of %d: the %d-byte limit was reached. Use offset=%d to continue.]", offset, end, total, l.ReadBytes, end+1)
	case end < total && w.limit > 0 && k >= w.limit:
		fmt.Fprintf(&b, "[Showing lines %d-%d of %d. Use offset=%d to continue.]", offset, end, total, end+1)
	case end < total:
		fmt.Fprintf(&b, "[Showing lines %d-%d of %d (at most %s per call). Use offset=%d to continue.]", offset, end, total, plural(l.ReadLines, "line"), end+1)
	}
	cut := 0
	for cut < len(w.cuts) && w.cuts[cut] <= end {
		cut++
	}
	if cut > 0 {
		first := w.cuts[0]
		out := strings.TrimRight(b.String(), "\n")
		b.Reset()
		b.WriteString(out)
		b.WriteString(w.names.Sprintf("\n[%d line(s) longer than %d characters were cut (the first: line %d). See the rest of a line with {{bash}}, e.g. sed -n '%dp' %s | cut -c %d-%d (then %d-%d, …).]",
			cut, l.ReadLineChars, first, first, shellQuote(w.display), l.ReadLineChars+1, 2*l.ReadLineChars, 2*l.ReadLineChars+1, 3*l.ReadLineChars))
	}
	return strings.TrimRight(b.String(), "\n")
}

// emptyOrBeyond is read's answer for an empty file, or an offset past its
// last line; nil otherwise.
func emptyOrBeyond(display string, total, offset int) *tools.Result {
	switch {
	case total == 0:
		r := tools.Text(fmt.Sprintf("%s is empty (0 lines).", display))
		r.SetDetail("fromLine", 0)
		r.SetDetail("toLine", 0)
		return &r
	case offset > total:
		r := tools.Errorf("offset %d is beyond the end of %s, which has %d lines; use an offset between 1 and %d.", offset, display, total, total)
		return &r
	}
	return nil
}

// formatLines renders the numbered window of text that the limits allow.
// Each line is masked by m (nil: none) before it is cut and numbered.
func formatLines(display, text string, offset, limit int, notes []string, l tools.Limits, m tools.Masker, names mention.Prefix) tools.Result {
	total := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		total++ // a final newline ends the last line; its absence does not
	}
	w := newReadWindow(display, offset, limit, l)
	w.mask, w.names = m, names
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
