package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// BenchmarkLaunchParts splits a sandboxed start into its parts: /bin/true
// started bare, in a new user namespace, with a mount or a network
// namespace added, in all three, and launched by each launcher in all
// three under the fixture's policy. The variants run interleaved, once
// each per iteration; the metrics are their p50s (ms), steadier than
// means on a loaded machine.
func BenchmarkLaunchParts(b *testing.B) {
	f := newFixture(b, Settings{})
	if !f.sb.Status().Active {
		b.Skipf("the sandbox cannot run here: %s", f.sb.Status().Reason)
	}
	r, err := f.sb.Prepare(f.ws)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	const all = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET
	type variant struct {
		name  string
		flags uintptr
		exe   string // a launcher, or "" for /bin/true itself
	}
	vs := []variant{{"bare", 0, ""}, {"user", syscall.CLONE_NEWUSER, ""}, {"user+mount", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, ""}, {"user+net", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET, ""}, {"user+mount+net", all, ""}}
	for _, exe := range f.sb.launchers() {
		name := filepath.Base(exe)
		if exe == "/proc/self/exe" {
			name = "this-test-binary"
		}
		vs = append(vs, variant{"launched-by-" + name, all, exe})
	}
	times := make([][]time.Duration, len(vs))
	for b.Loop() {
		for i, v := range vs {
			cmd := exec.Command("/bin/true")
			cmd.Dir = f.ws
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if v.exe != "" {
				if err := wrap(cmd, v.exe, r.pol); err != nil {
					b.Fatal(err)
				}
			} else if v.flags != 0 {
				uid, gid := os.Getuid(), os.Getgid()
				cmd.SysProcAttr.Cloneflags = v.flags
				cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
				cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			}
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v %s", v.name, err, out)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	for i, v := range vs {
		b.ReportMetric(ms(p50(times[i])), v.name+"-p50-ms")
	}
	b.ReportMetric(0, "ns/op") // the sum of all variants means nothing
}
