package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/spill"
)

// Limits of the job table; the bash, bash_output and bash_kill
// descriptions state them.
const (
	// MaxRunning is how many jobs may run at once in a session.
	MaxRunning = 8
	// MaxKept is how many jobs the table holds, running and finished: the
	// oldest finished one is dropped for a new one.
	MaxKept = 32
	// KeepFinished is how long a finished job stays readable.
	KeepFinished = 30 * time.Minute
	// EarlyWait is how long the starting call waits for the command to fail.
	EarlyWait = time.Second
	// MaxWait caps bash_output's wait.
	MaxWait = 30 * time.Second
	// LastLines is how many last lines bash_kill shows.
	LastLines = 20
)

// Exec starts and runs one command to its end: the session's one start
// path for commands (tools.startCommand → proc.Run), shared with foreground bash.
type Exec func(ctx context.Context, spec proc.Spec) (proc.Result, error)

// Event is a job's change of status (jobs/changed).
type Event struct {
	Job     string `json:"job"`
	Status  string `json:"status"`
	Command string `json:"command"`
}

// Options configure a Table.
type Options struct {
	// Lines and Bytes bound each job's ring and so what one read returns
	// (the session's bash limits; 0 = proc.TailLines, proc.TailBytes).
	Lines, Bytes int
	// Spill receives the full output of a job whose ring let lines go.
	Spill *spill.Dir
	// Now is the clock expiry reads (nil = time.Now).
	Now func() time.Time
	// EarlyWait is how long Start waits for an early end (0 = EarlyWait).
	EarlyWait time.Duration
	// OnChange is told of every start and end, synchronously: a start is
	// announced before Start returns.
	OnChange func(Event)
	// OnOutput receives a job's latest output line, at most every
	// proc.ProgressInterval while it prints; callID is the starting call.
	OnOutput func(job, callID, line string)
}

// Table is one session's jobs. Safe for concurrent use.
type Table struct {
	opts   Options
	mu     sync.Mutex
	jobs   []*Job // in start order
	next   int
	closed bool
	wg     sync.WaitGroup // one per job goroutine
}

