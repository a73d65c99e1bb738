package toolsearch

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Doc is one searchable tool.
type Doc struct {
	Name        string
	Description string
	// Params are the parameter texts, e.g. "pattern: regular expression".
	Params []string
}

// Hit is one ranked match: Index points into the docs given to Rank.
type Hit struct {
	Name  string
	Index int
	Score float64
}

// Field weights and BM25 parameters. A name term counts three times a
// description term: tool names are short and chosen to say what they do.
const (
	NameWeight        = 3.0
	DescriptionWeight = 1.0
	ParamWeight       = 0.7
	k1                = 1.2
	b                 = 0.75
	// exactNameBonus lifts a doc whose whole name equals the query.
	exactNameBonus = 10.0
)

const (
	fName = iota
	fDesc
	fParams
	nFields
)

var weights = [nFields]float64{NameWeight, DescriptionWeight, ParamWeight}

// Rank returns up to limit docs that share at least one term with query,
// best first; equal scores order by name, then by position. limit ≤ 0
// means no limit.
func Rank(query string, docs []Doc, limit int) []Hit {
	var qterms []string
	for _, t := range uniq(Tokens(query)) {
		if !isStopWord(t) {
			qterms = append(qterms, t)
		}
	}
	if len(qterms) == 0 || len(docs) == 0 {
		return nil
	}
	// Only query terms matter: count them per doc and field, plus each
	// field's length, instead of indexing every term.
	nq := len(qterms)
	tf := make([]float64, len(docs)*nFields*nq) // doc, field, term
	lens := make([][nFields]float64, len(docs))
	nameKey := make([]string, len(docs))
	df := make([]int, nq)
	var avg [nFields]float64
	for i, d := range docs {
		nameToks := Tokens(d.Name)
		nameKey[i] = strings.Join(nameToks, " ")
		texts := [nFields][]string{nameToks, Tokens(d.Description), Tokens(strings.Join(d.Params, " "))}
		seen := make([]bool, nq)
		for f := range nFields {
			lens[i][f] = float64(len(texts[f]))
			avg[f] += lens[i][f]
			for _, t := range texts[f] {
				for j, q := range qterms {
					if t == q {
						tf[(i*nFields+f)*nq+j]++
						seen[j] = true
					}
				}
			}
		}
		for j, ok := range seen {
			if ok {
				df[j]++
			}
		}
	}
	for f := range nFields {
		avg[f] /= float64(len(docs))
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	n := float64(len(docs))
	qname := strings.Join(Tokens(query), " ")
	var hits []Hit
	for i, d := range docs {
		score := 0.0
		for j := range qterms {
			w := 0.0
			for f := range nFields {
				if c := tf[(i*nFields+f)*nq+j]; c > 0 {
					w += weights[f] * c / (1 - b + b*lens[i][f]/avg[f])
				}
			}
			if w == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[j])+0.5)/(float64(df[j])+0.5))
			score += idf * w * (k1 + 1) / (w + k1)
		}
		if score == 0 {
			continue
		}
		if nameKey[i] == qname {
			score += exactNameBonus
		}
		hits = append(hits, Hit{Name: d.Name, Index: i, Score: score})
	}
	sort.SliceStable(hits, func(a, c int) bool {
		if hits[a].Score != hits[c].Score {
			return hits[a].Score > hits[c].Score
		}
		if hits[a].Name != hits[c].Name {
			return hits[a].Name < hits[c].Name
		}
		return hits[a].Index < hits[c].Index
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// Tokens splits s into lowercased, lightly stemmed terms: at every
// character that is not a letter or digit, and at camelCase humps
// ("readTextFile", "HTTPServer" → read text file, http server).
func Tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, Stem(strings.ToLower(string(cur))))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// aB splits before B; ABc splits before B (HTTPServer → HTTP Server).
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// minStem keeps short words whole: "is", "bus", "ted" are not inflections.
const minStem = 3

// Stem strips one inflection from a lowercase word: a plural s, -ing, -ed,
// -ion, then a trailing e, never leaving fewer than minStem letters. It is
// deliberately crude; it only has to map a word's forms to one key.
func Stem(w string) string {
	cut := func(suffix string) bool {
		if strings.HasSuffix(w, suffix) && len(w)-len(suffix) >= minStem {
			w = w[:len(w)-len(suffix)]
			return true
		}
		return false
	}
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "ies") && len(w)-3 >= minStem:
		w = w[:len(w)-3] + "y"
	default:
		cut("s")
	}
	_ = cut("ing") || cut("ed") || cut("ion")
	cut("e")
	return w
}

// isStopWord reports query words too common to say anything about a tool
// ("run the tests for a package"); they never match.
func isStopWord(t string) bool {
	switch t {
	case "a", "an", "the", "to", "of", "for", "in", "on", "and", "or", "with", "by",
		"from", "into", "is", "it", "this", "that", "as", "at", "be", "my", "i":
		return true
	}
	return false
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
