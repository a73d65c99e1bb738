package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/faux"
)

// The seed scenario: the model greps for a symbol, the next turn reads the
// file the grep found, and the final answer quotes the file. The read's path
// must come from the grep's text, proving the calls chained.
func TestFauxProviderGrepThenRead(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{
		"README.md":           "nothing here\n",
		"pkg/config/load.go":  "package config\n\n// LoadSettings reads settings.\nfunc LoadSettings() string { return \"magic-value-42\" }\n",
		"pkg/other/unused.go": "package other\n",
	})
	var grepPath string
	p := faux.New(
		faux.CallTools(faux.ToolCall{Name: "grep", Args: map[string]any{"pattern": "func LoadSettings"}}),
		func(tr []faux.Message) (faux.Turn, error) {
			m := regexp.MustCompile(`(?m)^([^:\s]+):(\d+):`).FindStringSubmatch(faux.LastToolText(tr))
			if m == nil {
				return faux.Turn{}, fmt.Errorf("grep result has no match line: %q", faux.LastToolText(tr))
			}
			grepPath = m[1]
			return faux.Turn{Calls: []faux.ToolCall{{Name: "read", Args: map[string]any{"path": grepPath}}}}, nil
		},
		func(tr []faux.Message) (faux.Turn, error) {
			return faux.Turn{Text: "The function is defined as:\n" + faux.LastToolText(tr)}, nil
		},
	)
	transcript, final, err := faux.Run(ctx, p, c, "Where is LoadSettings defined?")
	if err != nil {
		t.Fatal(err)
	}
	if grepPath != "pkg/config/load.go" {
		t.Fatalf("grep led to %q", grepPath)
	}
	var calls []string
	for _, m := range transcript {
		for _, call := range m.Calls {
			calls = append(calls, fmt.Sprintf("%s %v", call.Name, call.Args))
		}
		if m.Role == "tool" && m.IsError {
			t.Errorf("tool error: %s", m.Text)
		}
	}
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "grep") || calls[1] != "read map[path:pkg/config/load.go]" {
		t.Fatalf("calls = %q", calls)
	}
	if !strings.Contains(final, `magic-value-42`) {
		t.Fatalf("final answer lacks the file's content: %q", final)
	}
}
