package ignore

import (
	"testing"
	"time"
)

// ruleVerdicts checks rules (one rule file) against paths: want[path] is
// whether git ignores it (each case checked against git in testdata/conformance).
func ruleVerdicts(t *testing.T, rules string, want map[string]bool) {
	t.Helper()
	rf := parseRuleFile([]byte(rules), int64(len(rules)), time.Time{})
	for p, ign := range want {
		if _, got := rf.match(p, false); got != ign {
			t.Errorf("rules %q, %q: ignored=%v, git says %v", rules, p, got, ign)
		}
	}
}

func TestGitignoreStartingWithBOMKeepsItsFirstRule(t *testing.T) {
	ruleVerdicts(t, "\ufeff.env\n*.secret\n", map[string]bool{".env": true, "sub/.env": true, "a.secret": true, "plain": false})
}

func TestLeadingDoubleStarWithoutSlashIsAStar(t *testing.T) {
	ruleVerdicts(t, "**foo\n", map[string]bool{"foo": true, "a/foo": true, "afoo": true, "abcfoo": true, "foobar": false})
	ruleVerdicts(t, "folder/other-folder/**/**js\n", map[string]bool{
		"folder/other-folder/x.js": true, "folder/other-folder/deep/y.js": true, "folder/other-folder/deep/y.ts": false,
	})
	ruleVerdicts(t, "a**z\n", map[string]bool{"abz": true, "az": true})
}

func TestPatternEndingInBackslashMatchesNothing(t *testing.T) {
	ruleVerdicts(t, "test\\\n\\\n", map[string]bool{`test\`: false, `\`: false, "test": false})
	ruleVerdicts(t, "foo/*\n!foo/test\\\n", map[string]bool{`foo/test\`: true, "foo/x": true})
	// An escaped backslash is a literal one.
	ruleVerdicts(t, "test\\\\\n", map[string]bool{`test\`: true})
}

func TestClassStartingWithBracketHoldsIt(t *testing.T) {
	ruleVerdicts(t, "[]]br.txt\n[!]]x\n", map[string]bool{"]br.txt": true, "xbr.txt": false, "ax": true, "]x": false})
}

func TestTrailingTabIsPartOfThePattern(t *testing.T) {
	ruleVerdicts(t, "tab\t\nspace  \n", map[string]bool{"tab\t": true, "tab": false, "space": true})
}
