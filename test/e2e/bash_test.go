package e2e

// What the bash tool does that a script cannot watch: the processes it
// leaves behind (none; zombies: TestLeakChildProcesses), the server's memory, the notifications sent while
// a command runs, the spill file a notice names and the questions it asks.
// What the model reads is pinned by cmd/agentls/testdata/script/bash.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var bashMarkerSeq atomic.Int64

// bashMarker is a sleep duration no other process on the machine uses, so
// /proc scans find exactly the processes a test started; they are killed
// when the test ends whatever happened.
func bashMarker(t *testing.T) string {
	mk := fmt.Sprintf("%d.%04d%05d", 100+bashMarkerSeq.Add(1), os.Getpid()%10000, rand.IntN(100000))
	reapProcessesWithArg(t, mk)
	return mk
}

// Cancelled or timed out, no process a command started survives: not its
// group, not a grandchild that ignores SIGTERM (SIGKILLed after the 2 s
// grace), not one that moved to its own session. (However agentls ends,
// shutdown included: TestNoProcessOutlivesAgentlsHoweverItEnds.)
func TestBashLeavesNoProcessBehind(t *testing.T) {
	slow(t)
	c, _, ctx := start(t, nil)
	t.Run("cancel", func(t *testing.T) {
		for name, tc := range map[string]struct {
			command string
			procs   int
		}{
			"group of two":     {"sh -c 'sleep MK & sleep MK & wait'", 2},
			"exec sleep":       {"exec sleep MK", 1},
			"fifty background": {"for i in $(seq 50); do sleep MK & done; wait", 50},
			"setsid children":  {"for i in 1 2 3; do setsid sleep MK & done; wait", 3},
		} {
			t.Run(name, func(t *testing.T) {
				mk := bashMarker(t)
				callCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, err := c.TryCallTool(callCtx, "bash", map[string]any{"command": strings.ReplaceAll(tc.command, "MK", mk)})
					done <- err
				}()
				if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(mk)) >= tc.procs }) {
					t.Fatalf("only %d of %d processes started", len(processesWithArg(mk)), tc.procs)
				}
				cancel()
				if err := <-done; err == nil {
					t.Errorf("cancelled call returned a result")
				}
				if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
					t.Errorf("%d processes survive the cancel", len(processesWithArg(mk)))
				}
			})
		}
	})
	t.Run("timeout", func(t *testing.T) {
		for _, tc := range []struct {
			name, command string
			want          []string
			min           time.Duration
		}{
			{"group of two", "sh -c 'sleep MK & sleep MK & wait'", []string{"Timed out after 1s"}, 0},
			{"TERM ignored", "trap '' TERM; echo before-timeout; sleep MK", []string{"before-timeout", "SIGKILL"}, 2800 * time.Millisecond},
			{"grandchild ignores TERM", `sh -c 'trap "" TERM; sleep MK' & wait`, []string{"SIGKILL"}, 2800 * time.Millisecond},
			{"setsid grandchild", "setsid sleep MK >/dev/null 2>&1 </dev/null & sleep 30", []string{"Timed out"}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mk := bashMarker(t)
				t0 := time.Now()
				r := c.CallTool(ctx, "bash", map[string]any{"command": strings.ReplaceAll(tc.command, "MK", mk), "timeout": 1})
				took := time.Since(t0)
				wantResult(t, tc.name, r, true, tc.want...)
				if took < tc.min || took > 5*time.Second {
					t.Errorf("took %v, want %v..5s (1 s timeout, 2 s grace)", took, tc.min)
				}
				if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(mk)) == 0 }) {
					t.Errorf("survivors after the timeout: %v", processesWithArg(mk))
				}
			})
		}
	})
}

// A command printing 200 MB keeps the server's peak memory under 100 MB,
// and a notice whose spill file could not keep everything says so.
func TestBashHugeOutputKeepsServerMemoryBounded(t *testing.T) {
	slow(t)
	c, _, ctx := startProcess(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `yes "$(printf 'y%.0s' $(seq 99))" | head -c 200000000`, "timeout": 60})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process().Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if hwm, _ := strconv.Atoi(string(m[1])); hwm > 100*1024 {
		t.Errorf("server peak RSS %d MB > 100 MB", hwm/1024)
	}
	wantResult(t, "200 MB", r, false, "of 2000000")
	spill, _ := r.Details["spillPath"].(string)
	if fi, err := os.Stat(spill); err != nil {
		t.Errorf("spill file %q: %v", spill, err)
	} else if notice := r.Text()[:min(600, len(r.Text()))]; fi.Size() < 200000000 &&
		(strings.Contains(notice, "Full output") || !regexp.MustCompile(`(?i)(spill|saved)[^\n]*(cut|first|partial|incomplete|not saved)`).MatchString(notice)) {
		t.Errorf("spill file holds %d of 200000000 bytes, but the notice does not say so:\n%s", fi.Size(), notice)
	}
}

