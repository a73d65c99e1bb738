package secrets

import (
	"regexp"
	"sync"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksRegexps reads every rule's regexp and secret group straight
// from the embedded TOML, as an oracle independent of parseRules; groups
// also holds "<id>/path" for the rules gitleaks scopes to a file path.
func gitleaksRegexps(t *testing.T) (map[string]string, map[string]int) {
	t.Helper()
	var c struct {
		Rules []struct {
			ID          string `toml:"id"`
			Regex       string `toml:"regex"`
			SecretGroup int    `toml:"secretGroup"`
			Path        string `toml:"path"`
		} `toml:"rules"`
	}
	if err := toml.Unmarshal([]byte(gitleaksTOML), &c); err != nil {
		t.Fatal(err)
	}
	byID, groups := map[string]string{}, map[string]int{}
	for _, r := range c.Rules {
		byID[r.ID], groups[r.ID] = r.Regex, r.SecretGroup
		if r.Path != "" {
			groups[r.ID+"/path"] = 1
		}
	}
	return byID, groups
}

var compiled sync.Map // expr → *regexp.Regexp, for the tests' oracle

func mustCompile(t *testing.T, expr string) *regexp.Regexp {
	t.Helper()
	if re, ok := compiled.Load(expr); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	compiled.Store(expr, re)
	return re
}
