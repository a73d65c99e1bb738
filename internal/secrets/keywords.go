package secrets

// keywordMatcher finds (ruleSet.find runs it), in one pass and ignoring ASCII case, every place
// where one of gitleaks' rule keywords ends: an Aho-Corasick automaton
// turned into a table of transitions over byte classes (only the bytes
// that occur in some keyword have a class of their own; every other byte
// leads back to the root). It is immutable once built.
type keywordMatcher struct {
	class  [256]uint8 // byte → class; 0 for bytes in no keyword
	nclass int
	// next[row+class] is the row (state*nclass) of the next state, with
	// hasOut set when a keyword ends there.
	next  []uint32
	out   [][]uint16 // rules whose keyword ends in state (suffixes included)
	depth []uint16   // length of the text a state stands for
}

// hasOut marks, in keywordMatcher.next, a state where a keyword ends.
const hasOut = 1 << 31

// maxRules bounds the rule count: rule ids are uint16, and a rule's
// coverage is tracked in a stack array of this size.
const maxRules = 256

// newKeywordMatcher builds the matcher for words (lower case ASCII), each
// keyword of the rule ids[i].
func newKeywordMatcher(words []string, ids []uint16) *keywordMatcher {
	k := &keywordMatcher{nclass: 1}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			c := lowerByte(w[i])
			if k.class[c] == 0 {
				k.class[c] = uint8(k.nclass)
				k.nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.class[c] = k.class[c+'a'-'A']
	}
	// The trie: child[state*nclass+class], 0 meaning none (the root is
	// never a child).
	child := make([]uint16, k.nclass)
	out := [][]uint16{nil}
	depth := []uint16{0}
	for i, w := range words {
		st := 0
		for j := 0; j < len(w); j++ {
			c := int(k.class[lowerByte(w[j])])
			if child[st*k.nclass+c] == 0 {
				child = append(child, make([]uint16, k.nclass)...)
				out = append(out, nil)
				depth = append(depth, uint16(j+1))
				child[st*k.nclass+c] = uint16(len(out) - 1)
			}
			st = int(child[st*k.nclass+c])
		}
		out[st] = appendUnique(out[st], ids[i])
	}
	// Breadth first: a state's missing transitions are its failure
	// state's, and its outputs include its failure state's.
	fail := make([]uint16, len(out))
	queue := make([]int, 0, len(out))
	for c := 1; c < k.nclass; c++ {
		if t := child[c]; t != 0 {
			queue = append(queue, int(t))
		}
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		for _, id := range out[fail[st]] {
			out[st] = appendUnique(out[st], id)
		}
		for c := 1; c < k.nclass; c++ {
			i := st*k.nclass + c
			f := child[int(fail[st])*k.nclass+c]
			if t := child[i]; t != 0 {
				fail[t] = f
				queue = append(queue, int(t))
			} else {
				child[i] = f
			}
		}
	}
	k.out, k.depth = out, depth
	k.next = make([]uint32, len(child))
	for i, t := range child {
		k.next[i] = uint32(int(t) * k.nclass)
		if out[t] != nil {
			k.next[i] |= hasOut
		}
	}
	return k
}

func appendUnique(s []uint16, v uint16) []uint16 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
