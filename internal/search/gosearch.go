package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/encoding/unicode"

	"github.com/agentls/agentls/internal/ignore"
)

// compileRegexp translates q into a Go regexp. (?m) makes ^ and $ work at
// line boundaries when a whole file is scanned at once.
func compileRegexp(q Query) (*regexp.Regexp, error) {
	re, err := regexp.Compile(goPattern(q))
	if err != nil {
		// Name the error in the caller's pattern, without the flags added here.
		if _, own := regexp.Compile(q.Pattern); own != nil {
			err = own
		}
		return nil, patternError(q.names, err.Error())
	}
	return re, nil
}

func goPattern(q Query) string {
	pat := q.Pattern
	if q.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	if q.IgnoreCase {
		return "(?mi)" + pat
	}
	return "(?m)" + pat
}

// minLiteral is the shortest required literal worth a bytes.Index pass;
// shorter ones occur on too many lines to pay for themselves.
const minLiteral = 3

// requiredLiteral returns a byte string that every match of the pattern
// contains (the longest one found), or nil. Lines without it cannot match,
// so the searcher finds candidate lines with bytes.Index (SIMD) and runs
// the regexp on those alone. Patterns that refer to the start or end of
// the whole text (\A, \z) give nil: on a line alone they mean something
// else than in the file.
func requiredLiteral(pattern string) []byte {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if usesTextAnchors(re) {
		return nil
	}
	lit := mustContain(re)
	if len(lit) < minLiteral {
		return nil
	}
	return []byte(lit)
}

func usesTextAnchors(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if usesTextAnchors(sub) {
			return true
		}
	}
	return false
}

// mustContain returns the longest literal that every match of re contains,
// "" when none is known. Case-folded literals do not count.
func mustContain(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return mustContain(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return mustContain(re.Sub[0])
		}
	case syntax.OpConcat:
		best, run := "", ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				// Adjacent literals form one longer required literal.
				run += string(sub.Rune)
			} else {
				run = ""
				if l := mustContain(sub); len(l) > len(best) {
					best = l
				}
			}
			if len(run) > len(best) {
				best = run
			}
		}
		return best
	}
	return ""
}

// searchGo walks the target with the Matcher and searches files with
// GOMAXPROCS workers. Files are numbered in walk order, which is path
// order, so the walk can stop as soon as the files before the current one
// hold more than q.Limit matches: the result is then already decided.
func (e *Engine) searchGo(ctx context.Context, q Query, t target, g *globMatcher) (*collector, error) {
	re, err := compileRegexp(q)
	if err != nil {
		return nil, err
	}
	s := &fileSearcher{re: re, ctx: q.Context, maxMatches: q.Limit + 1, sizes: e.sizes.withDefaults()}
	if lit, complete := re.LiteralPrefix(); complete && !q.IgnoreCase && lit != "" && !strings.Contains(lit, "\n") {
		s.literal, s.complete = []byte(lit), true
	} else {
		s.literal = requiredLiteral(goPattern(q))
	}
	c := newCollector(q.Limit)
	if !t.isDir && !e.visible(t.rel) {
		c.denied++
		return c, ctx.Err()
	}
	if !t.isDir {
		var buf []byte
		h := s.search(ctx, &dirOpener{fsys: e.FS}, t.rel, &buf)
		if h.unreadable != nil {
			// The file named could not be read: not "no matches", as
			// rg's run refuses it too.
			return nil, fmt.Errorf("grep: cannot search %s: %s", t.shown, ignore.ErrReason(h.unreadable))
		}
		c.add(h)
		return c, ctx.Err()
	}

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	type job struct {
		idx int
		rel string
	}
	type result struct {
		idx  int
		hits fileHits
	}
	jobs := make(chan job, 256)
	results := make(chan result, 256)

	var walkErr error
	var unreadDirs ignore.Unreadable // the walker's, read after wg.Wait
	denied := 0                      // the walker's, read after wg.Wait
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // walker: owns jobs
		defer wg.Done()
		defer close(jobs)
		idx := 0
		opts := ignore.WalkOptions{IncludeIgnored: q.IncludeIgnored, SkipHidden: !q.Hidden, Unreadable: unreadDirs.Add}
		walkErr = e.Matcher.Walk(wctx, t.rel, opts, func(rel string, d fs.DirEntry) error {
			if !d.Type().IsRegular() || g != nil && !g.allows(rel, t.rel) {
				return nil
			}
			if !e.visible(rel) {
				denied++
				return nil
			}
			select {
			case jobs <- job{idx, rel}:
				idx++
				return nil
			case <-wctx.Done():
				return wctx.Err()
			}
		})
	}()
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			var buf []byte // this worker's read buffer, reused across files
			dirs := &dirOpener{fsys: e.FS}
			defer dirs.close()
			for j := range jobs {
				// wctx ends once the result is decided: a big file still
				// being read stops then.
				h := s.search(wctx, dirs, j.rel, &buf)
				select {
				case results <- result{j.idx, h}:
				case <-wctx.Done():
					return
				}
			}
		}()
	}
	go func() { // closes results once no worker can send
		workers.Wait()
		close(results)
	}()

	pending := make(map[int]fileHits)
	next, seen, stopped := 0, 0, false
	for r := range results {
		if stopped {
			continue
		}
		pending[r.idx] = r.hits
		for {
			h, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			c.add(h)
			if seen += h.matches; seen > q.Limit {
				stopped = true
				stop()
				break
			}
		}
	}
	wg.Wait()
	c.unreadable.Merge(unreadDirs)
	c.denied = denied
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if walkErr != nil && !stopped {
		// The directory searched itself could not be read (below it, the
		// walk goes on): worded as rg's refusal is.
		return nil, fmt.Errorf("grep: cannot search %s: %s", t.shown, ignore.ErrReason(walkErr))
	}
	return c, nil
}

