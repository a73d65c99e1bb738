package e2e

// Audit 7: the bash tool against commands models actually run — interactive
// programs with no terminal, awkward output shapes, processes that outlive
// or ignore their shell, exit codes and signals, and cwd handling. Written
// from TOOLS.md, PROTOCOL.md and docs/tools.md only.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/test/harness"
)

// a7bFast bounds a command that must not wait for input that never comes.
const a7bFast = 10 * time.Second

// a7bSeq makes sleep markers unique within this test process.
var a7bSeq atomic.Int64

// a7bMarker is a sleep duration no other process on the machine uses, so
// /proc scans find exactly the processes a test started.
func a7bMarker() string {
	return fmt.Sprintf("%d.%04d%05d", 100+a7bSeq.Add(1), os.Getpid()%10000, rand.IntN(100000))
}

// a7bNeed skips when a program the case runs is not installed.
func a7bNeed(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed", p)
		}
	}
}

// a7bCall runs bash with a caller-chosen callId and reports how long it took.
func a7bCall(ctx context.Context, c *harness.Client, callID string, args map[string]any) (harness.Result, time.Duration, error) {
	var r harness.Result
	start := time.Now()
	err := c.Call(ctx, "tools/call", map[string]any{"name": "bash", "arguments": args, "callId": callID}, &r)
	return r, time.Since(start), err
}

// a7bSpillRe finds the spill path in a truncation notice.
var a7bSpillRe = regexp.MustCompile(`Full output: (\S+\.log)`)

func TestBashOutputInteractiveProgramsReturn(t *testing.T) {
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "hello less\n"})
	c, _ := startIn(t, ws, bypass())
	cases := []struct {
		name    string
		needs   []string
		command string
		isError bool
		exact   string   // whole text, when set
		wants   []string // substrings otherwise
	}{
		{name: "read from stdin gets EOF", command: `read x; echo got:$x`, exact: "got:"},
		{name: "python input() gets EOFError", needs: []string{"python3"}, command: `python3 -c 'input()'`,
			isError: true, wants: []string{"EOFError", "[Exit code 1]"}},
		{name: "cat without args ends at EOF", command: `cat; echo cat-rc=$?`, exact: "cat-rc=0"},
		{name: "password prompt sees EOF", command: `bash -c 'read -p "Password: " p'; echo rc=$?`, exact: "rc=1"},
		{name: "pager and prompt environment", command: `printf '%s|' "$PAGER" "$GIT_PAGER" "$GIT_TERMINAL_PROMPT"`, exact: "cat|cat|0|"},
		{name: "git commit without -m opens no editor", needs: []string{"git"},
			command: `git init -q . && git add a.txt && git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false commit`,
			isError: true, wants: []string{"Aborting commit due to empty commit message", "[Exit code 1]"}},
		{name: "less prints the file", needs: []string{"less"}, command: `less a.txt`, exact: "hello less"},
		{name: "top without a terminal fails fast", needs: []string{"top"}, command: `top`, isError: true, wants: []string{"[Exit code"}},
		{name: "top in batch mode works", needs: []string{"top"}, command: `top -b -n1 | head -5`, wants: []string{"Tasks:"}},
		{name: "sudo -S does not wait for a password", command: `sudo -S true`, isError: true, wants: []string{"[Exit code"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a7bNeed(t, tc.needs...)
			ctx := testCtx(t, 15*time.Second)
			r, took, err := a7bCall(ctx, c, "", map[string]any{"command": tc.command})
			if err != nil {
				t.Fatalf("call: %v (after %v)", err, took)
			}
			if took > a7bFast {
				t.Errorf("took %v, want < %v (waiting for input?)", took, a7bFast)
			}
			if tc.exact != "" && r.Text() != tc.exact {
				t.Errorf("text = %q, want %q", r.Text(), tc.exact)
			}
			wantResult(t, tc.name, r, tc.isError, tc.wants...)
		})
	}
}

