package builtin

import (
	"strings"
	"testing"
)

// Other agents' argument conventions either keep their meaning or fail
// saying what to send; a dropped field must never change what runs.
func TestForeignConventions(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 30; i++ {
		long.WriteString("line\n")
	}
	x, _ := newTestExecutor(t, map[string][]byte{
		"long.txt": []byte(long.String()),
		"src/a.go": []byte("package a\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"),
		"src/b.GO": []byte("x\n"),
	})
	tests := []struct {
		name, tool, args string
		isError          bool
		want             string
	}{
		{"Codex line_offset and line_limit", "read", `{"path":"long.txt","line_offset":28,"line_limit":2}`, false, "long.txt, lines 28-29 of 30"},
		{"Gemini absolute_path", "read", `{"absolute_path":"long.txt","limit":1}`, false, "lines 1-1 of 30"},
		{"Gemini dir_path", "ls", `{"dir_path":"src"}`, false, "src: 2 entries"},
		{"arguments nested under input", "read", `{"input":{"path":"long.txt","limit":1}}`, false, "lines 1-1 of 30"},
		{"arguments nested as a JSON string", "read", `{"arguments":"{\"path\":\"long.txt\",\"limit\":1}"}`, false, "lines 1-1 of 30"},
		{"Gemini directory for bash", "bash", `{"command":"pwd","directory":"src"}`, false, "/src"},
		{"Claude run_in_background", "bash", `{"command":"true","run_in_background":true}`, false, "job-1 ended within its first 1 s: exited 0"},
		{"Claude -A", "grep", `{"pattern":"func main","path":"src/a.go","-A":1}`, false, "src/a.go-4- \tprintln"},
		{"crush literal_text", "grep", `{"pattern":"println(","literal_text":true}`, false, "src/a.go:4:"},
		{"Claude multiline", "grep", `{"pattern":"main.*\\n.*println","multiline":true}`, true, "multiline is not supported"},
		{"a regex newline", "grep", `{"pattern":"main\\(\\) \\{\\n"}`, true, "grep matches one line at a time"},
		{"an escaped backslash is not a newline", "grep", `{"pattern":"a\\\\nb"}`, false, "No matches"},
		{"a regex carriage return", "grep", `{"pattern":"end\\r$"}`, true, "a pattern containing \\r cannot match"},
		{"a carriage return character", "grep", `{"pattern":"end\r"}`, true, "Leave the \\r out"},
		{"an escaped backslash is not a carriage return", "grep", `{"pattern":"a\\\\rb"}`, false, "No matches"},
		{"a literal backslash-r is plain text", "grep", `{"pattern":"a\\rb","literal":true}`, false, "No matches"},
		{"Gemini case_sensitive false", "find", `{"pattern":"*.go","case_sensitive":false}`, true, `"*.{go,GO}"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, x, tc.tool, tc.args)
			if r.IsError != tc.isError || !strings.Contains(r.TextOf(), tc.want) {
				t.Errorf("isError %v, text:\n%s\nwant isError %v and %q", r.IsError, r.TextOf(), tc.isError, tc.want)
			}
		})
	}
}

func TestUnknownToolSuggestsTheCoreTool(t *testing.T) {
	x, _ := newTestExecutor(t, nil)
	for name, want := range map[string]string{
		"view": "read", "glob": "find", "run_shell_command": "bash", "search_file_content": "grep",
		"list_directory": "ls", "replace": "edit", "functions.read": "read", "mcp__agentls__grep": "grep",
	} {
		r := call(t, x, name, `{}`)
		if !r.IsError || !strings.Contains(r.TextOf(), `Did you mean "`+want+`"?`) {
			t.Errorf("%s: %s", name, r.TextOf())
		}
	}
}
