//go:build unix

package proc

import (
	"os/exec"
	"syscall"
	"testing"
)

// A stopped member of a group never acted on SIGTERM, so shutdown always
// spent the whole grace on it and then SIGKILLed it: it must be continued
// and end of the SIGTERM (it failed so before killPhase sent SIGCONT).
func TestKillAllContinuesAStoppedGroupSoItEndsOnSIGTERM(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var r Reaper
	r.add(cmd.Process.Pid)
	done := make(chan struct{})
	go func() { // owned by the test: it waits for done below
		_ = cmd.Wait()
		close(done)
	}()
	r.KillAll()
	<-done
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the stopped group ended with %v, want SIGTERM", cmd.ProcessState)
	}
}
