package ignore

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gitignore "github.com/boyter/gocodewalker/go-gitignore"
)

// FuzzRuleFile checks that no rule file content makes parsing or matching
// panic (rule files are workspace content, i.e. untrusted), and that each
// compiled rule agrees with go-gitignore's pattern when that reference is
// cheap enough to run (few stars: it backtracks exponentially).
func FuzzRuleFile(f *testing.F) {
	for _, s := range []string{"*.log\n!keep.log\n", "a/**/b/\n", "[", "\\", "**", "/**/", "a\r\nb\\ \n", "[!a-]\n{x\n", "*a*b*c\n!a*/x*y\n"} {
		f.Add(s, "a/b/keep.log")
	}
	f.Fuzz(func(t *testing.T, rules, path string) {
		rf := parseRuleFile([]byte(rules), int64(len(rules)), time.Time{})
		rf.match(path, false)
		rf.match(path, true)
		if strings.Count(rules, "*") > 4 || len(path) > 64 {
			return
		}
		data := fixTrailingAny([]byte(rules))
		for _, p := range gitignore.NewParser(bytes.NewReader(data), func(gitignore.Error) bool { return true }).Parse() {
			r, ok := compileRule(p)
			if !ok {
				t.Fatalf("pattern %q did not compile", p.String())
			}
			for _, isDir := range []bool{false, true} {
				if got, want := r.match(path, isDir), refRule(p, path, isDir); got != want {
					t.Errorf("pattern %q: match(%q, dir=%v) = %v, go-gitignore says %v", p.String(), path, isDir, got, want)
				}
			}
		}
	})
}
