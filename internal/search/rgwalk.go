package search

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/agentls/agentls/internal/ignore"
)

// rg walking a directory itself is the same search as agentls's walk
// handing it the files (searchRgOrdered), at the CPU cost of raw rg, when
// what rg walks past is known: rg logs every entry its ignore rules, hidden
// check and globs skip (--debug, "ignoring PATH: Ignore(IgnoreMatch(...))"),
// and each is judged by agentls's own rules. A skipped file agentls would
// search is searched after, as an explicit path; a skipped directory it
// would enter sends the whole search back to the ordered walk. What rg
// reports beyond agentls's rules is dropped (parseRg, rgWalk.keeps). The
// permission rules cannot be left to a filter, since a denied file must
// never be opened: rg walks only when Engine.RefusedNames says every file
// Visible refuses has one of a few base names, and rg is told to skip
// those names.

// errSwitch stops rg's own walk in favour of the ordered search.
var errSwitch = errors.New("grep: rg walk abandoned for the ordered search")

// switchFactor: once rg's walk has seen this many times limit+1 matches,
// the dense case is cheaper in path order, which stops at the limit.
const switchFactor = 5

// tooDeep is the fewest path components below the walk's start of an
// entry agentls's walk never reaches: it searches files up to
// ignore.MaxWalkDepth+1 components down and enters no directory deeper.
const tooDeep = ignore.MaxWalkDepth + 2

// maxSkipped bounds the skipped entries kept from one rg walk; beyond it
// the ordered search takes over.
const maxSkipped = 1 << 16

// rgWalk is one rg process walking a directory itself.
type rgWalk struct {
	exclude  []string     // base-name globs rg must not open (RefusedNames)
	g        *globMatcher // Query.Glob as agentls applies it
	switchAt int          // stop with errSwitch once this many matches are seen

	// Filled from rg's stderr while it runs (rgLog); read after Wait.
	skipped []string // entries rg walked past, relative to its directory
	unsure  bool     // a log line could not be read, or too many: skipped is incomplete
	logged  bool     // rg's debug log was seen at all (an rg without it is not trusted)
}

// keeps reports whether a file rg reported in its walk is one agentls's
// walk would have searched, beyond what keepRgFile checks; nil w (explicit
// paths, already judged) keeps everything.
func (w *rgWalk) keeps(e *Engine, t target, p string, c *collector) bool {
	if w == nil {
		return true
	}
	if w.g != nil && !w.g.allows(p, t.rel) {
		return false
	}
	if !e.visible(p) {
		c.denied++ // not expected: rg was told to skip such names
		return false
	}
	return true
}

// walkable reports whether rg may walk a directory itself, and the names
// it must then skip.
func (e *Engine) walkable() ([]string, bool) {
	if e.Visible == nil {
		return nil, true
	}
	if e.RefusedNames == nil {
		return nil, false
	}
	return e.RefusedNames()
}

// searchRgWalk lets rg walk the directory t, then searches the files it
// walked past that agentls would have searched. errSwitch: the ordered
// search must run instead (the permission rules cannot be given to rg, rg
// skipped a directory agentls would enter, its log was not readable, or
// matches are dense).
func (e *Engine) searchRgWalk(ctx context.Context, q Query, t target, g *globMatcher) (*collector, error) {
	exclude, ok := e.walkable()
	if !ok {
		return nil, errSwitch
	}
	c := newCollector(q.Limit)
	w := &rgWalk{exclude: exclude, g: g, switchAt: switchFactor * (q.Limit + 1)}
	if err := e.rg(ctx, q, t, c, w); err != nil {
		return nil, err
	}
	if w.unsure || !w.logged {
		return nil, errSwitch
	}
	var files []string
	for _, s := range w.skipped {
		p := rgResultPath(t, s)
		switch e.judgeSkipped(q, t, g, p) {
		case skipAgreed:
		case skipDenied:
			c.denied++
			if e.trace != nil {
				e.trace("denied unopened: " + p)
			}
		case skipMissed:
			files = append(files, p)
		default:
			return nil, errSwitch
		}
	}
	for len(files) > 0 {
		n := min(len(files), maxBatch)
		if err := e.runRg(ctx, q, t, c, files[:n]...); err != nil {
			return nil, err
		}
		files = files[n:]
	}
	if e.trace != nil {
		e.trace("walk")
	}
	return c, nil
}