func TestBashOutputOutputShapes(t *testing.T) {
	c, _, _ := start(t, nil)
	cases := []struct {
		name    string
		command string
		isError bool
		exact   string
		check   func(t *testing.T, text string)
	}{
		{name: "carriage-return progress bar keeps the final state",
			command: `for p in 10 50 100; do printf '\rdownloading %3d%%' $p; done; printf '\n'; echo done`,
			exact:   "downloading 100%\ndone"},
		{name: "ANSI colours stripped",
			command: `printf '\033[1;31mFAIL\033[0m \033[32mok\033[0m\n'`,
			exact:   "FAIL ok"},
		{name: "erase-line redraw shows what a terminal shows",
			command: `printf 'old text\033[2K\033[1Gnew\n'`,
			exact:   "new"},
		{name: "stderr only", command: `echo oops >&2`, exact: "oops"},
		{name: "stdout and stderr interleaved in order", command: `echo one; echo two >&2; echo three`, exact: "one\ntwo\nthree"},
		{name: "trailing partial line kept", command: `printf 'line1\nno-newline'`, exact: "line1\nno-newline"},
		{name: "NUL bytes do not reach the text",
			command: `printf 'a\0b\n'`,
			check: func(t *testing.T, text string) {
				wantLacks(t, "text", text, "\x00")
				if !strings.HasPrefix(text, "a") || !strings.Contains(text, "b") {
					t.Errorf("text = %q, want a…b", text)
				}
			}},
		{name: "random bytes decode to valid text",
			command: `head -c 1000 /dev/urandom; echo; echo after-binary`,
			check: func(t *testing.T, text string) {
				if !utf8.ValidString(text) {
					t.Errorf("text is not valid UTF-8")
				}
				if !strings.HasSuffix(text, "after-binary") {
					t.Errorf("text does not end with the line after the binary: %q", text[max(0, len(text)-40):])
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 15*time.Second)
			r, _, err := a7bCall(ctx, c, "", map[string]any{"command": tc.command})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tc.isError {
				t.Errorf("isError = %v, want %v: %q", r.IsError, tc.isError, r.Text())
			}
			if tc.exact != "" && r.Text() != tc.exact {
				t.Errorf("text = %q, want %q", r.Text(), tc.exact)
			}
			if tc.check != nil {
				tc.check(t, r.Text())
			}
		})
	}
}

func TestBashOutputHundredThousandLines(t *testing.T) {
	c, _, ctx := start(t, nil)
	r, _, err := a7bCall(ctx, c, "", map[string]any{"command": `seq 100000`})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	wantResult(t, "seq", r, false)
	// 2000 lines in all, the notice among them.
	wantContains(t, "notice", text, "showing lines 98002-100000 of 100000")
	lines := strings.Split(text, "\n")
	if last := lines[len(lines)-1]; last != "100000" {
		t.Errorf("last line = %q, want 100000", last)
	}
	if !strings.Contains(text, "\n98002\n") || strings.Contains(text, "\n98001\n") {
		t.Errorf("tail does not start at 98002")
	}
	m := a7bSpillRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill path in notice:\n%s", text[:min(len(text), 600)])
	}
	spill := readFile(t, m[1])
	if n := strings.Count(spill, "\n"); n != 100000 || !strings.HasPrefix(spill, "1\n2\n") {
		t.Errorf("spill holds %d lines, want all 100000 from 1", n)
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": m[1], "offset": 1, "limit": 3})
	wantResult(t, "read spill", rr, false, "of 100000")
	wantContains(t, "read spill", rr.Text(), "1", "2", "3")
}

func TestBashOutputHugeSingleLine(t *testing.T) {
	c, _, ctx := start(t, nil)
	const size = 5_000_000
	r, took, err := a7bCall(ctx, c, "", map[string]any{"command": fmt.Sprintf(`printf START; head -c %d /dev/zero | tr '\0' x; printf END-OF-LINE`, size)})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	if took > a7bFast {
		t.Errorf("5 MB line took %v", took)
	}
	if len(text) > 51200+2048 {
		t.Errorf("text is %d bytes; the output cap is 51,200", len(text))
	}
	m := a7bSpillRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill path in notice:\n%s", text[:min(len(text), 600)])
	}
	spill := readFile(t, m[1])
	if want := "START" + strings.Repeat("x", size) + "END-OF-LINE"; spill != want {
		t.Errorf("spill holds %d bytes, want the whole %d-byte line", len(spill), len(want))
	}
	t.Run("tail of the output is kept", func(t *testing.T) {
		// TOOLS.md: "Final output keeps the tail: 2000 lines or 50 KB."
		if !strings.Contains(text, "END-OF-LINE") {
			t.Errorf("the last bytes of the output are missing; text ends %q", text[max(0, len(text)-120):])
		}
	})
	t.Run("read of the spill is not empty", func(t *testing.T) {
		rr := c.CallTool(ctx, "read", map[string]any{"path": m[1]})
		if strings.TrimSpace(rr.Text()) == "" {
			t.Errorf("read of the spill file returned an empty text")
		}
	})
}

