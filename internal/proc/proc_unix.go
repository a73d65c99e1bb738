//go:build unix

package proc

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setupCmd puts the shell in a new process group whose id is its pid, so the whole
// tree can be signalled at once.
func setupCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup sends SIGTERM, then SIGCONT: a stopped member acts on
// SIGTERM only once continued, and would otherwise cost the whole grace.
func terminateGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// signalName names the signals a command commonly dies of.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGTRAP:
		return "SIGTRAP"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGALRM:
		return "SIGALRM"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGXCPU:
		return "SIGXCPU"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	}
	return "signal " + strconv.Itoa(int(sig))
}

// exitStatus returns the exit code, or -1 and the signal's name when a signal ended it.
func exitStatus(ps *os.ProcessState) (int, string) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ps.ExitCode(), ""
	}
	return -1, signalName(ws.Signal())
}
