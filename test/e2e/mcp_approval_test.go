package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
)

// On MCP 2026-07-28 a server may ask its client only by answering a call
// with input requests (SEP-2322): an approval is asked that way, and the
// client's answer, sent with the retried call, decides. The go-sdk client
// fulfils input requests itself through its elicitation handler.
func TestMCPApprovalOverMultiRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		decision string
		message  string
		wantFile bool
		wantText string
	}{
		{"allow once runs the command", "allowOnce", "", true, ""},
		{"reject once denies it", "rejectOnce", "", false, "denied by the user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			// The user's ask rule asks; agentls's defaults alone leave
			// the call to the host.
			writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"permissions":{"ask":["Bash(echo:*)"]}}`})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			var asked []string
			client := mcp.NewClient(&mcp.Implementation{Name: "mrtr-test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					content := map[string]any{"decision": tc.decision}
					if tc.message != "" {
						content["message"] = tc.message
					}
					return &mcp.ElicitResult{Action: "accept", Content: content}, nil
				},
			})
			cmd := harness.Command(t, []string{"mcp", "--root", ws})
			cmd.Stderr = io.Discard
			s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if v := s.InitializeResult().ProtocolVersion; v < "2026-07-28" {
				t.Skipf("the go-sdk client negotiated %s, before multi-round-trip requests", v)
			}
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo made > made.txt"}})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
			mu.Lock()
			n := len(asked)
			mu.Unlock()
			if n != 1 || !strings.Contains(asked[0], "echo made > made.txt") {
				t.Fatalf("asked %d times (%v), want one approval question for bash", n, asked)
			}
			_, statErr := os.Stat(filepath.Join(ws, "made.txt"))
			if made := statErr == nil; made != tc.wantFile {
				t.Fatalf("made.txt exists = %v, want %v (result %q)", made, tc.wantFile, text.String())
			}
			if tc.wantText != "" && (!res.IsError || !strings.Contains(text.String(), tc.wantText)) {
				t.Fatalf("result = %q (isError %v), want an error containing %q", text.String(), res.IsError, tc.wantText)
			}
		})
	}
}
