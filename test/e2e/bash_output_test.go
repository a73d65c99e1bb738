package e2e

// The bash tool against commands models actually run — interactive
// programs with no terminal, awkward output shapes, processes that outlive
// or ignore their shell, exit codes and signals, and cwd handling. Written
// from docs/tools.md, docs/protocol.md and docs/tools.md only.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/test/harness"
)

// bashOutFast bounds a command that must not wait for input that never comes.
const bashOutFast = 10 * time.Second

// bashOutSeq makes sleep markers unique within this test process.
var bashOutSeq atomic.Int64

// bashOutMarker is a sleep duration no other process on the machine uses, so
// /proc scans find exactly the processes a test started.
func bashOutMarker() string {
	return fmt.Sprintf("%d.%04d%05d", 100+bashOutSeq.Add(1), os.Getpid()%10000, rand.IntN(100000))
}

// bashOutNeed skips when a program the case runs is not installed.
func bashOutNeed(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed", p)
		}
	}
}

// bashOutCall runs bash with a caller-chosen callId and reports how long it took.
func bashOutCall(ctx context.Context, c *harness.Client, callID string, args map[string]any) (harness.Result, time.Duration, error) {
	var r harness.Result
	start := time.Now()
	err := c.Call(ctx, "tools/call", map[string]any{"name": "bash", "arguments": args, "callId": callID}, &r)
	return r, time.Since(start), err
}

// bashOutSpillRe finds the spill path in a truncation notice.
var bashOutSpillRe = regexp.MustCompile(`Full output: (\S+\.log)`)

func TestBashOutputHundredThousandLines(t *testing.T) {
	c, _, ctx := start(t, nil)
	r, _, err := bashOutCall(ctx, c, "", map[string]any{"command": `seq 100000`})
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
	m := bashOutSpillRe.FindStringSubmatch(text)
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
	r, took, err := bashOutCall(ctx, c, "", map[string]any{"command": fmt.Sprintf(`printf START; head -c %d /dev/zero | tr '\0' x; printf END-OF-LINE`, size)})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	if took > bashOutFast {
		t.Errorf("5 MB line took %v", took)
	}
	if len(text) > 51200+2048 {
		t.Errorf("text is %d bytes; the output cap is 51,200", len(text))
	}
	m := bashOutSpillRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill path in notice:\n%s", text[:min(len(text), 600)])
	}
	spill := readFile(t, m[1])
	if want := "START" + strings.Repeat("x", size) + "END-OF-LINE"; spill != want {
		t.Errorf("spill holds %d bytes, want the whole %d-byte line", len(spill), len(want))
	}
	t.Run("tail of the output is kept", func(t *testing.T) {
		// docs/tools.md: "Final output keeps the tail: 2000 lines or 50 KB."
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
	slow(t)
	c, _, ctx := start(t, nil)
	const callID = "bashout-chatter"
	start := time.Now()
	r, _, err := bashOutCall(ctx, c, callID, map[string]any{"command": `for i in $(seq 150); do echo tick-$i; sleep 0.01; done`})
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

// bashOutCancelWhen starts a bash call and, once want processes carrying marker
// exist, cancels it; it returns when the call has returned.
func bashOutCancelWhen(t *testing.T, c *harness.Client, command, marker string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := bashOutCall(ctx, c, "", map[string]any{"command": command})
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
	slow(t)
	c, _, _ := start(t, nil)
	t.Run("exec sleep cancelled", func(t *testing.T) {
		mk := bashOutMarker()
		reapProcessesWithArg(t, mk)
		bashOutCancelWhen(t, c, "exec sleep "+mk, mk, 1)
		if !waitUntil(4*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("survivors after cancel: %v", processesWithArg(mk))
		}
	})
	t.Run("fifty background sleeps cancelled", func(t *testing.T) {
		mk := bashOutMarker()
		reapProcessesWithArg(t, mk)
		bashOutCancelWhen(t, c, `for i in $(seq 50); do sleep `+mk+` & done; wait`, mk, 50)
		if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("%d of 50 survive the cancel", len(processesWithArg(mk)))
		}
	})
	t.Run("setsid children cancelled", func(t *testing.T) {
		bashOutNeed(t, "setsid")
		mk := bashOutMarker()
		reapProcessesWithArg(t, mk)
		bashOutCancelWhen(t, c, `for i in 1 2 3; do setsid sleep `+mk+` & done; wait`, mk, 3)
		if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
			t.Errorf("%d of 3 setsid children survive the cancel", len(processesWithArg(mk)))
		}
	})
	t.Run("TERM ignored then timeout", func(t *testing.T) {
		mk := bashOutMarker()
		reapProcessesWithArg(t, mk)
		ctx := testCtx(t, 15*time.Second)
		r, took, err := bashOutCall(ctx, c, "", map[string]any{"command": `trap '' TERM; echo before-timeout; sleep ` + mk, "timeout": 1})
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
			bashOutNeed(t, tc.needs...)
			mk := bashOutMarker()
			reapProcessesWithArg(t, mk)
			c, _, ctx := startProcess(t, nil)
			r, took, err := bashOutCall(ctx, c, "", map[string]any{"command": tc.command(mk)})
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
