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

// customLimits differ from every default and from each other, so a
// description stating a default where it should state the setting fails.
var customLimits = Limits{
	ReadLines: 321, ReadBytes: 12345, ReadLineChars: 432,
	LsEntries: 77, GrepMatches: 33, GrepLineChars: 144, GrepBytes: 23456,
	FindPaths: 55, BashTimeout: 45, BashMaxTimeout: 90, BashLines: 234, BashBytes: 34567,
}
