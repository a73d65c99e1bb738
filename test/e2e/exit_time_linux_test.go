package e2e

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// exitBound is what the end of input may cost agentls: 1 s for calls to
// wind down plus one kill grace (2 s) for everything commands left, in
// one phase, plus 1.5 s for SIGKILL and a loaded machine.
const exitBound = 4500 * time.Millisecond

// A stopped child (which never acted on SIGTERM without SIGCONT) and an
// adopted daemon that ignores SIGTERM used to cost a grace each, one after
// the other, after the running call's (which ignores SIGTERM too): 6.2 s
// to exit.
func TestExitAfterEndOfInputTakesOneKillGrace(t *testing.T) {
	slow(t)
	marker := killMarkedAtEnd(t, fmt.Sprintf("exit-time-%d", os.Getpid()))
	c, _, ctx := startProcess(t, map[string]string{"a.txt": "a\n"})
	wantResult(t, "bash", c.CallTool(ctx, "bash", map[string]any{"command": leftBehindCommand(marker)}), false, "started")
	var wg sync.WaitGroup
	wg.Go(func() { // a call still running at the end
		c.TryCallTool(ctx, "bash", map[string]any{"command": "export LEAK_MARK=" + marker + "; trap '' TERM; sleep 60; :"})
	})
	waitUntil(5*time.Second, func() bool { return len(markedProcesses(marker)) >= 5 })
	began := time.Now()
	c.CloseStdin()
	if c.Wait(10*time.Second) < 0 {
		t.Fatal("agentls did not exit after the end of its input")
	}
	took := time.Since(began)
	t.Logf("exit took %v", took)
	if took > exitBound {
		t.Errorf("exit after the end of input took %v, more than %v", took, exitBound)
	}
	if left := markedProcesses(marker); len(left) > 0 {
		t.Errorf("left running after exit: %v", left)
	}
	wg.Wait()
}
