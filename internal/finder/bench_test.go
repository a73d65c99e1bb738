package finder

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ignore"
)

// BenchmarkFindGOROOT runs Find "*.go" over $GOROOT/src and, in the same
// run, `rg --files` with the same meaning (hidden files included,
// .gitignore honoured without a repository, same glob), and reports the
// ratio find/rg (target ≤ 1.5). Each iteration uses a fresh Matcher, so
// ignore files are read every time, as a single tool call would.
func BenchmarkFindGOROOT(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skipf("no GOROOT/src: %v", err)
	}
	rg, rgErr := exec.LookPath("rg")
	fsys := os.DirFS(root)
	var findTime, rgTime time.Duration
	var nFind, nRG int
	for b.Loop() {
		start := time.Now()
		res, err := Find(context.Background(), fsys, ignore.NewMatcher(fsys, ignore.Outer{}), "*.go", "", 1<<30, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		findTime += time.Since(start)
		nFind = len(res.Paths)

		if rgErr != nil {
			continue
		}
		start = time.Now()
		out, err := exec.Command(rg, "--files", "--hidden", "--no-require-git", "-g", "*.go", root).Output()
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		rgTime += time.Since(start)
		nRG = bytes.Count(out, []byte("\n"))
	}
	b.ReportMetric(float64(findTime.Nanoseconds())/float64(b.N), "find-ns/op")
	b.ReportMetric(float64(nFind), "find-files")
	if rgErr != nil {
		b.Logf("rg not on PATH: no reference (%v)", rgErr)
		return
	}
	b.ReportMetric(float64(rgTime.Nanoseconds())/float64(b.N), "rg-ns/op")
	b.ReportMetric(float64(nRG), "rg-files")
	b.ReportMetric(float64(findTime)/float64(rgTime), "find/rg")
}
