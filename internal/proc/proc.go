package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/internal/spill"
)

const (
	// DefaultTimeout applies when Spec.Timeout is 0.
	DefaultTimeout = 120 * time.Second
	// MaxTimeout is the longest a command may run; longer timeouts are clamped.
	MaxTimeout = 600 * time.Second
	// KillGrace is how long a process group has between SIGTERM and SIGKILL.
	KillGrace = 2 * time.Second
	// TailLines and TailBytes bound the output shown: its last lines within both.
	TailLines = 2000
	TailBytes = 50 * 1024
	// MaxLineChars cuts longer lines in the shown output (the spill file keeps them).
	MaxLineChars = 2000
	// ProgressInterval is the least time between two OnProgress calls.
	ProgressInterval = 50 * time.Millisecond
	// ProgressLines is how many last lines a progress snapshot holds.
	ProgressLines = 20
	// MaxFailureLines caps the failure lines rescued from the cut part of the output.
	MaxFailureLines = 20
	// MaxFailureLineBytes cuts a rescued failure line.
	MaxFailureLineBytes = 500
	// DrainSilence: once the shell has exited, reading stops after this long without
	// output, so a background child holding the pipe open does not hold the call.
	DrainSilence = 50 * time.Millisecond
	// DrainMax bounds reading after the shell exited even if a background child keeps
	// printing.
	DrainMax = 500 * time.Millisecond
	// MaxCommandBytes is the longest command Run takes: the shell gets it
	// as one argument, and Linux caps one argument at 128 KiB including
	// its NUL (MAX_ARG_STRLEN); other systems cap all arguments together
	// at about as much or more.
	MaxCommandBytes = 128<<10 - 1
	// DrainLate bounds reading output that is on its way when DrainMax ends it while no
	// member of the command's group is left to print more: the command's own output,
	// late because the machine is busy.
	DrainLate = 5 * time.Second
)

const (
	readBufBytes = 64 << 10
	// spillHoldBytes of raw output are kept in memory before a spill file is opened, so
	// short commands never touch the disk.
	spillHoldBytes = 256 << 10
	// spillNoteRoom is kept free at the end of a full spill file for the note saying so.
	spillNoteRoom = 256
	// killWait is how long to wait for a group to vanish after SIGKILL.
	killWait     = time.Second
	pollInterval = 10 * time.Millisecond
)

// Spec describes one command run.
type Spec struct {
	Command string // run with `bash -c` (`sh -c` when bash is not on PATH)
	Dir     string // absolute working directory, validated by the caller
	// DirFile, when set, is the working directory, opened and checked by
	// the caller: the shell starts in that directory itself, whatever is at
	// Dir's name by then (Dir only names it in messages). See ChildDir.
	DirFile *os.File
	Env     []string      // full environment; nil = BaseEnv(os.Environ())
	Timeout time.Duration // 0 = DefaultTimeout; clamped to MaxTimeout (or Spec.MaxTimeout)
	// NoTimeout runs the command until it exits or ctx ends (a background
	// job without a timeout); Timeout is ignored.
	NoTimeout bool
	// The caller's limits; 0 = the package's defaults.
	MaxTimeout time.Duration // the longest Timeout may be (default MaxTimeout)
	TailLines  int           // lines of output kept (default TailLines)
	TailBytes  int           // bytes of output kept (default TailBytes)
	// OnProgress receives the cleaned last ProgressLines lines: promptly after the first
	// output, then at most every ProgressInterval while output changes. Calls never
	// overlap and none happens after Run returns.
	OnProgress func(tail string)
	// OnLine, when set, receives every cleaned line of the output as soon as
	// it ends (cut at MaxLineChars), and the unterminated last line when the
	// command ends. The string may share memory with later lines' buffers:
	// clone it to keep it. Calls never overlap and none happens after Run
	// returns.
	OnLine    func(text string)
	Spill     *spill.Dir // where the full raw output goes when anything was cut; nil = nowhere
	SpillName string     // spill file name prefix; "" = "bash"
	// Reaper tracks the process group while it runs and afterwards if background
	// children outlive the shell; nil = such children are left alone.
	Reaper *Reaper
	// Wrap, when set, changes the command after it is built and before it
	// starts (the sandbox, internal/sandbox, runs it through its launcher).
	// It must keep SysProcAttr.Setpgid and the pid of the started process
	// as the shell's, so the group kill and the reaper work unchanged. An
	// error means nothing was started.
	Wrap func(cmd *exec.Cmd) error
}

