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

// What the user must be told of problemSettings: the skipped rule is an
// error, the rules kept that never match are warnings.
var (
	wantErrors   = []string{`"Bash(curl:*"`}
	wantWarnings = []string{`tool_search(secret)`, `no tool is named Frobnicate`, `src/../secret.txt`}
)

// A broken settings file, or rules that are skipped or can never match,
// used to reach only the log (window/logMessage, stderr): an editor shows
// window/showMessage to the user, an error, or a warning for a rule kept
// that never matches.
func TestSettingsProblemsShownToTheEditorUser(t *testing.T) {
	t.Parallel()
	t.Run("invalid JSON is an error message", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"],}\n}\n"})
		c := harness.Start(t, harness.Options{Root: ws, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
		c.Initialize(t.Context(), nil)
		n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "settings.json")
		})
		if !ok {
			t.Fatalf("no window/showMessage for the broken file; notes: %v", c.Notes("window/showMessage"))
		}
		var p struct {
			Type    int
			Message string
		}
		json.Unmarshal(n.Params, &p)
		if p.Type != 1 || !strings.Contains(p.Message, "line 2, column") || !strings.Contains(p.Message, "only read-only calls run") {
			t.Errorf("showMessage = %s, want an error naming line, column and the consequence", n.Params)
		}
	})
	t.Run("skipped and unmatchable rules are warnings", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{".agentls/settings.json": problemSettings})
		c := harness.Start(t, harness.Options{Root: ws, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
		c.Initialize(t.Context(), nil)
		for typ, wants := range map[string][]string{`"type":1`: wantErrors, `"type":2`: wantWarnings} {
			for _, want := range wants {
				n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
					return n.Method == "window/showMessage" && strings.Contains(string(n.Params), strings.ReplaceAll(want, `"`, `\"`))
				})
				if !ok {
					t.Errorf("no window/showMessage says %s; got %v", want, c.Notes("window/showMessage"))
					continue
				}
				if !strings.Contains(string(n.Params), typ) {
					t.Errorf("%s: showMessage %s, want %s", want, n.Params, typ)
				}
			}
		}
	})
	t.Run("invalid initializationOptions are an error message", func(t *testing.T) {
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
	for _, tc := range []struct {
		name, settings, level string
		want                  []string
	}{
		{"invalid JSON", "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"],}\n}\n", "error", []string{"line 2, column", "only read-only calls run"}},
		{"a skipped rule", problemSettings, "error", wantErrors},
		{"rules that never match", problemSettings, "warning", wantWarnings},
	} {
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
				if p.Level != tc.level {
					t.Errorf("%q came as level %q, want %q", w, p.Level, tc.level)
				}
			}
		})
	}
}
