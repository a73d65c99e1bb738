package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/proc"
)

// rgArgs builds the rg command line for q (everything but the binary).
// rg runs in the folder's root when atRoot, else in the searched
// directory (see runRg): the root's .agentlsignore is then not passed,
// since rg would match its patterns relative to the wrong directory
// (results are post-filtered through the Matcher anyway).
func (e *Engine) rgArgs(q Query, atRoot bool, extra []string, paths ...string) []string {
	args := []string{
		"--json", "--no-require-git", "--no-config",
		// rg would read parent ignore files beyond the repository too
		// (--no-require-git), and reads the global excludes from fewer
		// git config files than git; the Matcher, which results pass
		// through, applies the repository's own and git's global ones.
		"--no-ignore-parent", "--no-ignore-global",
		"--crlf",
		// rg memory-maps a file given by name when it is given few; a
		// binary one given by name is searched to its end, so a 2 GiB
		// sparse file became 2 GiB of resident pages. Read, not mapped.
		"--no-mmap",
		// No file can contribute more than limit+1 matches to the result.
		"--max-count", strconv.Itoa(q.Limit + 1),
	}
	if q.Hidden {
		args = append(args, "--hidden")
	}
	if q.IncludeIgnored {
		args = append(args, "--no-ignore")
	} else if info, err := fs.Stat(e.FS, ".agentlsignore"); atRoot && err == nil && info.Mode().IsRegular() {
		// Prunes early what the root .agentlsignore hides; results are
		// post-filtered through the Matcher anyway, which is exact.
		args = append(args, "--ignore-file", ".agentlsignore")
	}
	if q.IgnoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.Literal {
		args = append(args, "--fixed-strings")
	}
	if q.Context > 0 {
		args = append(args, "--context", strconv.Itoa(q.Context))
	}
	if q.Glob != "" {
		args = append(args, "--glob", q.Glob)
	}
	// After the user's glob, so that a whitelist like "**" cannot re-include it.
	args = append(args, "--glob", "!.git")
	args = append(args, extra...)
	args = append(args, "-e", q.Pattern, "--")
	return append(args, paths...)
}

// rgText is rg's representation of a path or line: text, or base64 bytes
// when it is not valid UTF-8.
type rgText struct {
	Text  *string `json:"text"`
	Bytes string  `json:"bytes"`
}

func (t rgText) raw() []byte {
	if t.Text != nil {
		return []byte(*t.Text)
	}
	b, err := base64.StdEncoding.DecodeString(t.Bytes)
	if err != nil {
		return nil
	}
	return b
}

type rgLineEvent struct {
	Data struct {
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
	} `json:"data"`
}

type rgPathEvent struct {
	Data struct {
		Path rgText `json:"path"`
	} `json:"data"`
}

var (
	evBegin   = []byte(`{"type":"begin"`)
	evMatch   = []byte(`{"type":"match"`)
	evContext = []byte(`{"type":"context"`)
	evEnd     = []byte(`{"type":"end"`)
	notBinary = []byte(`"binary_offset":null`)
)

// rgStderrMax bounds how much of rg's stderr is kept for error messages.
const rgStderrMax = 4096

// Batches of explicit files for rg: small first (dense
// patterns finish in the first batch), growing to amortize rg's start;
// rgWorkers of them run at once, beside the walk.
const (
	firstBatch = 128
	maxBatch   = 2048
	rgWorkers  = 2
)

// searchRg runs rg over the target. For a directory agentls's own engine
// is the judge of what is searched: the Matcher walks (ignore rules as git
// decides them, which rg's own gitignore matcher does not always do, e.g.
// "src/[x\\]") and Engine.Visible drops what the permission rules hide, so
// rg is only ever handed files it may open (searchRgOrdered).
func (e *Engine) searchRg(ctx context.Context, q Query, t target, g *globMatcher) (*collector, error) {
	if t.isDir {
		c, err := e.searchRgWalk(ctx, q, t, g)
		if errors.Is(err, errSwitch) {
			c, err = e.searchRgOrdered(ctx, q, t, g)
		}
		if err != nil {
			return nil, err
		}
		// Below the directory rg starts in it opens names, which a swap
		// can turn into symlinks: what it found is checked.
		return c, e.verifyRg(ctx, c)
	}
	c := newCollector(q.Limit)
	if !e.visible(t.rel) {
		c.denied++
		return c, nil
	}
	// A file is read from the descriptor agentls opened (stdin).
	return c, e.runRg(ctx, q, t, c, t.fsPath)
}

