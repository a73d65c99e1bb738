package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// A broken settings file never weakens protection, through the real
// binary: a typo in one rule leaves the file's other deny rules in force,
// and a file that is not valid JSON at start lets only read-only calls
// run, with a refusal naming the file, line and column.
func TestBrokenSettingsNeverWeakenProtection(t *testing.T) {
	t.Parallel()
	call := func(t *testing.T, ws string, args ...string) string {
		t.Helper()
		cmd := exec.Command(harness.Binary(t), append([]string{"call"}, append(args, "--root", ws)...)...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTLS_AUDIT_DIR="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	t.Run("typo in one rule keeps the other deny rules", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{
			"victim.txt":             "keep\n",
			".agentls/settings.json": `{"permissions": {"deny": ["Bash(rm:*)", "Bash(curl:*"]}}`,
		})
		out := call(t, ws, "bash", `{"command": "rm victim.txt"}`)
		if _, err := os.Stat(filepath.Join(ws, "victim.txt")); err != nil {
			t.Fatalf("rm ran although Bash(rm:*) is denied: %s", out)
		}
		if !strings.Contains(out, "Bash(rm:*)") {
			t.Errorf("the refusal does not name the rule: %s", out)
		}
	})
	t.Run("invalid JSON at start allows only read-only calls", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{
			"a.txt":                  "hello\n",
			".agentls/settings.json": "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"],}\n}\n",
		})
		out := call(t, ws, "bash", `{"command": "touch made.txt"}`)
		if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
			t.Fatalf("a command ran while the settings file is broken: %s", out)
		}
		for _, want := range []string{".agentls/settings.json", "line 2, column", "only read-only calls run"} {
			if !strings.Contains(out, want) {
				t.Errorf("the refusal does not say %q: %s", want, out)
			}
		}
		if out := call(t, ws, "read", `{"path": "a.txt"}`); !strings.Contains(out, "hello") {
			t.Errorf("a read was refused: %s", out)
		}
	})
}
