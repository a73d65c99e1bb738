package finder

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentls/agentls/internal/ignore"
)

// DefaultFindLimit is how many paths Find returns when limit is ≤ 0.
const DefaultFindLimit = 1000

// FindResult is the files that matched a glob.
type FindResult struct {
	// Paths: slash paths relative to the root of fsys, sorted, at most limit.
	Paths []string
	// Truncated: more files matched than the limit; the walk stopped there.
	Truncated bool
	// Total counts the matches seen; a lower bound when Truncated.
	Total int
	// Unreadable is the directories the walk went past because they could
	// not be read: the result is complete only when it is empty.
	Unreadable ignore.Unreadable
}

// Find returns the files under dir whose path matches the glob pattern
// (doublestar syntax: *, ?, [a-z], {a,b}, **). A pattern without "/"
// matches the file name at any depth ("*.spec.ts"); a pattern with "/"
// matches the path relative to dir ("src/**/*.spec.ts"); a leading "./" or
// "/" is ignored. Only non-directories are listed (symlinks are listed, not
// followed); ignore rules apply unless includeIgnored, hidden files are
// included, .git never is. visible, when set, is asked about each file
// that matches (its path relative to the root) before it is counted: a
// file it refuses is left out and takes no place in the limit.
func Find(ctx context.Context, fsys fs.FS, m *ignore.Matcher, pattern, dir string, limit int, includeIgnored bool, visible func(rel string) bool) (FindResult, error) {
	if limit <= 0 {
		limit = DefaultFindLimit
	}
	if err := ValidatePattern(pattern); err != nil {
		return FindResult{}, err
	}
	dir, err := cleanDir(dir)
	if err != nil {
		return FindResult{}, fmt.Errorf("find: %w", err)
	}
	info, err := fs.Stat(fsys, fsPath(dir))
	if err != nil {
		return FindResult{}, fmt.Errorf("find in %s: %w", fsPath(dir), err)
	}
	if !info.IsDir() {
		return FindResult{}, fmt.Errorf("find in %s: %w", fsPath(dir), ErrNotDir)
	}

	pattern = normalizePattern(pattern)
	nameOnly := !strings.Contains(pattern, "/")
	start := dir
	if !nameOnly {
		// Walk only the pattern's literal leading directories.
		if base, _ := doublestar.SplitPattern(pattern); base != "." && !strings.ContainsRune(base, '\\') {
			start = join(dir, base)
			if _, err := fs.Lstat(fsys, start); err != nil {
				return FindResult{}, nil // nothing there to match
			}
		}
	}

	var res FindResult
	prefix := len(dir) + 1
	if dir == "" {
		prefix = 0
	}
	err = m.Walk(ctx, start, ignore.WalkOptions{IncludeIgnored: includeIgnored, Unreadable: res.Unreadable.Add}, func(rel string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		subject := d.Name()
		if !nameOnly {
			subject = rel[prefix:]
		}
		if !doublestar.MatchUnvalidated(pattern, subject) || visible != nil && !visible(rel) {
			return nil
		}
		res.Total++
		if len(res.Paths) >= limit {
			res.Truncated = true
			return fs.SkipAll
		}
		res.Paths = append(res.Paths, rel)
		return nil
	})
	if err != nil {
		return FindResult{}, fmt.Errorf("find %q in %s: %w", pattern, fsPath(dir), err)
	}
	slices.Sort(res.Paths) // Walk's order is already byte order; this keeps the contract explicit
	return res, nil
}

// normalizePattern drops a leading "./" or "/" (patterns are relative).
func normalizePattern(p string) string {
	for {
		switch {
		case strings.HasPrefix(p, "./"):
			p = p[2:]
		case strings.HasPrefix(p, "/"):
			p = p[1:]
		default:
			return p
		}
	}
}

const validExample = `valid examples: "*.ts", "src/**/*.spec.ts", "**/{a,b}/*.go"`

// ValidatePattern returns an actionable error for a glob Find cannot use.
func ValidatePattern(pattern string) error {
	p := normalizePattern(pattern)
	if p == "" {
		return fmt.Errorf("glob pattern is empty; %s", validExample)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return fmt.Errorf("glob %q: \"..\" cannot match; patterns are relative to the search path, so set path to the directory to search instead; %s", pattern, validExample)
		}
	}
	if doublestar.ValidatePattern(p) {
		return nil
	}
	return fmt.Errorf("invalid glob %q: %s; %s", pattern, diagnose(p), validExample)
}

// diagnose names the first syntax problem of an invalid glob.
func diagnose(p string) string {
	inClass, braces := false, 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			if i+1 == len(p) {
				return `trailing "\" escapes nothing (write "\\" for a literal backslash)`
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(p) && (p[i+1] == ']' || (p[i+1] == '!' || p[i+1] == '^') && i+2 < len(p) && p[i+2] == ']') {
				return `empty character class "[]" (write "\[" for a literal "[")`
			}
		case c == '{':
			braces++
		case c == '}':
			if braces == 0 {
				return `"}" without a matching "{" (write "\}" for a literal "}")`
			}
			braces--
		}
	}
	switch {
	case inClass:
		return `unclosed "[" (a character class like [a-z] needs "]"; write "\[" for a literal "[")`
	case braces > 0:
		return `unclosed "{" (alternatives like {ts,tsx} need "}"; write "\{" for a literal "{")`
	}
	return "not a valid glob"
}
