package ignore

import (
	"strings"

	gitignore "github.com/boyter/gocodewalker/go-gitignore"
)

// rule is one compiled ignore-file line. It reproduces go-gitignore's
// pattern (name, path and "any" kinds, same tokens, same fnmatch flags) but
// matches with globMatch, which cannot backtrack exponentially, and
// memoizes "**" so a line of many "**" stays polynomial too.
type rule struct {
	negated   bool
	anchored  bool
	directory bool
	kind      ruleShape
	glob      string   // name and path rules: the fnmatch pattern
	parts     []string // any rules: one entry per non-separator token
	anyPart   []bool   // any rules: parts[i] is "**"
}

type ruleShape int

const (
	shapeName ruleShape = iota // no separator: matches the last component
	shapePath                  // a separator: matches the whole path
	shapeAny                   // a "**" token: matches components recursively
)

// compileRule turns a go-gitignore pattern back into its tokens and
// compiles them as go-gitignore's NewPattern does. A pattern's String is
// the concatenation of its tokens, and the lexer splits it the same way
// again, except that a leading "!" or "#" is only special where the lexer
// believes a line starts: the negation is taken from p instead, and the
// rest is lexed after a "/" (always a token of its own, dropped again), so
// a leading "!" or "#" stays literal as it was. ok is false if the line
// yields no tokens.
func compileRule(p gitignore.Pattern) (r rule, ok bool) {
	text := p.String()
	if p.Include() {
		r.negated = true
		text = strings.TrimPrefix(text, "!")
	}
	lx := gitignore.NewLexer(strings.NewReader("/" + text))
	var tokens []*gitignore.Token
	for {
		t, err := lx.Next()
		if err != nil || t == nil || t.Type == gitignore.EOF || t.Type == gitignore.EOL {
			break
		}
		tokens = append(tokens, t)
	}
	if len(tokens) <= 1 {
		return rule{}, false
	}
	tokens = tokens[1:]
	if len(tokens) > 0 && tokens[0].Type == gitignore.SEPARATOR {
		r.anchored = true
		tokens = tokens[1:]
	}
	if n := len(tokens); n > 0 && tokens[n-1].Type == gitignore.SEPARATOR {
		r.directory = true
		tokens = tokens[:n-1]
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(t.Token())
		switch t.Type {
		case gitignore.ANY:
			r.kind = shapeAny
		case gitignore.SEPARATOR:
			if r.kind == shapeName {
				r.kind = shapePath
			}
		}
	}
	r.glob = b.String()
	if r.kind == shapeAny {
		for _, t := range tokens {
			if t.Type != gitignore.SEPARATOR {
				r.parts = append(r.parts, t.Token())
				r.anyPart = append(r.anyPart, t.Type == gitignore.ANY)
			}
		}
	}
	return r, true
}

// match reports whether the rule matches p (relative to the rule file's
// directory); isDir matters for directory-only rules.
func (r *rule) match(p string, isDir bool) bool {
	if r.directory && !isDir {
		return false
	}
	switch r.kind {
	case shapeName:
		if r.anchored {
			// "/*.md" names entries of the rule's own directory only: its
			// wildcards must not cross a "/" (go-gitignore lets them).
			return globMatch(r.glob, p, true)
		}
		return globMatch(r.glob, p[strings.LastIndexByte(p, '/')+1:], false)
	case shapePath:
		return globMatch(r.glob, p, true)
	}
	comps := strings.Split(p, "/")
	// failed[i*(len(parts)+1)+j]: comps[i:] against parts[j:] did not match.
	var buf [64]bool
	failed := buf[:0]
	if n := (len(comps) + 1) * (len(r.parts) + 1); n <= len(buf) {
		failed = buf[:n]
	} else {
		failed = make([]bool, n)
	}
	return r.matchAny(comps, 0, 0, failed)
}

// matchAny is go-gitignore's recursive "**" matching of comps[i:] against
// parts[j:], memoizing failures so repeated "**" stay polynomial.
func (r *rule) matchAny(comps []string, i, j int, failed []bool) bool {
	k := i*(len(r.parts)+1) + j
	if failed[k] {
		return false
	}
	var ok bool
	switch {
	case j == len(r.parts):
		ok = i == len(comps)
	case r.anyPart[j]:
		ok = r.matchAny(comps, i, j+1, failed) || (i < len(comps) && r.matchAny(comps, i+1, j, failed))
	default:
		ok = i < len(comps) && globMatch(r.parts[j], comps[i], true) && r.matchAny(comps, i+1, j+1, failed)
	}
	if !ok {
		failed[k] = true
	}
	return ok
}
