package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strings"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/mention"
)

const (
	// DefaultLimit is the number of matching lines shown when Query.Limit is 0.
	DefaultLimit = 100
	// MaxLimit is the largest Query.Limit a caller may ask for (the grep
	// tool's schema maximum); notices never suggest more.
	MaxLimit = 1000
	// MaxLineChars is the number of characters shown of one output line.
	MaxLineChars = 500
	// MaxOutputBytes bounds the whole result text, notices included.
	MaxOutputBytes = 50 * 1024
)

// BackendEnv names the environment variable that forces the Go backend
// when set to "go".
const BackendEnv = "AGENTLS_GREP_BACKEND"

// Backend names reported in Result.Backend.
const (
	BackendRg = "rg"
	BackendGo = "go"
)

// Query is one grep call.
type Query struct {
	Pattern        string
	Path           string // slash path relative to the root; "" = root; a file or a directory
	Glob           string // gitignore-style glob on paths relative to the root ("*.go", "src/**/*.ts", "!vendor")
	IgnoreCase     bool
	Literal        bool
	Context        int // lines of context before and after each match
	Limit          int // matching lines shown; 0 = DefaultLimit
	IncludeIgnored bool
	Hidden         bool // search dot-files and dot-directories (the tool defaults this to true)

	// The caller's limits; 0 = the package's defaults.
	MaxLimit  int // the largest Limit notices suggest (default MaxLimit)
	LineChars int // characters shown of one output line (default MaxLineChars)
	MaxBytes  int // bound on the whole text, notices included (default MaxOutputBytes)

	// Mask, when set, masks each line's text before it is cut and prefixed
	// with its path and number: a "KEY: value" secret is one only at the
	// start of a line, and a cut could split a secret.
	Mask func(string) (string, map[string]int)

	// names is how the client's model sees the tool names (from ctx), for
	// the hints that name a tool.
	names mention.Prefix
}

// Engine searches one workspace folder.
type Engine struct {
	Root    string // absolute OS path of the workspace folder (rg's working directory)
	FS      fs.FS  // the same folder; the Go backend and all checks read through it
	Matcher *ignore.Matcher
	RgPath  string // "" = use the Go backend
	// Prefix goes before every path the output names, so that the model
	// can pass it back to a tool: "" for the first workspace folder (whose
	// relative paths tools resolve), the folder's root and "/" for others.
	Prefix string
	// Owns, when set, says which files (relative to Root) this engine lists
	// in a SearchFolders: those another engine lists (an earlier workspace
	// folder inside this one, ops.Share) are left to it.
	Owns func(rel string) bool
	// Visible, when set, says which files (relative to Root) the
	// permission rules let the search read. A file it refuses is never
	// opened (neither searcher is handed it) and never counted toward a
	// limit; Result.Denied counts such files.
	Visible func(rel string) bool
	// RefusedNames, when set, says whether every file Visible refuses has
	// a base name matching one of globs (case-insensitive, gitignore
	// style: "*.pem", ".env*"); Visible may allow some of them. When ok,
	// rg walks a directory itself, told to skip those names (see
	// searchRgWalk); otherwise agentls walks and hands rg the files.
	// Unused when Visible is nil.
	RefusedNames func() (globs []string, ok bool)

	sizes sizes             // the Go searcher's buffer sizes; zero = defaults (tests lower them)
	trace func(step string) // tests: told "walk" when rg walked a directory itself
}

// Result is a rendered search.
type Result struct {
	Text        string         // what the model reads
	Matches     int            // matching lines shown
	Files       int            // files with lines shown
	LimitHit    bool           // more matches exist than Limit
	BytesCut    bool           // the text was cut at Query.MaxBytes
	PathIgnored bool           // Query.Path is ignored; nothing was searched
	Backend     string         // BackendRg or BackendGo
	Redactions  map[string]int // what Query.Mask masked in the lines shown, per kind
	// Unreadable is what the search walked past because it could not be
	// read (a directory or file without permission): the result is
	// complete only when it is empty.
	Unreadable ignore.Unreadable
	// Denied counts the files left unread because Engine.Visible refused
	// them.
	Denied int
}

// PathError reports a Query.Path that does not exist or leaves the folder.
type PathError struct {
	Path  string
	Err   error
	names mention.Prefix
}

