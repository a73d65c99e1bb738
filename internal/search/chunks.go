package search

import (
	"bytes"
	"context"
	"errors"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// chunkLines is the state of a chunked search: the buffer holds
//
//	buf[keep:start]  up to ctx lines already searched, kept for the
//	                 leading context of a match in the next chunk
//	buf[start:]      bytes not yet searched, starting at a line start
type chunkLines struct {
	r     io.Reader
	buf   []byte
	eof   bool
	keep  int // offset of the first kept line
	keepN int // its line number
	start int // offset of the first line not yet searched
	nextN int // its line number
	// skipRest: the last chunk ended in a line cut at maxLine; the rest
	// of that line is read past unsearched. cutLine is the first such
	// line's number.
	skipRest bool
	cutLine  int
}

// searchChunks searches a file larger than s.sizes.bigFile a chunk at a
// time: s.sizes.chunk bytes of complete lines (more when one line is
// longer), the partial last line carried over to the next chunk. It gives
// the hits searchWhole would give for the whole file, and reads no further
// than the trailing context of the file's last useful match (as rg's
// --max-count, so a NUL after it goes unseen there too). data holds the
// file's first bytes and f the rest; the buffer is returned for reuse.
func (s *fileSearcher) searchChunks(ctx context.Context, f io.Reader, rel string, data []byte) (fileHits, []byte) {
	c := &chunkLines{r: f, buf: data, keepN: 1, nextN: 1}
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		c.buf = data[:copy(data, data[len(bomUTF8):])]
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		// Transcode while reading, the bytes already read first.
		dec := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()
		c.r = transform.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(data)), f), dec)
		c.buf = data[:0]
	}
	var (
		out       []line
		found     int
		crlfMode  bool // sticks once a chunk holds \r\n (searchWhole decides per file)
		next      = 1  // first line number not yet emitted
		lastMatch int  // line number of the last match; 0 = none yet
	)
	for {
		if ctx.Err() != nil {
			return fileHits{}, c.buf
		}
		end, ok, err := c.nextChunk(s.sizes.chunk, s.sizes.maxLine)
		if err != nil {
			return fileHits{}, c.buf
		}
		if !ok {
			break
		}
		chunk := c.buf[c.start:end]
		if bytes.IndexByte(chunk, 0) >= 0 {
			return fileHits{}, c.buf // binary
		}
		first := c.nextN
		lines := bytes.Count(chunk, []byte{'\n'})
		if chunk[len(chunk)-1] != '\n' {
			lines++ // the last line, unterminated at EOF
		}
		last := first + lines - 1
		var spans []span
		if found < s.maxMatches {
			crlfMode = crlfMode || bytes.Contains(chunk, crlf)
			if s.literal == nil || bytes.Contains(chunk, s.literal) {
				spans = s.match(chunk, crlfMode, s.maxMatches-found)
			}
			for i := range spans {
				spans[i].n += first - 1
				spans[i].start += c.start
				spans[i].end += c.start
			}
			found += len(spans)
		}
		switch {
		case s.ctx == 0:
			for _, sp := range spans {
				out = append(out, line{n: sp.n, text: decodeLine(c.buf[sp.start:sp.end]), match: true})
			}
		case len(spans) > 0 || lastMatch > 0 && next <= lastMatch+s.ctx:
			out, next, lastMatch = s.emitContext(out, c.buf[c.keep:end], c.keepN, last, spans, next, lastMatch)
		}
		c.advance(end, lines, s.ctx)
		if found >= s.maxMatches && (s.ctx == 0 || next > lastMatch+s.ctx) {
			break // nothing more can be shown: stop reading
		}
	}
	if found == 0 {
		return fileHits{path: rel, cutLine: c.cutLine}, c.buf
	}
	return fileHits{path: rel, lines: out, matches: found, cutLine: c.cutLine}, c.buf
}