func TestBashOutputBinaryOnTheWire(t *testing.T) {
	ws := newWorkspace(t, nil)
	cmd := harness.Command(t, []string{"--root", ws})
	stdin, stdout := harness.StartPiped(t, cmd)
	stopOnCleanup(t, cmd, stdin)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	bodies := make(chan []byte, 64)
	go func() {
		defer close(bodies)
		br := bufio.NewReader(stdout)
		for {
			b, err := readFrame(br)
			if err != nil {
				return
			}
			bodies <- b
		}
	}()
	reply := func(id int) map[string]any {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case b, ok := <-bodies:
				if !ok {
					t.Fatalf("server closed stdout before reply %d", id)
				}
				if !utf8.Valid(b) {
					t.Errorf("frame is not valid UTF-8: %q", b[:min(len(b), 200)])
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatalf("frame is not JSON: %v", err)
				}
				if m["method"] == nil && m["id"] == float64(id) {
					return m
				}
			case <-deadline:
				t.Fatalf("no reply %d", id)
			}
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()}})
	reply(1)
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "bash",
		"arguments": map[string]any{"command": `head -c 1000 /dev/urandom; printf '\xff\xfe\xc3(\xed\xa0\x80\n'; echo tail-line`}}})
	m := reply(2)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("reply 2 has no result: %v", m)
	}
	if s := compactJSON(res); !strings.Contains(s, "tail-line") {
		t.Errorf("result lacks the text after the binary bytes")
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": "echo still-alive"}}})
	if s := compactJSON(reply(3)); !strings.Contains(s, "still-alive") {
		t.Errorf("server did not answer the next call: %s", s)
	}
}

