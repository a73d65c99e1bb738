package mention

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// A prefix is valid when every host can use it in a tool name.
func TestPrefixValid(t *testing.T) {
	for p, want := range map[string]bool{"": true, "agentls_": true, "a-b_C9": true, "has space": false, "dot.": false, "é": false, strings.Repeat("a", MaxPrefix): true, strings.Repeat("a", MaxPrefix+1): false} {
		if Prefix(p).Valid() != want {
			t.Errorf("Prefix(%q).Valid() = %v, want %v", p, !want, want)
		}
	}
}

func TestRenderNamesMarkedTools(t *testing.T) {
	cases := []struct{ name, in, prefix, want string }{
		{"bare", "use {{grep}}, not {{bash}} grep", "", "use grep, not bash grep"},
		{"prefixed", "use {{grep}}, not {{bash}} grep", "agentls_", "use agentls_grep, not agentls_bash grep"},
		{"no marks", "globs like {a,b} and [{oldText}]", "agentls_", "globs like {a,b} and [{oldText}]"},
		{"a mark that is not a tool name stays", "{{Not A Name}} and {{read}}", "p_", "{{Not A Name}} and p_read"},
		{"an unclosed mark stays", "{{read", "p_", "{{read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Prefix(tc.prefix).Render(tc.in); got != tc.want {
				t.Errorf("Render(%q) with %q = %q, want %q", tc.in, tc.prefix, got, tc.want)
			}
		})
	}
}

// A path or pattern formatted into a hint is data: its "{{read}}" is not
// a mark, in any host.
func TestSprintfRendersTheFormatNotTheArguments(t *testing.T) {
	for _, p := range []Prefix{"", "agentls_"} {
		got := p.Sprintf("%s is a directory; use {{ls}} to list it.", "templates/{{read}}")
		want := "templates/{{read}} is a directory; use " + string(p) + "ls to list it."
		if got != want {
			t.Errorf("prefix %q: %q, want %q", p, got, want)
		}
	}
	if got := Prefix("x_").Sprintf("100%% of {{read}}"); got != "100%% of x_read" {
		t.Errorf("without arguments the format is not formatted: %q", got)
	}
	err := Prefix("x_").Errorf("{{grep}}: %w", fs.ErrNotExist)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "x_grep: file does not exist" {
		t.Errorf("Errorf: %v", err)
	}
}

func TestContextCarriesThePrefix(t *testing.T) {
	ctx := context.Background()
	if got := FromContext(ctx); got != "" {
		t.Errorf("no prefix set: %q", got)
	}
	if got := FromContext(WithPrefix(ctx, "agentls_")); got != "agentls_" {
		t.Errorf("FromContext = %q", got)
	}
}