// fileSearcher finds matching lines in one file; safe for concurrent use.
type fileSearcher struct {
	re         *regexp.Regexp
	literal    []byte // a literal every match contains; nil = none known
	complete   bool   // literal is the whole pattern (no \n): a hit is a match
	ctx        int
	maxMatches int // per file: no file can contribute more to the result
	sizes      sizes
}

// sizes are the Go searcher's buffer sizes; tests lower them so that
// chunk boundaries fall everywhere. Zero fields take the defaults.
type sizes struct {
	firstRead int   // initial capacity of a worker's read buffer
	bigFile   int64 // files larger than this are searched in chunks
	chunk     int   // bytes of complete lines searched at a time in a big file
	maxLine   int   // a longer line of a big file is searched in its first maxLine bytes
}

func (z sizes) withDefaults() sizes {
	if z.firstRead <= 0 {
		z.firstRead = readBufSize
	}
	if z.bigFile <= 0 {
		z.bigFile = bigFileSize
	}
	if z.chunk <= 0 {
		z.chunk = chunkSize
	}
	if z.maxLine <= 0 {
		z.maxLine = maxLineSize
	}
	return z
}

var crlf = []byte("\r\n")

// Read buffers start at readBufSize, which holds most source files, and a
// worker drops one grown beyond maxKeptBuf rather than pin it. Files up to
// bigFileSize are read whole; larger ones are searched chunkSize bytes of
// lines at a time, so memory stays bounded whatever the file's size.
const (
	readBufSize = 64 << 10
	maxKeptBuf  = 8 << 20
	bigFileSize = 8 << 20
	chunkSize   = 4 << 20
	// maxLineSize bounds the part of one line a chunked search holds:
	// memory stays bounded whatever the line length.
	maxLineSize = 2 * chunkSize
)

