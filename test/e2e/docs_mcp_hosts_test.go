package e2e

// README's MCP host snippets start a working server on the intended
// workspace; docs/benchmarks.md records the MCP benchmark's p50/p99 of
// reads and of connect+initialize for both peers. (Speed targets are shown
// by the benchmarks themselves, bench/mcp and go test -bench, not by timed
// tests.)

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentls/agentls/test/harness"
)

// hostsDocSection returns the text of path from the line starting with heading
// up to the next heading of the same or a higher level.
func hostsDocSection(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading)
	if i < 0 {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	s = s[i+1:]
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	// The section ends at the next heading of its level or above; a "# "
	// line inside a code block (a shell comment) is no heading.
	lines := strings.SplitAfter(s, "\n")
	end, fenced := len(s), false
	for k, off := 0, 0; k < len(lines); off, k = off+len(lines[k]), k+1 {
		l := lines[k]
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if k == 0 || fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "#")); n <= level && strings.HasPrefix(l[n:], " ") {
			end = off
			break
		}
	}
	return s[:end]
}

// hostsDocFence returns the language and body of the first fenced block after
// label in text.
func hostsDocFence(t *testing.T, text, label string) (lang, body string) {
	t.Helper()
	i := strings.Index(text, label)
	if i < 0 {
		t.Fatalf("README's MCP hosts section has no %q", label)
	}
	s := text[i:]
	j := strings.Index(s, "```")
	if j < 0 {
		t.Fatalf("no code block after %q", label)
	}
	s = s[j+3:]
	nl := strings.IndexByte(s, '\n')
	lang, s = s[:nl], s[nl+1:]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatalf("unterminated code block after %q", label)
	}
	return lang, s[:end]
}

// hostsDocCall sends a request to an agentls mcp and returns its result,
// failing on an error reply.
func hostsDocCall(t *testing.T, c *mcpRawClient, id int, method string, params any) map[string]any {
	t.Helper()
	c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m := c.mustReply(id, 15*time.Second)
	if m.Error != nil {
		t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	var res map[string]any
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("%s: result %s: %v", method, m.Result, err)
	}
	return res
}

func hostsDocText(res map[string]any) string {
	var parts []string
	content, _ := res["content"].([]any)
	for _, p := range content {
		if m, _ := p.(map[string]any); m["type"] == "text" {
			parts = append(parts, fmt.Sprint(m["text"]))
		}
	}
	return strings.Join(parts, "\n")
}

// hostsDocHostArgv turns one README snippet into the command a host would run
// (with ${workspaceFolder} and $PWD being ws) and the directory it runs in.
func hostsDocHostArgv(t *testing.T, host, lang, body, ws string) []string {
	t.Helper()
	switch host {
	case "Claude Code":
		if lang != "sh" {
			t.Fatalf("Claude Code snippet is %q, want sh", lang)
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(body), "README.md")
		if err != nil || len(f.Stmts) != 1 {
			t.Fatalf("Claude Code snippet is not one shell command (%v):\n%s", err, body)
		}
		call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok {
			t.Fatalf("Claude Code snippet is not a simple command:\n%s", body)
		}
		words, err := expand.Fields(&expand.Config{Env: expand.ListEnviron("PWD=" + ws)}, call.Args...)
		if err != nil {
			t.Fatal(err)
		}
		// claude mcp add [options] <name> -- <command> [args...]
		dash := slices.Index(words, "--")
		if len(words) < 6 || !slices.Equal(words[:3], []string{"claude", "mcp", "add"}) || dash < 4 || dash == len(words)-1 {
			t.Fatalf("not `claude mcp add <name> -- <command> …`: %q", words)
		}
		return words[dash+1:]
	case "VS Code", "Cursor":
		if lang != "json" {
			t.Fatalf("%s snippet is %q, want json", host, lang)
		}
		var cfg map[string]map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if err := json.Unmarshal([]byte(body), &cfg); err != nil {
			t.Fatalf("%s snippet is not JSON: %v\n%s", host, err, body)
		}
		key := map[string]string{"VS Code": "servers", "Cursor": "mcpServers"}[host]
		servers := cfg[key]
		if len(servers) != 1 {
			t.Fatalf("%s snippet: want one server under %q: %s", host, key, body)
		}
		for _, s := range servers {
			if host == "VS Code" && s.Type != "stdio" {
				t.Errorf("VS Code server type %q, want stdio", s.Type)
			}
			argv := []string{s.Command}
			for _, a := range s.Args {
				argv = append(argv, strings.ReplaceAll(a, "${workspaceFolder}", ws))
			}
			return argv
		}
	case "Codex":
		if lang != "toml" {
			t.Fatalf("Codex snippet is %q, want toml", lang)
		}
		table := regexp.MustCompile(`(?m)^\[mcp_servers\.[A-Za-z0-9_-]+\]$`)
		cmd := regexp.MustCompile(`(?m)^command\s*=\s*("[^"]*")\s*$`).FindStringSubmatch(body)
		args := regexp.MustCompile(`(?m)^args\s*=\s*(\[.*\])\s*$`).FindStringSubmatch(body)
		if !table.MatchString(body) || cmd == nil || args == nil {
			t.Fatalf("Codex snippet lacks [mcp_servers.<name>], command or args:\n%s", body)
		}
		var name string
		var rest []string
		// Basic TOML strings and arrays of them are JSON.
		if json.Unmarshal([]byte(cmd[1]), &name) != nil || json.Unmarshal([]byte(args[1]), &rest) != nil {
			t.Fatalf("Codex snippet values are not plain strings:\n%s", body)
		}
		return append([]string{name}, rest...)
	}
	t.Fatalf("unknown host %s", host)
	return nil
}

