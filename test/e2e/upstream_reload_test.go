package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// Editing .agentls/mcp.json while the server runs starts, restarts and
// stops upstream servers; their tools come and go with them. agentls mcp
// itself serves as the upstream.
func TestUpstreamServersFollowMCPJSON(t *testing.T) {
	t.Parallel()
	inner := t.TempDir()
	writeFiles(t, inner, map[string]string{"inner.txt": "from the upstream workspace\n"})
	config := func(names ...string) string {
		servers := map[string]any{}
		for _, n := range names {
			servers[n] = map[string]any{"command": harness.Binary(t), "args": []string{"mcp", "--root", inner}}
		}
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		return string(b)
	}
	c, ws, ctx := start(t, map[string]string{".agentls/mcp.json": config("first")})
	names := func() []string {
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": true}, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range list.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	waitFor := func(what string, cond func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := names()
			if cond(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s; tools: %v", what, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	has := func(n string) func([]string) bool { return func(l []string) bool { return slices.Contains(l, n) } }
	waitFor("first__read is registered", has("first__read"))
	if r := c.CallTool(ctx, "first__read", map[string]any{"path": "inner.txt"}); r.IsError {
		t.Fatalf("first__read: %s", r.Text())
	}

	writeFiles(t, ws, map[string]string{".agentls/mcp.json": config("second")})
	waitFor("first is gone and second is registered", func(l []string) bool {
		return !slices.Contains(l, "first__read") && slices.Contains(l, "second__read")
	})
	if r := c.CallTool(ctx, "first__read", map[string]any{"path": "inner.txt"}); !r.IsError {
		t.Fatalf("a removed server's tool still runs: %s", r.Text())
	}
	if r := c.CallTool(ctx, "second__read", map[string]any{"path": "inner.txt"}); r.IsError {
		t.Fatalf("second__read: %s", r.Text())
	}
	// The first server's process is gone: one upstream process is left.
	deadline := time.Now().Add(5 * time.Second)
	for n := upstreamProcs(inner); n != 1; n = upstreamProcs(inner) {
		if time.Now().After(deadline) {
			t.Fatalf("%d upstream processes serve %s, want 1", n, inner)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upstreamProcs counts live processes whose command line names dir.
func upstreamProcs(dir string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			n++
		}
	}
	return n
}

// Upstream servers start in the background; a tool_search or a call of one
// of their tools right after initialize waits for their first listing
// instead of missing them.
func TestSearchRightAfterStartSeesASlowUpstream(t *testing.T) {
	slow(t)
	t.Parallel()
	inner := t.TempDir()
	writeFiles(t, inner, map[string]string{"inner.txt": "from the slow upstream\n"})
	slow := map[string]any{"mcpServers": map[string]any{"slow": map[string]any{
		"command": "sh", "args": []string{"-c", `sleep 1; exec "$0" mcp --root "$1"`, harness.Binary(t), inner}}}}
	b, _ := json.Marshal(slow)
	c, _, ctx := start(t, map[string]string{".agentls/mcp.json": string(b)})
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "slow read"})
	if r.IsError || !bytes.Contains([]byte(r.Text()), []byte("slow__read")) {
		t.Fatalf("tool_search right after start = %q, want the slow upstream's slow__read", r.Text())
	}
	r = c.CallTool(ctx, "slow__read", map[string]any{"path": "inner.txt"})
	if r.IsError || !bytes.Contains([]byte(r.Text()), []byte("from the slow upstream")) {
		t.Fatalf("slow__read = %q, want the upstream's file", r.Text())
	}
}
