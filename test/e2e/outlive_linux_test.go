package e2e

// No process a command or a background job started outlives agentls,
// however agentls ends: SIGKILL, SIGTERM, the end of its input, shutdown,
// a client that SIGKILLs it shortly after closing its input, and a client
// killed with SIGKILL (agentls then sees its input end with nobody to
// answer). The commands leave children that double-fork and setsid, so
// neither the process group nor the parent chain leads back to them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// outliveRuns is how many runs, all at once, each way of ending gets per
// kind of command.
const outliveRuns = 25

// leftBehindCommand leaves processes carrying marker in their
// environment: a stopped background child, a double fork, and a setsid
// double fork that ignores SIGTERM (so stopping it takes the whole grace
// and SIGKILL, and a client's kill lands while agentls is still at it).
func leftBehindCommand(marker string) string {
	return fmt.Sprintf(`export LEAK_MARK=%s; sleep 60 & kill -STOP $! ; (sleep 60 &) ; (setsid sh -c 'trap "" TERM; sleep 60 & sleep 60; :' &) ; sleep 0.05; echo started`, marker)
}

// jobSleeperCommand is a background job that double-forks a sleeper and
// setsids another.
func jobSleeperCommand(marker string) string {
	return fmt.Sprintf(`export LEAK_MARK=%s; (sleep 60 &) ; (setsid sh -c 'sleep 60 & sleep 60' &) ; echo started; exec sleep 60`, marker)
}

// killMarkedAtEnd returns marker, and kills what carries it when the test
// ends (a finding the test reports must not outlive it).
func killMarkedAtEnd(t *testing.T, marker string) string {
	t.Cleanup(func() {
		for _, pid := range markedProcesses(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return marker
}

// markedProcesses lists live pids whose environment holds LEAK_MARK=marker.
func markedProcesses(marker string) []int {
	want := []byte("LEAK_MARK=" + marker + "\x00")
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		var pid int
		fmt.Sscan(filepath.Base(d), &pid)
		out = append(out, pid)
	}
	return out
}

func TestNoProcessOutlivesAgentlsHoweverItEnds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and ends agentls ~300 times, each ending waits out a kill grace")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed for the client that is killed")
	}
	script := filepath.Join(t.TempDir(), "client.py")
	writeFile(t, script, jobClient)
	ends := []struct {
		name string
		end  func(ctx context.Context, c *harness.Client)
	}{
		{"SIGKILL", func(_ context.Context, c *harness.Client) { c.Process().Signal(syscall.SIGKILL) }},
		{"SIGTERM", func(_ context.Context, c *harness.Client) { c.Process().Signal(syscall.SIGTERM) }},
		{"EOF", func(_ context.Context, c *harness.Client) { c.CloseStdin() }},
		{"shutdown", func(ctx context.Context, c *harness.Client) {
			c.Call(ctx, "shutdown", nil, nil)
			c.Conn.Notify(ctx, "exit", nil)
		}},
		// The client gives agentls a moment to exit, then kills it while
		// it may still be stopping what it started.
		{"kill-after-close", func(_ context.Context, c *harness.Client) {
			c.CloseStdin()
			select {
			case <-c.Exited():
			case <-time.After(500 * time.Millisecond):
				c.Process().Signal(syscall.SIGKILL)
			}
		}},
	}
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	runs := map[string]func(t *testing.T, marker string) string{
		"job/client SIGKILL": func(t *testing.T, m string) string { return killedClientRun(t, ws, script, m) },
	}
	for _, e := range ends {
		runs["command/"+e.name] = func(t *testing.T, m string) string { return outliveRun(t, ws, m, false, e.end) }
		runs["job/"+e.name] = func(t *testing.T, m string) string { return outliveRun(t, ws, m, true, e.end) }
	}
	for _, name := range slices.Sorted(maps.Keys(runs)) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var left []string
			var wg sync.WaitGroup
			for i := range outliveRuns {
				marker := killMarkedAtEnd(t, fmt.Sprintf("outlive-%s-%d-%d", strings.NewReplacer("/", "-", " ", "-").Replace(name), os.Getpid(), i))
				wg.Go(func() {
					if msg := runs[name](t, marker); msg != "" {
						mu.Lock()
						left = append(left, msg)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(left) > 0 {
				t.Errorf("%d of %d runs left processes behind:\n%s", len(left), outliveRuns, strings.Join(left, "\n"))
			}
		})
	}
}

// outliveRun starts agentls, runs the command (in the background when
// background is set), ends agentls with end and returns "" when no marked
// process is left, else what is left.
func outliveRun(t *testing.T, ws, marker string, background bool, end func(context.Context, *harness.Client)) string {
	c := harness.Start(t, harness.Options{Root: ws, Process: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()}, nil); err != nil {
		return marker + ": initialize: " + err.Error()
	}
	_ = c.Conn.Notify(ctx, "initialized", map[string]any{})
	if background {
		r, err := c.TryCallTool(ctx, "bash", map[string]any{"command": jobSleeperCommand(marker), "run_in_background": true})
		// Only the status: on a busy machine the reply can come before the
		// job's "started" reaches its output; sleepersUp checks the processes.
		if err != nil || r.Details["status"] != "running" {
			return fmt.Sprintf("%s: start: %v %s", marker, err, r.Text())
		}
	} else if r, err := c.TryCallTool(ctx, "bash", map[string]any{"command": leftBehindCommand(marker)}); err != nil || !strings.Contains(r.Text(), "started") {
		return fmt.Sprintf("%s: bash: %v %s", marker, err, r.Text())
	}
	if msg := sleepersUp(marker); msg != "" {
		return msg
	}
	end(ctx, c)
	select {
	case <-c.Exited():
	case <-time.After(10 * time.Second):
		return marker + ": agentls did not exit"
	}
	return leftAfter(marker)
}

