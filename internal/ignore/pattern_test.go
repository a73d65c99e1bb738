package ignore

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	gitignore "github.com/boyter/gocodewalker/go-gitignore"
	"github.com/danwakefield/fnmatch"
)

// refGlob is the reference fnmatch; its panics count as "no match", as
// they did when the matcher called it.
func refGlob(pattern, s string, pathname bool) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	flags := 0
	if pathname {
		flags = fnmatch.FNM_PATHNAME
	}
	return fnmatch.Match(pattern, s, flags)
}

// refRule is go-gitignore's own verdict for a pattern, panics as no match.
func refRule(p gitignore.Pattern, rel string, isDir bool) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return p.Match(rel, isDir)
}

func TestGlobMatchesFnmatch(t *testing.T) {
	tests := []struct {
		name, pattern, s string
		pathname         bool
		want             bool
	}{
		{"star suffix", "*.log", "a.log", false, true},
		{"star does not cross slash with pathname", "*.log", "d/a.log", true, false},
		{"star crosses slash without pathname", "*.log", "d/a.log", false, true},
		{"star before slash", "a*/b", "axy/b", true, true},
		{"multi star in order", "*a*b*c", "xaybzc", true, true},
		{"multi star out of order", "*a*b*c", "cba", true, false},
		{"multi star literal dots", "*.min.*.js", "app.min.v2.js", true, true},
		{"multi star class", "*[0-9]*x", "v1-x", true, true},
		{"question mark not slash", "a?b", "a/b", true, false},
		{"negated class", "[!x]y", "ay", true, true},
		{"negated class caret", "[^x]y", "xy", true, false},
		{"range", "[a-c]", "b", true, true},
		{"class never matches slash", "a[/]b", "a/b", true, false},
		{"escape makes star literal", `\*a`, "*a", true, true},
		{"escaped star is not a wildcard", `\*a`, "xa", true, false},
		{"unterminated bracket", "[ab", "[ab", true, false},
		{"unterminated bracket ending in multi-byte rune", "[é", "[é", true, false},
		{"multi-byte negated class", "x[!é]", "xa", true, true},
		{"multi-byte negated class excludes", "x[!é]", "xé", true, false},
		{"backtracking no match", strings.Repeat("*a", 8) + "*b", strings.Repeat("a", 20), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := globMatch(tt.pattern, tt.s, tt.pathname); got != tt.want {
				t.Errorf("globMatch(%q, %q, %v) = %v, want %v", tt.pattern, tt.s, tt.pathname, got, tt.want)
			}
			if ref := refGlob(tt.pattern, tt.s, tt.pathname); ref != tt.want {
				t.Errorf("reference fnmatch says %v, case expects %v", ref, tt.want)
			}
		})
	}
}

