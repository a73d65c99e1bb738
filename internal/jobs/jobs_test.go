package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/spill"
)

// fake is a command the test drives: lines it is told to print, an end.
type fake struct {
	lines chan string
	acks  chan struct{}
	end   chan proc.Result
}

func newFake() *fake {
	return &fake{lines: make(chan string), acks: make(chan struct{}), end: make(chan proc.Result, 1)}
}

func (f *fake) exec(ctx context.Context, spec proc.Spec) (proc.Result, error) {
	for {
		select {
		case l := <-f.lines:
			spec.OnLine(l)
			f.acks <- struct{}{}
		case r := <-f.end:
			return r, nil
		case <-ctx.Done():
			return proc.Result{ExitCode: -1, Cancelled: true, KilledHow: proc.KilledSIGTERM}, nil
		}
	}
}

// print has the command print lines; they are in the job when it returns.
func (f *fake) print(lines ...string) {
	for _, l := range lines {
		f.lines <- l
		<-f.acks
	}
}

func quickTable(t *testing.T, o Options) *Table {
	t.Helper()
	if o.EarlyWait == 0 {
		o.EarlyWait = time.Millisecond
	}
	tb := New(o)
	t.Cleanup(tb.Close)
	return tb
}

func start(t *testing.T, tb *Table, f *fake, command string) *Job {
	t.Helper()
	j, err := tb.Start(proc.Spec{Command: command}, f.exec, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestStartReportsAnEarlyEndAtOnce(t *testing.T) {
	tb := New(Options{}) // the real EarlyWait
	defer tb.Close()
	f := newFake()
	f.end <- proc.Result{ExitCode: 1}
	began := time.Now()
	j, err := tb.Start(proc.Spec{Command: "false"}, f.exec, "c")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d >= EarlyWait {
		t.Errorf("Start took %s for a command that ended at once", d)
	}
	if got := j.Status(); got != "exited 1" || !j.Failed() {
		t.Errorf("status %q failed=%v, want exited 1, failed", got, j.Failed())
	}
}

func TestStartWaitsEarlyWaitForARunningCommand(t *testing.T) {
	tb := New(Options{})
	defer tb.Close()
	f := newFake()
	began := time.Now()
	j, err := tb.Start(proc.Spec{Command: "sleep"}, f.exec, "c")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d < EarlyWait || d > EarlyWait+time.Second {
		t.Errorf("Start returned after %s, want about %s", d, EarlyWait)
	}
	if j.Status() != "running" || j.ID != "job-1" {
		t.Errorf("%s %q", j.ID, j.Status())
	}
}

func TestStartFailureIsTheJobsStatus(t *testing.T) {
	tb := quickTable(t, Options{})
	j, err := tb.Start(proc.Spec{Command: "x"}, func(context.Context, proc.Spec) (proc.Result, error) {
		return proc.Result{}, errors.New("no shell")
	}, "c")
	if err != nil {
		t.Fatal(err)
	}
	<-j.Done()
	if j.StartError() == nil || j.Status() != "failed to start: no shell" || !j.Failed() {
		t.Errorf("%v %q", j.StartError(), j.Status())
	}
}

func TestTheNinthRunningJobIsRefusedWithTheRunningOnes(t *testing.T) {
	tb := quickTable(t, Options{})
	for i := range MaxRunning {
		start(t, tb, newFake(), fmt.Sprintf("server %d", i+1))
	}
	_, err := tb.Start(proc.Spec{Command: "one too many"}, newFake().exec, "c")
	var tooMany *TooManyError
	if !errors.As(err, &tooMany) || len(tooMany.Running) != MaxRunning {
		t.Fatalf("9th start: %v", err)
	}
	for i := range MaxRunning {
		if !strings.Contains(err.Error(), fmt.Sprintf("job-%d (running", i+1)) || !strings.Contains(err.Error(), fmt.Sprintf("server %d", i+1)) {
			t.Errorf("refusal does not list job-%d: %s", i+1, err)
		}
	}
	if len(tb.List()) != MaxRunning {
		t.Errorf("the refused job was kept: %d jobs", len(tb.List()))
	}
	// A finished job frees its place.
	j1, _ := tb.Get("job-1")
	j1.Kill(context.Background())
	if _, err := tb.Start(proc.Spec{Command: "now it fits"}, newFake().exec, "c"); err != nil {
		t.Errorf("start after one ended: %v", err)
	}
}

func TestFinishedJobsExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	tb := quickTable(t, Options{Now: clock})
	done, running := newFake(), newFake()
	jd := start(t, tb, done, "ends")
	start(t, tb, running, "keeps running")
	done.end <- proc.Result{}
	<-jd.Done()

	advance(KeepFinished - time.Second)
	if _, err := tb.Get("job-1"); err != nil {
		t.Fatalf("expired early: %v", err)
	}
	advance(time.Second)
	_, err := tb.Get("job-1")
	if err == nil || !strings.Contains(err.Error(), "kept 30 minutes") || !strings.Contains(err.Error(), "known jobs: job-2") {
		t.Fatalf("finished job not expired after %s: %v", KeepFinished, err)
	}
	advance(10 * KeepFinished)
	if _, err := tb.Get("job-2"); err != nil {
		t.Errorf("a running job expired: %v", err)
	}
}

func TestAtMostMaxKeptJobsAreKept(t *testing.T) {
	tb := quickTable(t, Options{})
	for i := range MaxKept + 3 {
		f := newFake()
		f.end <- proc.Result{}
		j := start(t, tb, f, fmt.Sprintf("c%d", i))
		<-j.Done()
	}
	list := tb.List()
	if len(list) != MaxKept || list[0].ID != "job-4" || list[len(list)-1].ID != fmt.Sprintf("job-%d", MaxKept+3) {
		t.Fatalf("%d kept, first %s last %s", len(list), list[0].ID, list[len(list)-1].ID)
	}
	if _, err := tb.Get("job-3"); err == nil {
		t.Error("the oldest finished job was not dropped")
	}
}

func TestReadReturnsWhatIsNewSinceTheLastRead(t *testing.T) {
	tb := quickTable(t, Options{})
	f := newFake()
	j := start(t, tb, f, "log")
	f.print("a", "b")
	if o := j.Read(context.Background(), 0, nil, nil); strings.Join(o.Lines, ",") != "a,b" || o.From != 1 || o.To != 2 || !o.Running {
		t.Fatalf("first read %+v", o)
	}
	if o := j.Read(context.Background(), 0, nil, nil); len(o.Lines) != 0 || o.To >= o.From {
		t.Fatalf("second read, nothing new: %+v", o)
	}
	f.print("c")
	f.end <- proc.Result{ExitCode: 3}
	<-j.Done()
	if o := j.Read(context.Background(), 0, nil, nil); strings.Join(o.Lines, ",") != "c" || o.Status != "exited 3" || o.Running {
		t.Fatalf("third read %+v", o)
	}
}

func TestFilterKeepsMatchingLinesAndCountsTheOthers(t *testing.T) {
	tb := quickTable(t, Options{})
	f := newFake()
	j := start(t, tb, f, "server")
	f.print(`GET /a 200`, `debug`, `GET /b 404`, `debug`, `debug`)
	o := j.Read(context.Background(), 0, regexp.MustCompile(`^GET`), nil)
	if strings.Join(o.Lines, "|") != "GET /a 200|GET /b 404" || o.Dropped != 3 {
		t.Fatalf("%+v", o)
	}
	// Filtered-out lines count as read.
	if o := j.Read(context.Background(), 0, nil, nil); len(o.Lines) != 0 {
		t.Fatalf("lines filtered out came back: %+v", o)
	}
}

func TestOutputPastTheRingSpillsEveryLine(t *testing.T) {
	dir, err := spill.OpenIn(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, c := range []struct {
		name         string
		lines, bytes int
		wantHeld     int
	}{
		{"line limit", 10, 1 << 20, 10},
		{"byte limit", 1000, 7 * 8, 7}, // "line NN\n" is 8 bytes
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := quickTable(t, Options{Lines: c.lines, Bytes: c.bytes, Spill: dir})
			f := newFake()
			j := start(t, tb, f, "chatty")
			var want []string
			for i := range 25 {
				want = append(want, fmt.Sprintf("line %02d", i+1))
			}
			f.print(want...)
			o := j.Read(context.Background(), 0, nil, nil)
			if o.Lost != 25-c.wantHeld || len(o.Lines) != c.wantHeld || o.Lines[0] != want[25-c.wantHeld] || o.From != 1 || o.To != 25 {
				t.Fatalf("lost %d held %d (%v), from %d to %d", o.Lost, len(o.Lines), o.Lines, o.From, o.To)
			}
			if o.SpillPath == "" {
				t.Fatalf("no spill path: %+v", o)
			}
			f.print("line 26") // written while the job runs
			got, err := os.ReadFile(o.SpillPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != strings.Join(append(want, "line 26"), "\n")+"\n" {
				t.Fatalf("spill file holds:\n%s", got)
			}
		})
	}
}

func TestWaitReturnsWithinMillisecondsOfNewOutput(t *testing.T) {
	tb := quickTable(t, Options{})
	f := newFake()
	j := start(t, tb, f, "slow")
	var worst time.Duration
	for i := range 5 {
		ready := make(chan struct{})
		var printed time.Time
		go func() {
			<-ready
			time.Sleep(30 * time.Millisecond)
			printed = time.Now()
			f.print(fmt.Sprint("line ", i))
		}()
		close(ready)
		o := j.Read(context.Background(), 10*time.Second, nil, nil)
		lat := time.Since(printed)
		if len(o.Lines) != 1 {
			t.Fatalf("read %+v", o)
		}
		worst = max(worst, lat)
	}
	t.Logf("worst latency from a new line to the wait's return: %s", worst)
	if worst > 100*time.Millisecond {
		t.Errorf("wait returned %s after new output, want within 100ms", worst)
	}
}

func TestWaitWithAFilterWaitsForAMatchingLine(t *testing.T) {
	tb := quickTable(t, Options{})
	f := newFake()
	j := start(t, tb, f, "dev server")
	go func() {
		f.print("compiling", "compiling")
		time.Sleep(50 * time.Millisecond)
		f.print("ready on :3000")
	}()
	ticks := 0
	o := j.Read(context.Background(), 10*time.Second, regexp.MustCompile(`ready`), func(string) { ticks++ })
	if strings.Join(o.Lines, "|") != "ready on :3000" || o.Dropped != 2 {
		t.Fatalf("%+v", o)
	}
	if ticks == 0 {
		t.Error("no progress while waiting though lines arrived")
	}
}

func TestWaitEndsAtItsDeadlineAndAtTheJobsEnd(t *testing.T) {
	tb := quickTable(t, Options{})
	f := newFake()
	j := start(t, tb, f, "quiet")
	began := time.Now()
	if o := j.Read(context.Background(), 200*time.Millisecond, nil, nil); len(o.Lines) != 0 || !o.Running {
		t.Fatalf("%+v", o)
	}
	if d := time.Since(began); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("wait of 200ms took %s", d)
	}
	go func() { time.Sleep(30 * time.Millisecond); f.end <- proc.Result{} }()
	began = time.Now()
	if o := j.Read(context.Background(), 10*time.Second, nil, nil); o.Running || o.Status != "exited 0" {
		t.Fatalf("%+v", o)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("the end took %s to end the wait", d)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	tb := quickTable(t, Options{})
	j := start(t, tb, newFake(), "quiet")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	if o := j.Read(ctx, time.Hour, nil, nil); !o.Running || len(o.Lines) != 0 {
		t.Fatalf("%+v", o)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("a cancelled wait took %s", d)
	}
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// groupMembers lists the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, d)
		}
	}
	return out
}

