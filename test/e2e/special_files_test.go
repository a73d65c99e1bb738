package e2e

// The watcher against awkward names and special files in the tree (what
// the tools show of special files is the scripts').

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

func specialMkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestSpecialWatcher: workspace/externalChange for read files with
// odd names, and special files in the tree do not stop the watcher.
func TestSpecialWatcher(t *testing.T) {
	ws := t.TempDir()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "-rf.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "sub", "x.txt"), []byte("v1\n"))
	specialMkfifo(t, filepath.Join(ws, "pipe"))
	symlink(t, "loopb", filepath.Join(ws, "loopa"))
	symlink(t, "loopa", filepath.Join(ws, "loopb"))
	c, ctx := startIn(t, ws, bypass())
	for _, p := range []string{"with space.txt", "-rf.txt", "sub/x.txt"} {
		wantResult(t, "read "+p, c.CallTool(ctx, "read", map[string]any{"path": p}), false, "v1")
	}
	wait := func(rel, kind string, since time.Time) map[string]any {
		t.Helper()
		want := filepath.Join(ws, rel)
		var got map[string]any
		_, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			if n.Method != "workspace/externalChange" || n.At.Before(since) {
				return false
			}
			var p map[string]any
			json.Unmarshal(n.Params, &p)
			s, _ := p["uri"].(string)
			u, err := url.Parse(s)
			if err != nil || u.Scheme != "file" || filepath.Clean(u.Path) != want || p["kind"] != kind {
				return false
			}
			got = p
			return true
		})
		if !ok {
			var all []string
			for _, n := range c.Notes("workspace/externalChange") {
				all = append(all, string(n.Params))
			}
			t.Fatalf("no workspace/externalChange {%s, %s} for %q within 5 s; got:\n%s", rel, kind, want, strings.Join(all, "\n"))
		}
		return got
	}
	since := time.Now()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v2 changed\n"))
	if p := wait("with space.txt", "changed", since); p["readStale"] != true {
		t.Errorf("readStale = %v, want true: %v", p["readStale"], p)
	}
	since = time.Now()
	writeBytes(t, filepath.Join(ws, "-rf.txt"), []byte("v2 changed\n"))
	wait("-rf.txt", "changed", since)
	since = time.Now()
	if err := os.Remove(filepath.Join(ws, "sub", "x.txt")); err != nil {
		t.Fatal(err)
	}
	wait("sub/x.txt", "deleted", since)
	// A new fifo in the tree must not block the watcher either.
	specialMkfifo(t, filepath.Join(ws, "sub", "pipe2"))
	since = time.Now()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v3 changed again\n"))
	wait("with space.txt", "changed", since)
}
