package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

func TestBashBasics(t *testing.T) {
	slow(t)
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
	c, _, ctx := startProcess(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 200000000; echo end"})
	if r.IsError || !strings.Contains(r.Text(), "end") {
		t.Fatalf("%.300s", r.Text())
	}
	hwm := statusKB(t, c.Process().Pid, "VmHWM")
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
	slow(t)
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
	slow(t)
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
	slow(t)
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	c, _, ctx := startProcess(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in 1 2 3 4 5 6 7 8; do (sleep 0.1 &); done; setsid sleep 0.2 & echo started`})
	if r.IsError {
		t.Fatalf("%s", r.Text())
	}
	server := strconv.Itoa(c.Process().Pid)
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

// The bash tool's description states its numbers and environment, and its
// schema the timeout maximum. (What the command sees is pinned by the
// scripts in cmd/agentls/testdata/script/bash.)
func TestBashDescription(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool["name"] != "bash" {
			continue
		}
		desc := tool["description"].(string)
		for _, w := range []string{"default 120", "maximum 600", "2000 lines", "51200 bytes", "/dev/null", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"} {
			if !strings.Contains(desc, w) {
				t.Errorf("bash description lacks %q", w)
			}
		}
		timeout := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["timeout"].(map[string]any)
		if timeout["maximum"] != 600.0 {
			t.Errorf("schema timeout.maximum = %v", timeout["maximum"])
		}
		ann := tool["annotations"].(map[string]any)
		if ann["readOnlyHint"] != false {
			t.Errorf("bash readOnlyHint = %v", ann["readOnlyHint"])
		}
	}
}

// Timeout: a grandchild that ignores SIGTERM is SIGKILLed after the grace.
func TestBashTimeoutKillsTermIgnoringGrandchild(t *testing.T) {
	slow(t)
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d7", time.Now().UnixNano()%100000)
	t.Cleanup(func() { killProcessesWithArg(arg) })
	t0 := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`sh -c 'trap "" TERM; sleep %s' & wait`, arg), "timeout": 1})
	d := time.Since(t0)
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") || !strings.Contains(r.Text(), "SIGKILL") {
		t.Fatalf("result: %s", r.Text())
	}
	if d > 5*time.Second {
		t.Errorf("took %v; timeout 1 s + 2 s grace", d)
	}
	waitGone(t, arg, 3*time.Second)
}

// A grandchild that moved to its own session still counts as a grandchild
// of the command (docs/tools.md: "no grandchild survives").
func TestBashTimeoutKillsSetsidGrandchild(t *testing.T) {
	slow(t)
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d8", time.Now().UnixNano()%100000)
	t.Cleanup(func() { killProcessesWithArg(arg) })
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 < /dev/null & sleep 30`, arg), "timeout": 1})
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") {
		t.Fatalf("result: %s", r.Text())
	}
	waitGone(t, arg, 3*time.Second)
}

