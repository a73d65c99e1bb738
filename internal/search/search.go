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
}

// Engine searches one workspace folder.
type Engine struct {
	Root    string // absolute OS path of the workspace folder (rg's working directory)
	FS      fs.FS  // the same folder; the Go backend and all checks read through it
	Matcher *ignore.Matcher
	RgPath  string // "" = use the Go backend
}

// Result is a rendered search.
type Result struct {
	Text        string // what the model reads
	Matches     int    // matching lines shown
	Files       int    // files with lines shown
	LimitHit    bool   // more matches exist than Limit
	BytesCut    bool   // the text was cut at Query.MaxBytes
	PathIgnored bool   // Query.Path is ignored; nothing was searched
	Backend     string // BackendRg or BackendGo
}

// PathError reports a Query.Path that does not exist or leaves the folder.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string {
	if errors.Is(e.Err, fs.ErrNotExist) {
		return fmt.Sprintf("path %q does not exist in the workspace; use find or ls to locate it, or omit path to search everything", e.Path)
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

// Search runs q. The error is non-nil only for invalid input (a bad regex
// or glob, *PathError) or a cancelled ctx; everything else is in Result.
func (e *Engine) Search(ctx context.Context, q Query) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	q = q.withDefaults()
	backend := BackendGo
	if e.RgPath != "" {
		backend = BackendRg
	}
	t, err := e.resolve(q.Path)
	if err != nil {
		return Result{}, err
	}
	if isGitPath(t.rel) {
		return Result{
			Text:        fmt.Sprintf("%s is inside .git, which is never searched (it is git's database, not project files; includeIgnored does not change that). Use git through bash instead, e.g. git log -S<text> or git grep <pattern> <rev>.", t.shown),
			PathIgnored: true,
			Backend:     backend,
		}, nil
	}
	if !q.IncludeIgnored && t.rel != "" && e.Matcher.Ignored(t.rel, t.isDir) {
		return Result{
			Text:        fmt.Sprintf("%s is ignored by .gitignore/.ignore/.agentlsignore rules, so nothing was searched. Call again with includeIgnored: true to search it.", t.shown),
			PathIgnored: true,
			Backend:     backend,
		}, nil
	}
	if strings.ContainsAny(q.Pattern, "\n") {
		return Result{}, errors.New("invalid pattern: it contains a line break, but grep matches within single lines; search for one line of the text")
	}
	var g *globMatcher
	if q.Glob != "" {
		if g, err = compileGlob(q.Glob); err != nil {
			return Result{}, err
		}
	}
	var c *collector
	if backend == BackendRg {
		c, err = e.searchRg(ctx, q, t, g)
	} else {
		c, err = e.searchGo(ctx, q, t, g)
	}
	if err != nil {
		return Result{}, err
	}
	res := render(c.files, q, t.shown, c.limitHit)
	res.Backend = backend
	return res, nil
}

// resolve validates a Query.Path against the folder.
func (e *Engine) resolve(p string) (target, error) {
	orig := p
	p = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(p, "\\", "/")), "/")
	if strings.HasPrefix(orig, "/") || strings.Contains("/"+strings.ReplaceAll(orig, "\\", "/")+"/", "/../") {
		return target{}, &PathError{Path: orig, Err: errors.New("must be relative to the workspace root and stay inside it")}
	}
	t := target{rel: p, shown: p, fsPath: p}
	if p == "" {
		t.shown, t.fsPath = "the workspace", "."
	}
	info, err := fs.Stat(e.FS, t.fsPath)
	if err != nil {
		return target{}, &PathError{Path: orig, Err: err}
	}
	t.isDir = info.IsDir()
	if !t.isDir && !info.Mode().IsRegular() {
		// A FIFO would block the search until something writes to it.
		return target{}, &PathError{Path: orig, Err: fmt.Errorf("is not a regular file (%s); grep searches files and directories", info.Mode().Type())}
	}
	return t, nil
}

func isGitPath(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") || strings.HasSuffix(rel, "/.git")
}
