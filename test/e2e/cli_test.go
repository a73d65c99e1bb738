package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// `agentls call` as a user meets it, one invocation a row: its exit code
// (0, or 1 for an isError result), what it prints and what it leaves in the
// workspace. $WS is a plain workspace, $GOV one whose settings file denies
// and asks; the rows of one workspace run in order. Bad arguments, masking,
// limits, modes, settings sources and the first failing call ending the run
// are scripts' (cmd/agentls/testdata/script: read/, arguments/, bash/,
// governance/, permissions/).
func TestCLICall(t *testing.T) {
	t.Parallel()
	dirs := map[string]string{
		"$WS": newWorkspace(t, map[string]string{"f.txt": "alpha\nbeta\ngamma\n", "sub/g.txt": "x\n", "e.txt": "hello\n", "s.txt": "one\ntwo\n"}),
		"$GOV": newWorkspace(t, map[string]string{"private.txt": "p\n",
			".agentls/settings.json": `{"permissions": {"deny": ["Read(./private.txt)", "Bash(git:*)", "Write(/denied.txt)"], "ask": ["Bash(touch:*)"]}}`,
		}),
	}
	edit := `{"path":"s.txt","edits":[{"oldText":"two","newText":"TWO"}]}`
	cases := []struct {
		name    string
		args    []string
		code    int
		exact   string   // the whole stdout, when set
		want    []string // in stdout or stderr
		notWant []string
		exists  []string // files the run leaves ($WS/..., $GOV/...)
		absent  []string
	}{
		{name: "read", args: []string{"call", "read", `{"path": "f.txt"}`, "--root", "$WS"},
			exact: "f.txt, lines 1-3 of 3\n     1→alpha\n     2→beta\n     3→gamma\n"},
		{name: "root flag first", args: []string{"--root", "$WS", "call", "read", `{"path": "f.txt", "offset": 2}`}, want: []string{"f.txt, lines 2-3 of 3", "     2→beta"}},
		{name: "flags before the tool", args: []string{"call", "--root", "$WS", "read", `{"path":"f.txt"}`}, want: []string{"1→alpha"}},
		{name: "a tool without JSON", args: []string{"call", "ls", "--root", "$WS"}, want: []string{"f.txt", "sub/"}},
		{name: "--json prints the result", args: []string{"call", "read", `{"path": "f.txt"}`, "--json", "--root", "$WS"},
			want: []string{`"callId"`, `"isError"`, `"durationMs"`, "f.txt, lines 1-3 of 3"}},
		{name: "a missing file is isError", args: []string{"call", "read", `{"path":"nope.txt"}`, "--root", "$WS"}, code: 1, want: []string{"nope.txt not found"}},
		{name: "an unknown tool is isError", args: []string{"call", "reed", `{"path": "f.txt"}`, "--root", "$WS"}, code: 1, want: []string{"reed", "read"}},
		{name: "several calls share a session", args: []string{"call", "read", `{"path":"e.txt"}`, "edit", `{"path":"e.txt","edits":[{"oldText":"hello","newText":"hi"}]}`, "--root", "$WS"},
			want: []string{"== read {\"path\":\"e.txt\"}\ne.txt, lines 1-1 of 1\n     1→hello\n\n== edit {\"path\":\"e.txt\",\"edits\":[{\"oldText\":\"hello\",\"newText\":\"hi\"}]}\nEdited e.txt: 1 replacement, line 1."}},
		{name: "a tool without arguments, then one with", args: []string{"call", "ls", "read", `{"path":"f.txt"}`, "--root", "$WS"}, want: []string{"== ls", "== read", "1→alpha"}},
		{name: "an edit without a read in this invocation fails", args: []string{"call", "edit", edit, "--root", "$WS"}, code: 1},
		{name: "a read then an edit in one invocation", args: []string{"call", "read", `{"path": "s.txt"}`, "edit", edit, "--root", "$WS"}, want: []string{"Edited s.txt: 1 replacement"}},
		{name: "running the command approves what would ask", args: []string{"call", "write", `{"path":"b.txt","content":"x"}`, "--root", "$WS"}, want: []string{"Created b.txt"}, exists: []string{"$WS/b.txt"}},
		{name: "a deny rule applies", args: []string{"call", "read", `{"path": "private.txt"}`, "--root", "$GOV"}, code: 1, want: []string{"denied"}, notWant: []string{"1→p"}},
		{name: "a bash deny rule applies", args: []string{"call", "bash", `{"command":"git status"}`, "--root", "$GOV"}, code: 1, want: []string{"Bash(git:*)"}},
		{name: "the call before a denied one runs", args: []string{"call", "write", `{"path":"ok.txt","content":"x"}`, "write", `{"path":"denied.txt","content":"x"}`, "--root", "$GOV"},
			code: 1, exists: []string{"$GOV/ok.txt"}, absent: []string{"$GOV/denied.txt"}},
		{name: "an ask rule is approved by running", args: []string{"call", "bash", `{"command": "touch made.txt"}`, "--root", "$GOV"}, exists: []string{"$GOV/made.txt"}},
	}
	expand := func(s string) string {
		for k, v := range dirs {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []string
			for _, a := range c.args {
				args = append(args, expand(a))
			}
			r := runAgentls(t, dirs["$WS"], nil, args...)
			out := r.stdout + r.stderr
			if r.code != c.code || c.exact != "" && r.stdout != c.exact {
				t.Errorf("exit %d (want %d); stdout %q stderr %q", r.code, c.code, r.stdout, r.stderr)
			}
			wantContains(t, "output", out, c.want...)
			wantLacks(t, "output", out, c.notWant...)
			for _, f := range c.exists {
				if _, err := os.Stat(expand(f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			for _, f := range c.absent {
				if _, err := os.Stat(expand(f)); err == nil {
					t.Errorf("%s exists", f)
				}
			}
		})
	}
	if b := readFile(t, filepath.Join(dirs["$WS"], "s.txt")); b != "one\nTWO\n" {
		t.Errorf("s.txt = %q: the edit without a read changed it, or the one after a read did not", b)
	}
}

// An invocation the command line does not accept exits 2, prints nothing on
// stdout and names what is wrong in its first stderr line; unknown flags and
// subcommands also show the usage. Asking for help is not an error (each
// subcommand's --help is cmd/agentls TestUsageNamesEverySubcommandFlag's).
func TestCLIBadInvocationAndHelp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		args      []string
		names     []string // all in the first stderr line
		wantUsage bool
	}{
		{"unknown flag", []string{"--frobnicate"}, []string{"frobnicate"}, true},
		{"unknown subcommand", []string{"frobnicate"}, []string{"frobnicate", "unknown command"}, true},
		{"unknown flag after --root", []string{"--root", ".", "frobnicate"}, []string{"frobnicate"}, true},
		{"tools unknown flag", []string{"tools", "--frobnicate"}, []string{"frobnicate"}, true},
		{"call unknown flag", []string{"call", "--frobnicate"}, []string{"frobnicate"}, true},
		{"mcp unknown flag", []string{"mcp", "--frobnicate"}, []string{"frobnicate"}, true},
		{"audit unknown flag", []string{"audit", "--frobnicate"}, []string{"frobnicate"}, true},
		{"tools unknown format", []string{"tools", "--format", "gemini"}, []string{"gemini", "mcp", "openai", "anthropic", "vscode"}, false},
		{"log level", []string{"--log-level", "loud"}, []string{"loud", "debug", "info", "warn", "error"}, false},
		{"call mode", []string{"call", "ls", "--mode", "yolo"}, []string{"yolo", "use default, acceptEdits, readOnly or bypass"}, false},
		{"mcp mode", []string{"mcp", "--mode", "x"}, []string{`agentls mcp: --mode "x": use default, acceptEdits, readOnly or bypass`}, false},
		{"call without tool", []string{"call"}, []string{"tool"}, false},
		{"arguments before a tool", []string{"call", `{"path":"a.txt"}`}, []string{"come before any tool name"}, false},
		{"two argument objects", []string{"call", "read", `{}`, `{}`}, []string{"read has two argument objects"}, false},
		{"mcp stray argument", []string{"mcp", "frobnicate"}, []string{"frobnicate"}, false},
		// `agentls tools openai` (the format without --format) must not
		// silently print the MCP shape.
		{"tools stray argument", []string{"tools", "openai"}, []string{"openai"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runAgentls(t, t.TempDir(), nil, c.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != 2 || r.stdout != "" {
				t.Errorf("agentls %q: exit %d, want 2; stdout %.200q", c.args, r.code, r.stdout)
			}
			wantContains(t, "first stderr line", first, c.names...)
			if c.wantUsage && !strings.Contains(strings.ToLower(r.stderr), "usage") {
				t.Errorf("agentls %q: no usage hint on stderr: %q", c.args, r.stderr)
			}
		})
	}
	helps := []struct {
		args  []string
		wants []string
	}{
		{[]string{"--help"}, []string{"agentls tools", "--format", "--all", "agentls call", "--mode", "agentls mcp", "agentls audit", "--tail", "--version", "root", "log-file", "log-level", "openai", "anthropic", "vscode"}},
		{[]string{"-h"}, []string{"agentls tools", "agentls call", "agentls mcp", "agentls audit"}},
	}
	for _, h := range helps {
		t.Run(strings.Join(h.args, " "), func(t *testing.T) {
			r := runAgentls(t, t.TempDir(), nil, h.args...)
			if r.code != 0 {
				t.Errorf("agentls %q exited %d, want 0", h.args, r.code)
			}
			wantContains(t, "usage", r.stdout+r.stderr, h.wants...)
		})
	}
	if r := runAgentls(t, t.TempDir(), nil, "--version"); r.code != 0 || !regexp.MustCompile(`^agentls \S+\n$`).MatchString(r.stdout) {
		t.Errorf("agentls --version: exit %d, stdout %q; want one line, agentls VERSION", r.code, r.stdout)
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
	r := runAgentls(t, ws, nil, "call", "tool_search", `{"query":"read text file"}`, "up__read", `{"path":"u.txt"}`, "--root", ws, "--mode", "bypass")
	if r.code != 0 || !strings.Contains(r.stdout, "up__read") || !strings.Contains(r.stdout, "from the upstream") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
