package e2e

import (
	"context"
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

// A long editor session must not leak: file descriptors, threads, memory,
// child processes, spill files, temp files. Everything here is measured
// from outside, through /proc. (Audit log rotation: internal/audit's
// TestRotation and TestRotationWithinSession; temp files: the soaks'
// workspace listings, TestStressCancelledOverwrites, and for a killed
// agentls TestCrashDuringWriteLeavesOldOrNew.)

// leakStart starts an initialized agentls in bypass mode on ws.
func leakStart(t *testing.T, ws string, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	ctx := testCtx(t, 100*time.Second)
	c.Initialize(ctx, map[string]any{"rootUri": fileURI(ws), "initializationOptions": bypassOptions()})
	return c, ctx
}

// leakWasCancelled: the client library returns its context's error once it
// has sent $/cancelRequest, or the server's -32800 if that came first.
func leakWasCancelled(err error) bool {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code == -32800
	}
	return errors.Is(err, context.Canceled)
}

// leakCancelled runs tools/call and cancels it once ready() holds (or
// after 5 s), and returns the call's error.
func leakCancelled(c *harness.Client, parent context.Context, name string, args any, ready func() bool) (bool, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(ctx, name, args)
		done <- err
	}()
	wasReady := waitUntil(5*time.Second, ready)
	cancel()
	select {
	case err := <-done:
		return wasReady, err
	case <-time.After(10 * time.Second):
		return wasReady, errors.New("no reply 10 s after cancel")
	}
}

// cancelledAfter is a context cancelled d after the call, as a client that
// gives up on a call does.
func cancelledAfter(ctx context.Context, d time.Duration) context.Context {
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(d, cancel)
	return cctx
}

const leakExtTool = `{"name": "leak_echo", "description": "Echo a word, for the leak audit.",
 "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}, "code": {"type": "string"}}},
 "command": "echo {{word}}; exit {{code}}", "readOnly": false, "destructive": false, "deferred": false, "timeout": 30}`

const leakExtSeq = `{"name": "leak_seq", "description": "Print numbers, for the leak audit.",
 "inputSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
 "command": "seq 1 {{n}}", "readOnly": false, "destructive": false, "deferred": false, "timeout": 30}`

const leakExtSlow = `{"name": "leak_slow", "description": "Sleep past its timeout, for the leak audit.",
 "inputSchema": {"type": "object", "properties": {"marker": {"type": "string"}}},
 "command": "(exec -a {{marker}} sleep 30)", "readOnly": false, "destructive": false, "deferred": false, "timeout": 1}`

// leakWorkspace is a workspace with small files, a binary, and extension tools.
func leakWorkspace(t *testing.T) string {
	files := map[string]string{
		".agentls/tools/echo.json": leakExtTool,
		".agentls/tools/slow.json": leakExtSlow,
		".agentls/tools/seq.json":  leakExtSeq,
		"bin.dat":                  "\x7fELF\x00\x00\x00\x01binary\x00",
	}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("src/f%02d.go", i)] = fmt.Sprintf("package src\n\n// F%d is file %d.\nfunc F%d() int { return %d }\n", i, i, i, i)
	}
	return resolvedWorkspace(t, files)
}

