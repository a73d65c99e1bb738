package secrets

import (
	"regexp/syntax"
	"strings"
)

// maxRequired bounds the literals kept per rule: the longest few say
// the most.
const maxRequired = 4

// requiredLiterals returns literal strings (lower case) that every match
// of expr contains, as far as a walk of its syntax tree can tell:
// literals in a concatenation, inside groups and repetitions of at least
// one, and those common to every branch of an alternation. A window
// without them cannot match, so the regexp is not run on it (jwt's ".ey",
// a Kubernetes Secret's "kind:" and "data:").
func requiredLiterals(simple *syntax.Regexp) []string {
	lits := required(simple)
	// Keep the longest; a shorter one contained in a kept one adds nothing.
	var out []string
	for len(lits) > 0 && len(out) < maxRequired {
		best := 0
		for i, l := range lits {
			if len(l) > len(lits[best]) {
				best = i
			}
		}
		l := lits[best]
		lits = append(lits[:best], lits[best+1:]...)
		if len(l) < 2 || containsAny(out, l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func containsAny(kept []string, l string) bool {
	for _, k := range kept {
		if strings.Contains(k, l) {
			return true
		}
	}
	return false
}

func required(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []string
		for _, s := range re.Sub {
			out = append(out, required(s)...)
		}
		return out
	case syntax.OpAlternate:
		common := required(re.Sub[0])
		for _, s := range re.Sub[1:] {
			other := required(s)
			kept := common[:0]
			for _, l := range common {
				for _, o := range other {
					if o == l {
						kept = append(kept, l)
						break
					}
				}
			}
			common = kept
		}
		return common
	}
	return nil
}

// hasAllFold reports whether s contains every one of lits (lower case),
// ignoring ASCII case.
func hasAllFold(s string, lits []string) bool {
	for _, l := range lits {
		if indexFold(s, l) < 0 {
			return false
		}
	}
	return true
}

// indexFold is strings.Index ignoring ASCII case, for lower case sub:
// candidates are found by the first byte in either case.
func indexFold(s, sub string) int {
	if sub == "" {
		return 0
	}
	c0, c1 := sub[0], sub[0]
	if isLower(c0) {
		c1 = c0 - 'a' + 'A'
	}
	for i := 0; i+len(sub) <= len(s); {
		j := strings.IndexByte(s[i:len(s)-len(sub)+1], c0)
		if c1 != c0 {
			if k := strings.IndexByte(s[i:len(s)-len(sub)+1], c1); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return -1
		}
		i += j
		if eqFold(s[i:i+len(sub)], sub) {
			return i
		}
		i++
	}
	return -1
}

// maxMatchBytes bounds the width kept by maxWidth; wider (or unbounded)
// regexps run on the keyword's whole line.
const maxMatchBytes = 512

// maxWidth returns the most bytes a match of a simplified regexp can
// span, or -1 when it is unbounded or wider than maxMatchBytes.
func maxWidth(simple *syntax.Regexp) int {
	w := width(simple)
	if w > maxMatchBytes {
		return -1
	}
	return w
}

// width is maxWidth for a syntax tree; any value above maxMatchBytes
// means "too wide".
func width(re *syntax.Regexp) int {
	const inf = maxMatchBytes + 1
	switch re.Op {
	case syntax.OpLiteral:
		return len(string(re.Rune)) * 2 // a folded rune may be wider (k, K)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 4 // one rune, UTF-8
	case syntax.OpCapture:
		return width(re.Sub[0])
	case syntax.OpQuest:
		return width(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return inf
	case syntax.OpRepeat:
		if re.Max < 0 {
			return inf
		}
		return min(inf, re.Max*width(re.Sub[0]))
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = min(inf, n+width(s))
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, width(s))
		}
		return n
	}
	return 0 // empty-width assertions, empty match
}

// literalPrefixes returns the literal (lower case) every match of a
// simplified regexp starts with, one per branch of a leading alternation,
// and whether it starts with \b; ok is false when some match may start
// otherwise.
func literalPrefixes(re *syntax.Regexp) (prefixes []string, wordBoundary, ok bool) {
	if re.Op == syntax.OpConcat && len(re.Sub) > 0 && re.Sub[0].Op == syntax.OpWordBoundary {
		wordBoundary = true
	}
	prefixes, ok = leading(re)
	return prefixes, wordBoundary, ok
}

func leading(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}, true
	case syntax.OpCapture:
		return leading(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			switch s.Op {
			case syntax.OpWordBoundary, syntax.OpEmptyMatch:
				continue
			}
			return leading(s)
		}
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			p, ok := leading(s)
			if !ok {
				return nil, false
			}
			out = append(out, p...)
		}
		return out, true
	}
	return nil, false
}

// allHaveKeyword reports whether every prefix starts with a keyword.
func allHaveKeyword(prefixes, keywords []string) bool {
	for _, p := range prefixes {
		found := false
		for _, k := range keywords {
			if strings.HasPrefix(p, k) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return len(prefixes) > 0
}
