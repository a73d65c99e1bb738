package sandbox

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/proc"
)

// overheadBudget is the most a sandbox may add to a command's p50 wall
// time (docs/benchmarks.md).
const overheadBudget = 5 * time.Millisecond

// TestSandboxOverhead measures the p50 wall time of short commands run
// plainly and sandboxed, interleaved, and (with AGENTLS_BENCH=1, on an
// idle machine) checks the extra against overheadBudget. The figures go
// to docs/benchmarks.md.
func TestSandboxOverhead(t *testing.T) {
	f := newFixture(t, Settings{})
	requireActive(t, f)
	if bin := os.Getenv("AGENTLS_BIN"); bin != "" {
		f.sb.opts.Exe = bin // the real launcher, as agentls runs it
	}
	const n = 40
	for _, command := range []string{"true", "ls", "go version"} {
		var plain, boxed []time.Duration
		for i := 0; i < n; i++ {
			for _, sandboxed := range []bool{false, true} {
				spec := proc.Spec{Command: command, Dir: f.ws, Env: proc.BaseEnv(os.Environ())}
				var r *Run
				start := time.Now()
				if sandboxed {
					var err error
					if r, err = f.sb.Prepare(f.ws); err != nil {
						t.Fatal(err)
					}
					spec.Wrap = r.Wrap
					spec.Env = append(spec.Env, r.Env...)
				}
				res, err := proc.Run(context.Background(), spec)
				d := time.Since(start)
				r.Close()
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("%s (sandboxed %v): %v %s", command, sandboxed, err, res.Output)
				}
				if sandboxed {
					boxed = append(boxed, d)
				} else {
					plain = append(plain, d)
				}
			}
		}
		p, b := p50(plain), p50(boxed)
		t.Logf("%-10s plain p50 %6.2f ms, sandboxed p50 %6.2f ms, extra %5.2f ms", command, ms(p), ms(b), ms(b-p))
		if os.Getenv("AGENTLS_BENCH") == "1" && b-p > overheadBudget {
			t.Errorf("%s: the sandbox adds %.2f ms at p50, more than %v", command, ms(b-p), overheadBudget)
		}
	}
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
