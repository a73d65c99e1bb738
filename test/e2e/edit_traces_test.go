package e2e

// Acceptance trace of issues 2, 3 and 4: the items earlier tests proved
// only loosely. Each test here would fail if agentls got its item wrong.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/test/harness"
)

// Issue 4, guard: a stale edit is refused "naming when it changed, which
// line range differs, and 'read it again'", and the external content stays.
func TestEditTraceStaleEditNamesWhenAndWhichLines(t *testing.T) {
	t.Parallel()
	orig := numberedLines(30, func(i int) string { return fmt.Sprintf("line %d", i) })
	c, ws, ctx := start(t, map[string]string{"a.txt": orig})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
	p := filepath.Join(ws, "a.txt")
	external := strings.Replace(orig, "line 20\n", "line 20 changed elsewhere\n", 1)
	writeFile(t, p, external)
	// A distinctive modification time the message must name.
	mtime := time.Date(2024, 3, 5, 7, 8, 9, 0, time.Local)
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	r := c.CallTool(ctx, "edit", editCall("a.txt", "line 1\n", "LINE 1\n"))
	t.Logf("stale edit: %s", r.Text())
	wantResult(t, "stale edit", r, true, "07:08:09", "20", "ead it again")
	wantLacks(t, "stale edit", r.Text(), "lines 1-", "lines 19")
	if got := readFile(t, p); got != external {
		t.Errorf("external content not intact: %q", got)
	}
}

// Issue 4, edit cases: `"foo foo foo"` foo → an error naming 3 occurrences
// and their lines (all on line 1 here).
func TestEditTraceThreeOccurrencesNameTheirLine(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"f.txt": "foo foo foo"})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
	r := c.CallTool(ctx, "edit", editCall("f.txt", "foo", "bar"))
	t.Logf("error text: %s", r.Text())
	wantResult(t, "three on one line", r, true, "replaceAll")
	if !regexp.MustCompile(`3 times \((all on )?lines? 1\b`).MatchString(r.Text()) {
		t.Errorf("error does not name the 3 occurrences and their line 1: %s", r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "f.txt")); got != "foo foo foo" {
		t.Errorf("file changed: %q", got)
	}
}

// tracesBarrier answers tools/diagnostics requests and records how many were
// outstanding at once; each waits (up to hold) for a second to arrive, so
// two calls that really run at the same time are both seen in flight.
type tracesBarrier struct {
	hold     time.Duration
	mu       sync.Mutex
	inFlight int
	maxSeen  int
	arrived  chan struct{} // closed when two are in flight at once
	once     sync.Once
}

func (b *tracesBarrier) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/diagnostics" {
		return nil, nil
	}
	b.mu.Lock()
	b.inFlight++
	if b.inFlight > b.maxSeen {
		b.maxSeen = b.inFlight
	}
	if b.inFlight >= 2 {
		b.once.Do(func() { close(b.arrived) })
	}
	b.mu.Unlock()
	select {
	case <-b.arrived:
	case <-time.After(b.hold):
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
	return map[string]any{"items": []any{}}, nil
}

func (b *tracesBarrier) max() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxSeen
}