func TestBashOutputProgressThrottled(t *testing.T) {
	c, _, ctx := start(t, nil)
	const callID = "a7b-chatter"
	start := time.Now()
	r, _, err := a7bCall(ctx, c, callID, map[string]any{"command": `for i in $(seq 150); do echo tick-$i; sleep 0.01; done`})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "result", r.Text(), "tick-150")
	var at []time.Time
	for _, n := range c.Notes("tools/progress") {
		var p struct {
			CallID string `json:"callId"`
			Tool   string `json:"tool"`
			Output string `json:"output"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.CallID != callID {
			continue
		}
		if p.Tool != "bash" {
			t.Errorf("progress tool = %q, want bash", p.Tool)
		}
		if k := strings.Count(strings.TrimRight(p.Output, "\n"), "\n") + 1; k > 20 {
			t.Errorf("progress output carries %d lines, docs say the last 20", k)
		}
		at = append(at, n.At)
	}
	if len(at) < 5 {
		t.Fatalf("%d progress notes for a ~2 s chatty command, want several", len(at))
	}
	if first := at[0].Sub(start); first > time.Second {
		t.Errorf("first progress after %v, want it promptly", first)
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	// ≥ 50 ms at the server; the client sees transport jitter, so the
	// median is held to 45 ms.
	if med := gaps[len(gaps)/2]; med < 45*time.Millisecond {
		t.Errorf("median gap between progress notes %v over %d notes, want ≥ 50 ms", med, len(at))
	}
}

// a7bCancelWhen starts a bash call and, once want processes carrying marker
// exist, cancels it; it returns when the call has returned.
func a7bCancelWhen(t *testing.T, c *harness.Client, command, marker string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := a7bCall(ctx, c, "", map[string]any{"command": command})
		done <- err
	}()
	if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(marker)) >= want }) {
		t.Fatalf("only %d of %d processes started", len(processesWithArg(marker)), want)
	}
	cancel()
	if err := <-done; err == nil {
		t.Errorf("cancelled call returned no error")
	}
}

func TestBashOutputProcessCleanup(t *testing.T) {
	c, _, _ := start(t, nil)
	t.Run("exec sleep cancelled", func(t *testing.T) {
		mk := a7bMarker()
		reapProcessesWithArg(t, mk)
		a7bCancelWhen(t, c, "exec sleep "+mk, mk, 1)
		if !waitUntil(4*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("survivors after cancel: %v", processesWithArg(mk))
		}
	})
	t.Run("fifty background sleeps cancelled", func(t *testing.T) {
		mk := a7bMarker()
		reapProcessesWithArg(t, mk)
		a7bCancelWhen(t, c, `for i in $(seq 50); do sleep `+mk+` & done; wait`, mk, 50)
		if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("%d of 50 survive the cancel", len(processesWithArg(mk)))
		}
	})
	t.Run("setsid children cancelled", func(t *testing.T) {
		a7bNeed(t, "setsid")
		mk := a7bMarker()
		reapProcessesWithArg(t, mk)
		a7bCancelWhen(t, c, `for i in 1 2 3; do setsid sleep `+mk+` & done; wait`, mk, 3)
		if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("%d of 3 setsid children survive the cancel", len(processesWithArg(mk)))
		}
	})
	t.Run("TERM ignored then timeout", func(t *testing.T) {
		mk := a7bMarker()
		reapProcessesWithArg(t, mk)
		ctx := testCtx(t, 15*time.Second)
		r, took, err := a7bCall(ctx, c, "", map[string]any{"command": `trap '' TERM; echo before-timeout; sleep ` + mk, "timeout": 1})
		if err != nil {
			t.Fatal(err)
		}
		wantResult(t, "timeout", r, true, "before-timeout", "timed out", "SIGKILL")
		// 1 s timeout + 2 s grace before SIGKILL.
		if took < 2800*time.Millisecond || took >= 5*time.Second {
			t.Errorf("took %v, want about 3 s (1 s timeout, 2 s grace) and < 5 s", took)
		}
		if !waitUntil(2*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("survivors after SIGKILL: %v", processesWithArg(mk))
		}
	})
}

func TestBashOutputBackgroundDaemonsAtShutdown(t *testing.T) {
	cases := []struct {
		name    string
		needs   []string
		command func(mk string) string
	}{
		{name: "nohup", needs: []string{"nohup"}, command: func(mk string) string { return "nohup sleep " + mk + " & echo started" }},
		{name: "setsid", needs: []string{"setsid"}, command: func(mk string) string { return "setsid sleep " + mk + " & echo started" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a7bNeed(t, tc.needs...)
			mk := a7bMarker()
			reapProcessesWithArg(t, mk)
			c, _, ctx := start(t, nil)
			r, took, err := a7bCall(ctx, c, "", map[string]any{"command": tc.command(mk)})
			if err != nil {
				t.Fatal(err)
			}
			wantResult(t, "call", r, false, "started")
			if took > 3*time.Second {
				t.Errorf("call took %v; the shell exited at once", took)
			}
			if len(processesWithArg(mk)) == 0 {
				t.Fatalf("background sleep not running after the call")
			}
			if code := c.Shutdown(ctx); code != 0 {
				t.Errorf("exit code %d", code)
			}
			// docs/tools.md: background children, in the command's group or
			// not (setsid), "are killed at shutdown".
			if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
				t.Errorf("background child survives shutdown: pids %v", processesWithArg(mk))
			}
		})
	}
}

func TestBashOutputShellStateDoesNotPersist(t *testing.T) {
	ws := resolvedWorkspace(t, nil)
	c, ctx := startIn(t, ws, bypass())
	steps := []struct {
		name, command, exact string
	}{
		{"cd elsewhere", `cd /tmp && pwd`, "/tmp"},
		{"next call starts at the root", `pwd`, ws},
		{"export", `export A7B_X=1; echo ${A7B_X:-unset}`, "1"},
		{"next call lacks the export", `echo ${A7B_X:-unset}`, "unset"},
		{"alias is gone", `type a7b_alias >/dev/null 2>&1 && echo alias || echo none`, "none"},
	}
	for _, s := range steps {
		r, _, err := a7bCall(ctx, c, "", map[string]any{"command": s.command})
		if err != nil {
			t.Fatal(err)
		}
		if r.Text() != s.exact || r.IsError {
			t.Errorf("%s: text %q isError %v, want %q", s.name, r.Text(), r.IsError, s.exact)
		}
	}
	r := c.CallTool(ctx, "bash", map[string]any{"command": `ulimit -a`})
	wantResult(t, "ulimit -a", r, false, "open files")
}

func TestBashOutputExitCodesAndSignals(t *testing.T) {
	c, _, _ := start(t, nil)
	cases := []struct {
		name    string
		command string
		isError bool
		wants   []string
		exact   string
	}{
		{name: "exit 255", command: `exit 255`, isError: true, wants: []string{"[Exit code 255]"}},
		{name: "output kept with exit code", command: `echo partial-work; exit 3`, isError: true, wants: []string{"partial-work", "[Exit code 3]"}},
		{name: "SIGSEGV named", command: `kill -SEGV $$`, isError: true, wants: []string{"SIGSEGV"}},
		{name: "SIGKILL named", command: `echo dying; kill -KILL $$`, isError: true, wants: []string{"dying", "SIGKILL"}},
		{name: "pipeline status is the last command", command: `false | true; echo ok`, exact: "ok"},
		{name: "pipefail", command: `set -o pipefail; false | true`, isError: true, wants: []string{"[Exit code 1]"}},
		{name: "command not found", command: `a7b-no-such-program-xyz`, isError: true, wants: []string{"not found", "[Exit code 127]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 15*time.Second)
			r, _, err := a7bCall(ctx, c, "", map[string]any{"command": tc.command})
			if err != nil {
				t.Fatal(err)
			}
			if tc.exact != "" && r.Text() != tc.exact {
				t.Errorf("text = %q, want %q", r.Text(), tc.exact)
			}
			wantResult(t, tc.name, r, tc.isError, tc.wants...)
		})
	}
}

func TestBashOutputCwd(t *testing.T) {
	outside := t.TempDir()
	ws := resolvedWorkspace(t, map[string]string{"sub/deep/f.txt": "x\n", "dir with spaces/f.txt": "x\n", "plain.txt": "x\n"})
	symlink(t, outside, filepath.Join(ws, "escape"))
	symlink(t, filepath.Join(ws, "sub"), filepath.Join(ws, "inside-link"))
	c, _ := startIn(t, ws, bypass())
	cases := []struct {
		name, cwd string
		wantPwd   string   // success: pwd prints this
		wants     []string // refusal: the message holds these
	}{
		{name: "relative", cwd: "sub/deep", wantPwd: filepath.Join(ws, "sub/deep")},
		{name: "absolute inside", cwd: filepath.Join(ws, "sub"), wantPwd: filepath.Join(ws, "sub")},
		{name: "spaces", cwd: "dir with spaces", wantPwd: filepath.Join(ws, "dir with spaces")},
		{name: "symlink to a dir inside", cwd: "inside-link", wantPwd: filepath.Join(ws, "sub")},
		{name: "dot-dot", cwd: "..", wants: []string{"cwd", ".."}},
		{name: "dot-dot inside a path", cwd: "sub/../../x", wants: []string{"cwd"}},
		{name: "absolute outside", cwd: outside, wants: []string{"cwd", "outside"}},
		{name: "symlink resolving outside", cwd: "escape", wants: []string{"cwd", "outside"}},
		{name: "missing", cwd: "nope", wants: []string{"cwd", "nope"}},
		{name: "a file", cwd: "plain.txt", wants: []string{"cwd", "plain.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 15*time.Second)
			r, _, err := a7bCall(ctx, c, "", map[string]any{"command": `pwd -P`, "cwd": tc.cwd})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantPwd != "" {
				if r.IsError || r.Text() != tc.wantPwd {
					t.Errorf("isError %v text %q, want pwd %q", r.IsError, r.Text(), tc.wantPwd)
				}
				return
			}
			wantResult(t, tc.name, r, true, tc.wants...)
			if strings.HasPrefix(r.Text(), "/") {
				t.Errorf("refused cwd still ran the command: %q", r.Text())
			}
		})
	}
}
