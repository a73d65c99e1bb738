package secrets

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// regexpMasker is the reference the benchmark compares against: one regexp
// per rule, as a first implementation (or gitleaks) would write them. With
// keywords set, a rule's regexp runs only when one of its keywords occurs in
// the text (gitleaks' prefilter); without, every regexp runs over the whole
// text.
type regexpMasker struct {
	rules       []regexpRule
	useKeywords bool
}

type regexpRule struct {
	re       *regexp.Regexp
	keywords []string
}

func newRegexpMasker(useKeywords bool) *regexpMasker {
	rules := []struct {
		expr     string
		keywords []string
	}{
		{`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`, []string{"AKIA", "ASIA"}},
		{`(?i)aws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}`, []string{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"}},
		{`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
		{`\bglpat-[A-Za-z0-9_-]{20,}`, []string{"glpat-"}},
		{`\bxox[abprs]-[A-Za-z0-9-]{10,}`, []string{"xox"}},
		{`\bsk-ant-[A-Za-z0-9_-]{20,}`, []string{"sk-ant-"}},
		{`\bsk-[A-Za-z0-9_-]{20,}`, []string{"sk-"}},
		{`\bAIza[A-Za-z0-9_-]{35}\b`, []string{"AIza"}},
		{`\b(?:(?:sk|rk|pk)_live_|sk_test_)[A-Za-z0-9]{16,}`, []string{"_live_", "sk_test_"}},
		{`\beyJ[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`, []string{"eyJ"}},
		{`(?s)-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----.*?-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----`, []string{"-----BEGIN"}},
		{`(?im)^\s*(?:export\s+)?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|_PASS)[A-Z0-9_]*\s*[=:]\s*["']?[^\s"']{6,}`, []string{"KEY", "TOKEN", "SECRET", "PASS"}},
		{`[a-z][a-z0-9+.-]*://[^\s:/@]*:[^\s@/]+@`, []string{"://"}},
		{`(?i)authorization:\s*(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`, []string{"uthorization"}},
		{regexp.QuoteMeta(envSecret), []string{envSecret}},
	}
	r := &regexpMasker{useKeywords: useKeywords}
	for _, rule := range rules {
		r.rules = append(r.rules, regexpRule{regexp.MustCompile(rule.expr), rule.keywords})
	}
	return r
}

func (r *regexpMasker) Mask(s string) string {
	for _, rule := range r.rules {
		if r.useKeywords && !slices.ContainsFunc(rule.keywords, func(k string) bool { return strings.Contains(s, k) }) {
			continue
		}
		s = rule.re.ReplaceAllString(s, "[REDACTED]")
	}
	return s
}

// BenchmarkMask reports, besides the wall-clock MB/s, cpu-MB/s: bytes per
// second of CPU time the process used. On a shared machine the wall clock
// counts the time spent waiting for a core; CPU time does not.
func BenchmarkMask(b *testing.B) {
	const size = 50 << 10
	m := New(testEnv())
	own := New(testEnv())
	own.rules = nil // this package's rules alone, without gitleaks'
	naive := newRegexpMasker(false)
	keyworded := newRegexpMasker(true)
	for _, c := range []struct{ name, text string }{
		{"mixed", mixedCorpus(size)},
		{"clean", cleanCorpus(size)},
	} {
		for _, v := range []struct {
			name string
			mask func(string)
		}{
			{"masker", func(s string) { m.Mask(s) }},
			{"masker-own-rules-only", func(s string) { own.Mask(s) }},
			{"regexp-keywords", func(s string) { keyworded.Mask(s) }},
			{"regexp-every-rule", func(s string) { naive.Mask(s) }},
		} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					v.mask(c.text)
				}
				if d := processCPU() - cpu; d > 0 {
					b.ReportMetric(float64(b.N)*float64(len(c.text))/d.Seconds()/1e6, "cpu-MB/s")
				}
			})
		}
	}
}

// BenchmarkKeywordPass measures the keyword matcher alone over the mixed
// text: the pass every result pays before any rule runs.
func BenchmarkKeywordPass(b *testing.B) {
	kw := gitleaksRules().kw
	text := mixedCorpus(50 << 10)
	b.SetBytes(int64(len(text)))
	hits := 0
	cpu := processCPU()
	for b.Loop() {
		hits = 0
		for p, bk := kw.next(text, 0); p >= 0; p, bk = kw.next(text, p+1) {
			for _, w := range bk.words {
				if hasPrefixFold(text[p:], w.word) {
					hits++
				}
			}
		}
	}
	if d := processCPU() - cpu; d > 0 {
		b.ReportMetric(float64(b.N)*float64(len(text))/d.Seconds()/1e6, "cpu-MB/s")
	}
	b.ReportMetric(float64(hits), "hits")
}

// BenchmarkLoadRules measures what every agentls process pays once, at its
// first result: decoding the embedded rule files and building the keyword
// matcher (each rule's regexps compile later, on first use).
func BenchmarkLoadRules(b *testing.B) {
	for b.Loop() {
		if _, err := parseRules(gitleaksTOML, extraTOML); err != nil {
			b.Fatal(err)
		}
	}
}
