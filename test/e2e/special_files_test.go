package e2e

// The watcher against awkward names and special files in the tree (what
// the tools show of special files is the scripts').

import (
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	var since time.Time
	// The URI of a name with a space is compared parsed: either escaping is a file URI.
	wait := func(rel, kind string) extChange {
		t.Helper()
		want := filepath.Join(ws, rel)
		e, _, ok := waitExt(c, 5*time.Second, since, func(e extChange) bool {
			u, err := url.Parse(e.URI)
			return err == nil && u.Scheme == "file" && filepath.Clean(u.Path) == want && e.Kind == kind
		})
		if !ok {
			t.Fatalf("no workspace/externalChange {%s, %s} within 5 s; got %+v", rel, kind, extChanges(c, ""))
		}
		return e
	}
	change := func(rel, body string) {
		since = time.Now()
		writeBytes(t, filepath.Join(ws, rel), []byte(body))
	}
	change("with space.txt", "v2 changed\n")
	if e := wait("with space.txt", "changed"); !e.ReadStale {
		t.Errorf("readStale false: %+v", e)
	}
	change("-rf.txt", "v2 changed\n")
	wait("-rf.txt", "changed")
	since = time.Now()
	if err := os.Remove(filepath.Join(ws, "sub", "x.txt")); err != nil {
		t.Fatal(err)
	}
	wait("sub/x.txt", "deleted")
	// A new fifo in the tree must not block the watcher either.
	specialMkfifo(t, filepath.Join(ws, "sub", "pipe2"))
	change("with space.txt", "v3 changed again\n")
	wait("with space.txt", "changed")
}
