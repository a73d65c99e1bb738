package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// benchTree generates 10k files in 1k directories once per process.
func benchTree(b *testing.B) string {
	dir := filepath.Join(os.TempDir(), "agentls-bench-tree-10k")
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	for d := range 1000 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d/sub%d", d/10, d%10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 10 {
			content := fmt.Sprintf("package p%d\n\n// File %d of dir %d.\nfunc Handle%d(x int) error {\n\tif x > %d {\n\t\treturn ErrTooLarge\n\t}\n\treturn nil\n}\n", d, f, d, f, f*d)
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.go", f)), []byte(content), 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
	return dir
}

// BenchmarkSearchTools measures grep and find through tools/call on the real
// binary against raw ripgrep doing the same work in the same run:
//
//	grep-call        tools/call grep (rg backend), limit high enough to list every match
//	grep-call-go     the same with the in-process Go fallback forced
//	raw-rg           rg --json --no-require-git -e PATTERN, output read fully
//	find-call        tools/call find *.go
//	rg-files         rg --files --no-require-git -g '*.go'
//
// Besides ns/op, the grep kinds report cpu-ns/op: the CPU time (user and
// system) of the server and the rg processes it ran, or of raw rg, per
// call. On a shared machine wall time follows the load; CPU time says how
// much work each side does.
//
// bench/search.sh turns the figures into the ratio table of docs/benchmarks.md.
func BenchmarkSearchTools(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("rg not installed")
	}
	trees := map[string]string{"gen10k": benchTree(b), "goroot": filepath.Join(runtime.GOROOT(), "src")}
	patterns := map[string]string{"rare": "ErrUnexpectedEOF", "regex": `func \w+Error\(`}
	for _, tree := range []string{"gen10k", "goroot"} {
		root := trees[tree]
		rg := harness.Start(b, harness.Options{Root: root, Process: true})
		goc := harness.Start(b, harness.Options{Root: root, Env: []string{"AGENTLS_GREP_BACKEND=go"}})
		ctx := context.Background()
		rg.Initialize(ctx, nil)
		goc.Initialize(ctx, nil)
		// The watchers' first walk of the tree runs after initialize; its
		// CPU is no grep call's.
		rg.AwaitWatcher(1)
		goc.AwaitWatcher(1)
		for _, pname := range []string{"rare", "regex"} {
			pat := patterns[pname]
			args := map[string]any{"pattern": pat, "limit": 1000}
			b.Run(tree+"/"+pname+"/grep-call", func(b *testing.B) {
				cpu0 := benchCPU(b, rg.Process().Pid)
				for b.Loop() {
					if r := rg.CallTool(ctx, "grep", args); r.IsError {
						b.Fatal(r.Text())
					}
				}
				b.ReportMetric(float64(benchCPU(b, rg.Process().Pid)-cpu0)/float64(b.N), "cpu-ns/op")
			})
			b.Run(tree+"/"+pname+"/grep-call-go", func(b *testing.B) {
				cpu0 := benchCPU(b, goc.Process().Pid)
				for b.Loop() {
					if r := goc.CallTool(ctx, "grep", args); r.IsError {
						b.Fatal(r.Text())
					}
				}
				b.ReportMetric(float64(benchCPU(b, goc.Process().Pid)-cpu0)/float64(b.N), "cpu-ns/op")
			})
			b.Run(tree+"/"+pname+"/raw-rg", func(b *testing.B) {
				var cpu time.Duration
				for b.Loop() {
					cmd := exec.Command("rg", "--json", "--no-require-git", "--no-config", "-e", pat)
					cmd.Dir = root
					if out, err := cmd.Output(); err != nil && len(out) == 0 {
						b.Fatal(err)
					}
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
		b.Run(tree+"/files/find-call", func(b *testing.B) {
			for b.Loop() {
				if r := rg.CallTool(ctx, "find", map[string]any{"pattern": "*.go", "limit": 10000}); r.IsError {
					b.Fatal(r.Text())
				}
			}
		})
		b.Run(tree+"/files/rg-files", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("rg", "--files", "--hidden", "--no-require-git", "--no-config", "-g", "*.go")
				cmd.Dir = root
				if _, err := cmd.Output(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchCPU is the CPU time of pid and its reaped children (utime, stime,
// cutime, cstime of /proc/pid/stat) in nanoseconds; 0 off Linux.
func benchCPU(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14-17, counted from state (3)
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return ticks * int64(time.Second) / 100 // USER_HZ
}