// Result is what a run produced.
type Result struct {
	Output    string // cleaned tail: at most Spec.TailLines lines and Spec.TailBytes bytes
	ExitCode  int    // -1 when killed by a signal or not reaped
	Signal    string // "SIGKILL" etc. when the shell was killed by a signal
	TimedOut  bool
	Cancelled bool
	KilledHow string // "" | "SIGTERM" | "SIGKILL (after 2s grace)"

	TotalLines int   // lines in the full cleaned output
	TotalBytes int64 // raw bytes read
	Truncated  bool  // lines were dropped from the top or cut at MaxLineChars
	LinesCut   int   // lines cut at MaxLineChars
	ShownFrom  int   // 1-based number of the first line shown (0 when no output)
	ShownTo    int   // number of the last line shown

	SpillPath      string // the full raw output, when Truncated and a spill dir was given
	SpillCutBytes  int64  // raw bytes not saved because the spill file hit spill.MaxFileBytes
	SpillError     string // why the output could not be saved, if it could not
	FailureLines   []Line // failure-looking lines from the cut part, first MaxFailureLines
	FailureMatches int    // all failure-looking lines in the cut part

	Duration time.Duration
}

// Line is a numbered line of the cleaned output.
type Line struct {
	N    int
	Text string
}

// Result.KilledHow values. KilledSIGKILL names KillGrace (a test keeps them in step).
const (
	KilledSIGTERM = "SIGTERM"
	KilledSIGKILL = "SIGKILL (after 2s grace)"
)

// Errors of a command no shell can be given.
var (
	ErrCommandNUL     = errors.New("the command contains a NUL byte, which no command line can carry")
	ErrCommandTooLong = fmt.Errorf("the command is longer than %d bytes, the most one command line can carry", MaxCommandBytes)
)

