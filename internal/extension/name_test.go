package extension

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestValidName checks the hand-written name check against the pattern it
// replaced.
func TestValidName(t *testing.T) {
	ref := regexp.MustCompile(fmt.Sprintf(`^[a-zA-Z0-9_-]{1,%d}$`, MaxNameLen))
	tests := []struct {
		name string
		in   string
	}{
		{"simple", "run_tests"},
		{"all classes", "Run-tests_2"},
		{"longest", strings.Repeat("a", MaxNameLen)},
		{"one too long", strings.Repeat("a", MaxNameLen+1)},
		{"empty", ""},
		{"space", "run tests"},
		{"dot", "run.tests"},
		{"non-ASCII", "tésts"},
		{"newline at end", "tests\n"},
		{"brace", "{{x}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := validName(tc.in), ref.MatchString(tc.in); got != want {
				t.Errorf("validName(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}
