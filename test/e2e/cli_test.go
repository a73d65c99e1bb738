package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

func cliRun(t *testing.T, args []string, env ...string) (string, int) {
	t.Helper()
	cmd := harness.Command(t, args, env...)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return out.String(), code
}

func TestCLISeveralCalls(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nvar x = 1\n"})
	out, code := cliRun(t, []string{"call",
		"read", `{"path":"a.go"}`,
		"edit", `{"path":"a.go","edits":[{"oldText":"x = 1","newText":"x = 2"}]}`,
		"read", `{"path":"a.go"}`,
		"--root", ws})
	if code != 0 {
		t.Errorf("exit %d:\n%s", code, out)
	}
	wantContains(t, "read, edit, read", out, "Edited a.go", "var x = 2")
	if b, _ := os.ReadFile(filepath.Join(ws, "a.go")); !strings.Contains(string(b), "x = 2") {
		t.Errorf("the edit did not land: %s", b)
	}

	// The first failing call ends the run.
	out, code = cliRun(t, []string{"call",
		"read", `{"path":"missing.go"}`,
		"write", `{"path":"later.txt","content":"x"}`,
		"--root", ws})
	if code == 0 {
		t.Errorf("a failing call exited 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "later.txt")); err == nil {
		t.Errorf("the call after the failing one ran")
	}
	wantContains(t, "failing run", out, "missing.go")

	// Deny rules and --mode readOnly still apply.
	writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"permissions": {"deny": ["Write(/denied.txt)", "Edit(/denied.txt)"]}}`})
	out, code = cliRun(t, []string{"call", "write", `{"path":"ok.txt","content":"x"}`, "write", `{"path":"denied.txt","content":"x"}`, "--root", ws})
	if code == 0 {
		t.Errorf("deny rule: exit 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); err == nil {
		t.Errorf("deny rule ignored by agentls call:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ok.txt")); err != nil {
		t.Errorf("the allowed call before the denied one did not run:\n%s", out)
	}
	out, code = cliRun(t, []string{"call", "read", `{"path":"a.go"}`, "write", `{"path":"ro.txt","content":"x"}`, "--root", ws, "--mode", "readOnly"})
	if code == 0 {
		t.Errorf("readOnly: exit 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
		t.Errorf("--mode readOnly let a write through")
	}
	wantContains(t, "readOnly run", out, "var x = 2", "readOnly")
}
