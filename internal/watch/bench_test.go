package watch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentls/agentls/internal/ignore"
)

// benchDirs is the size of the tree the arm benchmark watches (the design
// target: ≤ 250 ms and ≤ 40 MB RSS for 10k directories).
const benchDirs = 10_000

// bigTree creates benchDirs directories (100 × 99 under 100 tops) with a
// file in each top directory.
func bigTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	n := 0
	for i := 0; n < benchDirs; i++ {
		top := filepath.Join(root, fmt.Sprintf("d%03d", i))
		os.Mkdir(top, 0o755)
		os.WriteFile(filepath.Join(top, "f.go"), []byte("package x\n"), 0o644)
		n++
		for j := 0; j < 99 && n < benchDirs; j++ {
			os.Mkdir(filepath.Join(top, fmt.Sprintf("s%02d", j)), 0o755)
			n++
		}
	}
	return root
}

// rssBytes is the resident set size of this process (Linux only; 0 elsewhere).
func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// BenchmarkArm watches a 10k-directory tree (Start to return) against the
// reference of only walking it with the same matcher.
func BenchmarkArm(b *testing.B) {
	root := bigTree(b)
	r, err := os.OpenRoot(root)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.Run("walk-only", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			m := ignore.NewMatcher(r.FS(), ignore.Outer{})
			dirs := 0
			m.Walk(context.Background(), ".", ignore.WalkOptions{}, func(p string, d os.DirEntry) error {
				if d.IsDir() {
					dirs++
				}
				return nil
			})
			if dirs != benchDirs+1 {
				b.Fatalf("walked %d dirs", dirs)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	b.Run("watch", func(b *testing.B) {
		runtime.GC()
		rss0 := rssBytes()
		var rssDelta int64
		first := true
		var cpu time.Duration
		for b.Loop() {
			cpu0 := cpuTime()
			w, err := Start(context.Background(), Options{Root: root, FS: r.FS(), Matcher: ignore.NewMatcher(r.FS(), ignore.Outer{})})
			if err != nil {
				b.Fatal(err)
			}
			if w.Dirs() != benchDirs+1 || w.Mode() == ModeDegraded {
				b.Fatalf("Dirs() = %d, mode %s", w.Dirs(), w.Mode())
			}
			cpu += cpuTime() - cpu0
			if first {
				rssDelta, first = rssBytes()-rss0, false
			}
			b.StopTimer()
			w.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/arm")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(rssDelta)/(1<<20), "MB-rss-delta")
	})
}

func appender(b *testing.B, name string) *os.File {
	fh, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fh.Close() })
	return fh
}

// BenchmarkDetectLatency measures external write → event, reported as
// percentiles, against a bare fsnotify watcher on the same directory.
func BenchmarkDetectLatency(b *testing.B) {
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
	}
	b.Run("fsnotify-raw", func(b *testing.B) {
		root := b.TempDir()
		f := filepath.Join(root, "f.txt")
		os.WriteFile(f, nil, 0o644)
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			b.Fatal(err)
		}
		defer fw.Close()
		fw.Add(root)
		fh := appender(b, f)
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			fh.Write([]byte("x")) // one write syscall: exactly one IN_MODIFY
			for ev := range fw.Events {
				if ev.Name == f {
					break
				}
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
	b.Run("watch", func(b *testing.B) {
		root := b.TempDir()
		f := filepath.Join(root, "f.txt")
		os.WriteFile(f, nil, 0o644)
		r, err := os.OpenRoot(root)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		got := make(chan Event, 1024)
		w, err := Start(context.Background(), Options{Root: root, FS: r.FS(), Matcher: ignore.NewMatcher(r.FS(), ignore.Outer{}),
			OnEvent: func(e Event) { got <- e }})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		fh := appender(b, f)
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			fh.Write([]byte("x"))
			for e := range got {
				if e.Rel == "f.txt" {
					break
				}
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
}
