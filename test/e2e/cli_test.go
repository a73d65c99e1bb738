package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), args...)
	cmd.Env = append(cmd.Environ(), "AGENTLS_AUDIT_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// The CLI is the server in batch form: one call, its text, exit 1 on isError.
func TestCLI(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "hello\n", "e.txt": "hello\n", "denied/.agentls/settings.json": `{"permissions": {"deny": ["Bash(git:*)"]}}`})
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"version", []string{"--version"}, 0, "agentls "},
		{"call read", []string{"call", "read", `{"path":"a.txt"}`, "--root", ws}, 0, "1→hello"},
		{"flags before the tool", []string{"call", "--root", ws, "read", `{"path":"a.txt"}`}, 0, "1→hello"},
		{"isError exits 1", []string{"call", "read", `{"path":"missing.txt"}`, "--root", ws}, 1, "missing.txt not found"},
		{"running the command approves what would ask", []string{"call", "write", `{"path":"b.txt","content":"x"}`, "--root", ws}, 0, "Created b.txt"},
		{"--mode readOnly refuses a write", []string{"call", "write", `{"path":"c.txt","content":"x"}`, "--root", ws, "--mode", "readOnly"}, 1, "read-only"},
		{"deny rules still apply", []string{"call", "bash", `{"command":"git status"}`, "--root", ws + "/denied"}, 1, "Bash(git:*)"},
		{"bad mode", []string{"call", "read", "{}", "--mode", "x"}, 2, "use default, acceptEdits, readOnly or bypass"},
		{"bad mcp mode", []string{"mcp", "--mode", "x"}, 2, "agentls mcp: --mode \"x\": use default, acceptEdits, readOnly or bypass"},
		{"several calls share a session", []string{"call", "read", `{"path":"e.txt"}`, "edit", `{"path":"e.txt","edits":[{"oldText":"hello","newText":"hi"}]}`, "--root", ws}, 0,
			"== read {\"path\":\"e.txt\"}\ne.txt, lines 1-1 of 1\n     1→hello\n\n== edit {\"path\":\"e.txt\",\"edits\":[{\"oldText\":\"hello\",\"newText\":\"hi\"}]}\nEdited e.txt: 1 replacement, line 1."},
		{"a tool without arguments, then one with", []string{"call", "ls", "read", `{"path":"a.txt"}`, "--root", ws}, 0, "== read"},
		{"the first failing call ends the run", []string{"call", "read", `{"path":"missing.txt"}`, "bash", `{"command":"echo NOT-REACHED"}`, "--root", ws}, 1, "not found"},
		{"arguments before a tool", []string{"call", `{"path":"a.txt"}`, "--root", ws}, 2, "come before any tool name"},
		{"two argument objects", []string{"call", "read", `{}`, `{}`, "--root", ws}, 2, "read has two argument objects"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"unknown format", []string{"tools", "--format", "xml"}, 2, "unknown format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d (want %d), output:\n%s", code, tc.code, out)
			}
			if strings.Contains(out, "NOT-REACHED") {
				t.Fatalf("a call after a failing one ran:\n%s", out)
			}
		})
	}
	for _, format := range []string{"mcp", "openai", "anthropic", "vscode"} {
		out, code := runCLI(t, "tools", "--format", format)
		var list []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 8 {
			t.Fatalf("tools --format %s: exit %d, %d tools:\n%.300s", format, code, len(list), out)
		}
	}
}

// agentls call waits for upstream MCP servers' first listing before a
// search or a call of an upstream tool, as the editor protocol does.
func TestCLICallWaitsForUpstreamTools(t *testing.T) {
	t.Parallel()
	ws, upstreamRoot := t.TempDir(), t.TempDir()
	writeFiles(t, upstreamRoot, map[string]string{"u.txt": "from the upstream\n"})
	cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{"up": map[string]any{
		"command": harness.Binary(t), "args": []string{"mcp", "--root", upstreamRoot},
	}}})
	writeFiles(t, ws, map[string]string{".agentls/mcp.json": string(cfg)})
	out, code := runCLI(t, "call", "tool_search", `{"query":"read text file"}`, "up__read", `{"path":"u.txt"}`, "--root", ws, "--mode", "bypass")
	if code != 0 || !strings.Contains(out, "up__read") || !strings.Contains(out, "from the upstream") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
