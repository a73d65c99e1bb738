package tools

import (
	"fmt"
	"strings"
	"testing"
)

func TestLimitsWith(t *testing.T) {
	d := DefaultLimits()
	tests := []struct {
		name     string
		settings map[string]float64
		want     func(l *Limits)
		warning  string // part of the one warning expected
		err      string // part of the error expected
	}{
		{"none", nil, func(*Limits) {}, "", ""},
		{"each name sets its field", map[string]float64{
			"readLines": 10, "readBytes": 8192, "readLineChars": 80, "lsEntries": 20, "grepMatches": 30,
			"grepLineChars": 90, "grepBytes": 9000, "findPaths": 40, "bashTimeout": 5, "bashMaxTimeout": 50,
			"bashLines": 60, "bashBytes": 7000,
		}, func(l *Limits) {
			*l = Limits{ReadLines: 10, ReadBytes: 8192, ReadLineChars: 80, LsEntries: 20, GrepMatches: 30,
				GrepLineChars: 90, GrepBytes: 9000, FindPaths: 40, BashTimeout: 5, BashMaxTimeout: 50, BashLines: 60, BashBytes: 7000}
		}, "", ""},
		{"unknown name is a warning naming the valid ones", map[string]float64{"readLine": 10}, func(*Limits) {}, "limits.readLine is not a limit (use readLines, readBytes", ""},
		{"unknown name with a negative value", map[string]float64{"read": -1}, nil, "", "limits.read must be a non-negative number"},
		{"zero", map[string]float64{"readLines": 0}, nil, "", "limits.readLines must be a whole number from 4 to 100000, got 0"},
		{"fraction", map[string]float64{"grepMatches": 2.5}, nil, "", "limits.grepMatches must be a whole number"},
		{"bytes below the minimum", map[string]float64{"readBytes": 100}, nil, "", fmt.Sprintf("limits.readBytes must be a whole number from %d to %d bytes", LimitMinBytes, LimitMaxBytes)},
		{"bytes above the maximum", map[string]float64{"bashBytes": LimitMaxBytes + 1}, nil, "", "limits.bashBytes"},
		{"a timeout above the default maximum raises it", map[string]float64{"bashTimeout": 900}, func(l *Limits) { l.BashTimeout, l.BashMaxTimeout = 900, 900 }, "", ""},
		{"both set and at odds", map[string]float64{"bashTimeout": 900, "bashMaxTimeout": 300}, nil, "", "limits.bashTimeout (900 s) must not exceed limits.bashMaxTimeout (300 s)"},
		{"a maximum below the default timeout lowers it", map[string]float64{"bashMaxTimeout": 60}, func(l *Limits) { l.BashTimeout, l.BashMaxTimeout = 60, 60 }, "", ""},
		{"timeout above a raised maximum is fine", map[string]float64{"bashTimeout": 900, "bashMaxTimeout": 1800}, func(l *Limits) { l.BashTimeout, l.BashMaxTimeout = 900, 1800 }, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := d.With(tc.settings)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := d
			tc.want(&want)
			if got != want {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
			if tc.warning == "" && len(warnings) > 0 || tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)) {
				t.Errorf("warnings = %q, want %q", warnings, tc.warning)
			}
		})
	}
}

// Tools built with limits a client set enforce them, and their notices
// name them.
func TestCustomLimitsHoldInBehaviour(t *testing.T) {
	l := Limits{ReadLines: 5, ReadBytes: LimitMinBytes, ReadLineChars: 1500, LsEntries: 2, GrepMatches: 2,
		GrepLineChars: 20, GrepBytes: LimitMinBytes, FindPaths: 2, BashTimeout: 1, BashMaxTimeout: 2, BashLines: 5}.WithDefaults()
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

// Settings round-trips through With: a client that sends them back gets
// the same limits.
func TestLimitsSettingsRoundTrip(t *testing.T) {
	for _, l := range []Limits{DefaultLimits(), customLimits.WithDefaults()} {
		in := map[string]float64{}
		for k, v := range l.Settings() {
			in[k] = float64(v)
		}
		got, warnings, err := Limits{}.With(in)
		if err != nil || len(warnings) > 0 || got != l {
			t.Errorf("With(Settings()) = %+v, %q, %v; want %+v", got, warnings, err, l)
		}
	}
}
