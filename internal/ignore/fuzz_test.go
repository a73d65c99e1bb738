package ignore

import (
	"testing"
	"time"
)

// FuzzRuleFile checks that no rule file content makes parsing or matching
// panic (rule files are workspace content, i.e. untrusted).
func FuzzRuleFile(f *testing.F) {
	for _, s := range []string{"*.log\n!keep.log\n", "a/**/b/\n", "[", "\\", "**", "/**/", "a\r\nb\\ \n", "[!a-]\n{x\n"} {
		f.Add(s, "a/b/keep.log")
	}
	f.Fuzz(func(t *testing.T, rules, path string) {
		rf := parseRuleFile([]byte(rules), int64(len(rules)), time.Time{})
		rf.match(path, false)
		rf.match(path, true)
	})
}
