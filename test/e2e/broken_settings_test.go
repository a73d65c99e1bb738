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

// Rules a settings file holds under a name agentls does not read as rules
// (a top-level "permission" or "deny", "permissions.denied"), a rule list
// or "permissions" given twice (JSON keeps the last: the first one's deny
// rules would go), and a
// settings file that is a symbolic link to nothing count as a broken file:
// only read-only calls run, and the refusal names the file and the key.
// Before, the rules were dropped without a word and `rm` ran although the
// user had written a deny rule for it.
func TestSettingsRulesUnderAnotherNameOrDanglingLinkFailClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, settings, link, want string }{
		{name: "top-level permission", settings: `{"permission": {"deny": ["Bash(rm:*)"]}}`, want: `"permission" is not a settings key`},
		{name: "top-level deny", settings: `{"deny": ["Bash(rm:*)"]}`, want: `"deny" is not a settings key`},
		{name: "misspelt list", settings: `{"permissions": {"denied": ["Bash(rm:*)"]}}`, want: "permissions.denied is not a rule list"},
		{name: "a list given twice", settings: `{"permissions": {"deny": ["Bash(rm:*)"], "Deny": []}}`, want: "permissions.deny is given twice"},
		{name: "permissions given twice", settings: `{"permissions": {"deny": ["Bash(rm:*)"]}, "permissions": {}}`, want: `"permissions" is given twice`},
		{name: "dangling symlink", link: "../shared/agentls-settings.json", want: "symbolic link to ../shared/agentls-settings.json, which does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			writeFiles(t, ws, map[string]string{"victim.txt": "keep\n", "a.txt": "hello\n"})
			if tc.link != "" {
				os.MkdirAll(filepath.Join(ws, ".agentls"), 0o755)
				symlink(t, tc.link, filepath.Join(ws, ".agentls", "settings.json"))
			} else {
				writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), tc.settings)
			}
			cmd := exec.Command(harness.Binary(t), "call", "bash", `{"command": "rm victim.txt"}`, "--root", ws)
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTLS_AUDIT_DIR="+t.TempDir())
			out, _ := cmd.CombinedOutput()
			if _, err := os.Stat(filepath.Join(ws, "victim.txt")); err != nil {
				t.Fatalf("rm ran: %s", out)
			}
			for _, want := range []string{".agentls/settings.json", tc.want, "only read-only calls run"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("the refusal does not say %q: %s", want, out)
				}
			}
		})
	}
	t.Run("Claude Code's other keys are not rules", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{
			"victim.txt":             "keep\n",
			".agentls/settings.json": `{"permissions": {"Deny": ["Bash(rm:*)"], "additionalDirectories": ["../x"]}, "env": {"A": "1"}, "hooks": {}}`,
		})
		cmd := exec.Command(harness.Binary(t), "call", "bash", `{"command": "rm victim.txt"}`, "--root", ws)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTLS_AUDIT_DIR="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "denied by the rule Bash(rm:*)") {
			t.Errorf("the Deny list was not taken: %s", out)
		}
	})
}
