package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Workspace folders change live: an added folder's files become readable by
// absolute path, a removed folder's are refused.
func TestDidChangeWorkspaceFolders(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"b.txt": "B\n"})
	b := filepath.Join(other, "b.txt")

	if r := c.CallTool(ctx, "read", map[string]any{"path": b}); !r.IsError || !strings.Contains(r.Text(), "outside the workspace") {
		t.Fatalf("before adding: %s", r.Text())
	}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": "file://" + other, "name": "other"}}, "removed": []any{},
	}})
	// Notifications are handled in order with the next request.
	if r := c.CallTool(ctx, "read", map[string]any{"path": b}); r.IsError || !strings.Contains(r.Text(), "1→B") {
		t.Fatalf("after adding: %s", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("first folder lost: %s", r.Text())
	}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{}, "removed": []any{map[string]any{"uri": "file://" + other, "name": "other"}},
	}})
	if r := c.CallTool(ctx, "read", map[string]any{"path": b}); !r.IsError {
		t.Fatalf("after removing: %s", r.Text())
	}
}
