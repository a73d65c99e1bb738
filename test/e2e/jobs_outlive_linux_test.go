package e2e

// No background job outlives its session, however the session ends: the
// end of input, shutdown, SIGTERM to agentls, and a client killed with
// SIGKILL (agentls then sees its input end with nobody to answer). Each
// job double-forks a sleeper and setsids another, so neither the process
// group nor the parent chain leads back to the job.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// jobOutliveRuns is the runs of each way of ending the session: 100 in all.
const jobOutliveRuns = 25

func jobSleeperCommand(marker string) string {
	return fmt.Sprintf(`export LEAK_MARK=%s; (sleep 60 &) ; (setsid sh -c 'sleep 60 & sleep 60' &) ; echo started; exec sleep 60`, marker)
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

func TestNoBackgroundJobOutlivesItsSession(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and ends agentls many times, each ending waits out a kill grace")
	}
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed for the client that is killed")
	}
	script := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(script, []byte(jobClient), 0o644); err != nil {
		t.Fatal(err)
	}
	ends := []struct {
		name string
		run  func(t *testing.T, ws, marker string) string
	}{
		{"EOF", harnessEnd(func(ctx context.Context, c *harness.Client) { c.CloseStdin() })},
		{"shutdown", harnessEnd(func(ctx context.Context, c *harness.Client) {
			c.Call(ctx, "shutdown", nil, nil)
			c.Conn.Notify(ctx, "exit", nil)
		})},
		{"SIGTERM", harnessEnd(func(ctx context.Context, c *harness.Client) { c.Process().Signal(syscall.SIGTERM) })},
		{"client SIGKILL", func(t *testing.T, ws, marker string) string { return killedClientRun(t, ws, script, marker) }},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			var mu sync.Mutex
			var left []string
			var wg sync.WaitGroup
			for i := range jobOutliveRuns {
				marker := fmt.Sprintf("jobs-outlive-%s-%d-%d", strings.ReplaceAll(end.name, " ", "-"), os.Getpid(), i)
				t.Cleanup(func() {
					for _, pid := range markedProcesses(marker) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				wg.Go(func() {
					if msg := end.run(t, ws, marker); msg != "" {
						mu.Lock()
						left = append(left, msg)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(left) > 0 {
				t.Errorf("%d of %d runs left processes behind:\n%s", len(left), jobOutliveRuns, strings.Join(left, "\n"))
			}
		})
	}
}

// harnessEnd is a run that starts the job through the harness and ends
// the session with end.
func harnessEnd(end func(ctx context.Context, c *harness.Client)) func(t *testing.T, ws, marker string) string {
	return func(t *testing.T, ws, marker string) string {
		c := harness.Start(t, harness.Options{Root: ws, Process: true})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()}, nil); err != nil {
			return marker + ": initialize: " + err.Error()
		}
		_ = c.Conn.Notify(ctx, "initialized", map[string]any{})
		r, err := c.TryCallTool(ctx, "bash", map[string]any{"command": jobSleeperCommand(marker), "run_in_background": true})
		// Only the status: on a busy machine the reply can come before the
		// job's "started" reaches its output; sleepersUp checks the processes.
		if err != nil || r.Details["status"] != "running" {
			return fmt.Sprintf("%s: start: %v %s", marker, err, r.Text())
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
}

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
