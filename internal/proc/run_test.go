//go:build unix

package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/spill"
)

func run(t *testing.T, ctx context.Context, spec Spec) Result {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	res, err := Run(ctx, spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", spec.Command, err)
	}
	return res
}

func TestRunBasics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command string
		output  string
		code    int
		signal  string
	}{
		{"echo", "echo 'test output'", "test output\n", 0, ""},
		{"exit code", "exit 3", "", 3, ""},
		{"stdout and stderr interleaved in order", "echo a; echo b >&2; echo c", "a\nb\nc\n", 0, ""},
		{"no final newline", "printf 'x\\ny'", "x\ny", 0, ""},
		{"stdin is empty", "cat; echo after", "after\n", 0, ""},
		{"killed by a signal", "echo before; kill -KILL $$", "before\n", -1, "SIGKILL"},
		{"environment is non-interactive", "echo $PAGER $GIT_TERMINAL_PROMPT $TERM", "cat 0 dumb\n", 0, ""},
		{"colours and progress cleaned", "printf '\\033[32mok\\033[0m\\n10%%\\r100%%\\n'", "ok\n100%\n", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, context.Background(), Spec{Command: c.command})
			if res.Output != c.output || res.ExitCode != c.code || res.Signal != c.signal {
				t.Errorf("got output %q code %d signal %q, want %q %d %q",
					res.Output, res.ExitCode, res.Signal, c.output, c.code, c.signal)
			}
			if res.Truncated || res.TimedOut || res.Cancelled || res.KilledHow != "" {
				t.Errorf("unexpected flags: %+v", res)
			}
		})
	}
}

func TestRunCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := run(t, context.Background(), Spec{Command: "pwd -P", Dir: dir})
	want, _ := filepath.EvalSymlinks(dir)
	if strings.TrimSpace(res.Output) != want {
		t.Errorf("pwd %q, want %q", res.Output, want)
	}
}

func TestRunStartErrorNamesDirectory(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "gone")
	_, err := Run(context.Background(), Spec{Command: "true", Dir: missing})
	if err == nil || !strings.Contains(err.Error(), "working directory") || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v, want it to name the working directory %s", err, missing)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := run(t, context.Background(), Spec{Command: "echo started; sleep 5", Timeout: time.Second})
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("took %v", d)
	}
	if !res.TimedOut || res.KilledHow != KilledSIGTERM || res.ExitCode != -1 || res.Signal != "SIGTERM" {
		t.Errorf("got %+v, want a timeout ended by SIGTERM", res)
	}
	if res.Output != "started\n" {
		t.Errorf("output so far lost: %q", res.Output)
	}
}

func TestRunSIGKILLAfterGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a kill grace")
	}
	t.Parallel()
	start := time.Now()
	res := run(t, context.Background(), Spec{Command: "trap '' TERM; echo armed; sleep 10", Timeout: 300 * time.Millisecond})
	d := time.Since(start)
	if !res.TimedOut || res.KilledHow != KilledSIGKILL || res.Signal != "SIGKILL" {
		t.Errorf("got %+v, want SIGKILL after grace", res)
	}
	if d < KillGrace || d > 300*time.Millisecond+KillGrace+time.Second {
		t.Errorf("took %v, want about timeout+KillGrace", d)
	}
	if res.Output != "armed\n" {
		t.Errorf("output %q", res.Output)
	}
}

// groupMembers lists the live (non-zombie) processes of group pgid.
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

func firstLinePid(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("output %q does not start with a pid", out)
	}
	return pid
}

func TestRunLeavesNoGroupMemberBehind(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	t.Parallel()
	const cmd = `sh -c 'echo $$; sleep 1000 & sleep 1000 & wait'`
	cases := []struct {
		name    string
		timeout time.Duration
		cancel  bool
	}{
		{"cancelled", 0, true},
		{"timed out", 500 * time.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(500*time.Millisecond, cancel)
			}
			var reaper Reaper
			res := run(t, ctx, Spec{Command: cmd, Timeout: c.timeout, Reaper: &reaper})
			if res.Cancelled != c.cancel || res.TimedOut == c.cancel || res.KilledHow == "" {
				t.Errorf("flags %+v", res)
			}
			pgid := firstLinePid(t, res.Output)
			if m := groupMembers(t, pgid); len(m) > 0 {
				t.Errorf("group %d survived: %v", pgid, m)
			}
			if n := reaper.Tracked(); n != 0 {
				t.Errorf("reaper still tracks %d groups", n)
			}
		})
	}
}

