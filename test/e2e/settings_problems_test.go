package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// problemSettings holds one rule of each kind that cannot do what its
// author meant: unbalanced, on a tool that takes no specifier, on a tool
// that does not exist, and a path no cleaned path has. The valid deny rule
// stays in force.
const problemSettings = `{"permissions": {"deny": ["Bash(rm:*)", "Bash(curl:*", "tool_search(secret)", "Frobnicate", "Read(src/../secret.txt)"]}}`

// settingsProblems is what the user must be told of a settings file, and
// at which level: a broken file and a skipped rule are errors (1), the
// rules kept that never match warnings (2).
var settingsProblems = []struct {
	name, settings string
	typ            int
	want           []string
}{
	{"invalid JSON", "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"],}\n}\n", 1, []string{"line 2, column", "only read-only calls run"}},
	{"a skipped rule", problemSettings, 1, []string{`"Bash(curl:*"`}},
	{"rules that never match", problemSettings, 2, []string{`tool_search(secret)`, `no tool is named Frobnicate`, `src/../secret.txt`}},
}

// A broken settings file, or rules that are skipped or can never match,
// used to reach only the log (window/logMessage, stderr): an editor shows
// window/showMessage to the user, an error, or a warning for a rule kept
// that never matches; invalid initializationOptions are an error message
// too.
func TestSettingsProblemsShownToTheEditorUser(t *testing.T) {
	t.Parallel()
	for _, tc := range settingsProblems {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			writeFiles(t, ws, map[string]string{".agentls/settings.json": tc.settings})
			c := harness.Start(t, harness.Options{Root: ws, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
			c.Initialize(t.Context(), nil)
			for _, w := range tc.want {
				n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
					return n.Method == "window/showMessage" && strings.Contains(string(n.Params), strings.Trim(compactJSON(w), `"`))
				})
				var p struct{ Type int }
				if json.Unmarshal(n.Params, &p); !ok || p.Type != tc.typ {
					t.Errorf("no window/showMessage of type %d says %s; got %v", tc.typ, w, c.Notes("window/showMessage"))
				}
			}
		})
	}
	t.Run("invalid initializationOptions", func(t *testing.T) {
		c := harness.Start(t, harness.Options{Root: t.TempDir()})
		err := c.Call(t.Context(), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"permissions": map[string]any{"deny": "Bash(rm:*)"}}}, nil)
		if err == nil {
			t.Fatal("initialize accepted a deny list that is not an array")
		}
		if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "permissions.deny") && strings.Contains(string(n.Params), `"type":1`)
		}); !ok {
			t.Errorf("no error window/showMessage names permissions.deny; got %v", c.Notes("window/showMessage"))
		}
	})
}

// The same problems reach an MCP client as notifications/message (level
// error or warning), which hosts show the user, even before the client
// picks a level with logging/setLevel.
func TestSettingsProblemsSentToTheMCPClient(t *testing.T) {
	t.Parallel()
	for _, tc := range settingsProblems {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			writeFiles(t, ws, map[string]string{".agentls/settings.json": tc.settings})
			m := startMCPRaw(t, []string{"mcp", "--root", ws}, []string{"XDG_CONFIG_HOME=" + t.TempDir()})
			m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e", "version": "1"}}})
			m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			for _, w := range tc.want {
				msg, ok := m.wait(10*time.Second, func(m mcpMsg) bool {
					return m.Method == "notifications/message" && strings.Contains(string(m.Params), strings.Trim(compactJSON(w), `"`))
				})
				if !ok {
					t.Fatalf("no notifications/message says %q", w)
				}
				var p struct{ Level string }
				json.Unmarshal(msg.Params, &p)
				if want := map[int]string{1: "error", 2: "warning"}[tc.typ]; p.Level != want {
					t.Errorf("%q came as level %q, want %q", w, p.Level, want)
				}
			}
		})
	}
}
