package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// A file the model has read and another process changes is announced with
// workspace/externalChange within 50 ms; our own edits are not.
func TestExternalChangeIsAnnounced(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "one\n", "b.txt": "unread\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := t.Context()
	c.Initialize(ctx, bypass())
	if runtime.GOOS == "linux" && c.WatcherMode != "inotify" {
		t.Fatalf("agentls/watcherReady watcher = %v, want inotify", c.WatcherMode)
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})

	// Our own edit: no notification.
	if r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "two"}}}); r.IsError {
		t.Fatal(r.Text())
	}
	time.Sleep(100 * time.Millisecond)
	if n := c.Notes("workspace/externalChange"); len(n) != 0 {
		t.Fatalf("our own write was announced: %s", n[0].Params)
	}

	// An unread file changing is not announced either.
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("changed\n"), 0o644)

	var worst time.Duration
	for i := range 5 {
		before := len(c.Notes("workspace/externalChange"))
		t0 := time.Now()
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(fmt.Sprintf("external %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
			return n.Method == "workspace/externalChange" && n.At.After(t0)
		})
		if !ok {
			t.Fatalf("no workspace/externalChange (had %d before)", before)
		}
		worst = max(worst, n.At.Sub(t0))
		var p struct {
			URI       string `json:"uri"`
			Kind      string `json:"kind"`
			ReadStale bool   `json:"readStale"`
		}
		json.Unmarshal(n.Params, &p)
		if !strings.HasSuffix(p.URI, "/a.txt") || p.Kind != "changed" || !p.ReadStale {
			t.Fatalf("notification = %s", n.Params)
		}
		c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}) // fresh stamp for the next round
	}
	t.Logf("slowest announcement: %v", worst)
	if worst > 50*time.Millisecond {
		t.Errorf("announcement took %v, want ≤ 50ms", worst)
	}
	for _, n := range c.Notes("workspace/externalChange") {
		if strings.Contains(string(n.Params), "b.txt") {
			t.Errorf("an unread file was announced: %s", n.Params)
		}
	}
	// And the guard refuses the stale edit.
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("external again\n"), 0o644)
	time.Sleep(50 * time.Millisecond)
	if r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "external", "newText": "x"}}}); !r.IsError {
		t.Fatalf("stale edit accepted: %s", r.Text())
	}
}

// workspace/externalChange for a read file deleted outside agentls.
func TestExternalDeletionIsAnnounced(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"gone.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "gone.txt"})
	os.Remove(filepath.Join(ws, "gone.txt"))
	n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		return n.Method == "workspace/externalChange" && strings.Contains(string(n.Params), "gone.txt")
	})
	if !ok {
		t.Fatal("no workspace/externalChange for a deleted file")
	}
	var p map[string]any
	json.Unmarshal(n.Params, &p)
	if p["kind"] != "deleted" || p["readStale"] != true || !strings.HasPrefix(fmt.Sprint(p["uri"]), "file://") {
		t.Errorf("notification = %s", n.Params)
	}
}