func TestRunBackgroundChildDoesNotHoldTheCall(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	t.Parallel()
	cases := []string{
		"echo $$; (sleep 100 &) ; echo done",
		"echo $$; sleep 100 & echo done",
	}
	for _, cmd := range cases {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			var reaper Reaper
			start := time.Now()
			res := run(t, context.Background(), Spec{Command: cmd, Reaper: &reaper})
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v, want < 1s", d)
			}
			pgid := firstLinePid(t, res.Output)
			if !strings.HasSuffix(res.Output, "\ndone\n") || res.ExitCode != 0 {
				t.Errorf("got %+v", res)
			}
			if len(groupMembers(t, pgid)) == 0 || reaper.Tracked() != 1 {
				t.Fatalf("background sleeper not running or not tracked (tracked %d)", reaper.Tracked())
			}
			reaper.KillAll()
			if m := groupMembers(t, pgid); len(m) > 0 {
				t.Errorf("KillAll left %v", m)
			}
			if reaper.Tracked() != 0 {
				t.Errorf("reaper still tracks %d", reaper.Tracked())
			}
		})
	}
}

func TestRunTruncatesAndSpills(t *testing.T) {
	t.Parallel()
	dir, err := spill.OpenIn(t.TempDir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	res := run(t, context.Background(), Spec{Command: "seq 3000", Spill: dir})
	if !res.Truncated || res.ShownFrom != 1001 || res.ShownTo != 3000 || res.TotalLines != 3000 {
		t.Errorf("got truncated=%v shown %d-%d of %d", res.Truncated, res.ShownFrom, res.ShownTo, res.TotalLines)
	}
	if !strings.HasPrefix(res.Output, "1001\n") || !strings.HasSuffix(res.Output, "\n3000\n") {
		t.Errorf("output %.20q...", res.Output)
	}
	full, err := os.ReadFile(res.SpillPath)
	if err != nil {
		t.Fatalf("spill file: %v", err)
	}
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintln(&want, i)
	}
	if string(full) != want.String() {
		t.Errorf("spill file has %d bytes, want all 3000 lines (%d bytes)", len(full), want.Len())
	}

	// Nothing cut: no spill file, and no file left behind.
	res = run(t, context.Background(), Spec{Command: "seq 10", Spill: dir})
	if res.Truncated || res.SpillPath != "" {
		t.Errorf("short output spilled: %+v", res)
	}
	// A long line alone is a cut too.
	res = run(t, context.Background(), Spec{Command: fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", MaxLineChars+1), Spill: dir})
	if !res.Truncated || res.LinesCut != 1 || res.SpillPath == "" || !strings.Contains(res.Output, " characters cut] … ") {
		t.Errorf("long line: %+v", res)
	}
}

func TestRunRescuesBuriedFailures(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), Spec{Command: "seq 5000 | sed '100s/.*/--- FAIL: TestX (0.01s)/'"})
	want := []Line{{100, "--- FAIL: TestX (0.01s)"}}
	if len(res.FailureLines) != 1 || res.FailureLines[0] != want[0] || res.FailureMatches != 1 {
		t.Errorf("failure lines %v (%d), want %v", res.FailureLines, res.FailureMatches, want)
	}
}

func TestRunProgress(t *testing.T) {
	t.Parallel()
	type call struct {
		at   time.Time
		tail string
	}
	var (
		mu      sync.Mutex
		calls   []call
		running bool
	)
	start := time.Now()
	res := run(t, context.Background(), Spec{
		Command: "for i in 1 2 3; do echo $i; sleep 0.3; done",
		OnProgress: func(tail string) {
			mu.Lock()
			defer mu.Unlock()
			if running {
				t.Error("OnProgress calls overlap")
			}
			running = true
			calls = append(calls, call{time.Now(), tail})
			running = false
		},
	})
	end := start.Add(res.Duration)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 2 {
		t.Fatalf("%d progress calls, want one per line", len(calls))
	}
	saw1, saw3 := -1, -1
	for i, c := range calls {
		if i > 0 && c.at.Sub(calls[i-1].at) < ProgressInterval {
			t.Errorf("calls %d and %d only %v apart", i-1, i, c.at.Sub(calls[i-1].at))
		}
		if c.at.After(end) {
			t.Errorf("call %d after Run returned", i)
		}
		if strings.HasPrefix(c.tail, "1\n") && saw1 < 0 {
			saw1 = i
		}
		if strings.HasSuffix(c.tail, "3\n") && saw3 < 0 {
			saw3 = i
		}
	}
	if saw1 < 0 || saw3 < 0 || saw1 >= saw3 {
		t.Errorf("want a call showing 1 before one showing 3; calls: %v", calls)
	}
	if first := calls[0].at; end.Sub(first) < 500*time.Millisecond {
		t.Errorf("first progress call came late: %v before the end", end.Sub(first))
	}
}

