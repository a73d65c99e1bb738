package policy

import (
	"testing"

	"github.com/agentls/agentls/internal/shell"
)

func shellAnalyze(s string) shell.Analysis { return shell.Analyze(s, shell.Options{}) }

func benchConfig(b *testing.B) *Config {
	var allow []Rule
	for _, s := range []string{"Bash(npm test:*)", "Bash(npm run lint:*)", "Bash(go test:*)", "Bash(go build:*)", "Bash(make:*)", "Edit(/src/**/*.ts)", "Read(./docs/**)"} {
		allow = append(allow, MustParseRule(s))
	}
	deny := []Rule{MustParseRule("Bash(curl:*)"), MustParseRule("Read(./.secrets/**)"), MustParseRule("Read(**/*.pem)")}
	return &Config{Root: testRoot, Allow: allow, Deny: deny}
}

// BenchmarkEvaluateBash: a compound line against ten rules; the reference
// is the analysis alone (BenchmarkAnalyzeOnly), which every bash call pays
// in the tool anyway.
func BenchmarkEvaluateBash(b *testing.B) {
	c := benchConfig(b)
	req := bash("cd sub && go test ./... 2>&1 | grep -v ok && make lint")
	for b.Loop() {
		if c.Evaluate(req).Decision != Allow {
			b.Fatal("not allowed")
		}
	}
}

func BenchmarkEvaluateRead(b *testing.B) {
	c := benchConfig(b)
	req := read("src/pkg/deep/file.go")
	for b.Loop() {
		c.Evaluate(req)
	}
}

func BenchmarkReadAllowed(b *testing.B) {
	c := benchConfig(b)
	for b.Loop() {
		c.ReadAllowed("src/pkg/deep/file.go", "/ws/src/pkg/deep/file.go")
	}
}

func BenchmarkAnalyzeOnly(b *testing.B) {
	for b.Loop() {
		shellAnalyze("cd sub && go test ./... 2>&1 | grep -v ok && make lint")
	}
}
