package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

func TestBashBasics(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"sub/x.txt": "x\n"})
	cases := []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string
		maxDur  time.Duration
	}{
		{"echo", map[string]any{"command": "echo 'test output'"}, false, []string{"test output"}, 0},
		{"exit code", map[string]any{"command": "exit 3"}, true, []string{"[Exit code 3]"}, 0},
		{"timeout", map[string]any{"command": "sleep 5", "timeout": 1}, true, []string{"Timed out after 1s", "SIGTERM"}, 3 * time.Second},
		{"missing cwd", map[string]any{"command": "ls", "cwd": "nope"}, true, []string{"cwd nope does not exist", "omit cwd"}, 0},
		{"cwd inside", map[string]any{"command": "cat x.txt", "cwd": "sub"}, false, []string{"x"}, 0},
		{"cwd outside", map[string]any{"command": "ls", "cwd": "../.."}, true, []string{"climbs out of the workspace"}, 0},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, false, []string{"done"}, 5 * time.Second},
		{"environment", map[string]any{"command": "echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $AGENTLS"}, false, []string{"cat cat 0 1"}, 0},
		{"background child holding the pipe returns", map[string]any{"command": "(sleep 100 &) ; echo done"}, false, []string{"done"}, time.Second},
		{"timeout above the maximum is refused", map[string]any{"command": "true", "timeout": 601}, true, []string{"`timeout` must be ≤ 600"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			r := c.CallTool(ctx, "bash", tc.args)
			d := time.Since(t0)
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v: %s", r.IsError, r.Text())
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("missing %q in %q", w, r.Text())
				}
			}
			if tc.maxDur > 0 && d > tc.maxDur {
				t.Errorf("took %v, want < %v", d, tc.maxDur)
			}
		})
	}
}

func TestBashLongOutputSpillsAndReadOpensIt(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "seq 3000"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	// 2000 lines in all, the notice among them.
	if !strings.Contains(r.Text(), "showing lines 1002-3000 of 3000") || strings.Contains(r.Text(), "\n1001\n") || !strings.HasSuffix(r.Text(), "\n3000") {
		t.Fatalf("notice or tail wrong:\n%.400s", r.Text())
	}
	spill, _ := r.Details["spillPath"].(string)
	if spill == "" {
		t.Fatalf("no spill path in details: %v", r.Details)
	}
	if _, err := os.Stat(spill); err != nil {
		t.Fatal(err)
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "limit": 3})
	if rr.IsError || !strings.Contains(rr.Text(), "     1→1\n") || !strings.Contains(rr.Text(), "of 3000") {
		t.Fatalf("read spill: %s", rr.Text())
	}
	// Spill files are read-only for the model.
	wr := c.CallTool(ctx, "write", map[string]any{"path": spill, "content": "x"})
	if !wr.IsError {
		t.Fatalf("write to a spill file succeeded: %s", wr.Text())
	}
}

// A command printing 200 MB keeps the server's memory bounded.
func TestBashHugeOutputKeepsServerMemoryBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("prints 200 MB")
	}
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 200000000; echo end"})
	if r.IsError || !strings.Contains(r.Text(), "end") {
		t.Fatalf("%.300s", r.Text())
	}
	hwm := statusKB(t, c.Cmd.Process.Pid, "VmHWM")
	t.Logf("server peak RSS: %d MB", hwm/1024)
	if hwm > 100*1024 {
		t.Fatalf("server peak RSS %d MB > 100 MB", hwm/1024)
	}
}

func statusKB(t *testing.T, pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in status", field)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func waitGone(t *testing.T, arg string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if len(processesWithArg(arg)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("processes still alive: %v", processesWithArg(arg))
}

