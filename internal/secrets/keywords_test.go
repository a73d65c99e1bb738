package secrets

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestKeywordMatcherFindsEveryOccurrence checks the matcher against a
// plain search: every occurrence of every keyword, in any case,
// overlapping ("xoxb" inside "axoxbb", "s." inside "hvs."), at the text's
// end, with each keyword's rules.
func TestKeywordMatcherFindsEveryOccurrence(t *testing.T) {
	words := []string{"hvs.", "s.", "xoxb", "ox", "key", "secret_key", "a3-", "xoxe-", "ke"}
	ids := []uint16{0, 0, 1, 2, 3, 4, 5, 6, 7}
	k, err := newKeywordMatcher(words, ids)
	if err != nil {
		t.Fatal(err)
	}
	text := "AXOXBB key=hvs.X Secret_Key a3-x xoxe xoxe- S.s.KEY"
	got := map[string]bool{}
	for p, b := k.next(text, 0); p >= 0; p, b = k.next(text, p+1) {
		for _, w := range b.words {
			if hasPrefixFold(text[p:], w.word) {
				for _, id := range w.rules {
					got[fmt.Sprint(p+len(w.word), ":", id)] = true
				}
			}
		}
	}
	want := map[string]bool{}
	lower := strings.ToLower(text)
	for w, word := range words {
		for i := 0; ; {
			j := strings.Index(lower[i:], word)
			if j < 0 {
				break
			}
			want[fmt.Sprint(i+j+len(word), ":", ids[w])] = true
			i += j + 1
		}
	}
	for h := range want {
		if !got[h] {
			t.Errorf("missed keyword end:rule %s", h)
		}
	}
	for h := range got {
		if !want[h] {
			t.Errorf("reported %s, not a keyword end", h)
		}
	}
}

// TestKeywordMatcherRefusesOneByteKeyword: the matcher tests pairs of
// bytes, so a one-byte keyword would never be found; loading one fails.
func TestKeywordMatcherRefusesOneByteKeyword(t *testing.T) {
	if _, err := newKeywordMatcher([]string{"ab", "x"}, []uint16{0, 1}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("err = %v, want one naming the keyword", err)
	}
	_, err := parseRules(`[[rules]]
id = "one-byte"
regex = '''x[0-9]{8}'''
keywords = ["x"]
`)
	if err == nil || !strings.Contains(err.Error(), "shorter than") {
		t.Fatalf("parseRules err = %v, want the short keyword refused", err)
	}
}

// TestRuleWindowsFindWhatWholeTextSearchFinds: running a rule only near
// its keywords (anchored, narrowed, line windows, required literals) finds
// the same secrets as running its regexp over the whole text, over every
// true positive of every rule.
func TestRuleWindowsFindWhatWholeTextSearchFinds(t *testing.T) {
	rs := gitleaksRules()
	cases := loadGitleaksCases(t)
	diffs := 0
	for _, c := range cases.Rules {
		for _, tp := range c.TruePositives {
			got := rs.find(tp, nil)
			var want []span
			lower := strings.ToLower(tp)
			for id := range rs.rules {
				r := rs.rules[id].get()
				if slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
					want = rs.match(r, kRuleBase+kind(id), tp, 0, len(tp), want)
				}
			}
			key := func(x, y span) int {
				if x.start != y.start {
					return x.start - y.start
				}
				if x.end != y.end {
					return x.end - y.end
				}
				return int(x.kind) - int(y.kind)
			}
			slices.SortFunc(got, key)
			slices.SortFunc(want, key)
			got, want = slices.Compact(got), slices.Compact(want)
			if !slices.Equal(got, want) {
				diffs++
				if diffs <= 10 {
					t.Errorf("%s: %q\n windows found %v\n whole text %v", c.Rule, tp, got, want)
				}
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d true positives differ", diffs)
	}
}