// Issue 4: edit/write are "not concurrency-safe for the same path only (the
// executor may run edits to different files in parallel)"; "edits to 50
// different files run in parallel". The editor's diagnostics question,
// asked inside each edit, shows whether two edits were running at once.
func TestEditTraceEditsOfDifferentFilesRunInParallel(t *testing.T) {
	t.Parallel()
	const files = 50
	for _, mode := range []string{"callBatch", "parallel tools/call"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			for i := range files {
				writeFile(t, filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), fmt.Sprintf("file %02d: old\n", i))
			}
			b := &tracesBarrier{hold: 200 * time.Millisecond, arrived: make(chan struct{})}
			c := harness.Start(t, harness.Options{Root: ws})
			c.OnRequest = b.answer
			ctx := testCtx(t, 60*time.Second)
			params := bypass()
			params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"diagnostics": true}}}
			c.Initialize(ctx, params)
			for i := range files {
				if r := c.CallTool(ctx, "read", map[string]any{"path": fmt.Sprintf("f%02d.txt", i)}); r.IsError {
					t.Fatal(r.Text())
				}
			}
			edit := func(i int) map[string]any {
				return editCall(fmt.Sprintf("f%02d.txt", i), fmt.Sprintf("file %02d: old", i), fmt.Sprintf("file %02d: new", i))
			}
			t0 := time.Now()
			errs := make([]string, files)
			if mode == "callBatch" {
				var calls []any
				for i := range files {
					calls = append(calls, map[string]any{"name": "edit", "arguments": edit(i)})
				}
				var res struct {
					Results []harness.Result `json:"results"`
				}
				if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
					t.Fatal(err)
				}
				for i, r := range res.Results {
					if r.IsError {
						errs[i] = r.Text()
					}
				}
			} else {
				var wg sync.WaitGroup
				for i := range files {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if r, err := c.TryCallTool(ctx, "edit", edit(i)); err != nil {
							errs[i] = err.Error()
						} else if r.IsError {
							errs[i] = r.Text()
						}
					}()
				}
				wg.Wait()
			}
			t.Logf("%d edits in %v; at most %d diagnostics questions in flight at once", files, time.Since(t0), b.max())
			for i, e := range errs {
				if e != "" {
					t.Errorf("edit %d: %s", i, e)
				}
			}
			for i := range files {
				if got, want := readFile(t, filepath.Join(ws, fmt.Sprintf("f%02d.txt", i))), fmt.Sprintf("file %02d: new\n", i); got != want {
					t.Errorf("f%02d.txt = %q, want %q", i, got, want)
				}
			}
			if b.max() < 2 {
				t.Errorf("edits of %d different files never ran at the same time (one diagnostics question in flight at most): they were serialized", files)
			}
		})
	}
}

// Issue 4, crash safety: "no temp files are left behind at the next start
// (clean them up)". A crashed writer's temp file (its process is gone) is
// planted deterministically, so the clean-up is tested even when no kill
// lands mid-write; files that only look alike are the user's and stay.
func TestEditTraceCrashLeftoverTempRemovedAtNextStart(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	ws := t.TempDir()
	leftovers := []string{
		fmt.Sprintf("%sa.txt-%d-x1y2z3", ops.TempPrefix, pid),
		fmt.Sprintf("sub/deep/%sb.go-%d-q9w8e7", ops.TempPrefix, pid),
	}
	users := []string{"agentls-tmp-a.txt-1-2", "sub/.agentls-tmp", "notes.agentls-tmp-x"}
	for _, f := range append(append([]string{}, leftovers...), users...) {
		writeFile(t, filepath.Join(ws, f), "partial\n")
	}
	c, ctx := startIn(t, ws, bypass())
	c.CallTool(ctx, "ls", map[string]any{})
	if !waitUntil(3*time.Second, func() bool { return len(tempLeftovers(ws)) == 0 }) {
		t.Errorf("crash leftovers still there after the next start: %v", tempLeftovers(ws))
	}
	for _, f := range users {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("user file %s removed by the clean-up: %v", f, err)
		}
	}
}

// A second agentls started on the same workspace (`agentls call` next to
// the editor's server) must not delete the temp file of a write another
// process is making, which would fail that write. The writer here is this
// test process, whose temp file is planted: a real 34 MiB write raced the
// second start, overlapped it only now and then, and under load ran past
// its deadline. The crashed writer's temp beside it shows the sweep ran.
func TestEditTraceSecondProcessKeepsARunningWrite(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	running := filepath.Join(ws, fmt.Sprintf("%sbig.txt-%d-a1b2c3", ops.TempPrefix, os.Getpid()))
	crashed := filepath.Join(ws, fmt.Sprintf("%sold.txt-%d-d4e5f6", ops.TempPrefix, dead.Process.Pid))
	writeFile(t, running, "half of a write\n")
	writeFile(t, crashed, "partial\n")
	c, ctx := startIn(t, ws, bypass())
	c.CallTool(ctx, "ls", map[string]any{})
	if !waitUntil(10*time.Second, func() bool { _, err := os.Stat(crashed); return err != nil }) {
		t.Fatalf("the crashed writer's temp file is still there: the sweep never ran")
	}
	if got := readFile(t, running); got != "half of a write\n" {
		t.Errorf("the running writer's temp file was removed or changed by the second start (%q)", got)
	}
}
