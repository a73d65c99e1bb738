package e2e

import (
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A 3,000-level directory chain: the session opens promptly (it took 18 s,
// every level opened by path from the root) and grep, which does not
// descend below 512 levels, says what it did not search instead of
// answering "No matches" as if the bottom had been searched.
func TestGrepSaysADirectoryTooDeepWasNotSearched(t *testing.T) {
	slow(t)
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the chain is built with openat (its path outgrows PATH_MAX)")
	}
	ws := t.TempDir()
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	f, err := unix.Openat(fd, "x.txt", unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(f, []byte("deepneedle\n"))
	unix.Close(f)
	unix.Close(fd)
	c, ctx := startIn(t, ws, bypass(), "AGENTLS_GREP_BACKEND=go", "XDG_CACHE_HOME="+t.TempDir())
	r := c.CallTool(ctx, "grep", map[string]any{"pattern": "deepneedle"})
	text := r.Text()
	if !strings.Contains(text, "Not searched") || !strings.Contains(text, "more than 512 directory levels") {
		t.Errorf("grep over a 3,000-level chain: %.300q; want it to say the levels below 512 were not searched", text)
	}
}