// Cancelled or timed out, no process of the command's group survives.
func TestBashCancelAndTimeoutKillTheWholeGroup(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	t.Run("cancel", func(t *testing.T) {
		arg := fmt.Sprintf("1000.%d1", time.Now().UnixNano()%100000)
		callCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := c.TryCallTool(callCtx, "bash", map[string]any{"command": fmt.Sprintf("sh -c 'sleep %s & sleep %s & wait'", arg, arg)})
			done <- err
		}()
		deadline := time.Now().Add(5 * time.Second)
		for len(processesWithArg(arg)) < 2 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := len(processesWithArg(arg)); n < 2 {
			t.Fatalf("the sleepers never started (%d)", n)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			var je *jsonrpc2.Error
			if !errors.As(err, &je) || je.Code != -32800 {
				t.Fatalf("err = %v", err)
			}
		}
		waitGone(t, arg, 4*time.Second)
	})
	t.Run("timeout", func(t *testing.T) {
		arg := fmt.Sprintf("1000.%d2", time.Now().UnixNano()%100000)
		r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("sh -c 'sleep %s & sleep %s & wait'", arg, arg), "timeout": 1})
		if !r.IsError || !strings.Contains(r.Text(), "Timed out") {
			t.Fatalf("%s", r.Text())
		}
		waitGone(t, arg, 4*time.Second)
	})
	t.Run("shutdown kills background children", func(t *testing.T) {
		arg := fmt.Sprintf("100.%d3", time.Now().UnixNano()%100000)
		r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("(sleep %s &) ; echo started", arg)})
		if r.IsError || len(processesWithArg(arg)) == 0 {
			t.Fatalf("background child not running: %s", r.Text())
		}
		c.Shutdown(ctx)
		waitGone(t, arg, 5*time.Second)
	})
}

func TestBashProgressArrivesBeforeTheReply(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "bash", "callId": "loop", "arguments": map[string]any{"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"}}, &r); err != nil {
		t.Fatal(err)
	}
	replyAt := time.Now()
	var outputs []string
	for _, n := range c.Notes("tools/progress") {
		if strings.Contains(string(n.Params), `"callId":"loop"`) && n.At.Before(replyAt) {
			outputs = append(outputs, string(n.Params))
		}
	}
	if len(outputs) < 2 {
		t.Fatalf("progress before the reply: %q", outputs)
	}
	all := strings.Join(outputs, "\n")
	i1, i3 := strings.Index(all, `1\n`), strings.Index(all, `3\n`)
	if i1 < 0 || (i3 >= 0 && i3 < i1) {
		t.Fatalf("1 does not come before 3: %s", all)
	}
}

// read-before-edit cannot be bypassed through bash.
func TestBashChangesMarkStampsStale(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "hello\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r := c.CallTool(ctx, "bash", map[string]any{"command": "echo x >> a.txt"})
	if r.IsError || !strings.Contains(r.Text(), "Changed by this command (read them again before editing): a.txt") {
		t.Fatalf("%s", r.Text())
	}
	e := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "hello", "newText": "bye"}}})
	if !e.IsError || !strings.Contains(e.Text(), "changed by a bash command") {
		t.Fatalf("edit after bash change: %s", e.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	if e := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "hello", "newText": "bye"}}}); e.IsError {
		t.Fatalf("edit after re-read: %s", e.Text())
	}
}

// Each `(cmd &)` orphans cmd when its subshell exits. On Linux agentls is
// the subreaper of what it runs, so those orphans come back to it: when they
// exit it must reap them, or every such call would leave a zombie behind
// for as long as the editor runs.
func TestBashOrphansDoNotPileUpAsZombies(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in 1 2 3 4 5 6 7 8; do (sleep 0.1 &); done; setsid sleep 0.2 & echo started`})
	if r.IsError {
		t.Fatalf("%s", r.Text())
	}
	server := strconv.Itoa(c.Cmd.Process.Pid)
	zombies := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(b, ')')
			if f := strings.Fields(string(b[i+1:])); len(f) > 1 && f[0] == "Z" && f[1] == server {
				out = append(out, e.Name())
			}
		}
		return out
	}
	// The sleeps end within 0.2 s; allow a loaded machine more.
	deadline := time.Now().Add(5 * time.Second)
	for len(zombies()) > 0 || time.Now().Before(deadline.Add(-4500*time.Millisecond)) {
		if time.Now().After(deadline) {
			t.Fatalf("zombies of the server: %v", zombies())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
