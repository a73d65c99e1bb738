package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/internal/proc"
)

// overheadBudget is the most a sandbox may add to a command's p50 wall
// time (docs/benchmarks.md).
const overheadBudget = 5 * time.Millisecond

// TestSandboxOverhead measures the p50 wall time of short commands run
// plainly and sandboxed through each launcher agentls could use (with
// AGENTLS_BIN: agentls-sandbox next to it when built, and agentls
// itself), interleaved, and (with AGENTLS_BENCH=1, on an idle machine)
// checks the extra of the launcher agentls picks against overheadBudget.
// The figures go to docs/benchmarks.md.
func TestSandboxOverhead(t *testing.T) {
	if testing.Short() {
		t.Skip("times sandboxed commands against plain ones")
	}
	f := newFixture(t, Settings{})
	requireActive(t, f)
	launchers := f.sb.launchers()
	t.Logf("launchers %v; agentls runs %s", launchers, f.sb.probe.exe)
	const n = 40
	for _, command := range []string{"true", "ls", "go version"} {
		// Wall time, and CPU time (user+system of the command's processes,
		// less sensitive to a loaded machine), per variant: 0 plain, j+1
		// sandboxed by launchers[j].
		wall, cpu := make([][]time.Duration, len(launchers)+1), make([][]time.Duration, len(launchers)+1)
		for i := 0; i < n; i++ {
			for j := -1; j < len(launchers); j++ {
				spec := proc.Spec{Command: command, Dir: f.ws, Env: proc.BaseEnv(os.Environ())}
				var r *Run
				start := time.Now()
				if j >= 0 {
					var err error
					if r, err = f.sb.Prepare(f.ws); err != nil {
						t.Fatal(err)
					}
					exe := launchers[j]
					spec.Wrap = func(cmd *exec.Cmd) error { return wrap(cmd, exe, r.pol) }
					spec.Env = append(spec.Env, r.Env...)
				}
				c0 := childrenCPU(t)
				res, err := proc.Run(context.Background(), spec)
				d := time.Since(start)
				r.Close()
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("%s (launcher %d): %v %s", command, j, err, res.Output)
				}
				wall[j+1] = append(wall[j+1], d)
				cpu[j+1] = append(cpu[j+1], childrenCPU(t)-c0)
			}
		}
		p, pc := p50(wall[0]), p50(cpu[0])
		for j, exe := range launchers {
			b, bc := p50(wall[j+1]), p50(cpu[j+1])
			t.Logf("%-10s plain p50 %6.2f ms, sandboxed by %-22s p50 %6.2f ms, extra %5.2f ms; CPU %5.2f / %5.2f ms, extra %5.2f ms", command, ms(p), filepath.Base(exe), ms(b), ms(b-p), ms(pc), ms(bc), ms(bc-pc))
			if os.Getenv("AGENTLS_BENCH") == "1" && exe == f.sb.probe.exe && b-p > overheadBudget {
				t.Errorf("%s: the sandbox adds %.2f ms at p50, more than %v", command, ms(b-p), overheadBudget)
			}
		}
	}
}

// childrenCPU is the user+system time of this process's ended children
// (and theirs); the commands run one at a time, so a difference is one
// command's.
func childrenCPU(t *testing.T) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
