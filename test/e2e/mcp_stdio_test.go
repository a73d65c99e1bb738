package e2e

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A roots/list_changed that arrives while the server waits for the answer
// to its roots/list makes it ask once more when that answer is in: the
// requests never overlap, so an older answer cannot land after a newer one
// and undo it, and the workspace ends as the client's latest roots.
func TestMCPRootsChangeDuringSyncAsksAgain(t *testing.T) {
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, []map[string]any{rootsFolder(d.A)}, "--root", d.C)
	if r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}); r.IsError {
		t.Fatalf("read in the first root: %s", r.Text())
	}
	var mu sync.Mutex
	asked, inFlight, most := 0, 0, 0
	firstAsked, secondSent, secondAnswered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	m.setHandler(func(req mcpMsg) (any, int) {
		if req.Method != "roots/list" {
			return m.answer(req)
		}
		mu.Lock()
		asked++
		k := asked
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if k == 1 {
			close(firstAsked)
			<-secondSent
			time.Sleep(100 * time.Millisecond) // the server reads the second notification meanwhile
			return map[string]any{"roots": []map[string]any{rootsFolder(d.A), rootsFolder(d.B)}}, 0
		}
		if k == 2 {
			defer close(secondAnswered)
		}
		return map[string]any{"roots": []map[string]any{rootsFolder(d.B)}}, 0
	})
	m.notify("notifications/roots/list_changed", map[string]any{})
	select {
	case <-firstAsked:
	case <-ctx.Done():
		t.Fatalf("no roots/list after roots/list_changed; got:\n%s", lastBytes(m.dump(), 3000))
	}
	m.notify("notifications/roots/list_changed", map[string]any{})
	close(secondSent)
	select {
	case <-secondAnswered:
	case <-ctx.Done():
		t.Fatalf("a change during the roots sync was not asked about again; got:\n%s", lastBytes(m.dump(), 3000))
	}
	// A tool call waits for the sync; the latest roots are the workspace.
	if r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}); !r.IsError {
		t.Errorf("a root the latest answer dropped is in the workspace: %s", r.Text())
	}
	if r := m.tool(t, ctx, "read", map[string]any{"path": "b.txt"}); r.IsError {
		t.Errorf("the latest roots are not the workspace: %s", r.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d roots/list requests were in flight at once, want 1", most)
	}
}