// randFrom builds a random string of up to max pieces, with at most
// maxStars single "*" so the exponential reference stays fast.
func randFrom(r *rand.Rand, pieces []string, max, maxStars int) string {
	var b strings.Builder
	stars := 0
	for range r.IntN(max + 1) {
		p := pieces[r.IntN(len(pieces))]
		if strings.Contains(p, "*") {
			if stars++; stars > maxStars {
				continue
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// TestRulesMatchGoGitignore checks, on random patterns and paths, that the
// compiled rules give go-gitignore's verdict exactly (the conformance test
// checks both against git; this pins the corners git's fixture misses).
func TestRulesMatchGoGitignore(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Common pieces repeat so that random lines often match something.
	patPieces := []string{"a", "a", "b", "b", "*", "*", "**", "?", "/", "/", "[ab]", "[!a]", "[a-", "é", `\`, "!", " ", ".", "]", "#"}
	// Every path of up to three components over a small alphabet, plus a
	// few with the pattern syntax characters themselves.
	paths := []string{"[a", "a b", "*", "a.b", "!a", "#a", `a\b`, "a/[a", "é/.b"}
	comps := []string{"a", "b", "ab", "é"}
	for _, c1 := range comps {
		paths = append(paths, c1)
		for _, c2 := range comps {
			paths = append(paths, c1+"/"+c2)
			for _, c3 := range comps {
				paths = append(paths, c1+"/"+c2+"/"+c3)
			}
		}
	}
	checked, matched := 0, 0
	for range 3000 {
		line := randFrom(r, patPieces, 7, 3)
		if strings.Count(line, "**") > 3 {
			continue
		}
		for _, p := range gitignore.NewParser(strings.NewReader(line), func(gitignore.Error) bool { return true }).Parse() {
			rl, ok := compileRule(p)
			if !ok {
				t.Fatalf("line %q: pattern %q did not compile", line, p.String())
			}
			if rl.negated != !p.Ignore() {
				t.Fatalf("line %q: negated=%v, go-gitignore Ignore()=%v", line, rl.negated, p.Ignore())
			}
			for _, path := range paths {
				if rl.anchored && rl.kind == shapeName && strings.Contains(path, "/") {
					// go-gitignore lets the wildcards of "/*.md" cross a
					// "/"; git does not, and the conformance test holds
					// these to git's verdict.
					continue
				}
				for _, isDir := range []bool{false, true} {
					checked++
					want := refRule(p, path, isDir)
					if want {
						matched++
					}
					if got := rl.match(path, isDir); got != want {
						t.Errorf("line %q: match(%q, dir=%v) = %v, go-gitignore says %v", line, path, isDir, got, want)
					}
				}
			}
		}
	}
	if checked < 300000 || matched < checked/20 {
		t.Errorf("%d comparisons, %d matches; the generator is too thin", checked, matched)
	}
}

// TestBacktrackingPatternIsFast is the regression for exponential fnmatch
// backtracking: this line took seconds per name before.
func TestBacktrackingPatternIsFast(t *testing.T) {
	tests := []struct {
		name, rules, path string
		ignored           bool
	}{
		{"many stars in a name", strings.Repeat("*a", 8) + "*b\n", strings.Repeat("a", 60), false},
		{"many stars in a path", "x/" + strings.Repeat("*a", 8) + "*b\n", "x/" + strings.Repeat("a", 60), false},
		{"many ** in a path", strings.Repeat("**/a", 8) + "/b\n", strings.Repeat("a/", 30) + "a", false},
		{"many stars, match", strings.Repeat("*a", 8) + "*b\n", strings.Repeat("a", 60) + "b", true},
	}
	const bound = 200 * time.Millisecond // generous: the fix takes microseconds
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rf := parseRuleFile([]byte(tt.rules), int64(len(tt.rules)), time.Time{})
			start := time.Now()
			_, ignored := rf.match(tt.path, false)
			if d := time.Since(start); d > bound {
				t.Errorf("match took %v, want < %v", d, bound)
			}
			if ignored != tt.ignored {
				t.Errorf("ignored = %v, want %v", ignored, tt.ignored)
			}
		})
	}
}

// FuzzGlobMatchesFnmatch compares globMatch with the reference fnmatch on
// patterns with few stars (the reference is exponential in them).
func FuzzGlobMatchesFnmatch(f *testing.F) {
	for _, s := range [][2]string{{"*a*b", "xaab"}, {"[!a-]x", "bx"}, {`\*[é`, "*é"}, {"a*/b?", "ab/bc"}} {
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, pattern, s string, pathname bool) {
		if strings.Count(pattern, "*") > 4 || len(s) > 64 {
			t.Skip()
		}
		if got, want := globMatch(pattern, s, pathname), refGlob(pattern, s, pathname); got != want {
			t.Errorf("globMatch(%q, %q, %v) = %v, fnmatch says %v", pattern, s, pathname, got, want)
		}
	})
}

// BenchmarkRuleMatch compares the compiled rules with go-gitignore's
// patterns (the reference) on everyday lines and paths.
func BenchmarkRuleMatch(b *testing.B) {
	lines := "*.log\nbuild/\n/tmp\n!keep.log\n**/cache/**\ndoc/*.pdf\n*.min.*.js\n"
	paths := []string{"src/app/main.go", "logs/a.log", "web/dist/app.min.v2.js", "doc/x/y.pdf", "a/cache/b/c"}
	patterns := gitignore.NewParser(strings.NewReader(lines), nil).Parse()
	rf := parseRuleFile([]byte(lines), int64(len(lines)), time.Time{})
	b.Run("rules", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				rf.match(p, false)
			}
		}
	})
	b.Run("go-gitignore", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				for i := len(patterns) - 1; i >= 0; i-- {
					if patterns[i].Match(p, false) {
						break
					}
				}
			}
		}
	})
}