// Run runs spec.Command and returns its cleaned output tail and how it ended. The error
// is non-nil only when the command could not be started; a failing command is a Result.
func Run(ctx context.Context, spec Spec) (Result, error) {
	switch {
	case strings.IndexByte(spec.Command, 0) >= 0:
		return Result{}, ErrCommandNUL
	case len(spec.Command) > MaxCommandBytes:
		return Result{}, ErrCommandTooLong
	}
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1, Cancelled: true}, nil
	}
	shell, err := findShell()
	if err != nil {
		return Result{}, err
	}
	env := spec.Env
	if env == nil {
		env = BaseEnv(os.Environ())
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("cannot run command: create output pipe: %w", err)
	}
	cmd := exec.Command(shell, "-c", spec.Command)
	cmd.Dir = spec.Dir
	if spec.DirFile != nil {
		if d := ChildDir(spec.DirFile); d != "" {
			cmd.Dir = d
		}
	}
	cmd.Env = env
	cmd.Stdout = pw // one pipe for both keeps the arrival order
	cmd.Stderr = pw
	setupCmd(cmd)
	if spec.Wrap != nil {
		if err := spec.Wrap(cmd); err != nil {
			pr.Close()
			pw.Close()
			return Result{}, fmt.Errorf("cannot run command: %w", err)
		}
	}
	spec.Reaper.arm()
	err = cmd.Start()
	pw.Close() // the child holds its own copy; EOF comes when every holder is gone
	if err != nil {
		pr.Close()
		if _, serr := os.Stat(spec.Dir); spec.Dir != "" && serr != nil {
			return Result{}, fmt.Errorf("cannot run command: working directory: %w", serr)
		}
		return Result{}, fmt.Errorf("cannot run command with %s: %w", shell, err)
	}
	pgid := cmd.Process.Pid
	spec.Reaper.add(pgid)

	r := newRunner(spec)
	res := r.loop(ctx, cmd, pr, pgid)
	if groupAlive(pgid) {
		// Background children outlived the shell: the Reaper kills them at shutdown.
		spec.Reaper.add(pgid)
	} else {
		spec.Reaper.remove(pgid)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// findShell prefers bash and falls back to sh.
func findShell() (string, error) {
	if p, err := exec.LookPath("bash"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("sh"); err == nil {
		return p, nil
	}
	return "", errors.New("cannot run command: neither bash nor sh was found on PATH; install bash or fix PATH")
}

// runner holds one run's output state. Only Run's goroutine touches it.
type runner struct {
	spec   Spec
	clean  cleaner
	tail   tail
	spill  spillWriter
	total  int64
	res    Result
	killAt time.Time // when SIGTERM was sent; zero if not
	// escaped are the groups of descendants that left the command's group
	// (setsid), found when SIGTERM was sent and signalled with it.
	escaped []int

	lastProgress time.Time
	dirty        bool
}

func newRunner(spec Spec) *runner {
	r := &runner{spec: spec}
	r.tail.maxLines, r.tail.maxBytes = spec.TailLines, spec.TailBytes
	r.clean.onLine = r.tail.add
	if spec.OnLine != nil {
		r.clean.onLine = func(text string, cut bool) {
			r.tail.add(text, cut)
			spec.OnLine(text)
		}
	}
	name := spec.SpillName
	if name == "" {
		name = "bash"
	}
	r.spill = spillWriter{dir: spec.Spill, name: name}
	return r
}

func (r *runner) consume(p []byte) {
	r.total += int64(len(p))
	r.spill.write(p)
	r.clean.write(p)
	r.dirty = true
}

// loop reads the output until the shell has exited and the pipe is drained, enforcing
// the timeout and cancellation, and returns the result.
func (r *runner) loop(ctx context.Context, cmd *exec.Cmd, pr *os.File, pgid int) Result {
	timeout := r.spec.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	limit := r.spec.MaxTimeout
	if limit <= 0 {
		limit = MaxTimeout
	}
	timeout = min(timeout, limit)

	rd := startReader(pr)
	waitDone := make(chan struct{})
	var waitErr error
	go func() { // owned by loop: it waits for waitDone below (or gives up after SIGKILL)
		waitErr = cmd.Wait()
		close(waitDone)
	}()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	if r.spec.NoTimeout {
		deadline.Stop()
	}
	var grace, giveUp, progress, silence, drainMax *time.Timer
	stop := func(t *time.Timer) {
		if t != nil {
			t.Stop()
		}
	}
	defer func() { stop(grace); stop(giveUp); stop(progress); stop(silence); stop(drainMax) }()
	ch := func(t *time.Timer) <-chan time.Time {
		if t == nil {
			return nil
		}
		return t.C
	}

	chunks := rd.chunks
	exited, reaped := false, false
	var exitedAt time.Time
	ctxDone := ctx.Done()
	for chunks != nil || !exited {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				continue
			}
			r.consume(c)
			rd.free <- c[:cap(c)]
			if exited {
				silence.Reset(DrainSilence)
			} else if progress == nil {
				progress = r.progress()
			}
		case <-ch(progress):
			progress = nil
			if r.dirty {
				progress = r.progress()
			}
		case <-waitDone:
			waitDone, exited, reaped = nil, true, true
			exitedAt = time.Now()
			silence = time.NewTimer(DrainSilence)
			drainMax = time.NewTimer(DrainMax)
		case <-ch(silence):
			if rd.pending() {
				silence.Reset(DrainSilence)
				continue
			}
			chunks = nil
		case <-ch(drainMax):
			if rd.pending() && !groupAlive(pgid) && time.Since(exitedAt) < DrainLate {
				drainMax.Reset(DrainSilence)
				continue
			}
			chunks = nil
		case <-ctxDone:
			ctxDone = nil
			if !exited && r.killAt.IsZero() {
				r.res.Cancelled = true
				grace = r.terminate(pgid)
			}
		case <-deadline.C:
			if !exited && r.killAt.IsZero() {
				r.res.TimedOut = true
				grace = r.terminate(pgid)
			}
		case <-ch(grace):
			grace = nil
			r.kill(pgid)
			giveUp = time.NewTimer(killWait)
		case <-ch(giveUp):
			// The shell does not die even from SIGKILL (stuck in the kernel): report
			// what we have; the wait goroutine reaps it whenever it goes.
			giveUp = nil
			exited, chunks = true, nil
		}
	}
	if rd.close() && rd.leftover != nil {
		r.consume(rd.leftover)
	}

	if !r.killAt.IsZero() {
		// No member of the group may outlive a timeout or cancel, even one that ignores
		// SIGTERM after the shell died.
		groups := append([]int{pgid}, r.escaped...)
		if !waitGone(groups, time.Until(r.killAt.Add(KillGrace))) {
			if r.res.KilledHow != KilledSIGKILL {
				r.kill(pgid)
			}
			waitGone(groups, killWait)
		}
	}
	r.res.ExitCode = -1
	if reaped {
		r.res.ExitCode, r.res.Signal = exitStatus(cmd.ProcessState)
		_ = waitErr // the ProcessState carries everything waitErr says
	}
	return r.finish()
}

