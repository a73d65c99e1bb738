package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/test/harness"
)

// startSandboxed starts agentls with the sandbox block (and permissions)
// in initializationOptions and a scripted confirm dialog.
func startSandboxed(t *testing.T, sandbox, permissions map[string]any, env ...string) (*harness.Client, *confirmScript, string, context.Context, map[string]any) {
	t.Helper()
	ws := t.TempDir()
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	s := &confirmScript{}
	c.OnRequest = s.handle
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	opts := map[string]any{"sandbox": sandbox}
	if permissions != nil {
		opts["permissions"] = permissions
	}
	res := c.Initialize(ctx, map[string]any{
		"initializationOptions": opts,
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	return c, s, ws, ctx, res
}

// sandboxStatus is experimental.agentls.sandbox of an initialize result.
func sandboxStatus(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	a, _ := exp["agentls"].(map[string]any)
	st, ok := a["sandbox"].(map[string]any)
	if !ok {
		t.Fatalf("initialize has no experimental.agentls.sandbox: %v", a)
	}
	return st
}

// requireSandbox skips when this kernel cannot sandbox (the unit tests
// of internal/sandbox check what is reported then).
func requireSandbox(t *testing.T, res map[string]any) {
	t.Helper()
	if st := sandboxStatus(t, res); st["active"] != true {
		t.Skipf("the sandbox cannot run here: %v", st["reason"])
	}
}

// Whether a command asks and where it runs: auto-allow lifts the question
// for a sandboxed command only; without it, under the user's ask rule, for
// an excluded command and with the sandbox unavailable, it is asked (and
// the last two run outside the sandbox).
func TestSandboxDecidesWhetherACommandAsks(t *testing.T) {
	t.Parallel()
	auto := map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true}
	for _, tc := range []struct {
		name        string
		sandbox     map[string]any
		permissions map[string]any
		unavailable bool   // AGENTLS_SANDBOX_UNAVAILABLE is set
		command     string // OUT is a directory outside the workspace
		made        string // what the command makes; "": the command is refused
		asks        int    // questions, each allowed once
		sandboxed   bool   // details.sandbox
	}{
		{"auto-allow runs a sandboxed command unasked", auto, nil, false, "echo built > made.txt && cat made.txt", "made.txt", 0, true},
		{"without auto-allow it asks", map[string]any{"enabled": true}, nil, false, "echo x > made.txt", "made.txt", 1, true},
		{"the user's ask rule asks", auto, map[string]any{"ask": []any{"Bash(touch:*)"}}, false, "touch made.txt", "", 1, true},
		{"an excluded command runs outside and asks", map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true, "excludedCommands": []any{"touch:*"}}, nil, false, "touch OUT/made.txt", "OUT/made.txt", 1, false},
		{"an unavailable sandbox falls back to asking", auto, nil, true, "touch OUT/made.txt", "OUT/made.txt", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var env []string
			if tc.unavailable {
				env = []string{"AGENTLS_SANDBOX_UNAVAILABLE=simulated: no Landlock"}
			}
			c, s, ws, ctx, res := startSandboxed(t, tc.sandbox, tc.permissions, env...)
			if st := sandboxStatus(t, res); !tc.unavailable {
				requireSandbox(t, res)
			} else if st["active"] != false || st["enabled"] != true {
				t.Fatalf("status %v", st)
			}
			if tc.made != "" {
				s.answers = []map[string]any{{"decision": "allowOnce"}}
			}
			out := t.TempDir()
			r := c.CallTool(ctx, "bash", map[string]any{"command": strings.ReplaceAll(tc.command, "OUT", out)})
			made := filepath.Join(ws, "made.txt")
			if strings.HasPrefix(tc.made, "OUT") {
				made = strings.Replace(tc.made, "OUT", out, 1)
			}
			if s.count() != tc.asks {
				t.Errorf("%d questions, want %d: %s", s.count(), tc.asks, r.Text())
			}
			switch {
			case tc.made == "" && (!r.IsError || fileExists(made)):
				t.Errorf("a rejected command ran: %s", r.Text())
			case tc.made != "" && (r.IsError || !fileExists(made) || r.Details["sandbox"] != tc.sandboxed):
				t.Errorf("want %s made, sandbox %v; got sandbox %v: %s", made, tc.sandboxed, r.Details["sandbox"], r.Text())
			}
			if reason, _ := r.Details["sandboxReason"].(string); tc.unavailable && !strings.Contains(reason, "simulated") {
				t.Errorf("details.sandboxReason = %q", reason)
			}
		})
	}
}

