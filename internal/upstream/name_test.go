package upstream

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidServerName checks the hand-written check against the pattern it
// replaced.
func TestValidServerName(t *testing.T) {
	ref := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)
	tests := []struct {
		name string
		in   string
	}{
		{"simple", "github"},
		{"all classes", "My_server-2"},
		{"longest", strings.Repeat("a", MaxServerName)},
		{"one too long", strings.Repeat("a", MaxServerName+1)},
		{"empty", ""},
		{"space", "my server"},
		{"dot", "my.server"},
		{"non-ASCII", "serveré"},
		{"newline at end", "server\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := validServerName(tc.in), ref.MatchString(tc.in); got != want {
				t.Errorf("validServerName(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}

// TestToolName checks the name mapping against the regexp replacement it
// replaced, and the cut to MaxToolName.
func TestToolName(t *testing.T) {
	ref := regexp.MustCompile(`[^a-zA-Z0-9_-]`)
	tests := []struct {
		name, server, tool string
	}{
		{"plain", "gh", "list_issues"},
		{"dots and slashes", "gh", "repo.get/file"},
		{"non-ASCII rune is one underscore", "gh", "café"},
		{"invalid UTF-8 byte is one underscore", "gh", "a\xffb"},
		{"cut to MaxToolName", "server", strings.Repeat("x", 2*MaxToolName)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.server + ToolNameSep + ref.ReplaceAllString(tc.tool, "_")
			if len(want) > MaxToolName {
				want = want[:MaxToolName]
			}
			if got := ToolName(tc.server, tc.tool); got != want {
				t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, want)
			}
		})
	}
}