// progress calls OnProgress now if ProgressInterval has passed since the last call, and
// returns the timer for the next possible call otherwise.
func (r *runner) progress() *time.Timer {
	if r.spec.OnProgress == nil {
		return nil
	}
	if wait := ProgressInterval - time.Since(r.lastProgress); wait > 0 {
		return time.NewTimer(wait)
	}
	r.spec.OnProgress(r.tail.snapshot(ProgressLines, string(r.clean.line)))
	r.lastProgress = time.Now()
	r.dirty = false
	return time.NewTimer(ProgressInterval)
}

func (r *runner) terminate(pgid int) *time.Timer {
	// Before the signal: once the shell dies, its escaped descendants are
	// re-parented and can no longer be told from anyone else's.
	r.escaped = escapedGroups(pgid, pgid)
	for _, g := range r.escaped {
		r.spec.Reaper.add(g)
		terminateGroup(g)
	}
	terminateGroup(pgid)
	r.killAt = time.Now()
	r.res.KilledHow = KilledSIGTERM
	return time.NewTimer(KillGrace)
}

func (r *runner) kill(pgid int) {
	for _, g := range r.escaped {
		killGroup(g)
	}
	killGroup(pgid)
	r.res.KilledHow = KilledSIGKILL
}

func (r *runner) finish() Result {
	res := r.res
	last, lastCut, open := r.clean.finish()
	if open && r.spec.OnLine != nil {
		r.spec.OnLine(last)
	}
	res.Output, res.ShownFrom, res.ShownTo = r.tail.finish(last, lastCut, open)
	res.TotalLines = r.tail.total
	res.TotalBytes = r.total
	res.LinesCut = r.tail.cut
	res.Truncated = res.ShownFrom > 1 || res.LinesCut > 0
	res.FailureLines = r.tail.fail
	res.FailureMatches = r.tail.nFail
	path, cutBytes, err := r.spill.finish(res.Truncated)
	res.SpillPath, res.SpillCutBytes = path, cutBytes
	if err != nil {
		res.SpillError = err.Error()
	}
	return res
}

// reader copies the pipe into chunks on its own goroutine, using two buffers so reading
// overlaps processing.
type reader struct {
	chunks chan []byte
	free   chan []byte
	quit   chan struct{}
	done   chan struct{}
	pr     *os.File
	// holding is set while a chunk read from the pipe waits to be taken.
	holding atomic.Bool
	// leftover is a chunk read but not taken when the reader was stopped
	// (set before done is closed): preempted between its read and its
	// hand-off, it held output the runner had not seen.
	leftover []byte
}