// searchRgOrdered walks the target with the Matcher (path order) and runs
// rg on batches of explicit files until more than q.Limit matches are in.
// Explicit files bypass rg's ignore, hidden and glob handling, so the walk
// applies all three. Up to rgWorkers batches run while the walk goes on,
// each rg into a collector of its own, merged in any order: the collector
// keeps the first matches in path order whatever order they come in, and
// the batches not yet started when the limit is passed sort after every
// file seen.
func (e *Engine) searchRgOrdered(ctx context.Context, q Query, t target, g *globMatcher) (*collector, error) {
	c := newCollector(q.Limit)
	var (
		mu      sync.Mutex // guards c and runErr
		runErr  error
		stopped atomic.Bool // the limit is passed, or a run failed
		wg      sync.WaitGroup
	)
	batches := make(chan []string)
	for range rgWorkers {
		wg.Go(func() {
			for batch := range batches {
				sub := newCollector(q.Limit)
				err := e.runRg(ctx, q, t, sub, batch...)
				mu.Lock()
				if err != nil {
					if runErr == nil {
						runErr = err
					}
					stopped.Store(true)
				} else {
					c.merge(sub)
					if c.seen > q.Limit {
						stopped.Store(true)
					}
				}
				mu.Unlock()
			}
		})
	}
	var batch []string
	size := firstBatch
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		select {
		case batches <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
		batch, size = nil, min(2*size, maxBatch)
		return nil
	}
	opts := ignore.WalkOptions{IncludeIgnored: q.IncludeIgnored, SkipHidden: !q.Hidden, Unreadable: func(p string, err error) {
		mu.Lock()
		c.unreadable.Add(p, err)
		mu.Unlock()
	}}
	denied := 0
	err := e.Matcher.Walk(ctx, t.rel, opts, func(rel string, d fs.DirEntry) error {
		if stopped.Load() {
			return fs.SkipAll
		}
		if !d.Type().IsRegular() || g != nil && !g.allows(rel, t.rel) {
			return nil
		}
		if !e.visible(rel) {
			denied++
			return nil
		}
		if batch = append(batch, rel); len(batch) >= size {
			return send()
		}
		return nil
	})
	if err == nil && !stopped.Load() {
		err = send()
	}
	close(batches)
	wg.Wait()
	c.denied += denied
	if runErr != nil {
		return nil, runErr
	}
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, err
	}
	return c, nil
}

// runRg runs one rg process over paths into c.
//
// rg starts in the directory searched, opened through Engine.FS (an
// os.Root: no symlink out of the folder is followed) and set as its
// working directory from that descriptor (proc.ChildDir), with paths
// relative to it; a file searched is opened the same way and given as
// stdin. rg opens a path given on its command line through any symlink,
// so a directory or file swapped for a symlink to outside after the
// checks would otherwise be read. Below that directory rg follows no
// symlink it lists.
func (e *Engine) runRg(ctx context.Context, q Query, t target, c *collector, paths ...string) error {
	return e.rg(ctx, q, t, c, nil, paths...)
}

