package shell

import (
	"slices"
	"testing"
)

// Analysis carries what the permission engine needs about redirections and
// assignments, so it does not parse the line again.
func TestAnalysisReportsAssignmentsAndFileWrites(t *testing.T) {
	tests := []struct {
		line     string
		assigned []string
		writes   bool
	}{
		{"PATH=/tmp npm test", []string{"PATH"}, false},
		{"A=1 B=2 ls; C=3", []string{"A", "B", "C"}, false},
		{"echo $(LD_PRELOAD=x ls)", []string{"LD_PRELOAD"}, false},
		{"ls > out", nil, true},
		{"ls >> out", nil, true},
		{"ls 2>&1 >/dev/null", nil, false},
		{"ls >&-", nil, false},
		{"ls > '/dev/null'", nil, true}, // not one unquoted literal: counted as a file
		{`ls > "$f"`, nil, true},
		{"cat <> f", nil, true},
		{"cat < f", nil, false},
		{"bash -c 'ls > out'", nil, false}, // the wrapped line's own
	}
	for _, tt := range tests {
		a := Analyze(tt.line, Options{})
		if !slices.Equal(a.Assigned, tt.assigned) || a.WritesFile != tt.writes {
			t.Errorf("Analyze(%q): Assigned %q, WritesFile %v; want %q, %v", tt.line, a.Assigned, a.WritesFile, tt.assigned, tt.writes)
		}
	}
}
