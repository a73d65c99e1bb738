package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// Limits a client sets in initializationOptions are what the tools enforce
// and what tools/list tells the model; an unknown limit is a logged warning.
func TestInitializationOptionLimitsAreEnforcedAndDescribed(t *testing.T) {
	t.Parallel()
	var lines strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&lines, "needle %d\n", i)
	}
	c, _, ctx := startWith(t, map[string]string{"twenty.txt": lines.String()}, map[string]any{
		"initializationOptions": map[string]any{"mode": "bypass", "limits": map[string]any{
			"read": map[string]any{"lines": 5}, "grepMatches": 4, "bashLines": 3, "contextTokens": 8000,
		}},
	})
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	stated := map[string]string{"read": "A result is at most 5 lines", "grep": "At most 4 matching lines by default", "bash": "A result is at most 3 lines"}
	for _, tool := range list.Tools {
		if want, ok := stated[tool.Name]; ok {
			if !strings.Contains(tool.Description, want) {
				t.Errorf("%s's description lacks %q", tool.Name, want)
			}
			delete(stated, tool.Name)
		}
	}
	if len(stated) > 0 {
		t.Errorf("tools missing from tools/list: %v", stated)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "twenty.txt"}, "[Showing lines 1-3 of 20 (at most 5 lines per call). Use offset=4 to continue.]"},
		{"grep", map[string]any{"pattern": "needle"}, "[4 matches shown (limit 4). Narrow the pattern, add path/glob, or call again with limit=8.]"},
		{"bash", map[string]any{"command": "seq 5"}, "showing lines 4-5 of 5 (a result is at most 3 lines"},
	} {
		if r := c.CallTool(ctx, tc.tool, tc.args); !strings.Contains(r.Text(), tc.want) {
			t.Errorf("%s: want %q in:\n%s", tc.tool, tc.want, r.Text())
		}
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "limits.contextTokens is not a limit")
	}); !ok {
		t.Error("no window/logMessage warning for the unknown limit")
	}
}