// The spill file a notice names holds the whole raw output (ANSI escapes,
// a 5 MB line, lines the byte cap cut), read opens it, and edit and write
// refuse it.
func TestBashSpillFileHoldsTheWholeOutput(t *testing.T) {
	c, ws, ctx := start(t, nil)
	xs := strings.Repeat("x", 200) + "\n"
	for _, tc := range []struct {
		name, command, spill, readLast string
	}{
		{"100000 lines with colour", `printf '\033[32mgreen\033[0m\n'; seq 100000`, "\x1b[32mgreen\x1b[0m\n" + numberedLines(100000, strconv.Itoa), "of 100001"},
		{"one 5 MB line", `printf START; head -c 5000000 /dev/zero | tr '\0' x; printf END-OF-LINE`, "START" + strings.Repeat("x", 5000000) + "END-OF-LINE", "too long to show"},
		{"cut by bytes", `yes "$(printf 'x%.0s' $(seq 200))" | head -n 1000`, strings.Repeat(xs, 1000), "of 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			r := c.CallTool(ctx, "bash", map[string]any{"command": tc.command})
			if took := time.Since(t0); took > 10*time.Second {
				t.Errorf("took %v", took)
			}
			if len(r.Text()) > 51200+2048 {
				t.Errorf("text is %d bytes; the output cap is 51,200", len(r.Text()))
			}
			spill, _ := r.Details["spillPath"].(string)
			if spill == "" || !strings.Contains(r.Text(), spill) || strings.HasPrefix(spill, ws) {
				t.Fatalf("spill path %q not in the notice or inside the workspace:\n%.500s", spill, r.Text())
			}
			if got := readFile(t, spill); got != tc.spill {
				t.Errorf("spill holds %d bytes, want the whole %d-byte output", len(got), len(tc.spill))
			}
			wantResult(t, "read spill", c.CallTool(ctx, "read", map[string]any{"path": spill, "limit": 3}), false, tc.readLast)
			if r := c.CallTool(ctx, "write", map[string]any{"path": spill, "content": "x"}); !r.IsError {
				t.Errorf("write into the spill directory succeeded: %s", r.Text())
			}
			if r := c.CallTool(ctx, "edit", editCall(spill, tc.spill[len(tc.spill)-20:], "zzzz")); !r.IsError {
				t.Errorf("edit of a spill file succeeded: %s", r.Text())
			}
		})
	}
}

// The output streams as tools/progress stamped with the callId and tool:
// promptly, in order, before the reply, at most the last 20 lines, at most
// one note per 50 ms. (Masked: TestSecretsAreMaskedInEveryOutputChannel;
// batches and generated callIds: TestInitializeProgress.)
func TestBashProgress(t *testing.T) {
	slow(t)
	c, _, ctx := start(t, nil)
	notes := func(t *testing.T, callID string, replyAt time.Time) (outs []string, at []time.Time) {
		for _, n := range c.Notes("tools/progress") {
			var p struct{ CallID, Tool, Output string }
			json.Unmarshal(n.Params, &p)
			if p.CallID != callID {
				continue
			}
			if p.Tool != "bash" || n.At.After(replyAt) {
				t.Errorf("progress of tool %q at %v, reply at %v", p.Tool, n.At, replyAt)
			}
			outs, at = append(outs, p.Output), append(at, n.At)
		}
		return outs, at
	}
	t.Run("prompt and in order", func(t *testing.T) {
		t0 := time.Now()
		_, replyAt := callWithID(t, c, ctx, "bash", "slow-loop", map[string]any{"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"})
		outs, at := notes(t, "slow-loop", replyAt)
		if len(outs) < 2 {
			t.Fatalf("%d progress notes before the reply, want several", len(outs))
		}
		if strings.Contains(outs[0], "3") || at[0].Sub(t0) > time.Second {
			t.Errorf("first progress %q after %v, want 1 promptly", outs[0], at[0].Sub(t0))
		}
		if all := strings.Join(outs, "\x00"); strings.Index(all, "1") > strings.Index(all, "3") {
			t.Errorf("1 does not come before 3: %q", all)
		}
	})
	t.Run("throttled to the last 20 lines", func(t *testing.T) {
		t0 := time.Now()
		r, replyAt := callWithID(t, c, ctx, "bash", "chatty", map[string]any{"command": "for i in $(seq 150); do echo tick-$i; sleep 0.005; done"})
		wantContains(t, "result", r.Text(), "tick-150")
		outs, _ := notes(t, "chatty", replyAt)
		for _, o := range outs {
			if k := strings.Count(strings.TrimRight(o, "\n"), "\n") + 1; k > 20 {
				t.Errorf("progress output carries %d lines, docs say the last 20", k)
			}
		}
		// Receipt times bunch up on a loaded machine, so the throttle is
		// judged by the count: one note per 50 ms of the call, plus the
		// first. Unthrottled would be one per line, 150.
		took := replyAt.Sub(t0)
		if most := int(took/(50*time.Millisecond)) + 1; len(outs) < 3 || len(outs) > most {
			t.Errorf("%d progress notes in %v, want 3..%d", len(outs), took, most)
		}
	})
}

// Labels from the parsed command, seen through tools/confirm in default
// mode: read-only commands run without asking; others ask with a preview
// saying whether they are read-only and destructive. (The classification
// of each command is pinned by internal/shell.)
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