// rg runs one rg process into c: over paths, or with w over the
// directory t itself (searchRgWalk).
func (e *Engine) rg(ctx context.Context, q Query, t target, c *collector, w *rgWalk, paths ...string) error {
	var extra []string
	if w != nil {
		paths = []string{t.fsPath}
		extra = append(extra, "--debug") // what rg walks past (rgLog)
		for _, x := range w.exclude {
			extra = append(extra, "--iglob", "!"+x)
		}
		// Entries below the levels agentls's walk reaches: rg skips and
		// logs them, and the ordered search says what it did not enter.
		extra = append(extra, "--glob", "!/"+strings.Repeat("*/", tooDeep-1)+"*")
	}
	dir, stdin, err := e.rgOpen(t)
	if err != nil {
		return err
	}
	defer dir.Close()
	args := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case stdin != nil:
			args = append(args, "-")
		case p == t.fsPath:
			args = append(args, ".")
		default:
			rel := strings.TrimPrefix(p, t.rel+"/")
			if rel == "-" {
				rel = "./-" // rg reads "-" as stdin, even after "--"
			}
			args = append(args, rel)
		}
	}
	rq, post := rgGlob(q, t)
	cmd := exec.CommandContext(ctx, e.RgPath, e.rgArgs(rq, t.rel == "" || stdin != nil, extra, args...)...)
	cmd.Dir = filepath.Join(e.Root, filepath.FromSlash(t.rel))
	if stdin != nil {
		defer stdin.Close()
		cmd.Stdin = stdin
		cmd.Dir = e.Root
	}
	if d := proc.ChildDir(dir); d != "" {
		cmd.Dir = d
	}
	stderr := &capWriter{max: rgStderrMax}
	cmd.Stderr = stderr
	var log *rgLog
	if w != nil {
		log = &rgLog{w: w, errs: stderr}
		cmd.Stderr = log
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("grep: rg stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("grep: start rg: %w", err)
	}
	perr := e.parseRg(bufio.NewReaderSize(out, 256<<10), q, t, post, w, c)
	if perr != nil {
		_ = cmd.Process.Kill() // rg must not outlive an abandoned read
	}
	werr := cmd.Wait()
	if log != nil {
		log.flush()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(perr, errSwitch) {
		return errSwitch
	}
	if perr != nil {
		return fmt.Errorf("grep: reading rg output: %w", perr)
	}
	var exit *exec.ExitError
	if errors.As(werr, &exit) && exit.ExitCode() == 2 {
		msg := strings.TrimSpace(stderr.String())
		// Exit 2 also reports unreadable files next to real results; only a
		// pattern or glob error is the caller's problem.
		if strings.Contains(msg, "regex parse error") || strings.Contains(msg, "not allowed in a regex") || strings.HasPrefix(msg, "error parsing glob") {
			return patternError(q.names, msg)
		}
		// The path searched itself could not be read: not "no matches"
		// (the Go searcher's walk refuses it the same way).
		if reason, ok := rgUnreadable(msg, "."); ok && stdin == nil {
			return fmt.Errorf("grep: cannot search %s: %s", t.shown, reason)
		}
		// What rg walked past: directories and files below it.
		for _, u := range rgUnreadables(msg) {
			p := rgResultPath(t, u.path)
			if w == nil || e.walkReaches(q, t, p) {
				c.unreadable.AddReason(p, u.reason)
			}
		}
	} else if werr != nil && !errors.As(werr, &exit) {
		return fmt.Errorf("grep: rg: %w", werr)
	}
	return nil
}

// parseRg reads rg's JSON events into c. Lines of files that can no longer
// be shown are counted but not decoded.
func (e *Engine) parseRg(r *bufio.Reader, q Query, t target, post *globMatcher, w *rgWalk, c *collector) error {
	var (
		cur     fileHits
		skip    bool // current file sorts after the collector's cutoff
		scratch []byte
	)
	for {
		ev, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An event longer than the buffer: held up to rgEventMax; a
			// line event beyond it keeps only its number and start.
			var n int
			var start []byte
			match := bytes.HasPrefix(ev, evMatch)
			if ev, n, start, err = readLongEvent(r, ev, scratch); err == nil && ev == nil {
				if match {
					cur.matches++
				}
				if !skip {
					cur.lines = append(cur.lines, line{n: n, text: decodeLine(start), match: match})
				}
				continue
			}
			scratch = ev
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch {
		case bytes.HasPrefix(ev, evMatch) || bytes.HasPrefix(ev, evContext):
			match := bytes.HasPrefix(ev, evMatch)
			if match {
				cur.matches++
			}
			if skip {
				continue
			}
			var le rgLineEvent
			if err := json.Unmarshal(ev, &le); err != nil {
				return fmt.Errorf("decode rg event: %w", err)
			}
			cur.lines = append(cur.lines, line{n: le.Data.LineNumber, text: decodeLine(le.Data.Lines.raw()), match: match})
		case bytes.HasPrefix(ev, evBegin):
			var pe rgPathEvent
			if err := json.Unmarshal(ev, &pe); err != nil {
				return fmt.Errorf("decode rg event: %w", err)
			}
			p := rgResultPath(t, string(pe.Data.Path.raw()))
			cur = fileHits{path: p}
			skip = c.beyond(p)
		case bytes.HasPrefix(ev, evEnd):
			// rg stops at a NUL and flags the file; the Go backend skips
			// such files whole, so do the same.
			binary := !bytes.Contains(ev, notBinary)
			if !binary && e.keepRgFile(q, t, cur.path) && (post == nil || post.allows(cur.path, t.rel)) && w.keeps(e, t, cur.path, c) {
				if skip {
					cur.lines = nil
				}
				c.add(cur)
			}
			cur = fileHits{}
			if w != nil && w.switchAt > 0 && c.seen >= w.switchAt {
				return errSwitch
			}
		}
	}
}

// rgOpen opens what runRg starts rg in: the directory t names, or for a
// file the folder's root and the file itself (rg reads it as stdin).
func (e *Engine) rgOpen(t target) (dir, stdin *os.File, err error) {
	open := func(name string, wantDir bool) (*os.File, error) {
		f, err := e.FS.Open(name)
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("grep: cannot search %s: permission denied", t.shown)
		}
		if err != nil {
			return nil, fmt.Errorf("grep: open %s: %w", t.shown, err)
		}
		of, ok := f.(*os.File)
		fi, serr := f.Stat()
		switch {
		case !ok:
			err = fmt.Errorf("grep: rg needs the folder on disk, not %T", f)
		case serr != nil:
			err = fmt.Errorf("grep: stat %s: %w", t.shown, serr)
		case removed(fi):
			// An os.Root still opens a folder deleted meanwhile; rg
			// would find it empty.
			err = fmt.Errorf("grep: cannot search %s: %w", t.shown, fs.ErrNotExist)
		case wantDir && !fi.IsDir(), !wantDir && !fi.Mode().IsRegular():
			// Swapped since resolve checked it.
			err = fmt.Errorf("grep: %s changed while it was being searched; search again", t.shown)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return of, nil
	}
	if t.isDir {
		dir, err = open(t.fsPath, true)
		return dir, nil, err
	}
	if dir, err = open(".", true); err != nil {
		return nil, nil, err
	}
	if stdin, err = open(t.fsPath, false); err != nil {
		dir.Close()
		return nil, nil, err
	}
	return dir, stdin, nil
}

// rgResultPath maps a path rg printed (relative to the directory it ran
// in, "<stdin>" for a file searched) to the folder-relative form.
func rgResultPath(t target, p string) string {
	if !t.isDir {
		return t.rel
	}
	p = filepath.ToSlash(filepath.Clean(p))
	switch {
	case p == ".":
		return t.rel
	case t.rel == "":
		return p
	}
	return t.rel + "/" + p
}

// rgGlob returns q with its glob as rg must see it when it runs in the
// searched directory t rather than the folder's root, rg matching globs
// relative to its working directory: an anchored glob under t's own path
// is re-anchored at t; any other anchored glob is left to post, applied
// to the results (rg's glob would match nothing).
func rgGlob(q Query, t target) (Query, *globMatcher) {
	g := q.Glob
	if g == "" || t.rel == "" || !t.isDir {
		return q, nil
	}
	neg := strings.HasPrefix(g, "!")
	pat := strings.TrimPrefix(g, "!")
	body := strings.TrimPrefix(strings.TrimSuffix(pat, "/"), "/")
	if !strings.Contains(body, "/") {
		return q, nil // a base name at any depth: the same from anywhere
	}
	if rest, ok := strings.CutPrefix(pat, "/"); ok {
		pat = rest
	}
	if rest, ok := strings.CutPrefix(pat, t.rel+"/"); ok && rest != "" && !strings.HasPrefix(rest, "/") {
		q.Glob = "/" + rest
		if neg {
			q.Glob = "!" + q.Glob
		}
		return q, nil
	}
	m, err := compileGlob(g)
	if err != nil {
		return q, nil // rg reports it
	}
	q.Glob = ""
	return q, m
}

// keepRgFile applies what rg's --glob overrides: a glob-selected file is
// searched by rg even when ignored or hidden, never by the Matcher's rules.
func (e *Engine) keepRgFile(q Query, t target, p string) bool {
	if !t.isDir {
		return true
	}
	if !q.Hidden && hiddenBelow(p, t.rel) {
		return false
	}
	return q.IncludeIgnored || !e.Matcher.Ignored(p, false)
}

// capWriter keeps the first max bytes written to it.
type capWriter struct {
	buf bytes.Buffer
	max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *capWriter) String() string { return w.buf.String() }

// rgUnreadables lists rg's reports of paths it could not read
// ("./locked: Permission denied (os error 13)"), paths cleaned to the
// folder-relative slash form, reasons as the Go side words them. A path
// gone since rg listed it is left out, as the Go walk leaves it out.
func rgUnreadables(stderr string) []struct{ path, reason string } {
	var out []struct{ path, reason string }
	for _, l := range strings.Split(stderr, "\n") {
		name, reason, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "rg: "), ": ")
		i := strings.Index(reason, " (os error")
		if !ok || i < 0 {
			continue
		}
		// Gone since rg listed it: not unreadable (the Go walk agrees).
		if r := strings.ToLower(reason[:i]); r == "no such file or directory" || r == "not a directory" {
			continue
		}
		out = append(out, struct{ path, reason string }{
			filepath.ToSlash(filepath.Clean(name)), strings.ToLower(reason[:i]),
		})
	}
	return out
}

// rgUnreadable finds rg's report that path could not be read
// ("locked: Permission denied (os error 13)") and returns the reason.
func rgUnreadable(stderr, path string) (string, bool) {
	for _, l := range strings.Split(stderr, "\n") {
		name, reason, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "rg: "), ": ")
		if i := strings.Index(reason, " (os error"); ok && i >= 0 && filepath.Clean(name) == filepath.Clean(path) {
			return strings.ToLower(reason[:i]), true // as the Go searcher words it
		}
	}
	return "", false
}
