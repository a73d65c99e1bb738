package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Watchdog is a small process (agentls re-executed with WatchdogCommand)
// that stops every process this agentls started, and their descendants,
// when agentls ends for any reason, SIGKILL included: the subreaper and
// the Reaper act only while agentls runs, and PR_SET_PDEATHSIG reaches a
// child, never a grandchild.
//
// It learns its charges by an environment token (WatchdogEnv) that every
// descendant inherits, found in /proc/<pid>/environ: a double fork or
// setsid leaves the process group and, once agentls is dead, the parent
// chain, but not the environment. A process that clears its environment
// (env -i) and leaves the command's group is not found. It learns that
// agentls ended from its stdin, a pipe whose only writer is agentls
// (EOF however agentls ends); PR_SET_PDEATHSIG is the second sign.
//
// The token is set when the Watchdog is made (NewWatchdog), so every
// process agentls starts from then on carries it; the watchdog process
// itself starts at the first Arm, which comes before the first process
// that can outlive the call that started it (a command, an upstream
// server). A session that only reads, searches and edits starts none: the
// processes it does start (rg, git config, bash -n) are waited for.
type Watchdog struct {
	log *slog.Logger

	mu   sync.Mutex
	w    *os.File      // the pipe agentls holds; nil until Arm started it
	done chan struct{} // closed when the watchdog process has exited
	err  error         // why the first Arm could not start it
}

// NewWatchdog sets WatchdogEnv in this process's environment. The caller
// owns the result and must Close it.
func NewWatchdog(log *slog.Logger) (*Watchdog, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("watchdog: token: %w", err)
	}
	if err := os.Setenv(WatchdogEnv, hex.EncodeToString(b[:])); err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	return &Watchdog{log: log}, nil
}

// Arm starts the watchdog process, in a process group of its own (a signal
// to agentls's group does not reach it), unless it runs already or could
// not start before. A nil Watchdog does nothing.
func (wd *Watchdog) Arm() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w != nil || wd.err != nil {
		return
	}
	if wd.err = wd.start(); wd.err != nil && wd.log != nil {
		wd.log.Debug("no watchdog: processes outlive agentls if it is killed", "err", wd.err)
	}
}

func (wd *Watchdog) start() error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: pipe: %w", err)
	}
	// /proc/self/exe is this binary even if it was replaced on disk.
	cmd := exec.Command("/proc/self/exe", WatchdogCommand, strconv.Itoa(os.Getpid()))
	cmd.Args[0] = "agentls" // as ps shows it
	cmd.Stdin = pr
	// SIGWINCH as the death signal: its default action is to be ignored,
	// so one that arrives before the watchdog's handler is set (or when
	// the thread that forked it ends while agentls runs: Linux sends it
	// then too) cannot end the watchdog; the watchdog checks its parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGWINCH}
	err = cmd.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return fmt.Errorf("watchdog: start: %w", err)
	}
	wd.w, wd.done = pw, make(chan struct{})
	done := wd.done
	go func() { // owned by wd: ends when the watchdog exits, which Close causes
		_ = cmd.Wait()
		close(done)
	}()
	return nil
}

// Close tells a started watchdog that agentls is ending (it then stops
// whatever is left, normally nothing) and waits for it briefly. A nil
// Watchdog does nothing.
func (wd *Watchdog) Close() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	w, done := wd.w, wd.done
	wd.w, wd.err = nil, errors.New("watchdog: closed")
	wd.mu.Unlock()
	if w == nil {
		return
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(KillGrace + killWait):
	}
}

// RunWatchdog is the watchdog's body (args: agentls's pid): it waits until
// in ends or its parent is no longer agentls, then stops every process
// carrying this agentls's WatchdogEnv token, in one kill phase (SIGTERM
// and SIGCONT, KillGrace, SIGKILL), and returns the exit code.
func RunWatchdog(args []string, in io.Reader) int {
	token := os.Getenv(WatchdogEnv)
	parent := 0
	if len(args) > 0 {
		parent, _ = strconv.Atoi(args[0])
	}
	if token == "" || parent <= 0 {
		fmt.Fprintln(os.Stderr, "agentls: the watchdog is started by agentls itself")
		return 2
	}
	// Signals to a terminal's group or a hang-up are agentls's to handle.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() { // ends with in; the process exits after the kill phase
		_, _ = io.Copy(io.Discard, in)
		close(eof)
	}()
	for os.Getppid() == parent {
		select {
		case <-eof:
			parent = -1
		case <-sig: // the loop checks the parent
		}
	}
	killPhase(func() []victim { return tokenVictims(token) })
	return 0
}

// tokenVictims lists the running processes whose environment holds
// token: the group each leads, or the process alone.
func tokenVictims(token string) []victim {
	mark := []byte("\x00" + WatchdogEnv + "=" + token + "\x00")
	self := os.Getpid()
	var out []victim
	scanProcs(func(e procEntry) {
		if e.zombie || e.pid == self {
			return
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(e.pid) + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), mark) {
			return
		}
		out = append(out, victim{id: e.pid, group: e.pgrp == e.pid})
	})
	return out
}