// TestLeakChildProcesses: no process is left after each bash or
// extension call returns, killed, timed-out and cancelled ones included,
// nor a zombie of the orphans a command leaves.
func TestLeakChildProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("soak: many cancelled and timed-out commands")
	}
	ws := leakWorkspace(t)
	marker := procMarker(t)
	c, ctx := leakStart(t, ws)
	pid := c.Process().Pid
	sl := func(tag string) string { return "(exec -a " + marker + "-" + tag + " sleep 30)" }
	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		cancel  string // marker awaited before $/cancelRequest; "" = no cancel
		wantErr bool
	}{
		{"ok", "bash", map[string]any{"command": "echo hi; " + "true"}, "", false},
		{"nonzero", "bash", map[string]any{"command": "echo x; exit 7"}, "", true},
		{"pipeline", "bash", map[string]any{"command": "seq 1 100000 | sort -r | head -1"}, "", false},
		// Orphans come back to agentls (subreaper) and are reaped when they exit.
		{"orphans", "bash", map[string]any{"command": "for i in $(seq 10); do setsid sh -c 'sleep 0.2' >/dev/null 2>&1 & (sleep 0.2 >/dev/null 2>&1 &); sh -c 'sleep 0.2 &' </dev/null >/dev/null 2>&1; done"}, "", false},
		{"timeout", "bash", map[string]any{"command": sl("to"), "timeout": 1}, "", true},
		{"timeoutIgnoresTERM", "bash", map[string]any{"command": "trap '' TERM; " + sl("term") + "; true", "timeout": 1}, "", true},
		{"timeoutGrandchild", "bash", map[string]any{"command": "bash -c '" + sl("gc") + "' & wait", "timeout": 1}, "", true},
		{"timeoutSetsid", "bash", map[string]any{"command": "setsid bash -c '" + sl("ss") + "' & wait", "timeout": 1}, "", true},
		{"cancel", "bash", map[string]any{"command": sl("cx")}, marker + "-cx", false},
		{"cancelGrandchild", "bash", map[string]any{"command": "bash -c '" + sl("cgc") + "' & wait"}, marker + "-cgc", false},
		{"cancelSetsid", "bash", map[string]any{"command": "setsid bash -c '" + sl("css") + "' & wait"}, marker + "-css", false},
		{"extension", "leak_echo", map[string]any{"word": "hi", "code": "0"}, "", false},
		{"extensionNonzero", "leak_echo", map[string]any{"word": "hi", "code": "5"}, "", true},
		{"extensionTimeout", "leak_slow", map[string]any{"marker": marker + "-ext"}, "", true},
		{"extensionCancel", "leak_slow", map[string]any{"marker": marker + "-exc"}, marker + "-exc", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cancel != "" {
				if started, err := leakCancelled(c, ctx, tc.tool, tc.args, func() bool { return len(procsWith(tc.cancel)) > 0 }); !started || !leakWasCancelled(err) {
					t.Errorf("started %v; want cancelled, got %v", started, err)
				}
			} else if strings.Contains(tc.name, "imeout") { // and says so
				wantResult(t, tc.name, c.CallTool(ctx, tc.tool, tc.args), tc.wantErr, "time")
			} else {
				wantResult(t, tc.name, c.CallTool(ctx, tc.tool, tc.args), tc.wantErr)
			}
			// Timed-out calls have killed everything before replying; a
			// cancel may reply -32800 first: 2 s grace + margin.
			wait := 200 * time.Millisecond
			if tc.cancel != "" {
				wait = 4 * time.Second
			} else if tc.name == "orphans" {
				wait = 1200 * time.Millisecond // 0.2 s sleeps
			}
			noDescendants(t, tc.name, pid, wait)
			if left := procsWith(marker); len(left) > 0 { // procMarker kills them at the end
				t.Errorf("marked processes survive: %s", fmt.Sprint(left))
			}
		})
	}
}

// TestSessionEndKillsChildrenAndRemovesSpills: however a session ends
// (shutdown+exit, EOF, SIGTERM), the command still running and the
// background children die with it, every spill file (bash, an extension
// tool, a cancelled command) is deleted and the cache dir is left empty;
// after EOF the process exits within docs/protocol.md's 1 s. Shutdown is
// the cleanup path, so it must work every time: it runs three times.
func TestSessionEndKillsChildrenAndRemovesSpills(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"shutdownExit", "shutdownExit", "shutdownExit", "eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			ws := leakWorkspace(t)
			cache, _ := filepath.EvalSymlinks(t.TempDir())
			c, ctx := leakStart(t, ws, "XDG_CACHE_HOME="+cache)
			marker := procMarker(t)
			r := c.CallTool(ctx, "bash", map[string]any{"command": "setsid bash -c '(exec -a " + marker + "-bg sleep 60)' >/dev/null 2>&1 & (exec -a " + marker + "-sub sleep 60) & seq 1 5000"})
			if len(leakSpillIn(r.Text(), cache)) == 0 { // reading one: TestSoakMixedWorkload
				t.Fatalf("no spill path under XDG_CACHE_HOME %s in: %.600s", cache, r.Text())
			}
			r = c.CallTool(ctx, "leak_seq", map[string]any{"n": "6000"})
			if len(leakSpillIn(r.Text(), cache)) == 0 {
				t.Errorf("extension output cut without a spill file under the cache dir: %.400s", r.Text())
			}
			leakCancelled(c, ctx, "bash", map[string]any{"command": "seq 1 200000; (exec -a " + marker + "-cx sleep 30)"},
				func() bool { return len(procsWith(marker+"-cx")) > 0 })
			go c.TryCallTool(ctx, "bash", map[string]any{"command": "exec -a " + marker + "-run sleep 30"}) // ends with the server
			if !waitUntil(5*time.Second, func() bool {
				return len(procsWith(marker+"-bg")) > 0 && len(procsWith(marker+"-sub")) > 0 && len(procsWith(marker+"-run")) > 0
			}) {
				t.Fatalf("commands not running: %v", procsWith(marker))
			}
			start := time.Now()
			switch how {
			case "eof":
				c.CloseStdin()
			case "sigterm":
				if err := c.Process().Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			default:
				if code := c.Shutdown(ctx); code != 0 {
					t.Errorf("exit code %d after shutdown+exit", code)
				}
			}
			if c.Wait(5*time.Second) == -1 {
				t.Fatalf("no exit 5 s after %s", how)
			}
			if el := time.Since(start); how == "eof" && el > 2*time.Second { // 1 s, and 1 s for a loaded machine
				t.Errorf("exit took %v after EOF; docs/protocol.md: within 1 s", el)
			}
			var left []proc
			if !waitUntil(4*time.Second, func() bool { left = procsWith(marker); return len(left) == 0 }) {
				t.Errorf("processes outlive the server after %s: %v", how, left)
			}
			if left := filesUnder(cache); len(left) > 0 { // where the spills were
				t.Errorf("files left under the cache dir after %s: %v", how, left)
			}
		})
	}
}

