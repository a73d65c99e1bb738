package extension

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBash runs a rendered command with a real bash, as the bash tool would.
func runBash(t *testing.T, dir, cmd string) string {
	t.Helper()
	c := exec.Command("bash", "-c", cmd)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("bash -c %q: %v\n%s", cmd, err, out)
	}
	return string(out)
}

func TestRenderHostileInputStaysOneArgument(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	tmpl, err := ParseTemplate(`printf '%s\n' {{pattern}}`)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{
		"semicolon":            "; touch " + pwned,
		"command substitution": "$(touch " + pwned + ")",
		"backquotes":           "`touch " + pwned + "`",
		"single quotes":        "'; touch " + pwned + "; echo '",
		"double quotes":        `"; touch ` + pwned + `; echo "`,
		"newline":              "x\ntouch " + pwned,
		"escaped quote":        `\'; touch ` + pwned + `; #`,
		"rm":                   "; rm -rf /",
		"variables and glob":   "$HOME ~ * ?",
		"pipes and ands":       "a | touch " + pwned + " && touch " + pwned,
		"empty":                "",
		"only a quote":         "'",
		"unicode":              "naïve 日本 \u00a0",
		"dashes":               "--version",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			cmd := tmpl.Render(map[string]any{"pattern": in})
			if got := runBash(t, dir, cmd); got != in+"\n" {
				t.Errorf("bash printed %q, want %q (command %q)", got, in+"\n", cmd)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatalf("injected command ran (command %q)", cmd)
			}
		})
	}
}

func TestRenderValues(t *testing.T) {
	tests := []struct {
		name string
		tmpl string
		args map[string]any
		want string // rendered command
		out  string // what bash prints, when set
	}{
		{"string", `echo {{a}}`, map[string]any{"a": "x y"}, `echo 'x y'`, "x y\n"},
		{"number as JSON text", `echo {{n}}`, map[string]any{"n": 3.5}, `echo '3.5'`, "3.5\n"},
		{"whole number", `echo {{n}}`, map[string]any{"n": float64(42)}, `echo '42'`, "42\n"},
		{"bool", `echo {{b}}`, map[string]any{"b": false}, `echo 'false'`, "false\n"},
		{"array: one word per element", `printf '%s\n' {{xs}}`, map[string]any{"xs": []any{"a b", "$(id)", 3.0, true}}, `printf '%s\n' 'a b' '$(id)' '3' 'true'`, "a b\n$(id)\n3\ntrue\n"},
		{"object as JSON", `echo {{o}}`, map[string]any{"o": map[string]any{"k": "it's"}}, `echo '{"k":"it'\''s"}'`, "{\"k\":\"it's\"}\n"},
		{"missing optional collapses the space", `echo {{a}} {{b}} end`, map[string]any{"b": "B"}, `echo 'B' end`, "B end\n"},
		{"missing at the end", `echo start {{a}}`, map[string]any{}, `echo start `, "start\n"},
		{"null is missing", `echo x {{a}} y`, map[string]any{"a": nil}, `echo x y`, "x y\n"},
		{"empty array substitutes nothing", `echo x {{a}} y`, map[string]any{"a": []any{}}, `echo x y`, "x y\n"},
		{"empty string is an explicit empty word", `printf '[%s]' {{a}}`, map[string]any{"a": ""}, `printf '[%s]' ''`, "[]"},
		{"attached to a flag", `echo --name={{a}}`, map[string]any{"a": "a b"}, `echo --name='a b'`, "--name=a b\n"},
		{"spaces inside braces", `echo {{ a }}`, map[string]any{"a": "v"}, `echo 'v'`, "v\n"},
		{"inside command substitution", `echo $(printf %s {{a}})`, map[string]any{"a": "; id"}, `echo $(printf %s '; id')`, "; id\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm, err := ParseTemplate(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got := tm.Render(tc.args)
			if got != tc.want {
				t.Errorf("Render = %q, want %q", got, tc.want)
			}
			if _, err := exec.LookPath("bash"); err == nil && tc.out != "" {
				if out := runBash(t, t.TempDir(), got); out != tc.out {
					t.Errorf("bash printed %q, want %q", out, tc.out)
				}
			}
		})
	}
}

func TestParseTemplateRefusesUnsafePlaces(t *testing.T) {
	tests := []struct {
		name, tmpl, want string // want: substring of the error, "" = accepted
	}{
		{"bare word", `go test -run {{pattern}} ./...`, ""},
		{"two placeholders", `cp {{a}} {{b}}`, ""},
		{"assignment", `X={{v}} make`, ""},
		{"no placeholder", `make lint`, ""},
		{"double quotes", `echo "{{x}}"`, "inside double quotes"},
		{"double quotes with text", `echo "value: {{x}}"`, "inside double quotes"},
		{"single quotes", `echo '{{x}}'`, "inside single quotes"},
		{"ansi-c quotes", `echo $'{{x}}'`, "inside single quotes"},
		{"backquotes", "echo `cat {{x}}`", "inside backquotes"},
		{"heredoc", "cat <<EOF\n{{x}}\nEOF", "inside a heredoc"},
		{"arithmetic", `echo $(( {{n}} + 1 ))`, "inside arithmetic"},
		{"comment", `make # {{x}}`, "comment"},
		{"variable name", `echo $PRE{{x}}`, "part of a name"},
		{"parse error", `echo {{x}} |`, "does not parse"},
		{"reserved word", `echo AGENTLSPH0X {{x}}`, "reserved"},
		// $( … ) is a command of its own: the quotes around it do not
		// reach its words; backquotes around it still do.
		{"command substitution in double quotes", `printf '[%s]' "$(printf '%s' {{x}})"`, ""},
		{"process substitution", `diff <(echo {{a}}) <(echo {{b}})`, ""},
		{"double quotes inside a substitution", `echo $(echo "{{x}}")`, "inside double quotes"},
		{"substitution in backquotes", "echo `echo $(echo {{x}})`", "inside backquotes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTemplate(tc.tmpl)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := map[string]string{
		"":     `''`,
		"a":    `'a'`,
		"it's": `'it'\''s'`,
		"''":   `''\'''\'''`,
	}
	for in, want := range tests {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