// emitContext appends the lines around spans (absolute numbers) as
// withContext does for a whole file, region holding lines firstN..lastN:
// the chunk and up to ctx lines before it. It first finishes the trailing
// context of lastMatch, the previous chunk's last match, and returns the
// new next and lastMatch.
func (s *fileSearcher) emitContext(out []line, region []byte, firstN, lastN int, spans []span, next, lastMatch int) ([]line, int, int) {
	starts := lineStarts(region, make([]int, 0, lastN-firstN+1)) // starts[i] is the offset of line firstN+i
	emit := func(from, to, match int) {
		for k := from; k <= to; k++ {
			i := k - firstN
			end := len(region)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			out = append(out, line{n: k, text: decodeLine(region[starts[i]:end]), match: k == match})
		}
		next = max(next, to+1)
	}
	if lastMatch > 0 {
		to := min(lastMatch+s.ctx, lastN)
		if len(spans) > 0 {
			to = min(to, spans[0].n-1)
		}
		emit(next, to, 0)
	}
	for i, sp := range spans {
		to := min(sp.n+s.ctx, lastN)
		if i+1 < len(spans) {
			to = min(to, spans[i+1].n-1)
		}
		emit(max(sp.n-s.ctx, next, firstN), to, sp.n)
		lastMatch = sp.n
	}
	return out, next, lastMatch
}

// nextChunk reads until buf[start:end] is the next chunk: at least size
// bytes of complete lines, or the rest of the file. ok is false at the end
// of the file.
func (c *chunkLines) nextChunk(size, maxLine int) (end int, ok bool, err error) {
	for c.skipRest {
		if i := bytes.IndexByte(c.buf[c.start:], '\n'); i >= 0 {
			// Keep the newline: it ends the cut line for the context kept.
			c.buf = append(c.buf[:c.start], c.buf[c.start+i:]...)
			c.start++
			c.skipRest = false
			break
		}
		c.buf = c.buf[:c.start]
		if c.eof {
			return 0, false, nil
		}
		if err := c.fill(size); err != nil {
			return 0, false, err
		}
	}
	for {
		if !c.eof && len(c.buf)-c.start >= maxLine && bytes.IndexByte(c.buf[c.start:], '\n') < 0 {
			// A line longer than maxLine is searched in its first
			// maxLine bytes only: memory stays bounded whatever its length.
			c.skipRest = true
			if c.cutLine == 0 {
				c.cutLine = c.nextN
			}
			return c.start + maxLine, true, nil
		}
		if c.eof || len(c.buf)-c.start >= size {
			lim := min(len(c.buf), c.start+size)
			if i := bytes.LastIndexByte(c.buf[c.start:lim], '\n'); i >= 0 {
				return c.start + i + 1, true, nil
			}
			// A line longer than a chunk goes whole into one.
			if i := bytes.IndexByte(c.buf[lim:], '\n'); i >= 0 {
				return lim + i + 1, true, nil
			}
			if c.eof {
				return len(c.buf), len(c.buf) > c.start, nil
			}
		}
		if err := c.fill(size); err != nil {
			return 0, false, err
		}
	}
}

// fill drops the bytes before the kept lines, makes room for at least half
// a chunk (doubling for a long line) and reads until the buffer is full or
// the file ends.
func (c *chunkLines) fill(size int) error {
	n := copy(c.buf, c.buf[c.keep:])
	c.buf, c.start, c.keep = c.buf[:n], c.start-c.keep, 0
	if cap(c.buf)-len(c.buf) <= size/2 {
		grown := make([]byte, len(c.buf), len(c.buf)+max(size, len(c.buf)))
		copy(grown, c.buf)
		c.buf = grown
	}
	for len(c.buf) < cap(c.buf) {
		n, err := c.r.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if errors.Is(err, io.EOF) {
			c.eof = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// advance marks buf[start:end] (lines lines) searched and keeps the last
// ctx lines of buf[keep:end] for the next chunk's leading context.
func (c *chunkLines) advance(end, lines, ctx int) {
	last := c.nextN + lines - 1
	c.start, c.nextN = end, last+1
	p, kept := end, 0
	for ; kept < ctx && p > c.keep; kept++ {
		p = bytes.LastIndexByte(c.buf[c.keep:p-1], '\n') + 1 + c.keep
	}
	if kept < ctx {
		return // all lines since the start of the file stay
	}
	c.keep, c.keepN = p, last-kept+1
}
