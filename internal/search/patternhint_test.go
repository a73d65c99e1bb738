package search

import (
	"regexp"
	"strings"
	"testing"
)

// An unclosed ( got the look-around hint; the hint must match the parse
// error, in the Go engine's words and in ripgrep's.
func TestUnclosedParenGetsAnEscapeHintNotLookAround(t *testing.T) {
	goErr := func(pat string) string {
		_, err := regexp.Compile(pat)
		if err == nil {
			t.Fatalf("%s compiles", pat)
		}
		return err.Error()
	}
	rgErr := func(pat, what string) string {
		return "regex parse error:\n    " + pat + "\n    ^\nerror: " + what
	}
	for _, tc := range []struct {
		name, detail string
		want         []string
	}{
		{"go (a", goErr(`foo(bar`), []string{`\(`, "literal: true"}},
		{"rg (a", rgErr(`foo(bar`, "unclosed group"), []string{`\(`, "literal: true"}},
		{"go a)", goErr(`a)`), []string{`\)`, "literal: true"}},
		{"rg a)", rgErr(`a)`, "unopened group"), []string{`\)`, "literal: true"}},
		{"go [a", goErr(`[a`), []string{`\[`, "literal: true"}},
		{"rg [a", rgErr(`[a`, "unclosed character class"), []string{`\[`, "literal: true"}},
		{"go *a", goErr(`*a`), []string{`\*`, "literal: true"}},
		{"rg *a", rgErr(`*a`, "repetition operator missing expression"), []string{`\*`, "literal: true"}},
		{"go look-ahead", goErr(`a(?=b)`), []string{"look-around", "literal: true"}},
		{"rg look-ahead", rgErr(`a(?=b)`, "look-around, including look-ahead and look-behind, is not supported"), []string{"look-around"}},
		{"go look-behind", goErr(`(?<!a)b`), []string{"look-around", "literal: true"}},
		{"go backreference", goErr(`(a)\1`), []string{"backreferences"}},
		{"rg backreference", rgErr(`(a)\1`, "backreferences are not supported"), []string{"backreferences"}},
	} {
		msg := patternError("", tc.detail).Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: want %q in:\n%s", tc.name, w, msg)
			}
		}
		if !strings.Contains(tc.name, "look") && !strings.Contains(tc.name, "backref") && strings.Contains(msg, "look-around") {
			t.Errorf("%s: the look-around hint for a different error:\n%s", tc.name, msg)
		}
	}
}
