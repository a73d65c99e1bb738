package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Orphans makes this process the child subreaper of everything it starts
// (PR_SET_CHILD_SUBREAPER): a descendant whose parent exits, such as
// `setsid server &` after its shell returned, is re-parented here instead of
// to init. Orphans reaps the adopted ones that exit, so no zombie piles up,
// and Close kills those still running, so none outlives the server.
//
// Children this process started itself (shells, upstream servers, rg) are
// os/exec's to wait for: Go holds a pidfd for each from fork until its Wait,
// and an exited child with such a pidfd is left alone. Without pidfds
// (Linux before 5.3, or a sandbox that filters them) the two kinds cannot be
// told apart and AdoptOrphans refuses; it checks what os/exec checks before
// using them, but for clone(CLONE_PIDFD) (see pidfdsWork).
type Orphans struct {
	stop chan struct{}
	done chan struct{}
	sig  chan os.Signal
}

// AdoptOrphans makes this process the subreaper and starts reaping. The
// caller owns the result and must Close it.
func AdoptOrphans() (*Orphans, error) {
	if err := pidfdsWork(); err != nil {
		return nil, fmt.Errorf("adopt orphans: pidfds unavailable: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("adopt orphans: PR_SET_CHILD_SUBREAPER: %w", err)
	}
	o := &Orphans{stop: make(chan struct{}), done: make(chan struct{}), sig: make(chan os.Signal, 1)}
	signal.Notify(o.sig, syscall.SIGCHLD)
	go o.loop()
	return o, nil
}

// pidfdsWork makes the checks os/exec makes before it holds a pidfd for
// each child (os.checkPidfd): pidfd_open, waitid(P_PIDFD) and
// pidfd_send_signal. The last one, clone(CLONE_PIDFD), needs a clone and
// is left out: no kernel has pidfd_open without it, and a sandbox that
// filtered it alone would let the reaper take an exit status from os/exec.
func pidfdsWork() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(fd)
	var info unix.Siginfo
	for {
		// ECHILD: this process is not its own parent.
		err = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
		if err != unix.EINTR {
			break
		}
	}
	if err != unix.ECHILD {
		return fmt.Errorf("waitid(P_PIDFD): %v", err)
	}
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); err != nil {
		return fmt.Errorf("pidfd_send_signal: %w", err)
	}
	return nil
}

// loop reaps on every SIGCHLD until Close. Signals coalesce; each round
// reaps every adopted child that has exited by then.
func (o *Orphans) loop() {
	defer close(o.done)
	for {
		select {
		case <-o.stop:
			return
		case <-o.sig:
			reapAdopted()
		}
	}
}

// Close stops reaping, kills the adopted processes still running (SIGTERM
// and SIGCONT to the group each leads, or to the process, one KillGrace,
// then SIGKILL: killPhase), reaps
// them and stops being the subreaper. A nil Orphans does nothing.
func (o *Orphans) Close() {
	if o == nil {
		return
	}
	signal.Stop(o.sig)
	close(o.stop)
	<-o.done
	// Killing one can orphan its own children: they arrive here in turn
	// and join the same phase.
	killPhase(func() []victim {
		reapAdopted()
		return adoptedVictims()
	})
	reapAdopted()
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
}

// adoptedVictims lists the adopted processes still running: the group
// each leads (a setsid daemon and its workers), or the process alone when
// it is in someone else's group. A process counts only while it is still
// an adopted child, so a recycled pid is never signalled.
func adoptedVictims() []victim {
	var out []victim
	for _, e := range liveAdopted() {
		out = append(out, victim{id: e.pid, group: e.pgrp == e.pid})
	}
	return out
}

// reapAdopted reaps every exited child that os/exec does not own. The
// common case costs one waitid: nothing has exited, or only a child whose
// own Wait is about to collect it (then /proc is scanned for adopted ones
// behind it).
func reapAdopted() {
	for range 1000 {
		pid := exitedChild()
		if pid <= 0 {
			return
		}
		if startedHere(pid) {
			for _, e := range adoptedZombies() {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(e.pid, &ws, syscall.WNOHANG, nil)
			}
			return
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// exitedChild returns the pid of a child that has exited and not been
// waited for, leaving it waitable (WNOWAIT); 0 if there is none.
func exitedChild() int {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return 0
	}
	// si_pid is the union's first field, after three int32s aligned to
	// the word size.
	off := (3*4 + unsafe.Alignof(uintptr(0)) - 1) &^ (unsafe.Alignof(uintptr(0)) - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), off)))
}

// adoptedZombies lists exited children that os/exec does not own.
func adoptedZombies() []procEntry {
	return children(func(e procEntry) bool { return e.zombie })
}

// liveAdopted lists running children that os/exec does not own.
func liveAdopted() []procEntry {
	return children(func(e procEntry) bool { return !e.zombie })
}

// children lists this process's children matching keep, without those
// os/exec started.
func children(keep func(procEntry) bool) []procEntry {
	self := os.Getpid()
	var out []procEntry
	scanProcs(func(e procEntry) {
		if e.ppid == self && keep(e) {
			out = append(out, e)
		}
	})
	if len(out) == 0 {
		return nil
	}
	owned := pidfdTargets()
	kept := out[:0]
	for _, e := range out {
		if !owned[e.pid] {
			kept = append(kept, e)
		}
	}
	return kept
}

// startedHere reports whether this process holds a pidfd for pid: os/exec
// opens one for every child it starts and keeps it until that child is
// waited for.
func startedHere(pid int) bool { return pidfdTargets()[pid] }

// pidfdTargets returns the pids this process holds pidfds for.
func pidfdTargets() map[int]bool {
	out := map[int]bool{}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return out
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if link, err := os.Readlink("/proc/self/fd/" + n); err != nil || link != "anon_inode:[pidfd]" {
			continue
		}
		if pid := pidfdPid("/proc/self/fdinfo/" + n); pid > 0 {
			out[pid] = true
		}
	}
	return out
}

// pidfdPid reads the "Pid:" line of a pidfd's fdinfo.
func pidfdPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Pid:")); ok {
			pid, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return pid
		}
	}
	return 0
}
