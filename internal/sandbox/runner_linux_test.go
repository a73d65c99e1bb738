package sandbox

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/spill"
)

// TestSandboxedRunsKeepTheRunnersGuarantees: a sandboxed command is
// timed out and its whole group (a setsid daemon too) killed, its output
// streams and is cut and spilled, exactly as unsandboxed.
func TestSandboxedRunsKeepTheRunnersGuarantees(t *testing.T) {
	f := newFixture(t, Settings{})
	requireActive(t, f)
	run := func(command string, spec proc.Spec) proc.Result {
		t.Helper()
		r, err := f.sb.Prepare(f.ws)
		must(t, err)
		defer r.Close()
		spec.Command, spec.Dir, spec.Wrap = command, f.ws, r.Wrap
		spec.Env = append(proc.BaseEnv(os.Environ()), r.Env...)
		res, err := proc.Run(context.Background(), spec)
		must(t, err)
		return res
	}

	t.Run("timeout kills the group and a daemon that left it", func(t *testing.T) {
		res := run(`setsid sleep 300 & echo $! > daemon.pid; echo started; sleep 300`, proc.Spec{Timeout: time.Second})
		if !res.TimedOut || !strings.Contains(res.Output, "started") {
			t.Fatalf("timed out %v, output %q", res.TimedOut, res.Output)
		}
		b, _ := os.ReadFile(f.ws + "/daemon.pid")
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 {
			t.Fatalf("no daemon pid: %q", b)
		}
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the sandboxed daemon %d survived the timeout", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("output streams, is cut and spilled", func(t *testing.T) {
		sp, err := spill.OpenIn(t.TempDir(), f.ws)
		must(t, err)
		defer sp.Close()
		var progress atomic.Int64
		res := run(`for i in $(seq 1 5000); do echo line $i; done`, proc.Spec{Spill: sp, TailLines: 100, OnProgress: func(string) { progress.Add(1) }})
		if !res.Truncated || res.TotalLines != 5000 || res.SpillPath == "" || progress.Load() == 0 {
			t.Fatalf("truncated %v, lines %d, spill %q, progress %d", res.Truncated, res.TotalLines, res.SpillPath, progress.Load())
		}
		if b, _ := os.ReadFile(res.SpillPath); !strings.Contains(string(b), "line 1\n") {
			t.Fatalf("the spill file lacks the start of the output")
		}
	})
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}
