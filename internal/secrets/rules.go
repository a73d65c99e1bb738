package secrets

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksTOML is gitleaks' default rule set (v8.30.1, MIT, see
// gitleaks/LICENSE), embedded as data. gitleaks_cases_gen.go refreshes it.
//
//go:embed gitleaks/gitleaks.toml
var gitleaksTOML string

// extraTOML holds this package's own rules in the same format, for kinds
// gitleaks' set lacks (Groq, Replicate, PuTTY keys, .netrc, docker
// config.json auths, mysql -p…).
//
//go:embed extra-rules.toml
var extraTOML string

// skippedRule reports the gitleaks rules not loaded, because their keyword is a
// word of nearly every source file and their regexp would run on most
// lines (BenchmarkMask: each alone costs more than the rest together):
//   - generic-api-key matches any `*key*|*token*|*auth*… = <10+ bytes>`;
//   - hashicorp-tf-password, any `password = "<8-20 bytes>"` (gitleaks
//     scopes it to *.tf and *.hcl files).
//
// The env-assignment rule is this package's version of both, with the
// code-aware value checks that keep identifiers and calls unmasked; the
// recall test counts both rules' true positives against it.
func skippedRule(id string) bool {
	return id == "generic-api-key" || id == "hashicorp-tf-password"
}

// genericKeyword reports the words of the env-assignment rule (names.go)
// among gitleaks' keywords.
func genericKeyword(k string) bool {
	switch k {
	case "password", "passwd", "secret", "secret_key", "token", "key", "api", "auth",
		"access", "credential", "creds":
		return true
	}
	return false
}

// lazyRule is one rule as loaded: what the keyword pass and the kinds need
// at once, and its regexps compiled on first use (get). Compiling all of
// gitleaks' ~220 regexps and their syntax trees costs ~50 ms of CPU; a
// session's results hit the keywords of a few rules, and only those are
// compiled. The embedded rules all compile (TestEmbeddedGitleaksRulesLoad).
type lazyRule struct {
	id       string
	keywords []string // lower case
	generic  bool
	get      func() *rule
}

// rule is one gitleaks rule, compiled.
type rule struct {
	id          string
	re          *regexp.Regexp
	secretGroup int
	entropy     float64
	keywords    []string // lower case
	allow       []allowlist
	// required are literals every match contains (literals.go): a
	// window without them is not searched.
	required []string
	// width bounds a match's bytes (maxWidth), -1 if unbounded: a match
	// holding the keyword lies within width bytes of it.
	width int
	// anchored is re anchored at its start, when every match of re starts
	// with one of the keywords (most token formats: "hf_…", "glsa_…"): it
	// runs only where a keyword starts. wordStart: re starts with \b.
	anchored  *regexp.Regexp
	wordStart bool
	// namedGroups: the regexp names its groups, parts of the secret.
	namedGroups bool
	// generic rules are keyed by a word such as "password" or "secret"
	// rather than by a token format; they rank with env-value, below
	// env-assignment, when both find the same secret.
	generic bool
	// wide rules may match across lines (their regexp can consume a
	// newline): they run on the keyword's line and its neighbours.
	wide bool
}

// allowlist is a gitleaks allowlist reduced to what applies to text
// without a file path or a commit: regexes (on the secret, the match or the
// line) and stop words (in the secret).
type allowlist struct {
	target    string // "", "match" or "line"
	regexes   []*regexp.Regexp
	stopwords []string // lower case
	and       bool     // every check must hold
	never     bool     // an AND list that needs a path or commit: never applies
}

// ruleSet is the compiled gitleaks rules with the keyword matcher over
// their keywords.
type ruleSet struct {
	rules  []lazyRule
	global allowlist
	kw     *keywordMatcher
}

// gitleaksRules compiles the embedded rule set once per process: most
// processes mask many results, and the compiled set is immutable.
var gitleaksRules = sync.OnceValue(func() *ruleSet {
	rs, err := parseRules(gitleaksTOML, extraTOML)
	if err != nil {
		panic(fmt.Sprintf("secrets: embedded gitleaks rules: %v", err)) // a build defect, caught by tests
	}
	return rs
})

type tomlAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

type tomlConfig struct {
	Allowlist tomlAllowlist `toml:"allowlist"`
	Rules     []struct {
		ID          string          `toml:"id"`
		Regex       string          `toml:"regex"`
		SecretGroup int             `toml:"secretGroup"`
		Entropy     float64         `toml:"entropy"`
		Keywords    []string        `toml:"keywords"`
		Path        string          `toml:"path"`
		Allowlists  []tomlAllowlist `toml:"allowlists"`
	} `toml:"rules"`
}

// parseRules compiles gitleaks configurations: the first one's global
// allowlist applies to all, the others add rules. Path-only rules (no
// regexp) and skippedRule ones are left out; path conditions are ignored (a
// tool result has no file path to match them against).
func parseRules(texts ...string) (*ruleSet, error) {
	var c tomlConfig
	for i, text := range texts {
		var ci tomlConfig
		if err := toml.Unmarshal([]byte(text), &ci); err != nil {
			return nil, fmt.Errorf("decode configuration %d: %w", i, err)
		}
		if i == 0 {
			c.Allowlist = ci.Allowlist
		}
		c.Rules = append(c.Rules, ci.Rules...)
	}
	rs := &ruleSet{}
	var err error
	if rs.global, err = compileAllowlist(c.Allowlist); err != nil {
		return nil, fmt.Errorf("global allowlist: %w", err)
	}
	seen := map[string]bool{}
	for _, r := range c.Rules {
		if seen[r.ID] {
			return nil, fmt.Errorf("rule %s defined twice", r.ID)
		}
		seen[r.ID] = true
		if r.Regex == "" || skippedRule(r.ID) {
			continue
		}
		lr := lazyRule{id: r.ID}
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			lr.keywords = append(lr.keywords, k)
			lr.generic = lr.generic || genericKeyword(k)
		}
		src := r
		lr.get = sync.OnceValue(func() *rule {
			cr, err := compileRule(src.ID, src.Regex, src.SecretGroup, src.Entropy, lr.keywords, src.Allowlists)
			if err != nil {
				// Never for the embedded rules (a test compiles each):
				// a rule that does not compile matches nothing.
				return &rule{id: src.ID, re: regexp.MustCompile(`$.^`)}
			}
			return cr
		})
		rs.rules = append(rs.rules, lr)
	}
	if len(rs.rules) > maxRules {
		return nil, fmt.Errorf("%d rules, at most %d", len(rs.rules), maxRules)
	}
	var words []string
	var ids []uint16
	for i, r := range rs.rules {
		for _, k := range r.keywords {
			words = append(words, k)
			ids = append(ids, uint16(i))
		}
	}
	if rs.kw, err = newKeywordMatcher(words, ids); err != nil {
		return nil, fmt.Errorf("keywords: %w", err)
	}
	return rs, nil
}

// compileRule compiles one gitleaks rule: its regexp, the facts about it
// the windows use (literals.go) and its allowlists.
func compileRule(id, regex string, secretGroup int, entropy float64, keywords []string, allowlists []tomlAllowlist) (*rule, error) {
	expr := trimIdentifierPrefix(regex)
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", id, err)
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", id, err)
	}
	simple := tree.Simplify()
	cr := &rule{id: id, re: re, secretGroup: secretGroup, entropy: entropy, wide: wideIn(tree, 1), keywords: keywords}
	cr.width = maxWidth(simple)
	cr.namedGroups = len(re.SubexpNames()) > 1 && !slices.Contains(re.SubexpNames()[1:], "")
	for _, k := range keywords {
		cr.generic = cr.generic || genericKeyword(k)
	}
	// A literal that is one of the rule's keywords is in the window
	// already (the window holds the keyword's occurrence).
	for _, l := range requiredLiterals(simple) {
		if !slices.Contains(cr.keywords, l) {
			cr.required = append(cr.required, l)
		}
	}
	if prefixes, wb, ok := literalPrefixes(simple); ok && allHaveKeyword(prefixes, cr.keywords) {
		cr.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
		cr.wordStart = wb
	}
	for i, a := range allowlists {
		ca, err := compileAllowlist(a)
		if err != nil {
			return nil, fmt.Errorf("rule %s allowlist %d: %w", id, i, err)
		}
		cr.allow = append(cr.allow, ca)
	}
	return cr, nil
}