// killProcessesWithArg kills leftover processes this test started (matched by a
// unique argument), so a failing test leaves nothing behind.
func killProcessesWithArg(arg string) {
	for _, pid := range processesWithArg(arg) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Progress: the output tail streams as tools/progress with callId and tool,
// at least 50 ms apart per call.
func TestBashProgressThrottled(t *testing.T) {
	slow(t)
	t.Parallel()
	c, _, ctx := start(t, nil)
	sent := time.Now()
	r, replyAt := callWithID(t, c, ctx, "bash", "prog-1", map[string]any{"command": "for i in $(seq 1 150); do echo line $i; sleep 0.005; done"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	n := 0
	for _, note := range c.Notes("tools/progress") {
		var p map[string]any
		json.Unmarshal(note.Params, &p)
		if p["callId"] != "prog-1" {
			continue
		}
		if p["tool"] != "bash" {
			t.Errorf("progress tool = %v", p["tool"])
		}
		if note.At.After(replyAt) {
			t.Errorf("progress after the reply")
		}
		n++
	}
	if n < 3 {
		t.Fatalf("only %d progress notifications for a ~1 s command", n)
	}
	// Receipt times bunch up on a loaded machine (two notes read in one
	// go arrive together), so the throttle is judged by the count: at
	// most one note per 50 ms of the call, plus the first. A server that
	// does not throttle sends one per line, 150.
	took := replyAt.Sub(sent)
	t.Logf("%d progress notes in %v", n, took)
	if most := int(took/(50*time.Millisecond)) + 1; n > most {
		t.Errorf("%d progress notifications in %v, want at most %d (one per 50 ms)", n, took, most)
	}
}

// Output cut by bytes: the tail keeps at most 50 KB, the notice gives the
// spill file's path and the lines shown, and read opens the spill file.
func TestBashByteLimitAndSpillNotice(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in $(seq 1 1000); do printf 'row %04d %s\n' $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`})
	if r.IsError {
		t.Fatal(r.Text())
	}
	txt := r.Text()
	m := regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`).FindStringSubmatch(txt)
	if m == nil || m[2] != "1000" || m[3] != "1000" {
		t.Fatalf("no line range in the notice:\n%.500s", txt)
	}
	spill, _ := r.Details["spillPath"].(string)
	if spill == "" || !strings.Contains(txt, spill) {
		t.Fatalf("spill path %q not in the notice:\n%.500s", spill, txt)
	}
	tailStart := strings.Index(txt, "row ")
	if tail := txt[tailStart:]; len(tail) > 51200 {
		t.Errorf("tail is %d bytes, want ≤ 51200", len(tail))
	}
	if !strings.Contains(txt, "row 1000 ") || strings.Contains(txt, "row 0001 ") {
		t.Errorf("the tail is not the end of the output")
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1, "limit": 2})
	if rr.IsError || !strings.Contains(rr.Text(), "row 0001") {
		t.Fatalf("read spill: %s", rr.Text())
	}
}

// Labels from the parsed command, seen through tools/confirm in default
// mode: read-only commands run without asking; others ask with a preview
// saying whether they are read-only and destructive.
func TestBashLabels(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "a\n"}, "")
	cases := []struct {
		cmd         string
		asks        bool
		destructive bool
	}{
		{"ls -la | grep a; cat a.txt", false, false},
		{"git status && wc -l $(echo a.txt)", false, false},
		{"echo hi > /dev/null", false, false},
		{"touch b", true, false},
		{"ls > out.txt", true, false}, // a new file: nothing overwritten (docs: "`>` onto a file")
		{"ls > a.txt", true, true},
		{"cat a.txt | tee out.txt", true, false},
		{"rm -rf build", true, true},
		{"echo $(rm -f a.txt)", true, true},
		{"git push --force origin main", true, true},
		{"ls && (cd . && rm a.txt)", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			before := s.count()
			s.answers = []map[string]any{{"decision": "rejectOnce"}}
			r := c.CallTool(ctx, "bash", map[string]any{"command": tc.cmd})
			asked := s.count() > before
			if asked != tc.asks {
				t.Fatalf("asked = %v, want %v (result %s)", asked, tc.asks, r.Text())
			}
			if !asked {
				return
			}
			s.mu.Lock()
			q := s.asked[len(s.asked)-1]
			s.mu.Unlock()
			prev, _ := q["preview"].(map[string]any)
			if prev == nil || prev["kind"] != "command" || prev["readOnly"] != false || prev["destructive"] != tc.destructive {
				t.Errorf("preview = %v, want readOnly false, destructive %v", prev, tc.destructive)
			}
			if !r.IsError || !strings.Contains(r.Text(), "denied by the user") {
				t.Errorf("rejected call: %s", r.Text())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatalf("a rejected command ran: %v", err)
	}
}

func TestBashMillisecondTimeout(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	ws := t.TempDir()
	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	norm := func(r harness.Result) string { b, _ := json.Marshal(r.Details["normalized"]); return string(b) }

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"timeout 120000", map[string]any{"command": "echo ok", "timeout": 120000}},
		{"timeout 600000", map[string]any{"command": "echo ok", "timeout": 600000}},
		{"timeout_ms", map[string]any{"command": "echo ok", "timeout_ms": 30000}},
		{"string ms", map[string]any{"command": "echo ok", "timeout": "120000"}},
	} {
		r := c.CallTool(ctx, "bash", tc.args)
		if r.IsError || !strings.Contains(r.Text(), "ok") {
			t.Errorf("%s: %s", tc.name, r.Text())
		}
		if !strings.Contains(norm(r), "timeout") {
			t.Errorf("%s: details.normalized does not report the repair: %s", tc.name, norm(r))
		}
	}

	// 2000 is read as 2 s: a 10 s sleep is cut after about 2 s.
	start := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": "sleep 10", "timeout": 2000})
	el := time.Since(start)
	if !r.IsError || el < 1800*time.Millisecond || el > 6*time.Second {
		t.Errorf("timeout 2000: %v, %s", el, r.Text())
	}
	wantContains(t, "timeout 2000", strings.ToLower(r.Text()), "timed out")

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"601", map[string]any{"command": "echo ok", "timeout": 601}},
		{"1500 (not whole seconds)", map[string]any{"command": "echo ok", "timeout": 1500}},
		{"601000 ms", map[string]any{"command": "echo ok", "timeout": 601000}},
	} {
		r := c.CallTool(ctx, "bash", tc.args)
		if !r.IsError {
			t.Errorf("%s: accepted: %s", tc.name, r.Text())
			continue
		}
		wantContains(t, tc.name, r.Text(), "600")
		t.Logf("%s -> %s", tc.name, r.Text())
	}
}
