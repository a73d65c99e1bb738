package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/textedit"
)

func TestNewProblemsCompareByKindNotPosition(t *testing.T) {
	at := func(line int) textedit.Range { return textedit.Range{Start: textedit.Position{Line: line}} }
	e := func(line int, msg string) Diagnostic { return Diagnostic{Range: at(line), Severity: 1, Message: msg} }
	cases := []struct {
		name          string
		before, after []Diagnostic
		want          []string
	}{
		{"moved is not new", []Diagnostic{e(3, "x")}, []Diagnostic{e(9, "x")}, nil},
		{"a second of the same is new", []Diagnostic{e(3, "x")}, []Diagnostic{e(3, "x"), e(5, "x")}, []string{"x@5"}},
		{"hints and infos are not problems", nil, []Diagnostic{{Severity: 3, Message: "i"}, {Severity: 4, Message: "h"}}, nil},
		{"no severity counts as an error", nil, []Diagnostic{{Message: "s"}}, []string{"s@0"}},
		{"other source is other problem", []Diagnostic{{Source: "a", Severity: 1, Message: "m"}}, []Diagnostic{{Source: "b", Severity: 1, Message: "m"}}, []string{"m@0"}},
		{"file order", nil, []Diagnostic{e(7, "late"), e(2, "early")}, []string{"early@2", "late@7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range newProblems(tc.before, tc.after) {
				got = append(got, fmt.Sprintf("%s@%d", d.Message, d.Range.Start.Line))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("new = %v, want %v", got, tc.want)
			}
		})
	}
}
