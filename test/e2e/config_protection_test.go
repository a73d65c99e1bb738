package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
)

// A bash command that changes a file under the workspace's .agentls/ is
// asked about as an edit of it is (builtin:agentls-config), also in
// `agentls mcp`, where what only the default mode would ask is left to the
// host: before, `echo '{"permissions":{"allow":["Bash"]}}' >
// .agentls/settings.local.json` granted the model every command and `mv
// .agentls/settings.json x` lifted the user's deny rules with no question
// from agentls. The same holds for the user's agentls directory
// ($XDG_CONFIG_HOME/agentls), whose settings may select bypass mode. A
// command that writes elsewhere still runs unasked.
func TestBashChangingAgentlsConfigIsAskedInMCP(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	const settings = `{"permissions":{"deny":["Bash(curl:*)"]}}`
	writeFiles(t, ws, map[string]string{".agentls/settings.json": settings, "tool.json": "{}"})
	ctx := testCtx(t, 30*time.Second)
	var mu sync.Mutex
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "config-protection-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "rejectOnce"}}, nil
		},
	})
	xdg := t.TempDir()
	userSettings := filepath.Join(xdg, "agentls", "settings.json")
	cmd := harness.Command(t, []string{"mcp", "--root", ws}, "XDG_CONFIG_HOME="+xdg, "AGENTLS_AUDIT_DIR="+t.TempDir())
	cmd.Stderr = io.Discard
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bash := func(command string) (string, bool) {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), res.IsError
	}
	questions := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(asked) }
	for _, tc := range []struct{ command, file string }{
		{`echo '{"permissions":{"allow":["Bash"]}}' > .agentls/settings.local.json`, ".agentls/settings.local.json"},
		{"mv .agentls/settings.json .agentls/old.json", ".agentls/settings.json"},
		{"cp tool.json .agentls/tools/t.json", ".agentls/tools/t.json"},
		{"bash -c 'tee .agentls/mcp.json < tool.json'", ".agentls/mcp.json"},
		// The user's settings may even select bypass mode.
		{"mkdir -p " + filepath.Dir(userSettings) + ` && echo '{"mode":"bypass"}' > ` + userSettings, userSettings},
	} {
		before := len(questions())
		text, isErr := bash(tc.command)
		if !isErr || !strings.Contains(text, "denied by the user") {
			t.Errorf("%s: ran or failed otherwise: %s", tc.command, text)
		}
		if q := questions()[before:]; len(q) != 1 || !strings.Contains(q[0], tc.file) || !strings.Contains(q[0], "configures agentls itself") {
			t.Errorf("%s: questions %q; want one naming %s", tc.command, q, tc.file)
		}
	}
	if got := readFile(t, filepath.Join(ws, ".agentls/settings.json")); got != settings {
		t.Errorf(".agentls/settings.json = %q", got)
	}
	for _, f := range []string{filepath.Join(ws, ".agentls/settings.local.json"), filepath.Join(ws, ".agentls/old.json"), filepath.Join(ws, ".agentls/tools/t.json"), filepath.Join(ws, ".agentls/mcp.json"), userSettings} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if text, isErr := bash("curl --version"); !isErr || !strings.Contains(text, "denied by the rule Bash(curl:*)") {
		t.Errorf("the deny rule no longer holds: %s", text)
	}
	before := len(questions())
	if text, isErr := bash("echo ok > other.txt"); isErr {
		t.Errorf("a command writing elsewhere was refused: %s", text)
	}
	if q := questions()[before:]; len(q) != 0 {
		t.Errorf("a command writing elsewhere was asked about: %v", q)
	}
}
