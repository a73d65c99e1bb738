package e2e

// A directory swapped for a symlink to outside the workspace between
// agentls's check of a path and the child's use of it (renameat2
// RENAME_EXCHANGE in a tight loop): grep (both backends) and bash with
// cwd never read or run outside, and a workspace root replaced by a
// symlink is refused, not followed.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/test/harness"
)

// swapAttempts is how many calls race the swap loop per case.
const swapAttempts = 500

// outsideMarker is the text only the directory outside the workspace holds.
const outsideMarker = "OUTSIDE_SECRET_7f3a"

// swapWorkspace makes ws/sub (a directory inside) and ws/link (a symlink
// to a directory outside holding outsideMarker), both holding marker.txt,
// and starts exchanging them until the test ends. It returns ws and how
// many exchanges were made so far.
func swapWorkspace(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ws := resolvedWorkspace(t, map[string]string{"sub/marker.txt": "INSIDE_OK_marker\n"})
	out := resolvedWorkspace(t, map[string]string{"marker.txt": outsideMarker + " marker\n"})
	symlink(t, out, filepath.Join(ws, "link"))
	var swaps atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		a, b := filepath.Join(ws, "sub"), filepath.Join(ws, "link")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
	return ws, &swaps
}

// raceCalls runs swapAttempts calls of tool with args on 4 connections'
// worth of concurrency and returns how many results named outsideMarker
// and how many ran (were not refused).
func raceCalls(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any) (escapes, ran int64) {
	t.Helper()
	var esc, ok atomic.Int64
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= swapAttempts {
				r, err := c.TryCallTool(ctx, tool, args)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
					return
				}
				text := r.Text()
				if strings.Contains(text, outsideMarker) {
					esc.Add(1)
				}
				if strings.Contains(text, "INSIDE_OK") {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return esc.Load(), ok.Load()
}

// grep (both backends; the directory searched, or one below the start, is
// swapped: rg was handed sub/marker.txt and opened it through the symlink
// "sub" had become) and bash with cwd.
func TestNoToolFollowsADirectorySwappedForASymlink(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("race loop swapping directories for symlinks")
	}
	type race struct {
		name string
		env  []string
		tool string
		args map[string]any
	}
	races := []race{
		{"grep go/searched directory", []string{"AGENTLS_GREP_BACKEND=go"}, "grep", map[string]any{"pattern": "marker", "path": "sub"}},
		{"grep go/directory below the start", []string{"AGENTLS_GREP_BACKEND=go"}, "grep", map[string]any{"pattern": "marker"}},
		{"bash cwd", nil, "bash", map[string]any{"command": "cat marker.txt", "cwd": "sub"}},
	}
	if _, err := exec.LookPath("rg"); err == nil {
		races = append(races, race{"grep rg/searched directory", nil, "grep", map[string]any{"pattern": "marker", "path": "sub"}},
			race{"grep rg/directory below the start", nil, "grep", map[string]any{"pattern": "marker"}})
	} else {
		t.Log("rg not on PATH: only the Go backend is raced")
	}
	for _, rc := range races {
		t.Run(rc.name, func(t *testing.T) {
			ws, swaps := swapWorkspace(t)
			c, ctx := startIn(t, ws, bypass(), rc.env...)
			esc, ran := raceCalls(t, ctx, c, rc.tool, rc.args)
			t.Logf("%d of %d calls ran inside, %d swaps", ran, swapAttempts, swaps.Load())
			if esc > 0 {
				t.Errorf("%s reached outside the workspace in %d of %d calls", rc.tool, esc, swapAttempts)
			}
			if ran == 0 {
				t.Errorf("no call ran: the race tested nothing")
			}
		})
	}
}

func TestWorkspaceRootReplacedBySymlinkIsRefusedNotFollowed(t *testing.T) {
	t.Parallel()
	parent := resolvedWorkspace(t, map[string]string{"ws/marker.txt": "INSIDE_OK_marker\n"})
	ws := filepath.Join(parent, "ws")
	out := resolvedWorkspace(t, map[string]string{"marker.txt": outsideMarker + " marker\n"})
	c, ctx := startIn(t, ws, bypass())
	wantResult(t, "bash before the swap", c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt"}), false, "INSIDE_OK")

	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	symlink(t, out, ws)

	r := c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt; pwd -P"})
	wantResult(t, "bash after the root became a symlink", r, true, "no longer the directory agentls opened", "nothing was run")
	wantLacks(t, "bash after the root became a symlink", r.Text(), outsideMarker)
	r = c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt", "cwd": "."})
	wantResult(t, "bash with cwd after the root became a symlink", r, true, "no longer the directory agentls opened")
	wantLacks(t, "bash with cwd after the root became a symlink", r.Text(), outsideMarker)
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "marker", "path": "sub"})
	wantLacks(t, "grep after the root became a symlink", r.Text(), outsideMarker)
}