// search reads rel into *buf (the caller's reusable buffer) and returns
// its matches with context; the hits do not refer to *buf. Unreadable and
// binary files give nothing, as in rg. A cancelled ctx stops a big file's
// search midway (its hits are then incomplete: the caller drops them).
func (s *fileSearcher) search(ctx context.Context, dirs *dirOpener, rel string, buf *[]byte) fileHits {
	f, err := dirs.open(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileHits{} // gone since the walk saw it
		}
		return fileHits{path: rel, unreadable: err}
	}
	defer f.Close()
	if cap(*buf) == 0 {
		*buf = make([]byte, 0, s.sizes.firstRead)
	}
	data, big, err := readInto(f, *buf, s.sizes.bigFile)
	var h fileHits
	if err == nil {
		if big {
			h, data = s.searchChunks(ctx, f, rel, data)
		} else {
			h = s.searchWhole(rel, data)
		}
	}
	if cap(data) <= maxKeptBuf {
		*buf = data[:0]
	} else {
		*buf = nil
	}
	return h
}

// searchWhole searches a file read whole into data.
func (s *fileSearcher) searchWhole(rel string, data []byte) fileHits {
	data = decodeBOM(data)
	// Most files lack the literal: one pass decides before the NUL check.
	if s.literal != nil && bytes.Index(data, s.literal) < 0 {
		return fileHits{}
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fileHits{}
	}
	spans := s.match(data, bytes.Contains(data, crlf), s.maxMatches)
	if len(spans) == 0 {
		return fileHits{}
	}
	return fileHits{path: rel, lines: s.withContext(data, spans), matches: len(spans)}
}

// match finds up to limit matching lines in data, which holds whole lines.
func (s *fileSearcher) match(data []byte, crlfMode bool, limit int) []span {
	switch {
	case crlfMode:
		return s.matchLines(data, limit)
	case s.literal != nil:
		return s.matchLiteralLines(data, limit)
	default:
		return s.matchBuffer(data, limit)
	}
}

// readInto reads the file f into buf, growing it as needed, unless f is
// larger than bigFile: then it returns big and what it read so far, a full
// buffer. One Open and reads into a reused buffer cost far less than
// fs.ReadFile's fresh, zeroed allocation per file (and its Stat); the Stat
// here happens only for files that outgrow the buffer.
func readInto(f fs.File, buf []byte, bigFile int64) (data []byte, big bool, err error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			// A file larger than the buffer: size it once (+1 for the read
			// that sees EOF) rather than doubling through copies.
			extra := max(cap(buf), 1)
			if info, err := f.Stat(); err == nil && info.Size() >= int64(len(buf)) {
				if info.Size() > bigFile {
					return buf, true, nil
				}
				extra = int(info.Size()) - len(buf) + 1
			}
			buf = slices.Grow(buf, extra)
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
}

// RootOpener is an optional interface of Engine.FS, with the signature of
// os.Root.OpenRoot. Opening a file through an os.Root costs one openat per
// path component; the Go backend opens each directory once instead and the
// files in it with one openat each.
type RootOpener interface {
	OpenRoot(name string) (*os.Root, error)
}

// dirOpener opens files for one worker, keeping the directory of the last
// file open when the FS is a RootOpener: the walk yields a directory's
// files in runs.
type dirOpener struct {
	fsys fs.FS
	dir  string   // slash path of root, with a trailing slash
	root *os.Root // nil = none open
}

func (d *dirOpener) open(rel string) (fs.File, error) {
	ro, ok := d.fsys.(RootOpener)
	if !ok {
		return d.fsys.Open(rel)
	}
	// Through the os.Root even at the top: fs.FS refuses names that are
	// not UTF-8 (fs.ValidPath), which rg searches and a directory may hold.
	i := strings.LastIndexByte(rel, '/')
	if dir := rel[:i+1]; d.root == nil || dir != d.dir {
		d.close()
		name := "."
		if i >= 0 {
			name = rel[:i]
		}
		r, err := ro.OpenRoot(name)
		if err != nil {
			return d.fsys.Open(rel)
		}
		d.root, d.dir = r, dir
	}
	return d.root.Open(rel[i+1:])
}

func (d *dirOpener) close() {
	if d.root != nil {
		_ = d.root.Close() // read-only directory handle
		d.root = nil
	}
}

// span is a matching line: its 1-based number and byte range (without \n).
type span struct{ n, start, end int }

