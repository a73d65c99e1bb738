package initialize

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// The tree's shape: dirs directories (13k), filesPerDir files in each
// (115k in all), nested in fanout levels like a source tree.
const (
	dirs        = 13_000
	filesPerDir = 9 // 13,000 × 9 = 117,000 ≥ 115k
	fanout      = 24
)

var (
	treeOnce sync.Once
	treeDir  string
	treeErr  error
)

// bigTree builds the tree once per test process, under the system temp
// directory, and removes it when the benchmarks end (TestMain).
func bigTree(b *testing.B) string {
	b.Helper()
	treeOnce.Do(func() {
		treeDir, treeErr = os.MkdirTemp("", "agentls-bench-init-")
		if treeErr != nil {
			return
		}
		content := []byte("package p\n\nfunc f() int { return 1 }\n")
		for i := range dirs {
			// Directory i sits under its parent i/fanout, so the depth
			// grows like a real tree's (about 3 levels).
			rel := dirPath(i)
			dir := filepath.Join(treeDir, rel)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				treeErr = err
				return
			}
			for f := range filesPerDir {
				if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(f)+".go"), content, 0o644); err != nil {
					treeErr = err
					return
				}
			}
		}
	})
	if treeErr != nil {
		b.Fatalf("building the tree: %v", treeErr)
	}
	return treeDir
}

// dirPath is directory i's path: the root's children are 1..fanout, and
// directory i > fanout is a child of (i-1)/fanout.
func dirPath(i int) string {
	if i == 0 {
		return "d0"
	}
	if i <= fanout {
		return "d" + strconv.Itoa(i)
	}
	return filepath.Join(dirPath((i-1)/fanout), "d"+strconv.Itoa(i))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if treeDir != "" {
		os.RemoveAll(treeDir)
	}
	os.Exit(code)
}

// BenchmarkLSPInitialize starts agentls on the big tree and times the
// initialize request to its reply (ns/op, and init-ms); arm-ms is from the
// reply to agentls/watcherReady; rss-MB is the resident set once armed and
// hwm-MB its peak (Linux /proc).
func BenchmarkLSPInitialize(b *testing.B) {
	root := bigTree(b)
	var initTotal, armTotal time.Duration
	var rss, hwm float64
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		c := harness.Start(b, harness.Options{Root: root, Process: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		params := map[string]any{"capabilities": map[string]any{}}
		var res map[string]any
		b.StartTimer()
		t0 := time.Now()
		if err := c.Call(ctx, "initialize", params, &res); err != nil {
			b.Fatalf("initialize: %v", err)
		}
		replied := time.Now()
		b.StopTimer()
		if err := c.Conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
			b.Fatalf("initialized: %v", err)
		}
		// A build that arms before replying (an older agentls, to compare)
		// names the mode in the capability and sends no watcherReady.
		mode, armed := watcherCapability(res), replied
		if mode == "starting" {
			mode, armed = c.AwaitWatcher(1), time.Now()
		}
		if mode == "degraded" {
			b.Fatalf("watcher degraded on the tree: raise fs.inotify.max_user_watches above %d", dirs)
		}
		initTotal += replied.Sub(t0)
		armTotal += armed.Sub(replied)
		r, h, err := memory(c.Process().Pid)
		if err != nil {
			b.Fatal(err)
		}
		rss, hwm = max(rss, r), max(hwm, h)
		c.Shutdown(ctx)
		cancel()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(initTotal.Microseconds())/1000/n, "init-ms")
	b.ReportMetric(float64(armTotal.Microseconds())/1000/n, "arm-ms")
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(hwm, "hwm-MB")
}

// watcherCapability is the initialize result's capability "watcher".
func watcherCapability(res map[string]any) string {
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	mode, _ := ag["watcher"].(string)
	return mode
}

// memory reads a process's resident set and its peak, in MiB.
func memory(pid int) (rss, hwm float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("memory of agentls: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var kb float64
		if n, _ := fmt.Sscanf(sc.Text(), "VmRSS: %f kB", &kb); n == 1 {
			rss = kb / 1024
		}
		if n, _ := fmt.Sscanf(sc.Text(), "VmHWM: %f kB", &kb); n == 1 {
			hwm = kb / 1024
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/VmHWM in /proc/%d/status", pid)
	}
	return rss, hwm, nil
}