// New returns an empty table.
func New(o Options) *Table {
	if o.Lines <= 0 {
		o.Lines = proc.TailLines
	}
	if o.Bytes <= 0 {
		o.Bytes = proc.TailBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EarlyWait <= 0 {
		o.EarlyWait = EarlyWait
	}
	return &Table{opts: o}
}

// SetLimits sets the ring bounds of jobs started from now on (the
// session's bash limits after a settings reload).
func (t *Table) SetLimits(lines, bytes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if lines > 0 {
		t.opts.Lines = lines
	}
	if bytes > 0 {
		t.opts.Bytes = bytes
	}
}

// Job is one background command.
type Job struct {
	ID      string
	Command string
	CallID  string
	Started time.Time

	t      *Table
	cancel context.CancelFunc
	done   chan struct{} // closed when the command has ended

	mu      sync.Mutex
	out     ring
	readTo  int           // last line number a read returned
	changed chan struct{} // closed and replaced on each line and at the end
	ended   time.Time
	res     proc.Result
	err     error // the command could not be started
}

// ErrClosed refuses a start after the session closed.
var ErrClosed = errors.New("the session is closing; no new background job is started")

// TooManyError refuses a start while MaxRunning jobs run. Names is how
// the model sees the tool names; the caller sets it.
type TooManyError struct {
	Running []Info
	Names   mention.Prefix
}

func (e *TooManyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d background jobs are running, the most a session may have; nothing was started. Running:", len(e.Running))
	for _, i := range e.Running {
		fmt.Fprintf(&b, "\n- %s (%s, %s): %s", i.ID, i.Status, i.Runtime.Round(time.Second), i.Command)
	}
	b.WriteString(e.Names.Render("\nStop one with {{bash_kill}} {\"job\": …}, or wait for one to end ({{bash_output}} {\"job\": …, \"wait\": 30})."))
	return b.String()
}

// Info is a job as a list shows it.
type Info struct {
	ID, Command, Status string
	Running             bool
	Runtime             time.Duration
}

// Start runs spec through exec as a new job and returns once it has run
// Options.EarlyWait or ended, whichever is first. spec.Timeout 0 means no timeout.
func (t *Table) Start(spec proc.Spec, exec Exec, callID string) (*Job, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	t.pruneLocked()
	var running []Info
	for _, j := range t.jobs {
		if i := j.info(); i.Running {
			running = append(running, i)
		}
	}
	if len(running) >= MaxRunning {
		t.mu.Unlock()
		return nil, &TooManyError{Running: running}
	}
	for len(t.jobs) >= MaxKept {
		t.dropOldestFinishedLocked()
	}
	t.next++
	ctx, cancel := context.WithCancel(context.Background())
	j := &Job{ID: fmt.Sprintf("job-%d", t.next), Command: spec.Command, CallID: callID, Started: t.opts.Now(),
		t: t, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	j.out = ring{maxLines: t.opts.Lines, maxBytes: t.opts.Bytes, dir: t.opts.Spill, name: j.ID}
	t.jobs = append(t.jobs, j)
	t.wg.Add(1)
	t.mu.Unlock()

	spec.NoTimeout = spec.Timeout <= 0
	spec.Spill = nil // the ring keeps its own spill file
	spec.OnLine = j.addLine
	spec.OnProgress = nil
	if f := t.opts.OnOutput; f != nil {
		spec.OnProgress = func(tail string) {
			tail = strings.TrimRight(tail, "\n")
			if i := strings.LastIndexByte(tail, '\n'); i >= 0 {
				tail = tail[i+1:]
			}
			f(j.ID, callID, tail)
		}
	}
	t.emit(Event{Job: j.ID, Status: "running", Command: j.Command})
	go func() { // owned by the table: Close cancels ctx and waits
		defer t.wg.Done()
		defer cancel()
		res, err := exec(ctx, spec)
		j.finish(res, err)
		// Announced before Done: an early end's jobs/changed comes before
		// the starting call's result.
		t.emit(Event{Job: j.ID, Status: j.Status(), Command: j.Command})
		close(j.done)
	}()
	select {
	case <-j.done:
	case <-time.After(t.opts.EarlyWait):
	}
	return j, nil
}

func (t *Table) emit(ev Event) {
	if t.opts.OnChange != nil {
		t.opts.OnChange(ev)
	}
}

// pruneLocked drops finished jobs older than KeepFinished.
func (t *Table) pruneLocked() {
	now := t.opts.Now()
	kept := t.jobs[:0]
	for _, j := range t.jobs {
		if end, ok := j.endedAt(); ok && now.Sub(end) >= KeepFinished {
			continue
		}
		kept = append(kept, j)
	}
	clear(t.jobs[len(kept):])
	t.jobs = kept
}

func (t *Table) dropOldestFinishedLocked() {
	for i, j := range t.jobs {
		if _, ok := j.endedAt(); ok {
			t.jobs = append(t.jobs[:i], t.jobs[i+1:]...)
			return
		}
	}
	// Unreachable while MaxRunning < MaxKept; never loop forever.
	t.jobs = t.jobs[1:]
}

// Get finds a job still kept.
func (t *Table) Get(id string) (*Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneLocked()
	want := strings.TrimSpace(id)
	if !strings.HasPrefix(want, "job-") {
		want = "job-" + want // "3" names job-3
	}
	var known []string
	for _, j := range t.jobs {
		if j.ID == want {
			return j, nil
		}
		known = append(known, j.ID)
	}
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return nil, fmt.Errorf("no background job %q: finished jobs are kept %d minutes (and at most %d jobs); known jobs: %s", id, int(KeepFinished/time.Minute), MaxKept, list)
}

// List returns the jobs kept, in start order.
func (t *Table) List() []Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneLocked()
	out := make([]Info, len(t.jobs))
	for i, j := range t.jobs {
		out[i] = j.info()
	}
	return out
}

// Close kills every job's process group and waits for them to end. Later
// starts are refused.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	for _, j := range t.jobs {
		j.cancel()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (j *Job) addLine(text string) {
	j.mu.Lock()
	j.out.add(text)
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

func (j *Job) finish(res proc.Result, err error) {
	j.mu.Lock()
	j.res, j.err, j.ended = res, err, j.t.opts.Now()
	j.out.close()
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

func (j *Job) endedAt() (time.Time, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ended, !j.ended.IsZero()
}

// Done is closed when the job's command has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Status is "running", "exited N", "killed by SIGTERM", "killed by signal
// SIGSEGV", "timed out, killed by SIGTERM" or "failed to start: …".
func (j *Job) Status() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.statusLocked()
}

func (j *Job) statusLocked() string {
	r := j.res
	switch {
	case j.ended.IsZero():
		return "running"
	case j.err != nil:
		return "failed to start: " + j.err.Error()
	case r.TimedOut:
		return "timed out, killed by " + r.KilledHow
	case r.Cancelled:
		return "killed by " + r.KilledHow
	case r.Signal != "":
		return "killed by signal " + r.Signal
	default:
		return fmt.Sprintf("exited %d", r.ExitCode)
	}
}

// Failed reports a job that ended other than with exit code 0.
func (j *Job) Failed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.ended.IsZero() && (j.err != nil || j.res.ExitCode != 0 || j.res.TimedOut || j.res.Cancelled)
}

// StartError is why the command could not be started, if it could not.
func (j *Job) StartError() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *Job) info() Info {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Info{ID: j.ID, Command: j.Command, Status: j.statusLocked(), Running: j.ended.IsZero(), Runtime: j.runtimeLocked()}
}