// matchLiteralLines checks only the lines holding s.literal; no other
// line can match. Same result as matchBuffer (the pattern has no \A or
// \z, so a line alone matches as it does inside the file).
func (s *fileSearcher) matchLiteralLines(data []byte, limit int) []span {
	var spans []span
	pos, n, counted := 0, 1, 0
	for pos < len(data) && len(spans) < limit {
		i := bytes.Index(data[pos:], s.literal)
		if i < 0 {
			break
		}
		m := pos + i
		ls := bytes.LastIndexByte(data[pos:m], '\n') + 1 + pos
		le := len(data)
		if j := bytes.IndexByte(data[m:], '\n'); j >= 0 {
			le = m + j
		}
		if s.complete || s.re.Match(data[ls:le]) {
			n += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			spans = append(spans, span{n, ls, le})
		}
		pos = le + 1
	}
	return spans
}

// matchBuffer runs the regexp over the whole buffer and maps each match to
// its line; a match that crosses a line end is re-checked on its line
// alone, because rg never matches across lines.
func (s *fileSearcher) matchBuffer(data []byte, limit int) []span {
	var spans []span
	pos, n, counted := 0, 1, 0
	for pos < len(data) && len(spans) < limit {
		loc := s.re.FindIndex(data[pos:])
		if loc == nil {
			break
		}
		mStart, mEnd := pos+loc[0], pos+loc[1]
		if mStart == len(data) && data[len(data)-1] == '\n' {
			// An empty match after the final line end (^$, x*): no line is
			// there.
			break
		}
		ls := bytes.LastIndexByte(data[pos:mStart], '\n') + 1 + pos
		le := len(data)
		if i := bytes.IndexByte(data[mStart:], '\n'); i >= 0 {
			le = mStart + i
		}
		if mEnd <= le || s.re.Match(data[ls:le]) {
			n += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			spans = append(spans, span{n, ls, le})
		}
		pos = le + 1
	}
	return spans
}

// matchLines checks line by line with the \r of CRLF removed, so that $
// matches before it (rg --crlf).
func (s *fileSearcher) matchLines(data []byte, limit int) []span {
	var spans []span
	for n, pos := 1, 0; pos < len(data) && len(spans) < limit; n++ {
		le := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			le = pos + i
		}
		text := bytes.TrimSuffix(data[pos:le], []byte{'\r'})
		if s.re.Match(text) {
			spans = append(spans, span{n, pos, le})
		}
		pos = le + 1
	}
	return spans
}

// withContext turns matching spans into output lines, adding up to s.ctx
// lines around each match; overlapping windows merge.
func (s *fileSearcher) withContext(data []byte, spans []span) []line {
	if s.ctx == 0 {
		lines := make([]line, len(spans))
		for i, sp := range spans {
			lines[i] = line{n: sp.n, text: decodeLine(data[sp.start:sp.end]), match: true}
		}
		return lines
	}
	starts := lineStarts(data, nil) // starts[i] is the offset of line i+1
	lineAt := func(n int) []byte {
		end := len(data)
		if n < len(starts) {
			end = starts[n]
		}
		return data[starts[n-1]:end]
	}
	var lines []line
	next := 1 // first line number not yet emitted
	for i, sp := range spans {
		from := max(sp.n-s.ctx, next, 1)
		to := min(sp.n+s.ctx, len(starts))
		if i+1 < len(spans) {
			to = min(to, spans[i+1].n-1)
		}
		for k := from; k <= to; k++ {
			lines = append(lines, line{n: k, text: decodeLine(lineAt(k)), match: k == sp.n})
		}
		next = max(next, to+1)
	}
	return lines
}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// decodeBOM strips a UTF-8 BOM and transcodes UTF-16 with a BOM, as rg's
// default encoding detection does.
func decodeBOM(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		return data[3:]
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		out, err := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err == nil {
			return out
		}
	}
	return data
}

// lineStarts appends the offset of every line of buf to starts.
func lineStarts(buf []byte, starts []int) []int {
	for pos := 0; pos < len(buf); {
		starts = append(starts, pos)
		i := bytes.IndexByte(buf[pos:], '\n')
		if i < 0 {
			break
		}
		pos += i + 1
	}
	return starts
}
