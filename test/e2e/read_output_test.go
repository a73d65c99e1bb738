package e2e

// The read tool on what a script cannot make: device nodes, unreadable
// files, and spill files bash printed.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// readOutStart starts agentls on ws in acceptEdits mode (this client
// cannot answer tools/confirm).
func readOutStart(t *testing.T, ws string) (*harness.Client, context.Context) {
	return startIn(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
}

// A device node is refused without blocking, and a file the process may
// not read is an error saying so: a script cannot make either (mknod needs
// root, and root reads mode 000). The other not-a-file cases are scripts
// under cmd/agentls/testdata/script/read.
func TestReadNotAFile(t *testing.T) {
	ws := t.TempDir()
	devErr := syscall.Mknod(filepath.Join(ws, "nulldev"), syscall.S_IFCHR|0o666, 1<<8|3) // /dev/null's numbers; needs root
	c, ctx := readOutStart(t, ws)
	t.Run("device", func(t *testing.T) {
		if devErr != nil {
			t.Skipf("no device node (%v)", devErr)
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := c.TryCallTool(cctx, "read", map[string]any{"path": "nulldev"})
		if err != nil {
			t.Fatalf("call: %v (blocked?)", err)
		}
		if !r.IsError || !strings.Contains(r.Text(), "not a regular file") {
			t.Errorf("isError=%v %q", r.IsError, r.Text())
		}
	})
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root: mode 000 does not deny reads")
		}
		p := filepath.Join(ws, "secret.txt")
		os.WriteFile(p, []byte("s\n"), 0o000)
		r := c.CallTool(ctx, "read", map[string]any{"path": "secret.txt"})
		if !r.IsError || !strings.Contains(strings.ToLower(r.Text()), "permission") {
			t.Errorf("isError=%v %q", r.IsError, r.Text())
		}
	})
}

// A spill file path that bash printed can be opened by read (by its absolute path).
func TestReadSpillFile(t *testing.T) {
	ws := t.TempDir()
	c, ctx := readOutStart(t, ws)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 5000"})
	m := regexp.MustCompile(`read \{"path": "([^"]+)", "offset": (\d+)\}`).FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatalf("no read call in bash notice: %q", r.Text()[:min(400, len(r.Text()))])
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": m[1], "offset": 2999, "limit": 3})
	if rr.IsError || !strings.Contains(rr.Text(), "lines 2999-3001 of 5000") ||
		!strings.Contains(rr.Text(), "  2999→2999\n  3000→3000\n  3001→3001") {
		t.Fatalf("isError=%v %q", rr.IsError, rr.Text())
	}
	off, _ := strconv.Atoi(m[2])
	rr = c.CallTool(ctx, "read", map[string]any{"path": m[1], "offset": off})
	if first := regexp.MustCompile(`(?m)^ *(\d+)→`).FindStringSubmatch(rr.Text()); rr.IsError || first == nil || first[1] != m[2] {
		t.Errorf("suggested call: isError=%v %q", rr.IsError, rr.Text()[:min(200, len(rr.Text()))])
	}
	// Other files in the spill directory's neighbourhood stay outside.
	rr = c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(filepath.Dir(m[1]), "..", "nope.log")})
	if !rr.IsError {
		t.Errorf("a path beside the spill dir was readable: %q", rr.Text())
	}
}
