package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// watchdogsOf lists the watchdog processes (`agentls __watchdog PID`) of
// the agentls with pid.
func watchdogsOf(pid int) []int {
	mine := processesWithArg(strconv.Itoa(pid))
	var out []int
	for _, w := range processesWithArg("__watchdog") {
		if slices.Contains(mine, w) {
			out = append(out, w)
		}
	}
	return out
}

// The watchdog, a second agentls process, starts before the first process
// that can outlive a call (a command, an upstream server), not with
// agentls: a session that only reads starts none. An upstream server
// started before any command is still stopped when agentls is SIGKILLed.
func TestWatchdogStartsWithTheFirstCommandOrServer(t *testing.T) {
	t.Parallel()
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		c, _, ctx := startProcess(t, map[string]string{"a.txt": "a\n"})
		pid := c.Process().Pid
		if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
			t.Fatalf("read: %s", r.Text())
		}
		if w := watchdogsOf(pid); len(w) != 0 {
			t.Errorf("a session that has only read runs watchdogs %v", w)
		}
		for range 2 {
			if r := c.CallTool(ctx, "bash", map[string]any{"command": "true"}); r.IsError {
				t.Fatalf("bash: %s", r.Text())
			}
		}
		if w := watchdogsOf(pid); len(w) != 1 {
			t.Errorf("after two commands the watchdogs are %v, want one", w)
		}
	})
	t.Run("upstream server, SIGKILL", func(t *testing.T) {
		t.Parallel()
		inner := newWorkspace(t, map[string]string{"inner.txt": "inner file\n"})
		reapProcessesWithArg(t, inner)
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"inner": map[string]any{"command": harness.Binary(t), "args": []any{"mcp", "--root", inner}},
		}})
		c, _, ctx := startProcess(t, map[string]string{".agentls/mcp.json": string(cfg)})
		pid := c.Process().Pid
		if r := c.CallTool(ctx, "inner__read", map[string]any{"path": filepath.Join(inner, "inner.txt")}); !strings.Contains(r.Text(), "inner file") {
			t.Fatalf("inner__read: %s", r.Text())
		}
		if w := watchdogsOf(pid); len(w) != 1 {
			t.Fatalf("with an upstream server running the watchdogs are %v, want one", w)
		}
		c.Process().Signal(syscall.SIGKILL)
		c.Wait(10 * time.Second)
		if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(inner)) == 0 }) {
			t.Errorf("the upstream server outlived a SIGKILLed agentls by 5 s: pids %v", processesWithArg(inner))
		}
	})
}