// README's snippets for Claude Code (`claude mcp add`), VS Code
// (`.vscode/mcp.json`), Cursor and Codex: each, run as its host would run
// it, serves MCP on the intended workspace (the project, not wherever the
// host process happens to be).
func TestDocsReadmeMCPHosts(t *testing.T) {
	t.Parallel()
	section := hostsDocSection(t, filepath.Join(docsRepo(t), "README.md"), "### MCP hosts")
	hosts := []struct {
		host, label string
		// hostCwd: whether the host starts the server in the project
		// directory (Codex runs it in its own working directory, the
		// project; the others pass the project explicitly).
		hostCwd bool
	}{
		{"Claude Code", "**Claude Code** (", false},
		{"VS Code", "**VS Code** (`.vscode/mcp.json`", false},
		{"Cursor", "**Cursor** (`.cursor/mcp.json`)", false},
		{"Codex", "**Codex** (`~/.codex/config.toml`)", true},
	}
	for _, h := range hosts {
		t.Run(h.host, func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{"marker.txt": "workspace of " + h.host + "\n"})
			lang, body := hostsDocFence(t, section, h.label)
			argv := hostsDocHostArgv(t, h.host, lang, body, ws)
			if argv[0] != "agentls" || !slices.Contains(argv[1:], "mcp") {
				t.Fatalf("%s runs %q, want `agentls mcp …`", h.host, argv)
			}
			dir := t.TempDir() // a host elsewhere: the snippet must name the project
			if h.hostCwd {
				dir = ws
			}
			cmd := harness.Command(t, argv[1:])
			cmd.Dir = dir
			c := startMCPRawCmd(t, cmd)
			init := hostsDocCall(t, c, 1, "initialize", map[string]any{
				"protocolVersion": "2025-06-18",
				"capabilities":    map[string]any{},
				"clientInfo":      map[string]any{"name": "docs-" + h.host, "version": "0"},
			})
			if _, ok := init["capabilities"].(map[string]any)["tools"]; !ok {
				t.Fatalf("initialize result has no tools capability: %v", init)
			}
			c.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			list := hostsDocCall(t, c, 2, "tools/list", map[string]any{})
			if tools, _ := list["tools"].([]any); len(tools) == 0 {
				t.Fatalf("tools/list is empty: %v", list)
			}
			res := hostsDocCall(t, c, 3, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "marker.txt"}})
			if res["isError"] == true || !strings.Contains(hostsDocText(res), "workspace of "+h.host) {
				t.Fatalf("read marker.txt through the %s snippet: %v", h.host, res)
			}
		})
	}
}

// hostsDocNums returns the numbers of a "0.26 / 0.25 / 0.26 ms" cell.
func hostsDocNums(cell string) []float64 {
	var out []float64
	for _, m := range regexp.MustCompile(`\d+(?:\.\d+)?`).FindAllString(cell, -1) {
		f, _ := strconv.ParseFloat(m, 64)
		out = append(out, f)
	}
	return out
}

// hostsDocMCPTable reads the main table of the MCP section of
// docs/benchmarks.md: header cells and the rows of agentls mcp (default
// settings) and server-filesystem.
func hostsDocMCPTable(t *testing.T) (header []string, agentls, fs []string) {
	t.Helper()
	sec := hostsDocSection(t, filepath.Join(docsRepo(t), "docs", "benchmarks.md"), "## MCP")
	split := func(l string) []string {
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	for _, l := range strings.Split(sec, "\n") {
		switch {
		case header == nil && strings.HasPrefix(l, "| peer"):
			header = split(l)
		case header != nil && agentls == nil && strings.HasPrefix(l, "| `agentls mcp` |"):
			agentls = split(l)
		case header != nil && fs == nil && strings.Contains(l, "server-filesystem") && strings.HasPrefix(l, "|"):
			fs = split(l)
		}
	}
	if header == nil || agentls == nil || fs == nil {
		t.Fatalf("docs/benchmarks.md MCP section lacks a table with agentls mcp and server-filesystem rows")
	}
	return header, agentls, fs
}

// bench/mcp drives agentls mcp and server-filesystem's read_text_file with
// the same TypeScript client, 200 sequential reads each, and
// docs/benchmarks.md records p50/p99 of the reads and of connect+initialize
// for both.
func TestDocsMCPBenchRecorded(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(docsRepo(t), "bench", "mcp", "bench.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{"@modelcontextprotocol/sdk/client", "StdioClientTransport", "server-filesystem", "read_text_file", "READS = 200"} {
		if !strings.Contains(src, want) {
			t.Errorf("bench/mcp/bench.mjs lacks %q", want)
		}
	}
	header, ag, fs := hostsDocMCPTable(t)
	col := func(re string) int {
		return slices.IndexFunc(header, func(h string) bool { return regexp.MustCompile(re).MatchString(h) })
	}
	for _, c := range []struct{ name, re string }{
		{"read p50", `^read p50`},
		{"read p99", `^read p99`},
		{"connect+initialize p50", `^connect\+initialize p50`},
		{"connect+initialize p99", `^connect\+initialize p99`},
	} {
		i := col(c.re)
		if i < 0 {
			t.Errorf("docs/benchmarks.md MCP table has no %q column (header %q)", c.name, header)
			continue
		}
		for _, row := range [][]string{ag, fs} {
			if i >= len(row) || len(hostsDocNums(row[i])) == 0 {
				t.Errorf("%s: no %s figure recorded", row[0], c.name)
			}
		}
	}
}
