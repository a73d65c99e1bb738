package upstream

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseConfigTransportsAndExpansion checks the accepted shapes, the
// inferred and canonical transport, variable expansion, and that every
// problem names its server (and variable) without dropping servers that
// can still run.
func TestParseConfigTransportsAndExpansion(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "ghp-value", "REGION": "eu", "EMPTY": "", "BASE": "ftp://user:hunter2@example.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name    string
		json    string
		want    []ServerConfig
		wantErr []string // substrings of the error, in any order; none: no error
		notErr  []string // must not appear in the error
	}{
		{
			name: "VS Code http server with a token from ${env:}",
			json: `{"servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}}}}`,
			want: []ServerConfig{{Name: "github", Dir: "/ws", Type: "http", URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ghp-value"}}},
		},
		{
			name: "Claude Code sse server with ${NAME} and ${NAME:-default}",
			json: `{"mcpServers": {"x": {"type": "sse", "url": "https://${REGION}.example.com/sse", "headers": {"X-Key": "${GITHUB_TOKEN}", "X-Tier": "${TIER:-free}"}}}}`,
			want: []ServerConfig{{Name: "x", Dir: "/ws", Type: "sse", URL: "https://eu.example.com/sse", Headers: map[string]string{"X-Key": "ghp-value", "X-Tier": "free"}}},
		},
		{
			name: "a default replaces an empty variable too",
			json: `{"mcpServers": {"x": {"url": "http://localhost:1/${EMPTY:-mcp}"}}}`,
			want: []ServerConfig{{Name: "x", Dir: "/ws", Type: "http", URL: "http://localhost:1/mcp"}},
		},
		{
			name: "url without type is http",
			json: `{"servers": {"remote": {"url": "http://127.0.0.1:8080/mcp"}}}`,
			want: []ServerConfig{{Name: "remote", Dir: "/ws", Type: "http", URL: "http://127.0.0.1:8080/mcp"}},
		},
		{
			name: "streamable-http and streamableHttp spellings are http",
			json: `{"mcpServers": {"a": {"type": "streamable-http", "url": "http://h/a"}, "b": {"type": "streamableHttp", "url": "http://h/b"}}}`,
			want: []ServerConfig{{Name: "a", Dir: "/ws", Type: "http", URL: "http://h/a"}, {Name: "b", Dir: "/ws", Type: "http", URL: "http://h/b"}},
		},
		{
			name: "stdio expands workspace, home and environment in command, args and env",
			json: `{"mcpServers": {"fs": {"command": "${userHome}/bin/srv", "args": ["--root", "${workspaceFolder}", "--region=${env:REGION}"], "env": {"TOKEN": "${GITHUB_TOKEN}"}}}}`,
			want: []ServerConfig{{Name: "fs", Dir: "/ws", Type: "stdio", Command: "/home/u/bin/srv", Args: []string{"--root", "/ws", "--region=eu"}, Env: map[string]string{"TOKEN": "ghp-value"}}},
		},
		{
			name:    "an unset variable expands to empty, is reported, and the server stays",
			json:    `{"servers": {"github": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${env:NO_SUCH_TOKEN}"}}}}`,
			want:    []ServerConfig{{Name: "github", Dir: "/ws", Type: "http", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer "}}},
			wantErr: []string{`server "github": header "Authorization": environment variable NO_SUCH_TOKEN is not set, so ${env:NO_SUCH_TOKEN} expands to ""`},
		},
		{
			name:    "VS Code input prompts are not supported and stay as written",
			json:    `{"servers": {"github": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}}}`,
			want:    []ServerConfig{{Name: "github", Dir: "/ws", Type: "http", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${input:token}"}}},
			wantErr: []string{`server "github": header "Authorization": ${input:token} is not supported`},
		},
		{
			name:    "url with another scheme",
			json:    `{"mcpServers": {"bad": {"type": "http", "url": "ftp://example.com/mcp"}, "ok": {"url": "http://h/"}}}`,
			want:    []ServerConfig{{Name: "ok", Dir: "/ws", Type: "http", URL: "http://h/"}},
			wantErr: []string{`server "bad": url "ftp://example.com/mcp" must start with http:// or https://`},
		},
		{
			name:    "a bad url from the environment is shown as written, not expanded",
			json:    `{"mcpServers": {"bad": {"url": "${BASE}/mcp"}}}`,
			wantErr: []string{`server "bad": url "${BASE}/mcp" must start with http:// or https://`},
			notErr:  []string{"hunter2"},
		},
		{
			name:    "unparsable url",
			json:    `{"mcpServers": {"bad": {"type": "sse", "url": "http://h/%zz"}}}`,
			wantErr: []string{`server "bad": url "http://h/%zz" is not a valid URL: invalid URL escape "%zz"`},
		},
		{
			name:    "url without host",
			json:    `{"mcpServers": {"bad": {"type": "http", "url": "http:///mcp"}}}`,
			wantErr: []string{`server "bad": url "http:///mcp" has no host`},
		},
		{
			name:    "http without url",
			json:    `{"mcpServers": {"bad": {"type": "http", "headers": {"A": "b"}}}}`,
			wantErr: []string{`server "bad": type "http" needs a "url"`},
		},
		{
			name:    "sse without url",
			json:    `{"mcpServers": {"bad": {"type": "sse"}}}`,
			wantErr: []string{`server "bad": type "sse" needs a "url"`},
		},
		{
			name:    "unknown type",
			json:    `{"mcpServers": {"bad": {"type": "websocket", "url": "ws://h/"}}}`,
			wantErr: []string{`server "bad": type "websocket" is not supported (use "stdio", "http" or "sse")`},
		},
		{
			name:    "stdio type with only a url",
			json:    `{"mcpServers": {"bad": {"type": "stdio", "url": "http://h/"}}}`,
			wantErr: []string{`server "bad": no command (a stdio server needs one; url is for "http" and "sse" servers)`},
		},
		{
			name:    "neither command nor url",
			json:    `{"mcpServers": {"bad": {"args": ["x"]}}}`,
			wantErr: []string{`server "bad": no command (a stdio server) or url (an http server)`},
		},
		{
			name:    "invalid header name",
			json:    `{"mcpServers": {"bad": {"url": "http://h/", "headers": {"X Key": "v"}}}}`,
			wantErr: []string{`server "bad": header name "X Key" is not a valid HTTP header name`},
		},
		{
			name:    "a line break in a header value",
			json:    `{"mcpServers": {"bad": {"url": "http://h/", "headers": {"X-Key": "a\r\nInjected: yes"}}}}`,
			wantErr: []string{`server "bad": header "X-Key": the value contains a line break or NUL`},
		},
		{
			name: "disabled servers are skipped without a problem",
			json: `{"mcpServers": {"off": {"type": "websocket", "disabled": true}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tc.json), "/ws", "/home/u", lookup)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("configs:\n got %+v\nwant %+v", got, tc.want)
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			if len(tc.wantErr) > 0 && err == nil {
				t.Fatalf("no error, want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, w := range tc.notErr {
				if err != nil && strings.Contains(err.Error(), w) {
					t.Errorf("error %q reveals %q", err, w)
				}
			}
		})
	}
}

// TestExpand covers the reference syntax on its own.
func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "B_2": "two"}
	tests := []struct {
		name, in, want string
		problems       int
	}{
		{"no reference", "plain $A text", "plain $A text", 0},
		{"env prefix", "${env:A}", "1", 0},
		{"bare name", "x${B_2}y", "xtwoy", 0},
		{"several", "${A}-${env:B_2}-${workspaceFolder}", "1-two-/ws", 0},
		{"default unused", "${A:-9}", "1", 0},
		{"default used", "${C:-9}", "9", 0},
		{"env prefix with default", "${env:C:-d}", "d", 0},
		{"empty default", "${C:-}", "", 0},
		{"unset", "<${C}>", "<>", 1},
		{"unterminated is literal", "${A", "${A", 0},
		{"not a name", "${1A}", "${1A}", 1},
		{"empty reference", "${}", "${}", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &expander{server: "s", workspace: "/ws", home: "/h", lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			if got := e.expand(tc.in, "url"); got != tc.want {
				t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(e.problems) != tc.problems {
				t.Errorf("problems %v, want %d", e.problems, tc.problems)
			}
		})
	}
}

// A folder's server replaces the user's of the same name; between two
// folders the first one's wins and the second is reported.
func TestLoadConfigsPrecedence(t *testing.T) {
	user := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	put := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(user, UserConfig), `{"mcpServers": {"both": {"command": "user-srv"}, "mine": {"command": "user-only"}}}`)
	put(filepath.Join(a, WorkspaceConfig), `{"servers": {"both": {"command": "a-srv"}, "dup": {"command": "a-dup"}}}`)
	put(filepath.Join(b, WorkspaceConfig), `{"servers": {"dup": {"command": "b-dup"}, "bonly": {"command": "b-srv"}}}`)
	cfgs, err := LoadConfigs(user, []string{a, b})
	got := map[string]string{}
	for _, c := range cfgs {
		got[c.Name] = c.Command + " in " + c.Dir
	}
	want := map[string]string{"both": "a-srv in " + a, "mine": "user-only in " + a, "dup": "a-dup in " + a, "bonly": "b-srv in " + b}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers %v, want %v", got, want)
	}
	wantErr := filepath.Join(b, WorkspaceConfig) + `: server "dup" is already declared by ` + filepath.Join(a, WorkspaceConfig) + ", which takes precedence"
	if err == nil || err.Error() != wantErr {
		t.Errorf("error %v, want %q", err, wantErr)
	}
}