func (j *Job) runtimeLocked() time.Duration {
	if !j.ended.IsZero() {
		return j.ended.Sub(j.Started)
	}
	return j.t.opts.Now().Sub(j.Started)
}

// Output is what one read returns.
type Output struct {
	Lines []string // the new lines held (matching the filter, if any)
	// From and To number the new output: lines From…To arrived since the
	// last read (To < From: nothing new).
	From, To int
	// Lost new lines are no longer held (From…From+Lost-1): only the spill
	// file has them.
	Lost int
	// Dropped new lines held did not match the filter.
	Dropped   int
	Status    string
	Running   bool
	Runtime   time.Duration
	SpillPath string
	SpillCut  int64  // bytes the spill file could not take (its cap)
	SpillErr  string // why there is no spill file though lines were let go
}

// Read returns the output since the last read and marks it read. With
// wait > 0 and nothing new (matching filter) yet, it waits that long at
// most for such a line or the end; tick, when set, is called about every
// second and on each new line while it waits, with the latest line.
func (j *Job) Read(ctx context.Context, wait time.Duration, filter *regexp.Regexp, tick func(latest string)) Output {
	wait = min(wait, MaxWait)
	if wait > 0 {
		j.waitFor(ctx, wait, filter, tick)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	o := j.snapshotLocked()
	o.From, o.To = j.readTo+1, j.out.total
	first := max(o.From, j.out.first())
	o.Lost = first - o.From
	for num := first; num <= o.To; num++ {
		line := j.out.line(num)
		if filter != nil && !filter.MatchString(line) {
			o.Dropped++
			continue
		}
		o.Lines = append(o.Lines, line)
	}
	j.readTo = o.To
	return o
}

// Last returns the last n lines held and the status, without marking
// anything read.
func (j *Job) Last(n int) Output {
	j.mu.Lock()
	defer j.mu.Unlock()
	o := j.snapshotLocked()
	o.To = j.out.total
	o.From = max(j.out.first(), o.To-n+1)
	for num := o.From; num <= o.To; num++ {
		o.Lines = append(o.Lines, j.out.line(num))
	}
	return o
}

func (j *Job) snapshotLocked() Output {
	o := Output{Status: j.statusLocked(), Running: j.ended.IsZero(), Runtime: j.runtimeLocked(),
		SpillPath: j.out.spillPath(), SpillCut: j.out.cutBytes}
	if j.out.spillErr != nil {
		o.SpillErr = j.out.spillErr.Error()
	}
	return o
}

// waitFor blocks until a line after the last read matches filter (any line
// without one), the job ends, wait passes or ctx ends.
func (j *Job) waitFor(ctx context.Context, wait time.Duration, filter *regexp.Regexp, tick func(string)) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	j.mu.Lock()
	scanned := j.readTo
	j.mu.Unlock()
	for {
		j.mu.Lock()
		found := false
		for num := max(scanned+1, j.out.first()); num <= j.out.total && !found; num++ {
			found = filter == nil || filter.MatchString(j.out.line(num))
		}
		latest := ""
		if j.out.n > 0 {
			latest = j.out.line(j.out.total)
		}
		grew := j.out.total > scanned
		scanned = j.out.total
		ended := !j.ended.IsZero()
		changed := j.changed
		j.mu.Unlock()
		if ended {
			return
		}
		if found {
			j.settle(changed)
			return
		}
		if grew && tick != nil {
			tick(latest)
		}
		select {
		case <-changed:
		case <-ticker.C:
			if tick != nil {
				tick(latest)
			}
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// settle lets the rest of a burst arrive: lines of one write reach the
// job one at a time, and a read woken by the first would split them. It
// waits until no line came for settleQuiet, settleMax at most.
func (j *Job) settle(changed <-chan struct{}) {
	limit := time.NewTimer(settleMax)
	defer limit.Stop()
	for {
		quiet := time.NewTimer(settleQuiet)
		select {
		case <-changed:
			quiet.Stop()
			j.mu.Lock()
			changed = j.changed
			j.mu.Unlock()
		case <-quiet.C:
			return
		case <-limit.C:
			quiet.Stop()
			return
		}
	}
}

// A wait's settling after the line it waited for: well inside the 100 ms
// a wait may take to return after new output.
const (
	settleQuiet = 3 * time.Millisecond
	settleMax   = 30 * time.Millisecond
)

// Kill stops the job's process group (SIGTERM, SIGKILL after
// proc.KillGrace) and waits for it to end or ctx to end.
func (j *Job) Kill(ctx context.Context) {
	j.cancel()
	select {
	case <-j.done:
	case <-ctx.Done():
	}
}
