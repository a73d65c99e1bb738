package search

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"runtime"
	"sync"

	"golang.org/x/text/encoding/unicode"

	"github.com/agentls/agentls/internal/ignore"
)

// compileRegexp translates q into a Go regexp. (?m) makes ^ and $ work at
// line boundaries when a whole file is scanned at once.
func compileRegexp(q Query) (*regexp.Regexp, error) {
	pat := q.Pattern
	if q.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	flags := "(?m)"
	if q.IgnoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pat)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern: %w", err)
	}
	return re, nil
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
	s := &fileSearcher{re: re, ctx: q.Context, maxMatches: q.Limit + 1}
	if lit, complete := re.LiteralPrefix(); complete && !q.IgnoreCase && lit != "" {
		s.literal = []byte(lit)
	}
	c := newCollector(q.Limit)
	if !t.isDir {
		c.add(s.search(e.FS, t.rel))
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
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // walker: owns jobs
		defer wg.Done()
		defer close(jobs)
		idx := 0
		opts := ignore.WalkOptions{IncludeIgnored: q.IncludeIgnored, SkipHidden: !q.Hidden}
		walkErr = e.Matcher.Walk(wctx, t.rel, opts, func(rel string, d fs.DirEntry) error {
			if !d.Type().IsRegular() || g != nil && !g.allows(rel, t.rel) {
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
			for j := range jobs {
				h := s.search(e.FS, j.rel)
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if walkErr != nil && !stopped {
		return nil, fmt.Errorf("grep: %w", walkErr)
	}
	return c, nil
}

// fileSearcher finds matching lines in one file; safe for concurrent use.
type fileSearcher struct {
	re         *regexp.Regexp
	literal    []byte // the whole pattern when it is a plain literal
	ctx        int
	maxMatches int // per file: no file can contribute more to the result
}

var crlf = []byte("\r\n")

// search reads rel and returns its matches with context. Unreadable and
// binary files give nothing, as in rg.
func (s *fileSearcher) search(fsys fs.FS, rel string) fileHits {
	data, err := fs.ReadFile(fsys, rel)
	if err != nil {
		return fileHits{}
	}
	data = decodeBOM(data)
	if bytes.IndexByte(data, 0) >= 0 {
		return fileHits{}
	}
	var spans []span
	if bytes.Contains(data, crlf) {
		spans = s.matchLines(data)
	} else {
		spans = s.matchBuffer(data)
	}
	if len(spans) == 0 {
		return fileHits{}
	}
	return fileHits{path: rel, lines: s.withContext(data, spans), matches: len(spans)}
}

// span is a matching line: its 1-based number and byte range (without \n).
type span struct{ n, start, end int }

// matchBuffer runs the regexp over the whole buffer and maps each match to
// its line; a match that crosses a line end is re-checked on its line
// alone, because rg never matches across lines.
func (s *fileSearcher) matchBuffer(data []byte) []span {
	var spans []span
	pos, n, counted := 0, 1, 0
	for pos < len(data) && len(spans) < s.maxMatches {
		var mStart, mEnd int
		if s.literal != nil {
			i := bytes.Index(data[pos:], s.literal)
			if i < 0 {
				break
			}
			mStart, mEnd = pos+i, pos+i+len(s.literal)
		} else {
			loc := s.re.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			mStart, mEnd = pos+loc[0], pos+loc[1]
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
func (s *fileSearcher) matchLines(data []byte) []span {
	var spans []span
	for n, pos := 1, 0; pos < len(data) && len(spans) < s.maxMatches; n++ {
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
	var starts []int // starts[i] is the offset of line i+1
	for pos := 0; pos < len(data); {
		starts = append(starts, pos)
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			break
		}
		pos += i + 1
	}
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