func TestSandboxNamesWhatItBlocked(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, s, _, ctx, res := startSandboxed(t, map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true}, nil)
	requireSandbox(t, res)

	target := filepath.Join(outside, "f")
	r := c.CallTool(ctx, "bash", map[string]any{"command": "echo x > " + target})
	want := "blocked by the sandbox: write to " + target + " is outside the workspace"
	if !r.IsError || !strings.Contains(r.Text(), want) || fileExists(target) {
		t.Fatalf("want %q in the result:\n%s", want, r.Text())
	}
	if _, ok := r.Details["sandboxBlocked"]; !ok {
		t.Errorf("details.sandboxBlocked is missing: %v", r.Details)
	}

	r = c.CallTool(ctx, "bash", map[string]any{"command": "curl -sS --max-time 5 http://" + ln.Addr().String() + "/"})
	if !r.IsError || !strings.Contains(r.Text(), "network is off in the sandbox") {
		t.Fatalf("a refused connection is not explained:\n%s", r.Text())
	}

	// A write into .agentls/ is asked about even when sandboxed (the
	// sandbox does not lift agentls's own asks); approved, the sandbox
	// still holds it.
	s.answers = []map[string]any{{"decision": "allowOnce"}}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo '{\"mode\":\"bypass\"}' > .agentls/settings.json"})
	if s.count() != 1 {
		t.Errorf("a write to .agentls was asked about %d times, want once", s.count())
	}
	if !r.IsError || !strings.Contains(r.Text(), "is read-only in the sandbox") {
		t.Fatalf("a write to .agentls is not explained:\n%s", r.Text())
	}
}

// What the sandbox blocked is told within the result's budget: a command
// whose output fills the budget before the blocked write still ends with
// the note, and the whole result keeps to bash's stated bytes and lines.
func TestSandboxBlockedNoteFitsTheBudgetAfterLongOutput(t *testing.T) {
	t.Parallel()
	c, _, _, ctx, res := startSandboxed(t, map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true}, nil)
	requireSandbox(t, res)
	target := filepath.Join(t.TempDir(), "f")
	r := c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 40000; echo x > " + target})
	text := r.Text()
	want := "blocked by the sandbox: write to " + target + " is outside the workspace"
	if !r.IsError || !strings.Contains(text, want) {
		t.Fatalf("the blocked note is missing after long output (want %q):\n…%s", want, text[max(0, len(text)-600):])
	}
	if !strings.Contains(text, "[Output cut: showing lines") {
		t.Fatalf("the output was not cut, so the budget was not tested:\n%s", text[:min(len(text), 400)])
	}
	if n, lines := len(text), strings.Count(text, "\n")+1; n > tools.BashTailBytes || lines > tools.BashTailLines {
		t.Errorf("the result is %d bytes and %d lines, over bash's budget of %d bytes / %d lines", n, lines, tools.BashTailBytes, tools.BashTailLines)
	}
}