// realJob starts a real command through proc.Run and returns its pid,
// which the command prints first.
func realJob(t *testing.T, tb *Table, command string) (*Job, int) {
	t.Helper()
	j, err := tb.Start(proc.Spec{Command: "echo $$; " + command}, proc.Run, "c")
	if err != nil {
		t.Fatal(err)
	}
	o := j.Read(context.Background(), 5*time.Second, nil, nil)
	if len(o.Lines) == 0 {
		t.Fatalf("no pid printed: %+v", o)
	}
	pid, err := strconv.Atoi(o.Lines[0])
	if err != nil {
		t.Fatal(err)
	}
	return j, pid
}

func TestKillStopsTheProcessGroup(t *testing.T) {
	tb := quickTable(t, Options{})
	j, pid := realJob(t, tb, "sleep 100 & exec sleep 100")
	j.Kill(context.Background())
	if got := j.Status(); got != "killed by SIGTERM" {
		t.Errorf("status %q", got)
	}
	if m := groupMembers(pid); len(m) > 0 {
		t.Errorf("process group %d still has members %v", pid, m)
	}
}

func TestCloseKillsEveryJob(t *testing.T) {
	tb := New(Options{EarlyWait: time.Millisecond})
	var pids []int
	for range 3 {
		_, pid := realJob(t, tb, "exec sleep 100")
		pids = append(pids, pid)
	}
	tb.Close()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("job process %d outlived Close", pid)
		}
	}
	if _, err := tb.Start(proc.Spec{Command: "true"}, proc.Run, "c"); !errors.Is(err, ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
}

func TestAJobHasNoTimeoutUnlessGiven(t *testing.T) {
	tb := quickTable(t, Options{})
	var got []proc.Spec
	var mu sync.Mutex
	exec := func(ctx context.Context, spec proc.Spec) (proc.Result, error) {
		mu.Lock()
		got = append(got, spec)
		mu.Unlock()
		return proc.Result{}, nil
	}
	for _, timeout := range []time.Duration{0, 5 * time.Second} {
		j, err := tb.Start(proc.Spec{Command: "x", Timeout: timeout}, exec, "c")
		if err != nil {
			t.Fatal(err)
		}
		<-j.Done()
	}
	if !got[0].NoTimeout || got[1].NoTimeout || got[1].Timeout != 5*time.Second {
		t.Fatalf("specs: %+v", got)
	}
	// And proc honours it: a job without one outlives the default timeout's
	// smallest stand-in, a MaxTimeout of 50ms.
	j, err := tb.Start(proc.Spec{Command: "sleep 0.3; echo done", MaxTimeout: 50 * time.Millisecond}, proc.Run, "c")
	if err != nil {
		t.Fatal(err)
	}
	<-j.Done()
	if o := j.Read(context.Background(), 0, nil, nil); o.Status != "exited 0" || strings.Join(o.Lines, "") != "done" {
		t.Fatalf("%+v", o)
	}
}

func TestLinesLetGoWithoutASpillDirectoryAreStatedLost(t *testing.T) {
	tb := quickTable(t, Options{Lines: 3})
	f := newFake()
	j := start(t, tb, f, "chatty")
	f.print("1", "2", "3", "4", "5")
	o := j.Read(context.Background(), 0, nil, nil)
	if o.Lost != 2 || strings.Join(o.Lines, ",") != "3,4,5" || o.SpillPath != "" || o.SpillErr == "" {
		t.Fatalf("%+v", o)
	}
}

func TestTheSpillFileIsCutAtItsCapAndSaysSo(t *testing.T) {
	dir, err := spill.OpenIn(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	r := ring{maxLines: 2, maxBytes: 1 << 20, dir: dir, name: "job-1"}
	line := strings.Repeat("x", 1<<20-1) // 1 MiB with its newline
	for range spill.MaxFileBytes>>20 + 2 {
		r.add(line)
	}
	r.close()
	fi, err := os.Stat(r.spillPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > spill.MaxFileBytes || r.cutBytes == 0 {
		t.Fatalf("spill file %d bytes (cap %d), %d bytes noted cut", fi.Size(), spill.MaxFileBytes, r.cutBytes)
	}
	b, _ := os.ReadFile(r.spillPath())
	if !strings.HasSuffix(string(b), fmt.Sprintf("%d more bytes not saved]\n", r.cutBytes)) {
		t.Errorf("no note at the end: %q", b[len(b)-100:])
	}
}
