package settings_test

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
)

// parse is ParseInitOptions with the rule check initialize uses.
func parse(raw string) (settings.InitOptions, []string, error) {
	return settings.ParseInitOptions([]byte(raw), settings.Checks{
		Rule:   func(r string) error { _, err := policy.ParseRule(r); return err },
		Limits: func(v any) error { _, _, err := tools.DefaultLimits().Apply(v); return err },
	})
}

func TestInitOptionsLimits(t *testing.T) {
	d := tools.DefaultLimits()
	tests := []struct {
		name    string
		raw     string
		want    func(l *tools.Limits)
		warning string
		err     string
	}{
		{"absent: zero, which means the defaults", `{}`, nil, "", ""},
		{"[] from Lua: the defaults", `{"limits": []}`, func(*tools.Limits) {}, "", ""},
		{"flat names", `{"limits": {"readLines": 500, "bashTimeout": 30}}`, func(l *tools.Limits) { l.ReadLines, l.BashTimeout = 500, 30 }, "", ""},
		{"grouped by tool", `{"limits": {"read": {"lines": 500}, "grep": {"matches": 50, "lineChars": 200}}}`,
			func(l *tools.Limits) { l.ReadLines, l.GrepMatches, l.GrepLineChars = 500, 50, 200 }, "", ""},
		{"unknown limit: the session warns", `{"limits": {"readLines": 500, "tokens": 9}}`, func(l *tools.Limits) { l.ReadLines = 500 }, "", ""},
		{"not an object", `{"limits": 5}`, nil, "", `limits must be an object like {"readLines": 500}, got 5`},
		{"a string value", `{"limits": {"readLines": "500"}}`, nil, "", `limits.readLines must be a number, got "500"`},
		{"a string in a group", `{"limits": {"read": {"lines": true}}}`, nil, "", "limits.read.lines must be a number, got true"},
		{"negative", `{"limits": {"readLines": -1}}`, nil, "", "limits.readLines must be a whole number from 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings, err := parse(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tools.Limits{}
			if tc.want != nil {
				want = d
				tc.want(&want)
			}
			got := tools.Limits{}
			if s.Editor.Limits != nil {
				// The session applies them, merged with the files' limits.
				if got, _, err = tools.DefaultLimits().Apply(s.Editor.Limits); err != nil {
					t.Fatal(err)
				}
			}
			if got != want {
				t.Errorf("limits = %+v, want %+v", got, want)
			}
			if tc.warning == "" && len(warnings) > 0 || tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)) {
				t.Errorf("warnings = %q, want %q", warnings, tc.warning)
			}
		})
	}
}

// TestInitOptionsRules: a rule that does not parse fails initialize,
// naming its list and index; a policy source with one bad rule would
// otherwise be dropped whole, its deny rules with it. Rules under a
// misspelt name used to be dropped with a warning: they fail closed too.
func TestInitOptionsRules(t *testing.T) {
	tests := []struct {
		name, raw, err string
	}{
		{"good rules", `{"permissions": {"allow": ["Read"], "deny": ["Bash(deploy:*)", "Bash(git * main)"]}}`, ""},
		{"an unclosed parenthesis", `{"permissions": {"deny": ["Bash(deploy:*)", "Bash(mytool:*"]}}`, `permissions.deny[1] "Bash(mytool:*": `},
		{"an empty rule", `{"permissions": {"ask": [""]}}`, `permissions.ask[0] "": `},
		{"a misspelt list fails closed", `{"permissions": {"Deny": ["Bash(rm:*)"]}}`, `permissions.Deny is not a rule list`},
		{"a misspelt permissions fails closed", `{"Permissions": {"deny": ["Bash(rm:*)"]}}`, `unknown option "Permissions"`},
		{"a rule list one level too high fails closed", `{"deny": ["Bash(rm:*)"]}`, `unknown option "deny"`},
		{"a rule list given twice fails closed", `{"permissions": {"deny": ["Bash(rm:*)"], "deny": []}}`, `permissions.deny is given twice`},
		{"another unknown option is only a warning", `{"frobnicate": true}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parse(tc.raw)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("err = %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err = %v, want it to contain %q", err, tc.err)
			}
		})
	}
}

// toolNamePrefix is taken when every host can use it in a tool name, and
// refused (initialize fails, naming the field) otherwise.
func TestInitOptionsToolNamePrefix(t *testing.T) {
	for _, tc := range []struct{ raw, want, err string }{
		{`{"toolNamePrefix": "agentls_"}`, "agentls_", ""},
		{`{}`, "", ""},
		{`{"toolNamePrefix": ""}`, "", ""},
		{`{"toolNamePrefix": "a b"}`, "", "toolNamePrefix must be a string of letters"},
		{`{"toolNamePrefix": 5}`, "", "got 5"},
		{`{"toolNamePrefix": "` + strings.Repeat("x", mention.MaxPrefix+1) + `"}`, "", "at most 32"},
	} {
		s, warnings, err := parse(tc.raw)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || len(warnings) > 0 || s.ToolNamePrefix != tc.want {
			t.Errorf("%s: prefix %q, warnings %q, err %v; want %q", tc.raw, s.ToolNamePrefix, warnings, err, tc.want)
		}
	}
}
