package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/test/harness"
)

// bigContent is about size bytes of numbered 100-byte lines; every
// 1000th line carries the variant letter, so versions differ all through
// the file (a torn or mixed write shows) while a diff stays cheap.
func bigContent(variant byte, size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fill := byte('.')
		if i%1000 == 0 {
			fill = variant
		}
		fmt.Fprintf(&b, "%08d %s\n", i, bytes.Repeat([]byte{fill}, 90))
	}
	return b.Bytes()
}

// filesUnder maps each file below dir (not directories; none when dir is
// missing), by slash path relative to dir, to its size.
func filesUnder(dir string) map[string]int64 {
	out := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if fi, ierr := os.Lstat(p); err == nil && ierr == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = fi.Size()
		}
		return nil
	})
	return out
}

// soakFiles lists the files below dir (slash paths, sorted).
func soakFiles(dir string) []string { return slices.Sorted(maps.Keys(filesUnder(dir))) }

// tempLeftovers lists the atomic-write temp files anywhere below dir.
func tempLeftovers(dir string) (out []string) {
	for p := range filesUnder(dir) {
		if strings.HasPrefix(path.Base(p), ops.TempPrefix) {
			out = append(out, p)
		}
	}
	return out
}

// TestCrashDuringWriteLeavesOldOrNew SIGKILLs agentls at a random moment of
// a 2 MB write, over and over: the file must always hold exactly the old or
// the new content, and the next process must remove any temp file the kill
// left behind. The kill moments spread over the measured duration of one
// uninterrupted write, so some land before, some during, some after it.
func TestCrashDuringWriteLeavesOldOrNew(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts the binary many times")
	}
	const (
		iterations = 30
		budget     = 15 * time.Second // the whole test stays well within 20 s
		size       = 2 << 20
		minSpread  = 30 * time.Millisecond
	)
	ws := t.TempDir()
	name := filepath.Join(ws, "big.txt")
	contents := [2][]byte{bigContent('a', size), bigContent('b', size)}
	if err := os.WriteFile(name, contents[0], 0o644); err != nil {
		t.Fatal(err)
	}
	// A leftover from a "previous crash" must be gone after the first start.
	os.WriteFile(filepath.Join(ws, ops.TempPrefix+"stale"), []byte("partial"), 0o600)

	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(budget)

	// start starts agentls on ws and reads big.txt; its sweep must have
	// removed what the last kill left.
	start := func(when string) (*harness.Client, context.Context) {
		c := harness.Start(t, harness.Options{Root: ws, Process: true})
		ctx := testCtx(t, 10*time.Second)
		c.Initialize(ctx, bypass())
		// The temp-file sweep runs with the workspace walk, in the background of initialize.
		if !waitUntil(10*time.Second, func() bool { return len(tempLeftovers(ws)) == 0 }) {
			t.Fatalf("temp files survived the %s start: %v", when, tempLeftovers(ws))
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "limit": 5}); r.IsError {
			t.Fatalf("read: %s", r.Text())
		}
		return c, ctx
	}
	// Calibrate: one write that is not interrupted.
	c0, ctx0 := start("first")
	t0 := time.Now()
	if r := c0.CallTool(ctx0, "write", map[string]any{"path": "big.txt", "content": string(contents[1])}); r.IsError {
		t.Fatalf("write: %s", r.Text())
	}
	spread := max(minSpread, time.Since(t0)*3/2)
	if got, _ := os.ReadFile(name); !bytes.Equal(got, contents[1]) {
		t.Fatal("the uninterrupted write did not land")
	}
	c0.Shutdown(ctx0)
	cur := 1
	var written, kept, leftovers int
	for i := 0; i < iterations && time.Now().Before(deadline); i++ {
		c, ctx := start(fmt.Sprint("iteration ", i, "'s"))
		next := 1 - cur
		go func() {
			// The reply never comes when the kill wins; the error is expected.
			c.TryCallTool(ctx, "write", map[string]any{"path": "big.txt", "content": string(contents[next])})
		}()
		time.Sleep(time.Duration(rng.Int64N(int64(spread))))
		c.Process().Kill()
		select {
		case <-c.Exited():
		case <-time.After(5 * time.Second):
			t.Fatal("process did not die")
		}

		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		switch {
		case bytes.Equal(got, contents[next]):
			cur = next
			written++
		case bytes.Equal(got, contents[cur]):
			kept++
		default:
			t.Fatalf("iteration %d: torn file: %d bytes, neither old nor new", i, len(got))
		}
		if len(tempLeftovers(ws)) > 0 {
			leftovers++
		}
	}
	start("final") // cleans what the last kill left
	t.Logf("%d kills within %v of the request: %d after the write landed, %d before; %d left a temp file that the next start removed",
		written+kept, spread, written, kept, leftovers)
	if written+kept < 5 {
		t.Errorf("only %d iterations ran within %v", written+kept, budget)
	}
}
