package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ppidOf returns pid's parent, or 0 when pid is gone. A zombie still
// counts: it has a parent until it is reaped.
func ppidOf(pid int) int {
	ppid := 0
	scanProcs(func(e procEntry) {
		if e.pid == pid {
			ppid = e.ppid
		}
	})
	return ppid
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); s != "" && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %q", path, b)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", path)
	return 0
}

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// A daemon that left its shell's group (setsid … &) used to be re-parented
// to init when the shell exited, out of reach. With AdoptOrphans it comes
// here: orphans that exit are reaped (no zombie is left), the children
// os/exec started are still its to wait for, and Close kills the daemon.
func TestAdoptOrphans(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	o, err := AdoptOrphans()
	if err != nil {
		t.Skip(err)
	}
	closed := false
	defer func() {
		if !closed {
			o.Close()
		}
	}()
	dir := t.TempDir()
	daemon, brief := filepath.Join(dir, "daemon"), filepath.Join(dir, "brief")
	script := fmt.Sprintf(`setsid sh -c 'echo $$ > %s; exec sleep 60' &
setsid sh -c 'echo $$ > %s; exec sleep 0.3' &
for i in 1 2 3 4 5 6 7 8 9 10; do (sleep 0.1 &); done`, daemon, brief)
	// No output pipe: the background children would hold it open.
	if err := exec.Command("sh", "-c", script).Run(); err != nil {
		t.Fatalf("shell: %v", err)
	}
	dpid, bpid := readPid(t, daemon), readPid(t, brief)
	defer unix.Kill(dpid, unix.SIGKILL)
	self := os.Getpid()
	if !waitFor(5*time.Second, func() bool { return ppidOf(dpid) == self }) {
		t.Fatalf("daemon %d has parent %d, want this process %d", dpid, ppidOf(dpid), self)
	}

	// While orphans exit and are reaped, children started with os/exec
	// are waited for by their own Wait, never taken from it.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 10 {
		wg.Go(func() {
			for range 10 {
				if err := exec.Command("true").Run(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("os/exec child: %v", err)
	}

	if !waitFor(5*time.Second, func() bool { return ppidOf(bpid) == 0 }) {
		t.Errorf("the orphan that exited is still a zombie of parent %d", ppidOf(bpid))
	}
	if z := adoptedZombies(); !waitFor(5*time.Second, func() bool { z = adoptedZombies(); return len(z) == 0 }) {
		t.Errorf("zombies left: %+v", z)
	}
	if ppidOf(dpid) != self {
		t.Fatalf("daemon %d gone before Close", dpid)
	}

	o.Close()
	closed = true
	if ppidOf(dpid) != 0 {
		t.Errorf("daemon %d survives Close", dpid)
	}
	var sub int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&sub)), 0, 0, 0); err != nil || sub != 0 {
		t.Errorf("still the subreaper after Close (%d, %v)", sub, err)
	}
}

// A nil Orphans (adoption refused or unsupported) closes without effect.
func TestOrphansNilClose(t *testing.T) {
	var o *Orphans
	o.Close()
}
