package builtin

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/spill"
	"github.com/agentls/agentls/internal/tools"
)

// newJobExecutor is a test executor with the job tools, a job table and a
// spill directory the read tool can open.
func newJobExecutor(t *testing.T, l tools.Limits) *tools.Executor {
	t.Helper()
	x, dir := newLimitedExecutor(t, map[string][]byte{"a.txt": []byte("a\n")}, l)
	l = l.WithDefaults()
	sp, err := spill.OpenIn(t.TempDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	if err := x.Env.FS.AddReadOnlyRoot(sp.Path()); err != nil {
		t.Fatal(err)
	}
	x.Env.SpillDir = sp
	// A short first wait, so output a test prints after it is not already
	// returned by the starting call.
	x.Env.Jobs = jobs.New(jobs.Options{Lines: l.BashLines, Bytes: l.BashBytes, Spill: sp, EarlyWait: 100 * time.Millisecond})
	t.Cleanup(x.Env.Jobs.Close)
	x.Registry.MustRegister(JobTools(l)...)
	return x
}

func startBackground(t *testing.T, x *tools.Executor, command string) (tools.Result, string) {
	t.Helper()
	r := call(t, x, "bash", jsonArgs(t, map[string]any{"command": command, "run_in_background": true}))
	id, _ := r.Details["job"].(string)
	if id == "" {
		t.Fatalf("no job id in the details: %s %v", r.TextOf(), r.Details)
	}
	return r, id
}

func TestBackgroundStartReturnsTheJobIdAndTheOutputSoFar(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	began := time.Now()
	r, id := startBackground(t, x, "echo listening; sleep 30")
	took := time.Since(began)
	text := r.TextOf()
	if r.IsError || id != "job-1" || !strings.Contains(text, "listening\n") || !strings.Contains(text, `bash_output {"job": "job-1"}`) || !strings.Contains(text, `bash_kill {"job": "job-1"}`) {
		t.Fatalf("%s", text)
	}
	if r.Details["status"] != "running" || took > 3*time.Second {
		t.Errorf("status %v after %s", r.Details["status"], took)
	}
	// The output so far was read: nothing new now.
	if o := call(t, x, "bash_output", `{"job":"job-1"}`); !strings.Contains(o.TextOf(), "No new output since the last read") || !strings.Contains(o.TextOf(), "job-1: running for") {
		t.Errorf("%s", o.TextOf())
	}
}

func TestABackgroundCommandThatFailsAtOnceFailsTheStartingCall(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	// The real first wait: a loaded machine may take longer than the
	// short one to start and end even `false`.
	x.Env.Jobs.Close()
	x.Env.Jobs = jobs.New(jobs.Options{Lines: tools.DefaultLimits().BashLines, Bytes: tools.DefaultLimits().BashBytes, Spill: x.Env.SpillDir})
	t.Cleanup(x.Env.Jobs.Close)
	for _, c := range []struct{ command, want string }{
		{"false", "exited 1"},
		{"no-such-program-agentls-test", "exited 127"},
		{"echo about to fail >&2; exit 3", "exited 3"},
	} {
		began := time.Now()
		r, _ := startBackground(t, x, c.command)
		if !r.IsError || !strings.Contains(r.TextOf(), c.want) || !strings.Contains(r.TextOf(), "ended within its first 1 s") {
			t.Errorf("%s: %v %s", c.command, r.IsError, r.TextOf())
		}
		if d := time.Since(began); d >= time.Second+500*time.Millisecond {
			t.Errorf("%s: the start took %s for an immediate failure", c.command, d)
		}
	}
	r, _ := startBackground(t, x, "no-such-program-agentls-test")
	if !strings.Contains(r.TextOf(), "not found") {
		t.Errorf("the shell's message is not shown: %s", r.TextOf())
	}
	// A command nothing can start is refused the foreground's way.
	r = call(t, x, "bash", `{"command":"a\u0000b","run_in_background":true}`)
	if !r.IsError || !strings.Contains(r.TextOf(), "nothing was run") {
		t.Errorf("NUL: %s", r.TextOf())
	}
}

func TestBashOutputWaitReturnsSoonAfterNewOutput(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	// Each line carries when it was printed (ns since the epoch).
	startBackground(t, x, "for i in 1 2 3 4 5; do sleep 0.3; date +%s%N; done; sleep 30")
	var lats []time.Duration
	for range 5 {
		r := call(t, x, "bash_output", `{"job":"job-1","wait":10}`)
		back := time.Now()
		line := strings.SplitN(r.TextOf(), "\n", 2)[0]
		ns, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("%v: %s", err, r.TextOf())
		}
		lats = append(lats, back.Sub(time.Unix(0, ns)))
	}
	t.Logf("from a line printed to bash_output returning: %v", lats)
	best := lats[0]
	for _, l := range lats {
		best = min(best, l)
		if l > time.Second {
			t.Errorf("a wait returned %s after the line was printed", l)
		}
	}
	if best > 100*time.Millisecond {
		t.Errorf("the quickest wait returned %s after its line, want within 100ms", best)
	}
}