func compileAllowlist(a tomlAllowlist) (allowlist, error) {
	out := allowlist{target: a.RegexTarget, and: strings.EqualFold(a.Condition, "AND")}
	out.never = out.and && (len(a.Paths) > 0 || len(a.Commits) > 0)
	for _, r := range a.Regexes {
		re, err := regexp.Compile(r)
		if err != nil {
			return out, err
		}
		out.regexes = append(out.regexes, re)
	}
	for _, w := range a.StopWords {
		out.stopwords = append(out.stopwords, strings.ToLower(w))
	}
	return out, nil
}

// identifierPrefix starts gitleaks' semi-generic rules: up to 50 name
// bytes before the identifier, matched lazily. It only moves where the
// match starts, never the secret group, and makes the regexp try up to 50
// ways at every byte; without it a rule is several times faster.
const identifierPrefix = `[\w.-]{0,50}?`

func trimIdentifierPrefix(expr string) string {
	if rest, ok := strings.CutPrefix(expr, "(?i)"+identifierPrefix); ok {
		return "(?i)" + rest
	}
	return strings.TrimPrefix(expr, identifierPrefix)
}

// wideIn reports regexps (parsed, not simplified) that can match across
// lines: a newline (or any byte) matched by a repetition of more than
// wideRepeat, as in [\s\S]*? or (?s:.){0,200}; reps is how often the
// enclosing repetitions allow re. The few \s that gitleaks' semi-generic
// rules allow around an operator do not count: for those a window takes
// the next line when the line ends in an operator.
// wideRepeat is the most repetitions of a newline-matching piece that a
// regexp may have and still count as matching within a line.
const wideRepeat = 5

func wideIn(re *syntax.Regexp, reps int) bool {
	if re == nil {
		return false
	}
	switch re.Op {
	case syntax.OpAnyChar:
		return reps > wideRepeat
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return reps > wideRepeat
			}
		}
		return false
	case syntax.OpLiteral:
		return reps > 1 && slices.Contains(re.Rune, '\n')
	case syntax.OpStar, syntax.OpPlus:
		reps = wideRepeat + 1
	case syntax.OpRepeat:
		if re.Max < 0 || re.Max > wideRepeat {
			reps = wideRepeat + 1
		} else {
			reps *= max(1, re.Max)
		}
	}
	for _, sub := range re.Sub {
		if wideIn(sub, reps) {
			return true
		}
	}
	return false
}

// allows reports whether the allowlist lets a finding through as not a
// secret: secret is the secret group, match the whole match, line the
// lines the match is on.
func (a *allowlist) allows(secret, match, line string) bool {
	if a.never || len(a.regexes) == 0 && len(a.stopwords) == 0 {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	re := false
	for _, r := range a.regexes {
		if r.MatchString(target) {
			re = true
			break
		}
	}
	stop := false
	if len(a.stopwords) > 0 {
		ls := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(ls, w) {
				stop = true
				break
			}
		}
	}
	if a.and {
		return (len(a.regexes) == 0 || re) && (len(a.stopwords) == 0 || stop)
	}
	return re || stop
}

// shannonEntropy is the entropy in bits per rune of s, as gitleaks
// computes it for its thresholds.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int // rare: secrets are ASCII
	for _, r := range s {
		if r < 128 {
			ascii[r]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[r]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	add := func(c int) {
		f := float64(c) * inv
		e -= f * math.Log2(f)
	}
	for _, c := range ascii {
		if c > 0 {
			add(c)
		}
	}
	for _, c := range other {
		add(c)
	}
	return e
}
