package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/proc"
)

// BenchmarkCommand runs `true` through proc.Run plainly (the reference)
// and sandboxed by each launcher agentls could use (with AGENTLS_BIN:
// agentls-sandbox next to it when built, and agentls itself; without:
// this test binary). TestSandboxOverhead gives the interleaved p50s.
func BenchmarkCommand(b *testing.B) {
	f := newFixture(b, Settings{})
	if !f.sb.Status().Active {
		b.Skipf("the sandbox cannot run here: %s", f.sb.Status().Reason)
	}
	run := func(b *testing.B, exe string) {
		for b.Loop() {
			spec := proc.Spec{Command: "true", Dir: f.ws, Env: proc.BaseEnv(os.Environ())}
			var r *Run
			if exe != "" {
				var err error
				if r, err = f.sb.Prepare(f.ws); err != nil {
					b.Fatal(err)
				}
				spec.Wrap = func(cmd *exec.Cmd) error { return wrap(cmd, exe, r.pol) }
				spec.Env = append(spec.Env, r.Env...)
			}
			res, err := proc.Run(context.Background(), spec)
			r.Close()
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %s", err, res.Output)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, "") })
	for _, exe := range f.sb.launchers() {
		name := filepath.Base(exe)
		if exe == "/proc/self/exe" {
			name = "this-test-binary"
		}
		b.Run("sandboxed-by-"+name, func(b *testing.B) { run(b, exe) })
	}
}
