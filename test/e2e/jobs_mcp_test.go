package e2e

// Background jobs over MCP (agentls mcp, the Go SDK's client): the same
// three tools, notifications/tools/list_changed when the job tools join,
// and notifications/progress while bash_output waits.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBackgroundJobsOverMCP(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := resolvedWorkspace(t, nil)
	changed := make(chan struct{}, 4)
	var mu sync.Mutex
	var progress []string
	o := goClientOpts{root: ws, settings: goClientBypass}
	o.copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }
	o.copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}
	c := goClientConnect(t, ctx, o)
	list, err := c.s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "bash_output" || tl.Name == "bash_kill" {
			t.Fatalf("%s listed before any job", tl.Name)
		}
	}
	res, text := goClientCall(t, ctx, c.s, "bash", map[string]any{"command": "sleep 1.5; echo first; sleep 0.5; echo ready now; sleep 60", "run_in_background": true})
	if res.IsError || !strings.Contains(text, "job-1 is running in the background") {
		t.Fatalf("start: %s", text)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after the first job")
	}
	list, err = c.s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "bash_output") || !strings.Contains(strings.Join(names, ","), "bash_kill") {
		t.Fatalf("tools after a job started: %v", names)
	}
	p := &mcp.CallToolParams{Name: "bash_output", Arguments: map[string]any{"job": "job-1", "wait": 10, "filter": "ready"}}
	p.SetProgressToken("jobs-tok")
	out, err := c.s.CallTool(ctx, p)
	if err != nil || !strings.HasPrefix(goClientText(out), "ready now\n") {
		t.Fatalf("bash_output: %v %s", err, goClientText(out))
	}
	mu.Lock()
	got := strings.Join(progress, "|")
	mu.Unlock()
	if !strings.Contains(got, "first") {
		t.Errorf("no progress while bash_output waited: %q", got)
	}
	_, killed := goClientCall(t, ctx, c.s, "bash_kill", map[string]any{"job": "job-1"})
	if !strings.Contains(killed, "job-1 stopped: killed by SIGTERM") {
		t.Errorf("bash_kill: %s", killed)
	}
}
