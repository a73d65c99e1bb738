package search

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globMatcher applies Query.Glob the way rg applies --glob: gitignore
// style, relative to the folder root; a glob without "/" matches the base
// name at any depth; "!" excludes (directories too, with everything below
// them); a trailing "/" matches directories only; a positive glob selects
// files only.
type globMatcher struct {
	pat      string
	neg      bool
	anchored bool
	dirOnly  bool
}

func compileGlob(g string) (*globMatcher, error) {
	m := &globMatcher{pat: g}
	if strings.HasPrefix(m.pat, "!") {
		m.neg, m.pat = true, m.pat[1:]
	}
	if strings.HasSuffix(m.pat, "/") {
		m.dirOnly, m.pat = true, strings.TrimRight(m.pat, "/")
	}
	if strings.Contains(m.pat, "/") {
		m.anchored, m.pat = true, strings.TrimPrefix(m.pat, "/")
	}
	if m.pat == "" || !doublestar.ValidatePattern(m.pat) {
		return nil, fmt.Errorf("invalid glob %q: use patterns like *.go, src/**/*.ts or !vendor", g)
	}
	return m, nil
}

func (m *globMatcher) match(p string, isDir bool) bool {
	if m.dirOnly && !isDir {
		return false
	}
	if !m.anchored {
		p = path.Base(p)
	}
	ok, _ := doublestar.Match(m.pat, p)
	return ok
}

// allows reports whether file rel, found by walking below base, passes.
func (m *globMatcher) allows(rel, base string) bool {
	if !m.neg {
		return m.match(rel, false)
	}
	for d := path.Dir(rel); d != "." && d != base && len(d) > len(base); d = path.Dir(d) {
		if m.match(d, true) {
			return false
		}
	}
	return !m.match(rel, false)
}

// hiddenBelow reports whether rel has a dot-component below base.
func hiddenBelow(rel, base string) bool {
	if base != "" {
		rel = strings.TrimPrefix(strings.TrimPrefix(rel, base), "/")
	}
	for _, c := range strings.Split(rel, "/") {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return false
}
