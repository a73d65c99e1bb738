package shell

import (
	"errors"
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

func TestWordPlacesRefusesQuotedMarks(t *testing.T) {
	if n, err := WordPlaces("grep -n MARK0 $(ls MARK1)", []string{"MARK0", "MARK1"}); err != nil || !slices.Equal(n, []int{1, 1}) {
		t.Errorf("plain words: %v, %v", n, err)
	}
	for line, why := range map[string]string{`echo "MARK0"`: "inside double quotes", `echo 'MARK0'`: "inside single quotes", "echo $((MARK0))": "inside arithmetic"} {
		_, err := WordPlaces(line, []string{"MARK0"})
		var pe *PlaceError
		if !errors.As(err, &pe) || pe.Mark != 0 || pe.Why != why {
			t.Errorf("WordPlaces(%q) = %v, want %q", line, err, why)
		}
	}
	if _, err := WordPlaces("echo (", nil); err == nil {
		t.Error("a line that does not parse gave no error")
	}
}

// Command.ReadOnly is what analyzing the command's text alone would say,
// without parsing it again.
func TestCommandReadOnlyIsTheCommandAlone(t *testing.T) {
	for _, line := range []string{
		"cd sub && npm test", "ls > out; cat x", "PATH=/x ls && git status", "export A=1; export PATH=/x",
		"f() { ls; }; f", "echo x | tee out", "git log -n 3 | head", "rm x || ls", "sort -o f x; sort x",
		"find . -name '*.go' -exec rm {} +", "sed -n 1p f", "cat <<EOF\nx\nEOF", "x=1; echo \"$x\"",
	} {
		for _, c := range Analyze(line, Options{}).Commands {
			if c.Dynamic || c.Wrapper {
				continue
			}
			if want := Analyze(c.Text, Options{}).ReadOnly; c.ReadOnly != want {
				t.Errorf("%q: command %q ReadOnly %v, alone %v", line, c.Text, c.ReadOnly, want)
			}
		}
	}
}
