package secrets

import (
	"fmt"
	"math/bits"
)

// keywordMatcher finds where one of gitleaks' rule keywords may start,
// ignoring ASCII case (ruleSet.find runs it). A keyword is at least two
// bytes long; the matcher tests each position's three bytes in a hashed
// bit set of the three bytes keywords start with (tri), then its first two
// in a table of the pairs keywords start with and its third in a set of
// the bytes that follow that pair in a keyword (or accepts a two-byte
// keyword). Only the ~1.6% of positions of BenchmarkKeywordPass's text
// that pass are compared with the keywords of their pair. Unlike an automaton walking a
// state per byte, each position's test is independent of the one before,
// so the processor overlaps them; the tables fit in the first-level cache.
// It is immutable once built.
type keywordMatcher struct {
	class [256]uint8 // byte (either case) → class; 0 for bytes in no keyword
	shift uint8      // class bits: a pair's index is c1<<shift | c2
	// pair[c1<<shift|c2] is 1 + the index in buckets of the keywords
	// starting with those two bytes, 0 for none.
	pair    [1 << 16]uint16
	buckets []kwBucket
	// tri has the bit triHash(x) set for the first three bytes x of
	// every keyword, and of every two-byte keyword followed by any byte.
	tri [1 << triBits / 64]uint64
}

// triBits is the size of the hash of three bytes: 2^16 bits, 8 KiB.
const triBits = 16

// triHash hashes three bytes (the low 24 bits of x), ignoring ASCII case:
// a multiplicative hash of x with bit 5 of every byte set. Case folding
// this way also folds some punctuation onto other bytes; that only adds
// candidates, which the comparison with the keywords rejects.
func triHash(x uint32) uint32 {
	return ((x | 0x202020) * 0x9E3779B1) >> (32 - triBits)
}

func (k *keywordMatcher) addTri(x uint32) {
	h := triHash(x)
	k.tri[h>>6] |= 1 << (h & 63)
}

// kwBucket is the keywords that start with the same two bytes.
type kwBucket struct {
	third classSet // classes of a third byte, of the longer keywords
	short bool     // a two-byte keyword: no third byte to test
	words []kwWord
}

// kwWord is one keyword (lower case) and the rules it belongs to.
type kwWord struct {
	word  string
	rules []uint16
}

// classSet is a set of byte classes.
type classSet [4]uint64

func (c *classSet) add(x uint8)      { c[x>>6] |= 1 << (x & 63) }
func (c *classSet) has(x uint8) bool { return c[x>>6]&(1<<(x&63)) != 0 }

// maxRules bounds the rule count: rule ids are uint16, and a rule's
// coverage is tracked in a stack array of this size.
const maxRules = 256

// minKeywordLen is the shortest keyword the matcher can find: it tests
// pairs of bytes.
const minKeywordLen = 2

// newKeywordMatcher builds the matcher for words (lower case ASCII), each
// a keyword of the rule ids[i]. A word shorter than minKeywordLen is an
// error.
func newKeywordMatcher(words []string, ids []uint16) (*keywordMatcher, error) {
	k := &keywordMatcher{}
	nclass := 1
	for _, w := range words {
		if len(w) < minKeywordLen {
			return nil, fmt.Errorf("keyword %q: shorter than %d bytes", w, minKeywordLen)
		}
		for i := 0; i < len(w); i++ {
			c := lowerByte(w[i])
			if k.class[c] == 0 {
				if nclass == 256 {
					return nil, fmt.Errorf("keywords use more than %d distinct bytes", nclass-1)
				}
				k.class[c] = uint8(nclass)
				nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.class[c] = k.class[c+'a'-'A']
	}
	k.shift = uint8(bits.Len(uint(nclass - 1)))
	for i, w := range words {
		p := k.pairIndex(w[0], w[1])
		if k.pair[p] == 0 {
			k.buckets = append(k.buckets, kwBucket{})
			k.pair[p] = uint16(len(k.buckets))
		}
		b := &k.buckets[k.pair[p]-1]
		x := uint32(w[0]) | uint32(w[1])<<8
		if len(w) == minKeywordLen {
			b.short = true
			for c := range 256 {
				k.addTri(x | uint32(c)<<16)
			}
		} else {
			b.third.add(k.class[w[2]])
			k.addTri(x | uint32(w[2])<<16)
		}
		j := 0
		for j < len(b.words) && b.words[j].word != w {
			j++
		}
		if j == len(b.words) {
			b.words = append(b.words, kwWord{word: w})
		}
		b.words[j].rules = appendUnique(b.words[j].rules, ids[i])
	}
	return k, nil
}

func (k *keywordMatcher) pairIndex(a, b byte) uint16 {
	return uint16(k.class[a])<<k.shift | uint16(k.class[b])
}

// next returns the first position p >= i where a keyword may start, and
// the bucket of the keywords to compare there (hasPrefixFold), or -1.
func (k *keywordMatcher) next(s string, i int) (int, *kwBucket) {
	i = max(i, 0)
	// Four positions a turn, from eight bytes read at once, with one
	// branch for the four: most turns find nothing.
	for ; i+8 <= len(s); i += 4 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if k.triAt(x)|k.triAt(x>>8)|k.triAt(x>>16)|k.triAt(x>>24) == 0 {
			continue
		}
		for j := i; j < i+4; j++ {
			if bk := k.at(s, j); bk != nil {
				return j, bk
			}
		}
	}
	for ; i+1 < len(s); i++ {
		if bk := k.at(s, i); bk != nil {
			return i, bk
		}
	}
	return -1, nil
}

// triAt is 1 when the three low bytes of x may start a keyword, else 0.
func (k *keywordMatcher) triAt(x uint64) uint64 {
	h := triHash(uint32(x) & 0xffffff)
	return k.tri[h>>6] >> (h & 63) & 1
}

// at returns the bucket of the keywords that may start at s[i], or nil.
func (k *keywordMatcher) at(s string, i int) *kwBucket {
	b := k.pair[k.pairIndex(s[i], s[i+1])]
	if b == 0 {
		return nil
	}
	bk := &k.buckets[b-1]
	if !bk.short && (i+2 >= len(s) || !bk.third.has(k.class[s[i+2]])) {
		return nil
	}
	return bk
}

func appendUnique(s []uint16, v uint16) []uint16 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
