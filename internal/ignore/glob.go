package ignore

import (
	"strings"
	"unicode/utf8"
)

// globMatch reports whether s matches the fnmatch pattern, with the
// semantics of github.com/danwakefield/fnmatch (BSD fnmatch; flags 0 or
// FNM_PATHNAME) that go-gitignore used, but in polynomial time: fnmatch
// retries every suffix of s at each "*", so "*a*a*a*a*b" against a long run
// of a's backtracks exponentially. Here the result of each (pattern suffix,
// s suffix) pair reached after a "*" is memoized, bounding the work at
// O(stars·len(s)·(len(pattern)+len(s))).
//
// Where fnmatch panics (an unterminated bracket ending in a multi-byte rune)
// the whole match fails, as git never matches an unterminated bracket.
func globMatch(pattern, s string, pathname bool) bool {
	g := globber{full: pattern, pathname: pathname, nStr: len(s)}
	// Typical lines and names fit the memo on the stack.
	var buf [512]uint8
	if n := (len(pattern) + 1) * (len(s) + 1); n <= len(buf) {
		g.memo = buf[:n]
	}
	ok := g.match(pattern, s)
	return ok && !g.bad
}

type globber struct {
	full     string
	pathname bool
	nStr     int
	bad      bool
	// memo: index (len(pattern rest), len(s rest)) → 0 unknown, 1 no, 2 yes;
	// allocated on the first nested "*" if it is not preset.
	memo []uint8
}

// sub is match for a pattern suffix tried after a "*", memoized.
func (g *globber) sub(pattern, s string) bool {
	if g.memo == nil {
		g.memo = make([]uint8, (len(g.full)+1)*(g.nStr+1))
	}
	i := len(pattern)*(g.nStr+1) + len(s)
	if v := g.memo[i]; v != 0 {
		return v == 2
	}
	ok := g.match(pattern, s)
	g.memo[i] = 1
	if ok {
		g.memo[i] = 2
	}
	return ok
}

// match is fnmatch.Match without FNM_PERIOD, FNM_LEADING_DIR, FNM_CASEFOLD
// and FNM_NOESCAPE, which go-gitignore never passes.
func (g *globber) match(pattern, s string) bool {
	for len(pattern) > 0 && !g.bad {
		c := unpack(&pattern)
		switch c {
		case '?':
			if len(s) == 0 {
				return false
			}
			if sc := unpack(&s); g.pathname && sc == '/' {
				return false
			}
		case '*':
			for len(pattern) > 0 && pattern[0] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 0 {
				return !g.pathname || strchr(s, '/') == -1
			}
			if g.pathname && pattern[0] == '/' {
				offset := strchr(s, '/')
				if offset == -1 {
					return false
				}
				s = s[offset+1:]
				pattern = pattern[1:]
				break
			}
			// Only a later "*" can make retries overlap; without one each
			// retry is a linear scan and needs no memo.
			memo := strings.IndexByte(pattern, '*') >= 0
			for test := s; len(test) > 0; unpack(&test) {
				if (memo && g.sub(pattern, test)) || (!memo && g.match(pattern, test)) {
					return true
				}
				if g.bad || (g.pathname && test[0] == '/') {
					break
				}
			}
			return false
		case '[':
			if len(s) == 0 || (g.pathname && s[0] == '/') {
				return false
			}
			if !g.rangeMatch(&pattern, unpack(&s)) {
				return false
			}
		case '\\':
			if len(pattern) > 0 {
				c = unpack(&pattern)
			}
			fallthrough
		default:
			if len(s) == 0 || unpack(&s) != c {
				return false
			}
		}
	}
	return len(s) == 0 && !g.bad
}

// rangeMatch is fnmatch's rangematch; where that indexes past the end of
// the pattern (and panics) it sets g.bad instead.
func (g *globber) rangeMatch(pattern *string, test rune) bool {
	if len(*pattern) == 0 {
		return false
	}
	var negate, matched bool
	if (*pattern)[0] == '^' || (*pattern)[0] == '!' {
		negate = true
		*pattern = (*pattern)[1:]
	}
	// As in git's wildmatch, a "]" first in the class is a member, not
	// its end ("[]]", "[!]]").
	for first := true; !matched && len(*pattern) > 1 && ((*pattern)[0] != ']' || first); first = false {
		c := unpack(pattern)
		if c == '\\' {
			if len(*pattern) <= 1 {
				return false
			}
			c = unpack(pattern)
		}
		if len(*pattern) == 0 {
			g.bad = true
			return false
		}
		if (*pattern)[0] == '-' && len(*pattern) > 1 && (*pattern)[1] != ']' {
			unpack(pattern)
			c2 := unpack(pattern)
			if c2 == '\\' {
				if len(*pattern) == 0 {
					return false
				}
				c2 = unpack(pattern)
			}
			if c <= test && test <= c2 {
				matched = true
			}
		} else if c == test {
			matched = true
		}
	}
	ok := false
	for !ok && len(*pattern) > 0 {
		c := unpack(pattern)
		if c == '\\' && len(*pattern) > 0 {
			unpack(pattern)
		} else if c == ']' {
			ok = true
		}
	}
	return ok && matched != negate
}

func unpack(s *string) rune {
	r, size := utf8.DecodeRuneInString(*s)
	*s = (*s)[size:]
	return r
}

func strchr(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
