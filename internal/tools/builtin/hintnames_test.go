package builtin

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/tools"
)

// In a host that lists the tools as agentls_<tool> (VS Code), every hint a
// result gives names the tool the model has there; the same call without a
// prefix (MCP, the CLI) reads exactly as before, and nothing but the names
// differs between the two.
func TestHintsNameToolsAsTheClientSeesThem(t *testing.T) {
	long := strings.Repeat("x", tools.DefaultLimits().ReadLineChars+50) + "\n"
	files := map[string][]byte{
		"src/main.go": []byte("package main\n"),
		"long.txt":    []byte(long),
		"many.txt":    []byte(strings.Repeat("match "+strings.Repeat("y", 200)+"\n", 2000)),
		".git/config": []byte("[core]\n"),
		"empty.txt":   {},
	}
	cases := []struct {
		name, tool, args string
		mentions         []string // tools the hint names
		read             string   // a file read first, when the call needs it
	}{
		{"unknown tool: did you mean, available tools", "view_file", `{}`, []string{"read", "ls", "grep", "find", "edit", "write", "bash"}, ""},
		{"ls recursive points to find", "ls", `{"path":"src","recursive":true}`, []string{"find"}, ""},
		{"ls of a missing directory", "ls", `{"path":"nothing/here"}`, []string{"find", "ls"}, ""},
		{"ls of a file points to read", "ls", `{"path":"src/main.go"}`, []string{"read"}, ""},
		{"read of a directory points to ls", "read", `{"path":"src"}`, []string{"ls"}, ""},
		{"read of a missing file", "read", `{"path":"src/nothere.txt"}`, []string{"find", "ls"}, ""},
		{"read cuts a long line and points to bash", "read", `{"path":"long.txt"}`, []string{"bash"}, ""},
		{"find in a file points to read", "find", `{"pattern":"*","path":"src/main.go"}`, []string{"find", "read"}, ""},
		{"grep of a missing path", "grep", `{"pattern":"x","path":"nothing"}`, []string{"find", "ls"}, ""},
		{"grep cut to its byte budget points to read", "grep", `{"pattern":"match","path":"many.txt","limit":1000}`, []string{"read"}, ""},
		{"grep inside .git points to bash", "grep", `{"pattern":"core","path":".git"}`, []string{"bash"}, ""},
		{"grep of an invalid pattern names grep's syntax", "grep", `{"pattern":"(?=x)"}`, []string{"grep"}, ""},
		{"an argument error's usage line names the tool", "grep", `{"pattern":"x","limit":2000}`, []string{"grep"}, ""},
		{"grep multiline refusal", "grep", `{"pattern":"a","multiline":true}`, []string{"grep"}, ""},
		{"edit of a file not read points to read", "edit", `{"path":"src/main.go","edits":[{"oldText":"main","newText":"x"}]}`, []string{"read", "edit", "write"}, ""},
		{"write over a file not read points to read", "write", `{"path":"src/main.go","content":"x"}`, []string{"read", "edit", "write"}, ""},
		{"edit of a missing file points to write", "edit", `{"path":"zzz/new.go","edits":[{"oldText":"a","newText":"b"}]}`, []string{"write"}, ""},
		{"bash cwd missing points to ls", "bash", `{"command":"true","cwd":"nowhere"}`, []string{"ls"}, ""},
		{"edit with an empty oldText points to write", "edit", `{"path":"src/main.go","edits":[{"oldText":"","newText":"x"}]}`, []string{"write"}, "src/main.go"},
		{"edit of an empty file points to write", "edit", `{"path":"empty.txt","edits":[{"oldText":"a","newText":"x"}]}`, []string{"write"}, "empty.txt"},
	}
	run := func(names string, tool, args, read string) string {
		x, _ := newTestExecutor(t, files)
		guard := editguard.New(x.Env.FS)
		x.Env.Guard = guard
		x.Env.Names = mention.Prefix(names)
		if read != "" {
			call(t, x, "read", `{"path":"`+read+`"}`)
		}
		return call(t, x, tool, args).TextOf()
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bare := run("", tc.tool, tc.args, tc.read)
			pre := run(tools.VSCodeToolPrefix, tc.tool, tc.args, tc.read)
			if strings.Contains(bare, tools.VSCodeToolPrefix) {
				t.Errorf("without a prefix the hint names a prefixed tool:\n%s", bare)
			}
			for _, m := range tc.mentions {
				if !regexp.MustCompile(`\b` + tools.VSCodeToolPrefix + m + `\b`).MatchString(pre) {
					t.Errorf("with the prefix the hint does not name %s%s:\n%s", tools.VSCodeToolPrefix, m, pre)
				}
				if !regexp.MustCompile(`\b` + m + `\b`).MatchString(bare) {
					t.Errorf("without a prefix the hint does not name %s:\n%s", m, bare)
				}
			}
			if got := strings.ReplaceAll(pre, tools.VSCodeToolPrefix, ""); got != bare {
				t.Errorf("the prefixed hint differs by more than the names:\nprefixed: %s\nbare:     %s", pre, bare)
			}
			if strings.Contains(pre, "{{") {
				t.Errorf("an unrendered mark: %s", pre)
			}
		})
	}
}

// A call under the prefixed name the host shows (agentls_read) is refused
// with the bare wire name, not "Did you mean agentls_read?" (it named the
// very name that had just failed).
func TestPrefixedCallNameIsToldTheBareName(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"a.txt": []byte("a\n")})
	x.Env.Names = mention.Prefix(tools.VSCodeToolPrefix)
	r := call(t, x, tools.VSCodeToolPrefix+"read", `{"path":"a.txt"}`)
	text := r.TextOf()
	if !r.IsError || !strings.Contains(text, `tools/call takes the bare name, "read"`) || strings.Contains(text, "Did you mean") {
		t.Errorf("a call of %sread: %s", tools.VSCodeToolPrefix, text)
	}
}