func TestBashOutputFilterStatesWhatItDropped(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	startBackground(t, x, "sleep 0.2; printf 'GET /a\\nnoise\\nGET /b\\nnoise\\nnoise\\n'; sleep 30")
	r := call(t, x, "bash_output", `{"job":"job-1","wait":5,"filter":"^GET"}`)
	text := r.TextOf()
	if !strings.HasPrefix(text, "GET /a\nGET /b\n") || !strings.Contains(text, `Filter "^GET": 2 of 5 new lines (1-5) shown, 3 did not match`) {
		t.Fatalf("%s", text)
	}
	if r := call(t, x, "bash_output", `{"job":"job-1","filter":"(oops"}`); !r.IsError || !strings.Contains(r.TextOf(), "not a valid regular expression") {
		t.Errorf("bad filter: %s", r.TextOf())
	}
}

func TestJobOutputPastTheRingIsInAReadableSpillFile(t *testing.T) {
	l := tools.DefaultLimits()
	l.BashLines = 50
	x := newJobExecutor(t, l)
	startBackground(t, x, "sleep 0.2; seq 1 200; sleep 30")
	r := call(t, x, "bash_output", `{"job":"job-1","wait":5,"filter":"^200$"}`)
	text := r.TextOf()
	path, _ := r.Details["spillPath"].(string)
	if path == "" || !strings.Contains(text, "Lines 1-150 of the new output are no longer in memory (a job keeps its last 50 lines") {
		t.Fatalf("%s %v", text, r.Details)
	}
	want := fmt.Sprintf(`read {"path": %q, "offset": 1}`, path)
	if !strings.Contains(text, want) {
		t.Fatalf("no read hint %s in %s", want, text)
	}
	got := call(t, x, "read", fmt.Sprintf(`{"path":%q,"offset":120,"limit":2}`, path))
	if got.IsError || !strings.Contains(got.TextOf(), "120→120") || !strings.Contains(got.TextOf(), "121→121") {
		t.Fatalf("spill file read: %s", got.TextOf())
	}
}

func TestBashKillStatesTheFinalStatusAndTheLastLines(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	startBackground(t, x, "seq 1 30; sleep 30")
	r := call(t, x, "bash_kill", `{"job":"job-1"}`)
	text := r.TextOf()
	if r.IsError || !strings.Contains(text, "Last lines (11-30):\n11\n") || !strings.Contains(text, "job-1 stopped: killed by SIGTERM after") || r.Details["status"] != "killed by SIGTERM" {
		t.Fatalf("%s %v", text, r.Details)
	}
	r = call(t, x, "bash_kill", `{"job":"job-1"}`)
	if !strings.Contains(r.TextOf(), "had already ended: killed by SIGTERM") {
		t.Errorf("second kill: %s", r.TextOf())
	}
	if r := call(t, x, "bash_output", `{"job":"job-9"}`); !r.IsError || !strings.Contains(r.TextOf(), "known jobs: job-1") {
		t.Errorf("unknown job: %s", r.TextOf())
	}
}