// pending reports output that exists but has not reached the runner: a
// chunk the reader holds, or bytes still in the pipe. On a loaded machine
// the reader may not run for a while after the shell exits; its output
// must not be dropped as silence.
func (rd *reader) pending() bool {
	return rd.holding.Load() || pipeBuffered(rd.pr) > 0
}

func startReader(pr *os.File) *reader {
	rd := &reader{
		chunks: make(chan []byte),
		free:   make(chan []byte, 2),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		pr:     pr,
	}
	rd.free <- make([]byte, readBufBytes)
	rd.free <- make([]byte, readBufBytes)
	go rd.run() // owned by the runner: rd.close stops it
	return rd
}

func (rd *reader) run() {
	defer close(rd.done)
	defer close(rd.chunks)
	for {
		var buf []byte
		select {
		case buf = <-rd.free:
		case <-rd.quit:
			return
		}
		n, err := rd.pr.Read(buf)
		if n > 0 {
			rd.holding.Store(true)
			select {
			case rd.chunks <- buf[:n]:
				rd.holding.Store(false)
			case <-rd.quit:
				rd.leftover = buf[:n]
				return
			}
		} else {
			rd.free <- buf
		}
		if err != nil {
			return // io.EOF, or the pipe closed by close
		}
	}
}

// close stops the reader. Closing the pipe unblocks a pending read on unix; on Windows
// the read may only return once the last writer exits, so close does not wait forever.
func (rd *reader) close() (stopped bool) {
	close(rd.quit)
	rd.pr.Close()
	select {
	case <-rd.done:
		return true
	case <-time.After(killWait):
		return false
	}
}

// spillWriter streams the raw output to a spill file, holding the first spillHoldBytes in
// memory so short outputs never create a file.
type spillWriter struct {
	dir     *spill.Dir
	name    string
	hold    []byte
	f       *os.File
	written int64
	dropped int64
	err     error
}

func (w *spillWriter) write(p []byte) {
	if w.dir == nil || w.err != nil {
		return
	}
	if w.f == nil {
		if len(w.hold)+len(p) <= spillHoldBytes {
			w.hold = append(w.hold, p...)
			return
		}
		f, err := w.dir.Create(w.name)
		if err != nil {
			w.err = err
			w.hold = nil
			return
		}
		w.f = f
		hold := w.hold
		w.hold = nil
		w.write(hold)
	}
	room := int64(spill.MaxFileBytes-spillNoteRoom) - w.written
	if int64(len(p)) > room {
		w.dropped += int64(len(p)) - max(room, 0)
		p = p[:max(room, 0)]
	}
	if len(p) == 0 {
		return
	}
	n, err := w.f.Write(p)
	w.written += int64(n)
	if err != nil {
		w.err = fmt.Errorf("write spill file %s: %w", w.f.Name(), err)
	}
}

// finish keeps the file when keep is set and removes it otherwise.
func (w *spillWriter) finish(keep bool) (path string, dropped int64, err error) {
	if w.dir == nil {
		return "", 0, nil
	}
	if w.f == nil {
		if !keep || w.err != nil {
			return "", 0, w.err
		}
		p, err := w.dir.Save(w.name, w.hold)
		return p, 0, err
	}
	name := w.f.Name()
	if w.dropped > 0 && w.err == nil {
		_, w.err = fmt.Fprintf(w.f, "\n[agentls: spill file cut at %d bytes; %d more bytes not saved]\n",
			w.written, w.dropped)
	}
	if cerr := w.f.Close(); cerr != nil && w.err == nil {
		w.err = cerr
	}
	if !keep || w.err != nil {
		_ = os.Remove(name)
		return "", 0, w.err
	}
	return name, w.dropped, nil
}
