package builtin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// Tools built with limits a client set enforce them, and their notices
// name them.
func TestCustomLimitsHoldInBehaviour(t *testing.T) {
	l := tools.Limits{ReadLines: 5, ReadBytes: tools.LimitMinBytes, ReadLineChars: 1500, LsEntries: 2, GrepMatches: 2,
		GrepLineChars: 20, GrepBytes: tools.LimitMinBytes, FindPaths: 2, BashTimeout: 1, BashMaxTimeout: 2, BashLines: 5}.WithDefaults()
	files := map[string][]byte{
		"ten.txt":   numbered(10, 8),
		"long.txt":  []byte("needle " + strings.Repeat("y", 1600) + "\n"),
		"bytes.txt": numbered(3, 1400), // 3 lines of 1401 bytes: the 4 KiB byte limit cuts after line 2
	}
	for i := range 5 {
		files[fmt.Sprintf("dir/f%d.go", i)] = []byte("needle\n")
	}
	x, _ := newLimitedExecutor(t, files, l)
	tests := []struct {
		name, tool, args string
		isError          bool
		want             []string
	}{
		{"read lines", "read", `{"path":"ten.txt"}`, false, []string{"ten.txt, lines 1-3 of 10", "(at most 5 lines per call). Use offset=4 to continue."}},
		{"read limit above the setting is clamped", "read", `{"path":"ten.txt","limit":9}`, false, []string{"lines 1-3 of 10"}},
		{"read bytes", "read", `{"path":"bytes.txt"}`, false, []string{"bytes.txt, lines 1-2 of 3", "the 4096-byte limit was reached. Use offset=3 to continue."}},
		{"read line chars", "read", `{"path":"long.txt"}`, false, []string{"yyy… [line cut: 1500 of 1607 characters shown]"}},
		{"ls entries", "ls", `{"path":"dir"}`, false, []string{"[Showing 2 of 5 entries (limit 2). Call ls again with limit=5"}},
		{"grep matches", "grep", `{"pattern":"needle","path":"dir"}`, false, []string{"[2 matches shown (limit 2). Narrow the pattern, add path/glob, or call again with limit=4.]"}},
		{"grep line chars", "grep", `{"pattern":"needle","path":"long.txt"}`, false, []string{"long.txt:1: needle yyyyyyyyyyyyy… [line cut at 20 chars]"}},
		{"find paths", "find", `{"pattern":"*.go"}`, false, []string{"[Showing the first 2 matching paths (limit 2); more files match. Narrow the pattern or path, or call again with limit=4.]"}},
		{"bash tail", "bash", `{"command":"seq 10"}`, false, []string{"showing lines 7-10 of 10 (a result is at most 5 lines / 51200 bytes, notices included)", "8\n9\n10"}},
		{"bash default timeout", "bash", `{"command":"sleep 5"}`, true, []string{"[Timed out after 1s", "Raise timeout (maximum 2 s)"}},
		{"bash timeout above the maximum", "bash", `{"command":"true","timeout":3}`, true, []string{"timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, x, tc.tool, tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v:\n%s", r.IsError, tc.isError, r.TextOf())
			}
			for _, w := range tc.want {
				if !strings.Contains(r.TextOf(), w) {
					t.Errorf("missing %q in:\n%s", w, r.TextOf())
				}
			}
		})
	}
}