// leakSpillIn returns the spill paths in text that lie under dir.
func leakSpillIn(text, dir string) (out []string) {
	for _, m := range soakSpillRE.FindAllString(text, -1) {
		if strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	return out
}

// TestLeakSpillCaps: one spill file holds at most 64 MiB and says
// how many bytes were lost; the spill dir stays under 256 MiB, oldest
// removed first; the server's RSS stays far below the output it has seen
// (a streaming tail-keeper), and shutdown deletes the rest.
func TestLeakSpillCaps(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes ~330 MB through a pipe")
	}
	ws := leakWorkspace(t)
	cache, _ := filepath.EvalSymlinks(t.TempDir())
	c, ctx := leakStart(t, ws, "XDG_CACHE_HOME="+cache)
	const perFile, total = 64 << 20, 256 << 20
	const outBytes = 70_000_000
	var spills []string
	var maxRSS int
	for i := 0; i < 5; i++ {
		r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("yes 'leak spill line %d' | head -c %d", i, outBytes), "timeout": 120})
		ps := leakSpillIn(r.Text(), cache)
		if len(ps) == 0 {
			t.Fatalf("call %d: no spill path in: %.600s", i, r.Text())
		}
		spills = append(spills, ps[0])
		if _, err := os.Stat(ps[0]); err != nil {
			t.Fatalf("call %d: spill file: %v", i, err)
		}
		// The notice says how many bytes were not saved: what the cap
		// left out, give or take a line and the file's own trailer.
		m := leakLost.FindStringSubmatch(strings.ReplaceAll(r.Text(), ",", ""))
		if m == nil {
			t.Errorf("call %d: notice does not say how many bytes were lost: %.600s", i, r.Text())
		} else if lost, _ := strconv.Atoi(m[1]); lost < outBytes-perFile || lost > outBytes-perFile+4096 {
			t.Errorf("call %d: notice says %d bytes lost; the output was %d bytes and the cap %d", i, lost, outBytes, perFile)
		}
		_, kb := procStatus(t, c.Process().Pid)
		maxRSS = max(maxRSS, kb)
		var sum int64
		for p, n := range filesUnder(cache) {
			if sum += n; n > perFile {
				t.Errorf("call %d: spill file %s holds %d bytes, cap %d", i, p, n, perFile)
			}
		}
		if sum > total {
			t.Errorf("after call %d the cache dir holds %d bytes, cap %d", i, sum, total)
		}
	}
	if _, err := os.Stat(spills[0]); err == nil {
		t.Errorf("oldest spill file still there after %d × %d bytes: %s", len(spills), outBytes, spills[0])
	}
	if _, err := os.Stat(spills[len(spills)-1]); err != nil {
		t.Errorf("newest spill file removed: %v", err)
	}
	if maxRSS > 100*1024 {
		t.Errorf("server RSS reached %d KiB while spilling 5×%d bytes", maxRSS, outBytes)
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("exit code %d after shutdown", code)
	}
	if left := filesUnder(cache); len(left) > 0 {
		t.Errorf("files left in the cache dir after shutdown: %v", left)
	}
}

var leakLost = regexp.MustCompile(`(\d+) bytes (?:more )?(?:were )?(?:not saved|lost)`)

