package e2e

// No process a command started outlives agentls, however agentls ends:
// SIGKILL, SIGTERM, the end of its input, and a client that SIGKILLs it
// shortly after closing its input. The commands leave children that
// double-fork and setsid, so neither the process group nor the parent
// chain leads back to the command.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// outliveRuns is how many runs each way of ending agentls gets.
const outliveRuns = 50

// outliveBatch is how many runs go at once.
const outliveBatch = 25

// leftBehindCommand leaves processes carrying marker in their
// environment: a stopped background child, a double fork, and a setsid
// double fork that ignores SIGTERM (so stopping it takes the whole grace
// and SIGKILL, and a client's kill lands while agentls is still at it).
func leftBehindCommand(marker string) string {
	return fmt.Sprintf(`export LEAK_MARK=%s; sleep 60 & kill -STOP $! ; (sleep 60 &) ; (setsid sh -c 'trap "" TERM; sleep 60 & sleep 60; :' &) ; sleep 0.05; echo started`, marker)
}

// markedProcesses lists live pids whose environment holds LEAK_MARK=marker.
func markedProcesses(marker string) []int {
	want := []byte("LEAK_MARK=" + marker + "\x00")
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		var pid int
		fmt.Sscan(filepath.Base(d), &pid)
		out = append(out, pid)
	}
	return out
}

func TestNoProcessOutlivesAgentlsHoweverItEnds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and ends agentls 200 times")
	}
	ends := map[string]func(c *harness.Client){
		"SIGKILL": func(c *harness.Client) { c.Process().Signal(syscall.SIGKILL) },
		"SIGTERM": func(c *harness.Client) { c.Process().Signal(syscall.SIGTERM) },
		"EOF":     func(c *harness.Client) { c.CloseStdin() },
		// The client gives agentls a moment to exit, then kills it while
		// it may still be stopping what it started.
		"kill-after-close": func(c *harness.Client) {
			c.CloseStdin()
			select {
			case <-c.Exited():
			case <-time.After(500 * time.Millisecond):
				c.Process().Signal(syscall.SIGKILL)
			}
		},
	}
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var left []string
			for b := 0; b < outliveRuns; b += outliveBatch {
				var wg sync.WaitGroup
				for i := b; i < b+outliveBatch && i < outliveRuns; i++ {
					marker := fmt.Sprintf("outlive-%s-%d-%d", name, os.Getpid(), i)
					wg.Go(func() {
						if msg := outliveRun(t, ws, marker, end); msg != "" {
							mu.Lock()
							left = append(left, msg)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			if len(left) > 0 {
				t.Errorf("%d of %d runs left processes behind:\n%s", len(left), outliveRuns, strings.Join(left, "\n"))
			}
		})
	}
}

// outliveRun starts agentls, runs the command, ends agentls with end and
// returns "" when no marked process is left, else what is left.
func outliveRun(t *testing.T, ws, marker string, end func(*harness.Client)) string {
	t.Cleanup(func() {
		for _, pid := range markedProcesses(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	c := harness.Start(t, harness.Options{Root: ws, Process: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()}, nil); err != nil {
		return marker + ": initialize: " + err.Error()
	}
	_ = c.Conn.Notify(ctx, "initialized", map[string]any{})
	r, err := c.TryCallTool(ctx, "bash", map[string]any{"command": leftBehindCommand(marker)})
	if err != nil || !strings.Contains(r.Text(), "started") {
		return fmt.Sprintf("%s: bash: %v %s", marker, err, r.Text())
	}
	// The double forks may still be on their way on a loaded machine.
	if !waitUntil(5*time.Second, func() bool { return len(markedProcesses(marker)) >= 4 }) {
		return fmt.Sprintf("%s: %d marked processes before the end, want at least 4", marker, len(markedProcesses(marker)))
	}
	end(c)
	select {
	case <-c.Exited():
	case <-time.After(10 * time.Second):
		return marker + ": agentls did not exit"
	}
	// The watchdog's one kill phase: SIGTERM, at most the 2 s grace,
	// SIGKILL; with room for a loaded machine.
	var pids []int
	waitUntil(6*time.Second, func() bool { pids = markedProcesses(marker); return len(pids) == 0 })
	if len(pids) > 0 {
		return fmt.Sprintf("%s: left running: %v", marker, pids)
	}
	return ""
}

// isWatchdog reports whether process pid (a /proc name) is an agentls
// watchdog (`agentls __watchdog PID`), which lives as long as its agentls:
// tests counting what agentls left behind skip it.
func isWatchdog(pid string) bool {
	cl, _ := os.ReadFile("/proc/" + pid + "/cmdline")
	args := strings.Split(string(cl), "\x00")
	return len(args) > 1 && args[1] == "__watchdog"
}