func (e *PathError) Error() string {
	if errors.Is(e.Err, fs.ErrNotExist) {
		return e.names.Sprintf("path %q does not exist in the workspace; use {{find}} or {{ls}} to locate it, or omit path to search everything", e.Path)
	}
	return fmt.Sprintf("path %q: %v", e.Path, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// FindRg returns the path of rg, or "" when it is absent or BackendEnv=go
// forces the Go backend.
func FindRg() string {
	if os.Getenv(BackendEnv) == BackendGo {
		return ""
	}
	p, err := exec.LookPath("rg")
	if err != nil {
		return ""
	}
	return p
}

// target is a validated Query.Path.
type target struct {
	rel    string // cleaned, "" = root
	isDir  bool
	shown  string // how the path is named in notices
	fsPath string // rel as an fs.FS name ("." for the root)
}

// withDefaults fills the zero limits with the package's defaults.
func (q Query) withDefaults() Query {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	if q.MaxLimit <= 0 {
		q.MaxLimit = MaxLimit
	}
	if q.LineChars <= 0 {
		q.LineChars = MaxLineChars
	}
	if q.MaxBytes <= 0 {
		q.MaxBytes = MaxOutputBytes
	}
	q.Context = max(q.Context, 0)
	return q
}

func (e *Engine) backend() string {
	if e.RgPath != "" {
		return BackendRg
	}
	return BackendGo
}

// Search runs q. The error is non-nil only for invalid input (a bad regex
// or glob, *PathError) or a cancelled ctx; everything else is in Result.
func (e *Engine) Search(ctx context.Context, q Query) (Result, error) {
	q = q.withDefaults()
	q.names = mention.FromContext(ctx)
	t, err := e.resolve(q.names, q.Path)
	if err != nil {
		return Result{}, err
	}
	if isGitPath(t.rel) {
		return Result{
			Text:        q.names.Sprintf("%s is inside .git, which is never searched (it is git's database, not project files; includeIgnored does not change that). Use git through {{bash}} instead, e.g. git log -S<text> or git grep <pattern> <rev>.", t.shown),
			PathIgnored: true,
			Backend:     e.backend(),
		}, nil
	}
	if !q.IncludeIgnored && t.rel != "" && e.Matcher.Ignored(t.rel, t.isDir) {
		return Result{
			Text:        fmt.Sprintf("%s is ignored by .gitignore/.ignore/.agentlsignore rules, so nothing was searched. Call again with includeIgnored: true to search it.", t.shown),
			PathIgnored: true,
			Backend:     e.backend(),
		}, nil
	}
	c, err := e.collect(ctx, q, t, 0)
	if err != nil {
		return Result{}, err
	}
	res := render(c.files, q, t.shown, c.limitHit)
	res.Backend = e.backend()
	res.Unreadable = c.unreadable
	res.Denied = c.denied
	return res, nil
}

// SearchFolders runs q over the whole of every engine's folder (q.Path is
// ignored) and renders one result: the first engine's files first, as the
// engines are ordered, each path with its engine's Prefix. The limits hold
// for the whole result; folders after the one holding match Limit+1 are
// not searched.
func SearchFolders(ctx context.Context, engines []*Engine, q Query) (Result, error) {
	if len(engines) == 0 {
		return Result{}, errors.New("no workspace folder to search")
	}
	q = q.withDefaults()
	q.Path, q.names = "", mention.FromContext(ctx)
	var files []fileHits
	var unreadable ignore.Unreadable
	limitHit, matches, denied := false, 0, 0
	for i, e := range engines {
		if matches > q.Limit {
			limitHit = true // the folders left might add more
			break
		}
		t, err := e.resolve(q.names, "")
		if err != nil {
			return Result{}, err
		}
		c, err := e.collect(ctx, q, t, i)
		if err != nil {
			return Result{}, err
		}
		files = append(files, c.files...)
		unreadable.Merge(c.unreadable)
		denied += c.denied
		limitHit = limitHit || c.limitHit
		for _, f := range c.files {
			matches += f.matches
		}
	}
	res := render(files, q, "the workspace", limitHit)
	res.Backend = engines[0].backend()
	res.Unreadable = unreadable
	res.Denied = denied
	return res, nil
}

// collect runs the backend for t and returns what it kept, its paths
// carrying e.Prefix and rank.
func (e *Engine) collect(ctx context.Context, q Query, t target, rank int) (*collector, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if strings.ContainsAny(q.Pattern, "\n") {
		return nil, errors.New(q.names.Sprintf("invalid pattern: it contains a line break, but {{grep}} matches within single lines; search for one line of the text"))
	}
	var g *globMatcher
	if q.Glob != "" {
		var err error
		if g, err = compileGlob(q.Glob); err != nil {
			return nil, err
		}
	}
	var c *collector
	var err error
	if e.backend() == BackendRg {
		c, err = e.searchRg(ctx, q, t, g)
	} else {
		c, err = e.searchGo(ctx, q, t, g)
	}
	if err != nil {
		return nil, err
	}
	kept := c.files[:0]
	for _, f := range c.files {
		if e.Owns != nil && !e.Owns(f.path) {
			continue
		}
		f.path, f.rank = e.Prefix+f.path, rank
		kept = append(kept, f)
	}
	c.files = kept
	for i, p := range c.unreadable.Paths {
		c.unreadable.Paths[i] = e.Prefix + p
	}
	return c, nil
}

// visible applies Engine.Visible to a file the walk reached.
func (e *Engine) visible(rel string) bool { return e.Visible == nil || e.Visible(rel) }

// resolve validates a Query.Path against the folder; names are for the
// hints of its errors.
func (e *Engine) resolve(names mention.Prefix, p string) (target, error) {
	orig := p
	p = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(p, "\\", "/")), "/")
	if strings.HasPrefix(orig, "/") || strings.Contains("/"+strings.ReplaceAll(orig, "\\", "/")+"/", "/../") {
		return target{}, &PathError{Path: orig, Err: errors.New("must be relative to the workspace root and stay inside it"), names: names}
	}
	t := target{rel: p, shown: e.Prefix + p, fsPath: p}
	if p == "" {
		t.shown, t.fsPath = "the workspace", "."
		if e.Prefix != "" {
			t.shown = strings.TrimSuffix(e.Prefix, "/")
		}
	}
	info, err := fs.Stat(e.FS, t.fsPath)
	if err != nil {
		return target{}, &PathError{Path: orig, Err: err, names: names}
	}
	t.isDir = info.IsDir()
	if !t.isDir && !info.Mode().IsRegular() {
		// A FIFO would block the search until something writes to it.
		return target{}, &PathError{Path: orig, Err: fmt.Errorf(names.Render("is not a regular file (%s); {{grep}} searches files and directories"), info.Mode().Type()), names: names}
	}
	return t, nil
}

