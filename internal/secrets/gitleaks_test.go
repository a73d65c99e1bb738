package secrets

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// gitleaksCases are the examples gitleaks' rule definitions carry, as
// gitleaks_cases_gen.go extracted them into testdata.
type gitleaksCases struct {
	Module string `json:"module"`
	Rules  []struct {
		Rule           string   `json:"rule"`
		TruePositives  []string `json:"tp"`
		FalsePositives []string `json:"fp"`
	} `json:"rules"`
}

func loadGitleaksCases(t *testing.T) gitleaksCases {
	t.Helper()
	b, err := os.ReadFile("testdata/gitleaks-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c gitleaksCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rules) < 200 {
		t.Fatalf("%d rules in the cases file, want gitleaks' ~220", len(c.Rules))
	}
	return c
}

// ruleSecret is the secret gitleaks' rule id finds in text (its regexp's
// secret group, or first non-empty group), compiled independently of the
// masker from the embedded rule set; "" when the rule has no regexp.
func ruleSecret(t *testing.T, byID map[string]string, groups map[string]int, id, text string) string {
	t.Helper()
	expr, ok := byID[id]
	if !ok || expr == "" {
		return ""
	}
	re := mustCompile(t, expr)
	if names := re.SubexpNames(); groups[id] == 0 && len(names) > 1 && names[1] != "" {
		if loc := re.FindStringIndex(text); loc != nil {
			return text[loc[0]:loc[1]] // jwt-base64's groups name parts of the token
		}
		return ""
	}
	loc := re.FindStringSubmatchIndex(text)
	if loc == nil {
		return ""
	}
	if g := groups[id]; g > 0 && 2*g+1 < len(loc) && loc[2*g] >= 0 {
		return text[loc[2*g]:loc[2*g+1]]
	}
	for g := 1; 2*g+1 < len(loc); g++ {
		if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
			return text[loc[2*g]:loc[2*g+1]]
		}
	}
	return text[loc[0]:loc[1]]
}

// TestMaskRecallOnGitleaksRules masks every true positive of every
// gitleaks rule with the whole masker and counts the rules all of whose
// true positives lose their secret (the secret group gitleaks' regexp
// finds, without surrounding quotes). Path-only rules (a file name, no
// content) cannot apply to text and are not counted. Goal: >= 95%.
func TestMaskRecallOnGitleaksRules(t *testing.T) {
	cases := loadGitleaksCases(t)
	byID, groups := gitleaksRegexps(t)
	m := New(nil)
	var misses []string
	total, full := 0, 0
	for _, r := range cases.Rules {
		if byID[r.Rule] == "" {
			continue // path-only rule
		}
		total++
		missed := 0
		var example string
		for _, tp := range r.TruePositives {
			secret := strings.Trim(ruleSecret(t, byID, groups, r.Rule, tp), `"'`)
			out, _ := m.Mask(tp)
			if secret == "" && out != tp || secret != "" && !strings.Contains(out, secret) {
				continue
			}
			missed++
			if example == "" {
				example = fmt.Sprintf("%q -> %q", tp, out)
			}
		}
		if missed == 0 {
			full++
		} else {
			misses = append(misses, fmt.Sprintf("%s: %d/%d missed, e.g. %s", r.Rule, missed, len(r.TruePositives), example))
		}
	}
	pct := 100 * float64(full) / float64(total)
	for _, s := range misses {
		t.Log("miss:", s)
	}
	t.Logf("recall: %d of %d gitleaks rules (%s) have all their true positives masked: %.1f%%", full, total, cases.Module, pct)
	if pct < 95 {
		t.Errorf("recall %.1f%% < 95%%", pct)
	}
}

// TestGitleaksRulesHonourTheirFalsePositives runs each rule's own false
// positives (placeholders, identifiers, prose gitleaks' tests keep) through
// the masker: the rule itself must not mask them, so its entropy
// threshold and allowlists are applied as gitleaks applies them. The
// rules gitleaks scopes to a file path (*.tf, nuget.config, *.yaml) have
// false positives that are so only by their path, which a tool result
// does not have; they are skipped.
func TestGitleaksRulesHonourTheirFalsePositives(t *testing.T) {
	cases := loadGitleaksCases(t)
	_, groups := gitleaksRegexps(t)
	m := New(nil)
	n := 0
	for _, r := range cases.Rules {
		if groups[r.Rule+"/path"] != 0 {
			continue
		}
		for _, fp := range r.FalsePositives {
			n++
			if out, kinds := m.Mask(fp); kinds[r.Rule] > 0 {
				t.Errorf("%s masked its own false positive %q: %q", r.Rule, fp, out)
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d false positives checked", n)
	}
}

// TestGitleaksTruePositivesMaskIdempotent checks Mask(Mask(x)) == Mask(x)
// over every true positive: no rule matches inside a marker.
func TestGitleaksTruePositivesMaskIdempotent(t *testing.T) {
	m := New(nil)
	for _, r := range loadGitleaksCases(t).Rules {
		for _, tp := range r.TruePositives {
			once, _ := m.Mask(tp)
			if twice, kinds := m.Mask(once); twice != once {
				t.Errorf("%s: masking twice changed %q to %q (%v)", r.Rule, once, twice, kinds)
			}
		}
	}
}

// TestEmbeddedGitleaksRulesLoad checks the embedded rule sets compile
// whole: every gitleaks rule with a regexp but the skipped ones, and
// every rule of extra-rules.toml, is loaded, each with keywords, and the
// kind names are the rule ids.
func TestEmbeddedGitleaksRulesLoad(t *testing.T) {
	rs := gitleaksRules()
	byID, _ := gitleaksRegexps(t)
	want := 0
	for id, expr := range byID {
		if expr != "" && !skippedRule(id) {
			want++
		}
	}
	want += strings.Count(extraTOML, "[[rules]]")
	if len(rs.rules) != want {
		t.Errorf("%d rules loaded, want %d", len(rs.rules), want)
	}
	for i, r := range rs.rules {
		if len(r.keywords) == 0 {
			t.Errorf("rule %s has no keywords: it would never run", r.id)
		}
		if got := (kRuleBase + kind(i)).String(); got != r.id {
			t.Errorf("kind %d is %q, want %q", i, got, r.id)
		}
		// Rules compile on first use; one that does not would match
		// nothing, silently.
		if c := r.get(); c.re.String() == `$.^` || c.id != r.id {
			t.Errorf("rule %s does not compile", r.id)
		}
	}
	if !slices.ContainsFunc(rs.rules, func(r lazyRule) bool { return r.id == "huggingface-access-token" }) {
		t.Error("huggingface-access-token not loaded")
	}
}