// jobClient is a client process (python3) that starts agentls, starts
// the job, prints the bash result and agentls's pid, and sleeps until it
// is killed.
const jobClient = `
import json, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:3], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    b = json.dumps(m).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
    p.stdin.flush()
def reply(i):
    while True:
        h = b""
        while not h.endswith(b"\r\n\r\n"):
            c = p.stdout.read(1)
            if not c:
                sys.exit("agentls closed its output")
            h += c
        n = [int(l.split(b":")[1]) for l in h.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
        m = json.loads(p.stdout.read(n))
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "initializationOptions": {"mode": "bypass"}}})
reply(1)
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": sys.argv[3], "run_in_background": True}}})
print(json.dumps({"pid": p.pid, "reply": reply(2)}), flush=True)
time.sleep(600)
`

// killedClientRun starts agentls under a python3 client, has the client
// start the job, SIGKILLs the client and waits for agentls to end.
func killedClientRun(t *testing.T, ws, script, marker string) string {
	cmd := exec.Command("python3", script, harness.Binary(t), "--root="+ws, jobSleeperCommand(marker))
	cmd.Env = append(os.Environ(), "AGENTLS_TEST_TOOLS=1", "AGENTLS_AUDIT_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return marker + ": " + err.Error()
	}
	if err := cmd.Start(); err != nil {
		return marker + ": client: " + err.Error()
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var first struct {
		Pid   int
		Reply struct {
			Result struct {
				Details map[string]any `json:"details"`
			} `json:"result"`
		}
	}
	if err := json.NewDecoder(out).Decode(&first); err != nil || first.Reply.Result.Details["status"] != "running" {
		return fmt.Sprintf("%s: client's start: %v %+v", marker, err, first)
	}
	if msg := sleepersUp(marker); msg != "" {
		return msg
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if !waitUntil(10*time.Second, func() bool { return !processLive(first.Pid) }) {
		return fmt.Sprintf("%s: agentls %d did not exit after its client was killed", marker, first.Pid)
	}
	return leftAfter(marker)
}

// sleepersUp waits for the job's four marked processes (the job, the
// double-forked sleeper, the setsid shell and its sleeper).
func sleepersUp(marker string) string {
	if !waitUntil(5*time.Second, func() bool { return len(markedProcesses(marker)) >= 4 }) {
		return fmt.Sprintf("%s: %d marked processes before the end, want 4", marker, len(markedProcesses(marker)))
	}
	return ""
}

// leftAfter checks with ps that no marked process is left once agentls
// has ended (room for the watchdog's kill phase on a loaded machine).
func leftAfter(marker string) string {
	var pids []int
	waitUntil(6*time.Second, func() bool { pids = markedProcesses(marker); return len(pids) == 0 })
	if len(pids) > 0 {
		return fmt.Sprintf("%s: left running: %v", marker, pids)
	}
	// ps agrees: no process started with the marker's command is listed.
	ps, err := exec.Command("ps", "-eo", "pid=,stat=,args=").Output()
	if err != nil {
		return marker + ": ps: " + err.Error()
	}
	for _, line := range strings.Split(string(ps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && !strings.HasPrefix(f[1], "Z") && strings.Contains(line, "LEAK_MARK="+marker+";") {
			return fmt.Sprintf("%s: ps lists %s", marker, line)
		}
	}
	return ""
}

// processLive reports a process that exists and is not a zombie.
func processLive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// exitBound is what the end of input may cost agentls: 1 s for calls to
// wind down plus one kill grace (2 s) for everything commands left, in
// one phase, plus 1.5 s for SIGKILL and a loaded machine.
const exitBound = 4500 * time.Millisecond

// A stopped child (which never acted on SIGTERM without SIGCONT) and an
// adopted daemon that ignores SIGTERM used to cost a grace each, one after
// the other, after the running call's (which ignores SIGTERM too): 6.2 s
// to exit.
func TestExitAfterEndOfInputTakesOneKillGrace(t *testing.T) {
	slow(t)
	marker := killMarkedAtEnd(t, fmt.Sprintf("exit-time-%d", os.Getpid()))
	c, _, ctx := startProcess(t, map[string]string{"a.txt": "a\n"})
	wantResult(t, "bash", c.CallTool(ctx, "bash", map[string]any{"command": leftBehindCommand(marker)}), false, "started")
	var wg sync.WaitGroup
	wg.Go(func() { // a call still running at the end
		c.TryCallTool(ctx, "bash", map[string]any{"command": "export LEAK_MARK=" + marker + "; trap '' TERM; sleep 60; :"})
	})
	waitUntil(5*time.Second, func() bool { return len(markedProcesses(marker)) >= 5 })
	began := time.Now()
	c.CloseStdin()
	if c.Wait(10*time.Second) < 0 {
		t.Fatal("agentls did not exit after the end of its input")
	}
	took := time.Since(began)
	t.Logf("exit took %v", took)
	if took > exitBound {
		t.Errorf("exit after the end of input took %v, more than %v", took, exitBound)
	}
	if left := markedProcesses(marker); len(left) > 0 {
		t.Errorf("left running after exit: %v", left)
	}
	wg.Wait()
}