func TestTheNinthBackgroundJobIsRefused(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	for range jobs.MaxRunning {
		if r := call(t, x, "bash", `{"command":"sleep 30","run_in_background":true}`); r.IsError {
			t.Fatal(r.TextOf())
		}
	}
	r := call(t, x, "bash", `{"command":"sleep 31","run_in_background":true}`)
	if !r.IsError || !strings.Contains(r.TextOf(), "8 background jobs are running") || !strings.Contains(r.TextOf(), "job-8 (running") || !strings.Contains(r.TextOf(), "nothing was started") {
		t.Fatalf("%s", r.TextOf())
	}
}

func TestABackgroundJobTimesOutOnlyWhenGiven(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	startBackground(t, x, "sleep 0.1; echo tick; sleep 30")
	r := call(t, x, "bash", `{"command":"sleep 30","run_in_background":true,"timeout":1}`)
	if r.IsError {
		t.Fatal(r.TextOf())
	}
	o := call(t, x, "bash_output", `{"job":"job-2","wait":10}`)
	if !strings.Contains(o.TextOf(), "timed out, killed by SIGTERM") {
		t.Errorf("job with timeout 1: %s", o.TextOf())
	}
	if o := call(t, x, "bash_output", `{"job":"job-1"}`); !strings.Contains(o.TextOf(), "running") {
		t.Errorf("job without a timeout: %s", o.TextOf())
	}
}

// The port a background server listens on is reachable from a foreground
// command, and free after bash_kill.
func TestABackgroundServerServesForegroundCommandsUntilKilled(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	started, _ := startBackground(t, x, fmt.Sprintf("exec python3 -u -m http.server %d --bind 127.0.0.1", port))
	if !strings.Contains(started.TextOf(), "Serving HTTP") {
		if r := call(t, x, "bash_output", `{"job":"job-1","wait":10,"filter":"Serving HTTP"}`); !strings.Contains(r.TextOf(), "Serving HTTP") {
			t.Fatalf("server did not start: %s", r.TextOf())
		}
	}
	fetch := call(t, x, "bash", fmt.Sprintf(`{"command":"python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:%d/a.txt').read().decode())\""}`, port))
	if fetch.IsError || !strings.HasPrefix(fetch.TextOf(), "a") {
		t.Fatalf("fetch: %s", fetch.TextOf())
	}
	if r := call(t, x, "bash_output", `{"job":"job-1","wait":10,"filter":"GET /a.txt"}`); !regexp.MustCompile(`"GET /a\.txt HTTP/1\.1" 200`).MatchString(r.TextOf()) {
		t.Fatalf("no request log line: %s", r.TextOf())
	}
	if r := call(t, x, "bash_kill", `{"job":"job-1"}`); !strings.Contains(r.TextOf(), "killed by SIGTERM") {
		t.Fatalf("kill: %s", r.TextOf())
	}
	ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d still taken after bash_kill: %v", port, err)
	}
	ln.Close()
}

func TestBashOutputReportsProgressWhileItWaits(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	startBackground(t, x, "sleep 0.2; echo one; sleep 0.2; echo two; sleep 30")
	rec := &progressRecorder{}
	r := x.Call(context.Background(), tools.Request{Name: "bash_output", Arguments: []byte(`{"job":"job-1","wait":5,"filter":"two"}`)}, func(string, string) tools.Reporter { return rec })
	if !strings.Contains(r.TextOf(), "two") {
		t.Fatal(r.TextOf())
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) == 0 || rec.got[0].Output != "one" || !strings.Contains(rec.got[0].Message, "job-1") {
		t.Errorf("progress while waiting: %+v", rec.got)
	}
}

type progressRecorder struct {
	mu  sync.Mutex
	got []tools.Progress
}

func (p *progressRecorder) Progress(pr tools.Progress) {
	p.mu.Lock()
	p.got = append(p.got, pr)
	p.mu.Unlock()
}

func (p *progressRecorder) Details(map[string]any) {}

func TestBashOutputRefusesAWaitPastItsMaximum(t *testing.T) {
	x := newJobExecutor(t, tools.DefaultLimits())
	startBackground(t, x, "sleep 30")
	r := call(t, x, "bash_output", fmt.Sprintf(`{"job":"job-1","wait":%d}`, BashOutputMaxWait+1))
	if !r.IsError || !strings.Contains(r.TextOf(), "must be ≤ 30") {
		t.Fatalf("%s", r.TextOf())
	}
}