// What an entry rg walked past is to agentls's walk.
const (
	skipAgreed = iota // the walk would not search it either
	skipDenied        // a file the walk reaches and Visible refuses
	skipMissed        // a file the walk would search
	skipSwitch        // a directory the walk would enter, or unknown
)

// judgeSkipped decides an entry p (folder-relative, below t) that rg's
// walk skipped, as searchRgOrdered's walk would.
func (e *Engine) judgeSkipped(q Query, t target, g *globMatcher, p string) int {
	if t.rel != "" && !strings.HasPrefix(p, t.rel+"/") {
		return skipSwitch
	}
	if isGitPath(p) || !q.Hidden && hiddenBelow(p, t.rel) {
		return skipAgreed
	}
	if strings.Count(strings.TrimPrefix(p, t.rel+"/"), "/")+1 >= tooDeep {
		return skipSwitch // the ordered search names the directory it did not enter
	}
	fi, err := fs.Lstat(e.FS, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return skipAgreed // gone since rg listed it
	case err != nil:
		return skipSwitch
	case fi.IsDir():
		if !q.IncludeIgnored && e.Matcher.Ignored(p, true) || g != nil && g.neg && g.match(p, true) {
			return skipAgreed
		}
		return skipSwitch
	case !fi.Mode().IsRegular():
		return skipAgreed // the walk searches regular files only
	case !q.IncludeIgnored && e.Matcher.Ignored(p, false), g != nil && !g.allows(p, t.rel):
		return skipAgreed
	case !e.visible(p):
		return skipDenied
	}
	return skipMissed
}

// walkReaches reports whether agentls's walk of t would reach p, a path
// rg's walk could not read: it is reported only then.
func (e *Engine) walkReaches(q Query, t target, p string) bool {
	if p == t.rel || q.IncludeIgnored {
		return true
	}
	if !q.Hidden && hiddenBelow(p, t.rel) {
		return false
	}
	fi, err := fs.Lstat(e.FS, p)
	return !e.Matcher.Ignored(p, err == nil && fi.IsDir())
}

// rgLog reads rg's --debug stderr: the entries its walk skipped go to w,
// other debug lines are dropped, and the rest (errors) go to errs.
type rgLog struct {
	w       *rgWalk
	errs    *capWriter
	partial []byte
}

var (
	logDebug    = []byte("DEBUG|")
	logWalk     = []byte("DEBUG|ignore::walk|")
	logSubject  = []byte("DEBUG|rg::subject|") // a non-regular file, never searched by agentls either
	logIgnoring = []byte(": ignoring ")
	logReason   = []byte(": Ignore(IgnoreMatch(")
)

func (l *rgLog) Write(p []byte) (int, error) {
	n := len(p)
	if len(l.partial) > 0 {
		p = append(l.partial, p...)
		l.partial = nil
	}
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial[:0], p...)
			return n, nil
		}
		l.line(p[:i+1])
		p = p[i+1:]
	}
}

// flush takes a last line without its '\n' (once rg has exited).
func (l *rgLog) flush() {
	if len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = nil
	}
}

// line takes one line of stderr, its '\n' included. A skipped path is
// read only when unambiguous: exactly one reason marker (a name holding
// one, or a line break, leaves the walk unsure), and a skip logged in a
// form not known here (another rg version) leaves it unsure too.
func (l *rgLog) line(b []byte) {
	if !bytes.HasPrefix(b, logDebug) {
		l.errs.Write(b)
		return
	}
	l.w.logged = true
	_, rest, ok := bytes.Cut(b, logIgnoring)
	if !ok || bytes.HasPrefix(b, logSubject) {
		return
	}
	if !bytes.HasPrefix(b, logWalk) {
		l.w.unsure = true
		return
	}
	name, _, ok := bytes.Cut(rest, logReason)
	if !ok || bytes.Count(rest, logReason) != 1 || bytes.ContainsRune(name, '\uFFFD') {
		l.w.unsure = true // not UTF-8 (rg shows it lossily) or not readable
		return
	}
	if len(l.w.skipped) >= maxSkipped {
		l.w.unsure = true
		return
	}
	l.w.skipped = append(l.w.skipped, string(name))
}