// With allowedDomains every command gets a forwarder to the proxy; it
// ends with the command instead of staying, adopted by agentls, until the
// session ends (one process per command, before the fix).
func TestSandboxProxyForwarderEndsWithEachCommand(t *testing.T) {
	t.Parallel()
	c, _, _, ctx, res := startSandboxed(t, map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true, "network": map[string]any{"allowedDomains": []any{"localhost"}}}, nil)
	requireSandbox(t, res)
	for _, command := range []string{"true", "sleep 0.2; echo done", "curl -sS --max-time 2 http://example.org/ || true"} {
		if r := c.CallTool(ctx, "bash", map[string]any{"command": command}); r.IsError {
			t.Fatalf("%q: %s", command, r.Text())
		}
	}
	agentls := c.Process().Pid
	left := func() (n int) {
		for _, pid := range processesWithArg("__sandbox-forward") {
			if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil && strings.Contains(string(status), fmt.Sprintf("\nPPid:\t%d\n", agentls)) {
				n++
			}
		}
		return n
	}
	if !waitUntil(5*time.Second, func() bool { return left() == 0 }) {
		t.Errorf("%d proxy forwarder(s) outlived their commands, adopted by agentls", left())
	}
}

func TestSandboxUnavailableWithFailIfUnavailableRefusesEveryCommand(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx, res := startSandboxed(t, map[string]any{"enabled": true, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true}, nil,
		"AGENTLS_SANDBOX_UNAVAILABLE=simulated: no Landlock")
	st := sandboxStatus(t, res)
	if st["active"] != false || !strings.Contains(st["reason"].(string), "simulated: no Landlock") {
		t.Fatalf("initialize does not say the sandbox is off and why: %v", st)
	}
	for _, cmd := range []string{"touch made.txt", "ls"} {
		r := c.CallTool(ctx, "bash", map[string]any{"command": cmd})
		if !r.IsError || !strings.Contains(r.Text(), "simulated: no Landlock") || !strings.Contains(r.Text(), "failIfUnavailable") {
			t.Fatalf("%s: not refused with the reason:\n%s", cmd, r.Text())
		}
	}
	if fileExists(filepath.Join(ws, "made.txt")) || s.count() != 0 {
		t.Fatalf("a refused command ran or asked")
	}
}

func TestBrokenSandboxSettingKeepsTheSandboxOn(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"sandbox": {"enabled": "yes", "autoAllowBashIfSandboxed": true}}`})
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_SANDBOX_UNAVAILABLE=simulated"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := c.Initialize(ctx, map[string]any{})
	st := sandboxStatus(t, res)
	if st["enabled"] != true || st["failIfUnavailable"] != true {
		t.Fatalf("a broken sandbox block must leave the sandbox on and failing closed: %v", st)
	}
	r := c.CallTool(ctx, "bash", map[string]any{"command": "ls"})
	if !r.IsError || !strings.Contains(r.Text(), "failIfUnavailable") {
		t.Fatalf("bash ran unsandboxed under a broken sandbox setting:\n%s", r.Text())
	}
}

func fileExists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A background job is confined exactly as a foreground command: the
// sandbox's auto-allow must not start an unconfined job.
func TestSandboxConfinesBackgroundJobs(t *testing.T) {
	slow(t)
	t.Parallel()
	outside := t.TempDir()
	c, s, ws, ctx, res := startSandboxed(t, map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true}, nil)
	requireSandbox(t, res)
	target := filepath.Join(outside, "escaped.txt")
	r := c.CallTool(ctx, "bash", map[string]any{"command": "echo in > inside.txt; sleep 0.2; echo out > " + target + "; sleep 30", "run_in_background": true})
	if s.count() != 0 {
		t.Fatalf("a sandboxed background command asked (%d questions): %s", s.count(), r.Text())
	}
	if r.Details["sandbox"] != true {
		t.Errorf("details.sandbox of the job's start = %v, want true: %s", r.Details["sandbox"], r.Text())
	}
	job, _ := r.Details["job"].(string)
	if job == "" {
		t.Fatalf("no job started: %s", r.Text())
	}
	defer c.CallTool(ctx, "bash_kill", map[string]any{"job": job})
	deadline := time.Now().Add(10 * time.Second)
	for !fileExists(filepath.Join(ws, "inside.txt")) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if fileExists(target) {
		t.Fatalf("a background job wrote outside the workspace (%s): it ran unconfined", target)
	}
	if !fileExists(filepath.Join(ws, "inside.txt")) {
		t.Fatalf("the background job did not write in the workspace")
	}
}