var leakGoroutineHdr = regexp.MustCompile(`(?m)^goroutine \d+ [^\n]*\[`)

// leakTool is tools/call, cancelled after cancelAfter (0: never).
func (r *stressRaw) leakTool(cancelAfter time.Duration, name string, args any) {
	r.t.Helper()
	r.call(cancelAfter, "tools/call", map[string]any{"name": name, "arguments": args})
}

// leakGoroutines runs work against a fresh agentls, lets it settle, sends
// SIGQUIT and counts the goroutines in the runtime's dump.
func leakGoroutines(t *testing.T, ws string, work func(r *stressRaw)) (int, string) {
	t.Helper()
	r := &stressRaw{rawClient: startRaw(t, []string{"--root", ws}, []string{"GOTRACEBACK=all"}, lenientFrames(stressDecode))}
	r.initialize(bypass())
	work(r)
	r.leakTool(0, "ls", map[string]any{})
	time.Sleep(500 * time.Millisecond) // let finished calls' goroutines wind down
	r.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-r.exited: // the dump is complete: Wait has copied stderr out
	case <-time.After(5 * time.Second):
		t.Fatal("no exit after SIGQUIT")
	}
	dump := r.stderr.String()
	return len(leakGoroutineHdr.FindAllString(dump, -1)), dump
}

// TestLeakGoroutines: cancelled and timed-out calls, callBatch and
// error paths leave no goroutine behind (counted in the runtime's SIGQUIT
// dump, against a session that did only the warm-up).
func TestLeakGoroutines(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("soak")
	}
	ws := leakWorkspace(t)
	const ms = time.Millisecond
	warm := func(r *stressRaw) {
		for _, n := range []string{"read", "grep", "bash", "leak_echo"} {
			r.leakTool(0, n, map[string]any{"path": "src/f01.go", "pattern": "F", "command": "true", "word": "w", "code": "0"})
		}
		r.leakTool(30*ms, "test_block", map[string]any{})
	}
	base, _ := leakGoroutines(t, ws, warm)
	const rounds = 40
	n, dump := leakGoroutines(t, ws, func(r *stressRaw) {
		warm(r)
		for i := range rounds {
			f := fmt.Sprintf("src/f%02d.go", i%20)
			for _, c := range []struct {
				cancel time.Duration
				name   string
				args   any
			}{
				{0, "read", map[string]any{"path": f}},
				{0, "edit", editCall(f, "nope-leak", "x")},
				{0, "edit", editCall(f, "package src", "package src ")},
				{0, "write", map[string]any{"path": fmt.Sprintf("gw/%d.txt", i), "content": "x\n"}},
				{0, "find", map[string]any{"pattern": "*.go"}},
				{0, "tool_search", map[string]any{"query": "echo"}},
				{0, "bash", map[string]any{"command": "seq 1 3000"}},
				{0, "leak_echo", map[string]any{"word": "w", "code": "3"}},
				{30 * ms, "test_block", map[string]any{}},
				{60 * ms, "bash", map[string]any{"command": "sleep 30"}},
				{60 * ms, "leak_slow", map[string]any{"marker": "leakgr"}},
				{0, "read", map[string]any{"path": "missing.txt"}},
				{0, "bash", map[string]any{"command": "exit 2"}},
				{0, "grep", map[string]any{"pattern": "F1"}},
			} {
				r.leakTool(c.cancel, c.name, c.args)
			}
			r.call(0, "tools/callBatch", map[string]any{"calls": []any{
				map[string]any{"name": "read", "arguments": map[string]any{"path": f}},
				map[string]any{"name": "bash", "arguments": map[string]any{"command": "true"}},
			}})
			r.call(40*ms, "tools/callBatch", map[string]any{"calls": []any{
				map[string]any{"name": "test_block", "arguments": map[string]any{}},
				map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 30"}},
			}})
			uri := fileURI(filepath.Join(ws, f))
			r.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "x"}})
			r.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
		}
	})
	t.Logf("goroutines: warm-up session %d, after %d rounds of cancels %d", base, rounds, n)
	if base == 0 {
		t.Fatalf("no goroutine dump on SIGQUIT: %.2000s", dump)
	}
	if n > base+rounds/2 {
		i := strings.Index(dump, "goroutine ")
		t.Errorf("goroutines grow with cancelled calls: %d after %d rounds, %d after the warm-up\n%.6000s", n, rounds, base, dump[max(i, 0):])
	}
}