func isGitPath(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") || strings.HasSuffix(rel, "/.git")
}

// patternError refuses a pattern the searcher cannot compile, in the
// engine's words (without ripgrep's advice about flags grep does not have)
// and with what to do, the same from both searchers.
func patternError(names mention.Prefix, detail string) error {
	detail, _, _ = strings.Cut(detail, "Consider enabling PCRE2")
	return fmt.Errorf("invalid pattern: %s\n%s", strings.TrimSpace(detail), names.Render(patternHint(detail)))
}

// patternHint is the advice for one parse error, so that the hint matches
// what is wrong: an unbalanced bracket is a character to escape, not a
// missing feature. Both searchers' wordings are recognised.
func patternHint(detail string) string {
	d := strings.ToLower(detail)
	switch {
	case strings.Contains(d, "look-around") || strings.Contains(d, "perl syntax") ||
		strings.Contains(d, "invalid named capture: `(?<!") || strings.Contains(d, "invalid named capture: `(?<=") ||
		strings.Contains(d, "backreference") || strings.Contains(d, "invalid escape sequence: `\\1") ||
		strings.Contains(d, "invalid escape sequence: `\\2"):
		return "{{grep}} uses RE2 syntax (ripgrep's default): no look-around such as (?=…) or (?<!…), no backreferences such as \\1. Rewrite the pattern without them, or send literal: true to search for the text as it is."
	case strings.Contains(d, "missing closing )") || strings.Contains(d, "unclosed group") ||
		strings.Contains(d, "unexpected )") || strings.Contains(d, "unopened group"):
		return "A ( or ) in a regular expression opens or closes a group, and this one has no partner. To match the parenthesis itself, escape it as \\( or \\), or send literal: true to search for the text as it is."
	case strings.Contains(d, "missing closing ]") || strings.Contains(d, "unclosed character class"):
		return "A [ in a regular expression starts a character class, and this one is not closed. To match the bracket itself, escape it as \\[, or send literal: true to search for the text as it is."
	case strings.Contains(d, "repetition") || strings.Contains(d, "missing argument to repetition operator") || strings.Contains(d, "repetition operator missing expression"):
		return "*, + and ? repeat what comes before them, and here nothing does. To match the character itself, escape it (\\*, \\+, \\?), or send literal: true to search for the text as it is."
	}
	return "{{grep}} uses RE2 syntax (ripgrep's default). Escape characters that are special in a regular expression (\\. \\( \\[ \\{ \\* \\+ \\?), or send literal: true to search for the text as it is."
}