// vmHWM reads the process's peak resident set size in KiB.
func vmHWM(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("needs /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// Not parallel: it measures the whole test process's peak memory.
func TestRunHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams hundreds of megabytes of output")
	}
	size := 200_000_000
	if raceEnabled {
		size = 30_000_000 // the race detector makes the byte loop ~10x slower
	}
	dir, err := spill.OpenIn(t.TempDir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	before := vmHWM(t)
	res := run(t, context.Background(), Spec{
		Command: fmt.Sprintf("yes aaaaaaaaaa | head -c %d; echo; echo FAIL: last", size),
		Spill:   dir,
	})
	growth := vmHWM(t) - before
	t.Logf("%d MB in %v, peak RSS growth %d MB", size/1e6, res.Duration, growth/1024)
	if growth > 100*1024 {
		t.Errorf("peak RSS grew by %d MB", growth/1024)
	}
	if res.TotalBytes != int64(size)+len64("\nFAIL: last\n") || !strings.HasSuffix(res.Output, "aaaaaaaaaa\n"+strings.Repeat("a", size%11)+"\nFAIL: last\n") {
		t.Errorf("total %d bytes, output ends %q", res.TotalBytes, res.Output[max(0, len(res.Output)-40):])
	}
	if len(res.Output) > TailBytes || res.ShownTo != res.TotalLines || !res.Truncated {
		t.Errorf("output %d bytes, shown %d-%d of %d", len(res.Output), res.ShownFrom, res.ShownTo, res.TotalLines)
	}
	fi, err := os.Stat(res.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	wantCut := res.TotalBytes > spill.MaxFileBytes
	if fi.Size() > spill.MaxFileBytes || (res.SpillCutBytes > 0) != wantCut {
		t.Errorf("spill file %d bytes, %d cut", fi.Size(), res.SpillCutBytes)
	}
}

func len64(s string) int64 { return int64(len(s)) }

func TestRunCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := run(t, ctx, Spec{Command: "echo should not run"})
	if !res.Cancelled || res.Output != "" {
		t.Errorf("got %+v", res)
	}
}

// A caller's limits replace the defaults: the tail keeps what they allow,
// and the timeout is clamped to the caller's maximum.
func TestRunCallerLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		spec     Spec
		output   string
		from, to int
		timedOut bool
	}{
		{"three lines", Spec{Command: "seq 10", TailLines: 3}, "8\n9\n10\n", 8, 10, false},
		{"eight bytes", Spec{Command: "seq 10", TailBytes: 8}, "8\n9\n10\n", 8, 10, false},
		{"one line longer than the bytes", Spec{Command: "echo 0123456789", TailBytes: 4}, "0123456789\n", 1, 1, false},
		{"timeout clamped to the caller's maximum", Spec{Command: "sleep 30", Timeout: time.Minute, MaxTimeout: 300 * time.Millisecond}, "", 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, context.Background(), c.spec)
			if res.Output != c.output || res.ShownFrom != c.from || res.ShownTo != c.to || res.TimedOut != c.timedOut {
				t.Errorf("got %q lines %d-%d timedOut %v, want %q lines %d-%d timedOut %v",
					res.Output, res.ShownFrom, res.ShownTo, res.TimedOut, c.output, c.from, c.to, c.timedOut)
			}
		})
	}
}

// On a loaded machine the reader may run long after the shell exited; the
// output it has not delivered yet is not silence (50 concurrent commands
// on one P lost theirs in `agentls mcp`).
func TestRunKeepsOutputUnderLoad(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range 4 { // goroutines that keep the one P busy
		spin.Add(1)
		go func() {
			defer spin.Done()
			for {
				select {
				case <-stop:
					return
				default:
					for i := 0; i < 1e6; i++ {
						_ = i * i
					}
				}
			}
		}()
	}
	defer func() { close(stop); spin.Wait() }()
	var wg sync.WaitGroup
	errs := make(chan string, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("out-%d\n", i)
			res, err := Run(context.Background(), Spec{Command: "echo " + strings.TrimSpace(want), Dir: t.TempDir()})
			if err != nil || res.Output != want {
				errs <- fmt.Sprintf("command %d: output %q, err %v", i, res.Output, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
