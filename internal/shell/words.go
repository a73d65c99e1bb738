package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is one shell word as the classifier sees it: its literal value where
// known, and what about it is decided only at run time.
type word struct {
	node *syntax.Word
	// lit is the value with quotes and escapes removed. Parts that are not
	// literal contribute nothing, so check dyn before trusting it.
	lit string
	// dyn: some part is an expansion ($x, $(...), $((...)), <(...), $'...').
	dyn bool
	// glob: an unquoted glob or brace pattern (the text is literal, the
	// words it becomes are not).
	glob bool
	// tilde: starts with an unquoted ~, so the path is not the text.
	tilde bool
	// mayFlag: after expansion the word could start with '-' or split into
	// several words, so it could become an option the checker never saw.
	mayFlag bool
	// split: an unquoted expansion, which word splitting may turn into
	// several words.
	split bool
}

// static reports whether the word is exactly its literal text.
func (w word) static() bool { return !w.dyn && !w.glob && !w.tilde }

// flag reports whether the word is a literal option (starts with '-').
func (w word) flag() bool { return !w.dyn && strings.HasPrefix(w.lit, "-") }

func newWords(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		out[i] = newWord(w)
	}
	return out
}

func newWord(w *syntax.Word) word {
	out := word{node: w}
	var b strings.Builder
	for i, part := range w.Parts {
		// decided: the word's first character is already fixed by
		// literal text, so later parts cannot make it an option.
		decided := b.Len() > 0
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				out.tilde = true
			}
			if hasGlob(v) {
				out.glob = true
				if !decided && globAtStart(v) {
					out.mayFlag = true
				}
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				out.dyn = true
				if !decided {
					out.mayFlag = true
				}
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				// $"..." is locale translation: treat as an expansion.
				out.dyn = true
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
					continue
				}
				out.dyn = true
				if b.Len() == 0 {
					out.mayFlag = true
				}
			}
		case *syntax.ProcSubst:
			// Becomes /dev/fd/N: a path, never an option.
			out.dyn = true
		case *syntax.ArithmExp:
			// Digits and '-' only, but "-1" is still an option to some.
			out.dyn = true
			if !decided {
				out.mayFlag = true
			}
		case *syntax.ExtGlob:
			out.glob = true
			if !decided {
				out.mayFlag = true
			}
		default:
			// Unquoted $x, ${x}, $(...), `...`: split into fields, so any
			// field may be an option wherever the expansion sits.
			out.dyn = true
			out.mayFlag = true
			out.split = true
		}
	}
	out.lit = b.String()
	return out
}

// hasGlob reports unescaped glob or brace-expansion characters in an
// unquoted literal.
func hasGlob(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		case '{':
			rest := v[i:]
			if end := strings.IndexByte(rest, '}'); end > 0 {
				inner := rest[1:end]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					return true
				}
			}
		}
	}
	return false
}

// globAtStart: the expansion of this literal may start with anything.
func globAtStart(v string) bool {
	return v != "" && strings.ContainsRune("*?[{", rune(v[0]))
}

// unescape removes backslash quoting from unquoted text.
func unescape(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that are quoting inside "...".
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// progName returns the name used to classify a command word: the base
// name, so /bin/rm is rm. system reports whether the name resolves
// through PATH or a standard system directory; ./ls is not the ls we know.
func progName(name string) (base string, system bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return name, true
	}
	switch name[:i] {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return name[i+1:], true
	}
	return name[i+1:], false
}

// literalPrefix returns the unquoted literal text a word starts with,
// before its first expansion or glob.
func literalPrefix(w *syntax.Word) string {
	if len(w.Parts) == 0 {
		return ""
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return ""
	}
	v := l.Value
	if i := strings.IndexAny(v, "*?[{"); i >= 0 {
		v = v[:i]
	}
	base, _ := progName(unescape(v))
	return base
}
