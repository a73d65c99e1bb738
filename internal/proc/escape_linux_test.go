package proc

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool {
	var st syscall.WaitStatus
	if p, _ := syscall.Wait4(pid, &st, syscall.WNOHANG, nil); p == pid {
		return false // our child, now reaped
	}
	return groupAlive(pid) || syscall.Kill(pid, 0) == nil && !zombie(pid)
}

func zombie(pid int) bool {
	z := false
	scanProcs(func(e procEntry) { z = z || e.pid == pid && e.zombie })
	return z
}

// A child that left the command's group with setsid is found and killed on
// timeout with the rest; a child that joined someone else's group is not
// allowed to get that group killed.
func TestTimeoutKillsEscapedChildrenOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a timeout and a kill grace")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl")
	}
	// A bystander's process group, e.g. the editor's.
	victim := exec.Command("sleep", "60")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-victim.Process.Pid, syscall.SIGKILL); victim.Wait() }()
	g := victim.Process.Pid

	// Both children say they are in place (a file each) before the shell
	// waits for its timeout, however slow a loaded machine starts them.
	cmd := fmt.Sprintf(`setsid sh -c 'echo escaped=$$; : > escaped; exec sleep 60' &
perl -e 'setpgrp(0, %d) or die "setpgrp: $!"; $| = 1; print "joined=$$\n"; open(my $f, ">", "joined"); close $f; sleep 60' &
while [ ! -e escaped ] || [ ! -e joined ]; do sleep 0.02; done; sleep 60`, g)
	res, err := Run(context.Background(), Spec{Command: cmd, Dir: t.TempDir(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	pids := map[string]int{}
	for _, l := range strings.Split(res.Output, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			pids[k], _ = strconv.Atoi(v)
		}
	}
	if pids["escaped"] == 0 || pids["joined"] == 0 {
		t.Fatalf("output = %q, want both pids", res.Output)
	}
	defer syscall.Kill(pids["joined"], syscall.SIGKILL)
	deadline := time.Now().Add(2 * time.Second)
	for alive(pids["escaped"]) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pids["escaped"]) {
		t.Error("the setsid child survived the timeout")
	}
	if !alive(g) {
		t.Error("the bystander's group was killed because a child joined it")
	}
}
