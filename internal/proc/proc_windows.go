//go:build windows

package proc

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setupCmd starts the shell in a new process group, detached from our console's Ctrl-C.
func setupCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Windows has no graceful group signal for console-less children: both steps kill the
// tree with taskkill. Descendants whose parent already exited are not found by /T (a job
// object would find them; not done yet).
func terminateGroup(pid int) { taskkill(pid) }
func killGroup(pid int)      { taskkill(pid) }

// escapedGroups is empty: taskkill /T already ends the whole process tree.
func escapedGroups(int, int) []int { return nil }

func taskkill(pid int) {
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

// groupAlive reports whether the shell process itself still runs.
func groupAlive(pid int) bool {
	const processQueryLimitedInformation = 0x1000
	const stillActive = 259
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }
